"""Measuring engines. Each backend turns a JobSpec into a per-launch table (:class:`Collection`)."""
