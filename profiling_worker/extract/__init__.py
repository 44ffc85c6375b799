"""Reading what a backend or a report measured: the ncu report reader, sections, PM sampling, the
rule digest, ignored kernels and :class:`~profiling_worker.extract.collection.Collection`. The
statistics over the tables live in :mod:`profiling_worker.bundle.stats`."""
