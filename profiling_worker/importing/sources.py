"""Which sources an import was given: folders expanded, each file sorted by kind."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from profiling_worker.errors import ImportFailed
from profiling_worker.importing import ncu_rep as R
from profiling_worker.importing.textcsv import HINT_CSV, short

TAG_RE = re.compile(r"^(?:profiled|processed)_data-(?P<tag>.+)\.csv$")

def classify(path: Path, header: list[str]) -> str:
    if "AvgValue" in header:
        return "agg"
    if "Value" in header:
        return "raw"
    raise ImportFailed(
        f"{path.name}: columns {short(header)} are neither nsight-python's per-run table "
        "(Annotation, Value, Metric, ...) nor its aggregated table (Annotation, Metric, AvgValue, "
        "...)", HINT_CSV)

def tag_of(path: Path) -> str:
    m = TAG_RE.match(path.name)
    return m.group("tag") if m else path.stem

def expand(sources: Sequence[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """CSV files, other nsight files (.ncu-rep, .log) and ignored files among the sources."""
    csvs: list[Path] = []
    extra: list[Path] = []
    ignored: list[Path] = []

    def natural(p: Path):
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]

    for src in sources:
        src = Path(src)
        if src.is_dir():
            children = sorted((p for p in src.iterdir() if p.is_file()), key=natural)
            for p in children:
                if TAG_RE.match(p.name):
                    csvs.append(p)
                elif p.suffix in (".ncu-rep", ".log") or R.is_report(p):
                    extra.append(p)
                else:
                    ignored.append(p)
        elif src.is_file():
            if src.suffix.lower() == ".csv":
                csvs.append(src)
            elif src.suffix in (".ncu-rep", ".log") or R.is_report(src):
                extra.append(src)
            else:
                raise ImportFailed(f"{src.name}: not a file nsight-python writes",
                                   "give .csv files, a .ncu-rep, an ncu log, or their folder")
        else:
            raise ImportFailed(f"{src.name}: no such file or folder",
                               "check the path of the nsight-python output")
    return csvs, extra, ignored
