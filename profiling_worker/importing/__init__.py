"""Import what people already have (nsight-python CSVs, Nsight Compute reports) as a bundle.

Modules: :mod:`.kinds` (the registry of import kinds: how each is told, which reader reads it, its
supported-format line, its rows of the docs table, which :mod:`.formats_table` writes; a kind
with a reader of its own is a module of :mod:`.readers`),
:mod:`.sniff` (what each file is, by content, with :mod:`.refusals`),
:mod:`.textcsv` (reading text CSV), one reader per format -- :mod:`.nsight_csv` /
:mod:`.nsight_values` / :mod:`.csv_job` (nsight-python's CSVs, with :mod:`.nsight_columns`,
:mod:`.roles`, :mod:`.combined`), :mod:`.ncu_csv` (Nsight Compute CSV exports, with
:mod:`.same_profile`), :mod:`.ncu_rep` / :mod:`.report_job` (``.ncu-rep`` reports, with
:mod:`.regions` and :mod:`.launch_runs`: regions, runs and configs of launches nothing recorded) --
:mod:`.grouping` (which files of an upload make one bundle) and :mod:`.assemble`, the one
assembler, writing through :mod:`profiling_worker.bundle.writer`.
"""

from profiling_worker.bundle.errors import ImportFailed, ImportInternalError
from profiling_worker.importing.assemble import import_nsight_output

__all__ = ["import_nsight_output", "ImportFailed", "ImportInternalError"]
