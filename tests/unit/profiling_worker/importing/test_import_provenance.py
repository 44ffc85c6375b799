"""What an import records about its own sources: the backend the files prove (or "unknown"),
and which of the given files were not read, visibly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from profiling_worker.bundle.loader import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import plausibility as P
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS, scenario_report

REPO = Path(__file__).resolve().parents[4]
FIX = REPO / "tests" / "fixtures"
PLAIN = FIX / "h200_import" / "ncu_plain"
NSPY = FIX / "h200_import" / "nspy096"
CUPTI_11 = SCENARIOS / "h200-cupti-stability" / "nsight" / "c0"


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


def _import_notes(bundle: Path) -> list[dict]:
    return [n for n in read_manifest(bundle)[P.NOTES_KEY] if n["check"] == P.IMPORT]


def test_a_second_report_is_named_as_not_read_with_the_reason(tmp_path: Path) -> None:
    j1 = scenario_report("h200-ncu-j1-fp16")
    bundle = import_nsight_output([PLAIN / "plain.ncu-rep.gz", j1], tmp_path, "two")
    (note,) = [n for n in _import_notes(bundle) if "not read" in n["message"]]
    assert note["severity"] == P.WARNING and note["metric"] is None  # on every page
    assert note["message"].startswith(f"{j1.name}: not read (one import reads "
                                      "one report; the values here are from plain.ncu-rep.gz")
    kernels = set(read_table(bundle, C.TABLE_LAUNCHES)[C.KERNEL])  # only the first's launches
    assert kernels == set(read_table(import_nsight_output([PLAIN / "plain.ncu-rep.gz"],
                                                          tmp_path, "one"),
                                     C.TABLE_LAUNCHES)[C.KERNEL])
    assert (bundle / C.NSIGHT_DIR / j1.name).is_file()  # kept with the files


def test_an_ncu_csv_beside_nsight_python_csvs_is_named_as_not_read(tmp_path: Path) -> None:
    csvs = sorted((NSPY / "normalized").glob("*.csv"))
    bundle = import_nsight_output([*csvs, PLAIN / "raw.csv"], tmp_path, "csv")
    (note,) = [n for n in _import_notes(bundle) if "not read" in n["message"]]
    assert note["severity"] == P.WARNING
    assert note["message"].startswith("raw.csv: not read (Nsight Compute CSV export beside the "
                                      "nsight-python CSVs")
    runs = read_table(bundle, C.TABLE_RUNS)
    alone = read_table(import_nsight_output(csvs, tmp_path, "alone"), C.TABLE_RUNS)
    pd.testing.assert_frame_equal(runs, alone)  # its values are not mixed in


def test_1_1_per_run_csv_alone_tells_collectors_from_parameters(tmp_path: Path) -> None:
    """Real nsight-python 1.1 output (power sampled 86.659 W for 24 runs, then 93.124 W)."""
    src = CUPTI_11 / "profiled_data-profiled-0.csv"
    bundle = import_nsight_output([src], tmp_path, "raw")
    m = read_manifest(bundle)
    assert m["provenance"]["parameters"] == ["n"]
    assert m["provenance"]["nsight_python_version"] == "1.1 (Unit and info-collector columns)"
    assert m["spec"]["configs"] == [{"n": 256}] and m["spec"]["runs"] == 30  # not 2 configs
    runs = read_table(bundle, C.TABLE_RUNS)
    assert runs[C.CONFIG].unique().tolist() == [0] and runs[C.RUN].nunique() == 30
    text = pd.read_csv(src)
    coll = read_table(bundle, C.TABLE_COLLECTORS)
    power = coll[coll[C.COLLECTOR] == "power"].sort_values(C.RUN)[C.VALUE].tolist()
    assert power == text["power"].tolist()  # 24 x 86.659, 6 x 93.124, per run
    (note,) = [n for n in m["import_notes"] if "info-collector values" in n]
    assert note.startswith("read as nsight-python 1.1 info-collector values, not config "
                           "parameters (the parameters: n): sm_clock (a collector name")
    assert "temperature (" in note and "power (" in note
    with_agg = read_manifest(import_nsight_output(sorted(CUPTI_11.glob("*.csv")), tmp_path,
                                                  "pair"))
    assert with_agg["provenance"]["parameters"] == ["n"]  # the same as the processed file says


def test_values_left_out_by_the_import_are_not_a_run_count_contradiction(tmp_path: Path) -> None:
    """Real nsight-python 0.9.6 combine_kernel_metrics output: summed SM % is left out (NaN)."""
    bundle = import_nsight_output(sorted((NSPY / "combine").glob("*.csv")), tmp_path, "comb")
    runs = [n["message"] for n in read_manifest(bundle)[P.NOTES_KEY]
            if n["check"] == P.RUNS_MISSING]
    assert not [m for m in runs if "but 3 per-run rows" in m]
    assert ("unfused, config 0: sm__throughput.avg.pct_of_peak_sustained_elapsed 3 of 3 "
            "per-run values missing (a failed run, or left out by the import); NumRuns "
            "counts the 0 used") in runs


def test_normalised_rows_kept_as_aggregated_are_not_missing_runs(tmp_path: Path) -> None:
    """Real nsight-python 0.9.6 normalize_against output: the ratio rows exist only aggregated."""
    bundle = import_nsight_output(sorted((NSPY / "normalized").glob("*.csv")), tmp_path, "norm")
    agg = read_table(bundle, C.TABLE_AGGREGATED)
    relative = agg[~agg[C.METRIC].isin(read_table(bundle, C.TABLE_RUNS)[C.METRIC])]
    assert len(relative) == 4 and (relative[C.NUM_RUNS] == 3).all()  # kept, 2 regions x 2 sizes
    assert not [n for n in read_manifest(bundle)[P.NOTES_KEY] if n["check"] == P.RUNS_MISSING]
