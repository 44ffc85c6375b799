"""What an import records about its own sources: the backend the files prove (or "unknown"),
and which of the given files were not read, visibly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from profiling_worker.bundle_writer import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.schema import columns as C
from profiling_worker.schema import plausibility as P
from profiling_worker.schema.manifest import read_manifest

REPO = Path(__file__).resolve().parents[4]
FIX = REPO / "tests" / "fixtures"
PLAIN = FIX / "h200_import" / "ncu_plain"
NSPY = FIX / "h200_import" / "nspy096"
CUPTI_11 = REPO / "app" / "bundled" / "h200-cupti-stability" / "nsight" / "c0"


def _backend(bundle: Path) -> tuple[str, str]:
    m = read_manifest(bundle)
    return m["backend"]["name"], m["spec"]["backend"]


def test_cupti_csvs_of_nsight_python_1_1_record_backend_unknown(tmp_path: Path) -> None:
    bundle = import_nsight_output(sorted(CUPTI_11.glob("*.csv")), tmp_path, "cupti")
    assert _backend(bundle) == ("unknown", "unknown")
    assert read_manifest(bundle)["provenance"]["backend_from_files"] is False


def test_ncu_sources_and_ncu_only_metrics_record_ncu(tmp_path: Path) -> None:
    sources = {"report": [PLAIN / "plain.ncu-rep.gz"], "ncu-csv": [PLAIN / "raw.csv"],
               "nspy-0.9.6": sorted((NSPY / "derived").glob("*.csv")),
               "nspy-1.x-sass-metrics": sorted((FIX / "import_cases" / "05-derived-inf")
                                               .glob("*.csv"))}
    for name, files in sources.items():
        assert _backend(import_nsight_output(files, tmp_path, name)) == ("ncu", "ncu"), name


def test_unknown_backend_is_a_possible_l2_warm_reason() -> None:
    manifest = {"backend": {"name": "unknown"}, "spec": {"backend": "unknown"}}
    assert "backend unknown, so possibly CUPTI" in P._roof_reason(manifest)
    assert "CUPTI" not in P._roof_reason({"backend": {"name": "ncu"}, "spec": {}})
