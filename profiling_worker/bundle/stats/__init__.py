"""The statistics of a bundle's tables: per-launch -> per-run -> aggregated (combine rules, units,
kernel counts), the repair of an aggregated table that lacks columns, and the runs "auto"
stopping rule. The interval itself is ``bundle/schema/intervals.py`` (the spec check uses it
too)."""
