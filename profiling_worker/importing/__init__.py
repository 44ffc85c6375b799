"""Import what people already have (nsight-python CSVs, Nsight Compute reports) as a bundle.

Modules: :mod:`.sources` (which files were given), :mod:`.textcsv` (reading text CSV),
:mod:`.nsight_csv` (nsight-python's per-run and aggregated CSVs), :mod:`.ncu_rep` (``.ncu-rep``
reports), :mod:`.assemble` (the one assembler, writing through
:mod:`profiling_worker.bundle_writer`).
"""

from profiling_worker.errors import ImportFailed, ImportInternalError
from profiling_worker.importing.assemble import import_nsight_output

__all__ = ["import_nsight_output", "ImportFailed", "ImportInternalError"]
