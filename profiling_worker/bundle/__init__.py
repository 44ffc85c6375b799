"""What the app and the worker share: a result bundle's schema (``bundle/schema/``), its paths and
file modes, the table writer and the one :class:`~profiling_worker.bundle.loader.Bundle` loader, the
statistics (``stats/``), the regression gate (``bundle/gate/``), inflation and the report walk, the
timeline and spreadsheet writers, and the worker's failure kinds (``errors``).

The app imports the worker through this package (and the few entry points
tests/unit/test_boundaries.py lists); it imports nothing else of the worker.
"""
