"""Files a user may bring that hold no importable measurement, each refused by its kind with
the command that makes an importable file (issue 35): a registry of (kind, sniff, message, fix)
that :mod:`.sniff` consults before it reads a text as a table or as console output.

Each ``sniff`` reads the decoded head of the file (its first 64 KiB) and the file's name in
lower case. The layouts are those Nsight Compute 2025.3.1 prints (recorded on the H200:
``tests/fixtures/import_cases/17-h200-issue35``), Git LFS's pointer format
(https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md) and Nsight Systems' ``--stats``
console output (``Executing '<name>' stats report`` or ``** CUDA GPU Kernel Summary
(cuda_gpu_kern_sum):`` before each table).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

#: The command that writes an importable file, for every fix below.
PROFILE = ("`ncu --nvtx -o report python3 app.py` (upload report.ncu-rep), or `ncu --nvtx --csv "
           "--page raw python3 app.py > raw.csv`")
#: The fix of every Nsight Systems file, refused here or described by
#: :func:`~profiling_worker.importing.sniff.refusal`.
HINT_NCU_EXPORT = "profile the kernels with Nsight Compute instead: " + PROFILE
#: What the importer expects of a file that promised nothing more specific (by content or name).
EXPECTED = ("an nsight-python CSV, an Nsight Compute CSV export or console text, or an Nsight "
            "Compute report (.ncu-rep)")
#: The fix of a file of no kind of its own: the commands that write an importable file.
HINT_IMPORTABLE = ("upload the CSVs nsight-python writes with `output_csv=True`, or profile "
                   "with Nsight Compute: " + PROFILE)
#: The fix of an empty file: what a valid one has (issue 37: the fix said only "upload the file
#: again").
HINT_EMPTY = ("export it again from the tool that wrote it: an nsight-python CSV "
              "(`output_csv=True`) or an `ncu --csv` export starts with its header row, then one "
              "row per value; a .ncu-rep is the report file `ncu -o report` writes")
#: The fix of an edited or cut nsight-python CSV (textcsv re-exports it).
HINT_CSV = ("give the `profiled_data-*.csv` / `processed_data-*.csv` files nsight-python "
            "writes with `output_csv=True`, unmodified")
#: The fix of an edited or cut Nsight Compute CSV export (textcsv re-exports it).
HINT_NCU_CSV = ("export it again with `ncu --csv` (`--page raw` or `--page details`), or import "
                "the .ncu-rep itself")


@dataclass(frozen=True)
class Refused:
    """Why one file is not imported, by the project's one rule for a refusal: what the file
    is (told by its content first, its magic bytes or structure, then its name), what was
    expected, and one fix, any command in it a code span. :meth:`message` writes the first two
    after the file's name; ``fix`` is the hint."""

    what: str
    fix: str
    expected: str = EXPECTED

    def message(self, name: str) -> str:
        """``<name>: <what it is>; expected <what was expected>``."""
        return f"{name}: {self.what}; expected {self.expected}"

_SUMMARY_KERNEL = re.compile(r", Invocations \d+\s*$", re.MULTILINE)
_QUERY_METRICS = re.compile(r"^Metric Name\s+Metric Type\s+Metric Unit\s+Metric Description",
                            re.MULTILINE)
_LIST_SETS = re.compile(r"^Identifier\s+Sections\s+Enabled\s+Estimated Metrics", re.MULTILINE)
_NSYS_CONSOLE = re.compile(r"^(\[\d+/\d+\] )?Executing '\w+' stats report|"
                           r"^Generating '.*\.qdstrm'|^ \*\* .+ \((cuda|nvtx|osrt)_\w+\):",
                           re.MULTILINE)
_NSYS_NAMES = (".nsys-rep", ".qdrep", ".qdstrm")


@dataclass(frozen=True)
class Refusal:
    """One kind of file that is refused: ``kind`` (a short name), ``sniff(text, name)``,
    ``what`` (what the file is, for the message), ``fix`` (the command or step that makes an
    importable file)."""

    kind: str
    sniff: Callable[[str, str], bool]
    what: str
    fix: str


def _lfs(text: str, name: str) -> bool:
    return text.startswith("version https://git-lfs.github.com/spec/")


REFUSALS = (
    Refusal("git_lfs_pointer", _lfs,
            "a Git LFS pointer (about 130 bytes naming the file's oid and size): the file "
            "itself was never downloaded",
            "run `git lfs pull` in the clone (or download the file itself, not the pointer), "
            "then import the real file"),
    Refusal("ncu_permission",
            lambda text, name: "ERR_NVGPUCTRPERM" in text,
            "ncu's output of a run that was refused the GPU's performance counters "
            "(ERR_NVGPUCTRPERM): nothing was measured",
            "allow profiling for your user (run `sudo ncu ...`, or load the NVIDIA driver with "
            "`NVreg_RestrictProfilingToAdminUsers=0`: https://developer.nvidia.com/"
            "ERR_NVGPUCTRPERM), then profile again: " + PROFILE),
    Refusal("ncu_print_summary",
            lambda text, name: bool(_SUMMARY_KERNEL.search(text)),
            "Nsight Compute console text printed with `--print-summary` (per-kernel or "
            "per-gpu): each kernel's minimum, maximum and average over its launches "
            "(`Invocations N`), not the launches' own values",
            "print the launches instead: `ncu -i report.ncu-rep --csv --page raw > raw.csv` "
            "(or upload report.ncu-rep), or profile again without `--print-summary`: " + PROFILE),
    Refusal("ncu_query_metrics",
            lambda text, name: bool(_QUERY_METRICS.search(text)),
            "the output of `ncu --query-metrics`: the metrics a GPU offers, with no measured "
            "value", "profile the program with the metrics chosen from it: `ncu --nvtx "
            "--metrics gpu__time_duration.sum,<metrics> -o report python3 app.py`"),
    Refusal("ncu_list_sets",
            lambda text, name: bool(_LIST_SETS.search(text)),
            "the output of `ncu --list-sets`: the section sets Nsight Compute offers, with no "
            "measured value", "profile the program with a set from it: `ncu --nvtx --set "
            "basic -o report python3 app.py`"),
    Refusal("nsys_console",
            lambda text, name: bool(_NSYS_CONSOLE.search(text)),
            "Nsight Systems console output (`nsys profile --stats`): timelines summed per "
            "kernel, no per-launch Nsight Compute metric", HINT_NCU_EXPORT),
)


def refusal_of(text: str, name: str) -> Refusal | None:
    """The first kind of :data:`REFUSALS` the file is, or None.

    Args:
        text: the decoded head of the file.
        name: the file's name (any case).
    """
    low = name.lower()
    return next((r for r in REFUSALS if r.sniff(text.lstrip("\ufeff"), low)), None)


def message(refusal: Refusal, name: str) -> str:
    """What the file is, with the Nsight Systems name said where a pointer stands for one."""
    tail = (" (its name is an Nsight Systems report's, which is not supported either)"
            if refusal.kind == "git_lfs_pointer" and name.lower().endswith(_NSYS_NAMES) else "")
    return refusal.what + tail


__all__ = ["Refusal", "Refused", "REFUSALS", "PROFILE", "HINT_NCU_EXPORT", "HINT_IMPORTABLE",
           "HINT_EMPTY", "HINT_CSV", "HINT_NCU_CSV", "EXPECTED", "refusal_of", "message"]
