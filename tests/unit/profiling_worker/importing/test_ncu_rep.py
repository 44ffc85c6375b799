"""Importing a .ncu-rep (alone or beside nsight-python's CSVs) on real H200 files, no GPU."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.importing import ncu_rep as R
from profiling_worker.bundle.loader import read_table
from profiling_worker.importing import ImportFailed, import_nsight_output
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS, scenario_report

REPO = Path(__file__).resolve().parents[4]
REPORT_GZ = scenario_report("h200-ncu-j1-fp16")
J1_NSIGHT = SCENARIOS / "h200-ncu-j1-fp16" / "nsight"


@pytest.fixture(scope="module")
def report_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_nsight_output([REPORT_GZ], tmp_path_factory.mktemp("store"), "rep-only")


@pytest.fixture(scope="module")
def csv_and_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_nsight_output([J1_NSIGHT], tmp_path_factory.mktemp("store"), "csv-rep")


def test_report_alone_gives_launches_runs_and_aggregated(report_only: Path) -> None:
    launches = read_table(report_only, C.TABLE_LAUNCHES)
    times = launches[launches[C.METRIC] == C.GPU_TIME]
    assert len(times) == 4 * 10  # 4 configs x 10 runs, one kernel each (kprof ranges)
    assert sorted(times[R.CONFIG_INDEX].unique()) == [0, 1, 2, 3]
    agg = read_table(report_only, C.TABLE_AGGREGATED)
    t = agg[agg[C.METRIC] == C.GPU_TIME].sort_values(C.CONFIG)
    assert t[C.NUM_RUNS].tolist() == [10] * 4
    assert t[C.AVG].is_monotonic_increasing  # 1024 .. 8192 fp16 matmul
    assert 1.3e6 < t[C.AVG].iloc[-1] < 1.6e6
    manifest = read_manifest(report_only)
    assert manifest["environment"]["gpu_name"] == "NVIDIA H200"
    assert manifest["provenance"]["launches"]["attribution"] == R.ATTRIBUTED_KPROF
    assert manifest["spec"]["configs"] == [{R.CONFIG_INDEX: i} for i in range(4)]
    assert (report_only / C.REPORT_SUMMARY_FILE).is_file()
    assert (report_only / C.NSIGHT_DIR / REPORT_GZ.name).is_file()


def test_report_beside_csvs_fills_launches_with_config_values(csv_and_report: Path) -> None:
    launches = read_table(csv_and_report, C.TABLE_LAUNCHES)
    runs = read_table(csv_and_report, C.TABLE_RUNS)
    assert "n" in launches.columns
    times = launches[launches[C.METRIC] == C.GPU_TIME]
    assert sorted(times["n"].unique()) == sorted(runs["n"].unique())
    # The report's durations are the CSV's values, launch for launch.
    merged = times.merge(runs[runs[C.METRIC] == C.GPU_TIME], on=[C.CONFIG, "n", C.RUN])
    assert len(merged) == len(times) == 40
    assert (merged["Value_x"] == merged["Value_y"]).all()


def _rows(n_launches: int, annotation: str = "a") -> pd.DataFrame:
    return pd.DataFrame({C.ANNOTATION: annotation, C.CONFIG: -1, C.RUN: range(n_launches),
                         C.LAUNCH: 0, C.KERNEL: "k", C.GRID: 1, C.BLOCK: 32,
                         C.METRIC: C.GPU_TIME, C.VALUE: 1.0, C.UNIT: "ns"})


def _runs(kernels: dict[tuple[int, int], int]) -> pd.DataFrame:
    return pd.DataFrame([{C.ANNOTATION: "a", C.CONFIG: c, C.RUN: r, C.KERNELS: k}
                         for (c, r), k in kernels.items()])


def test_foreign_report_is_numbered_by_the_csv_counts() -> None:
    # config 0: 2 runs of 2 kernels, config 1: 2 runs of 1 kernel -> 6 launches
    runs = _runs({(0, 0): 2, (0, 1): 2, (1, 0): 1, (1, 1): 1})
    launches, how = R.attribute_launches(_rows(6), ["n"], [{"n": 8}, {"n": 16}], runs)
    assert how == R.ATTRIBUTED_ORDER
    got = list(zip(launches[C.CONFIG], launches["n"], launches[C.RUN], launches[C.LAUNCH]))
    assert got == [(0, 8, 0, 0), (0, 8, 0, 1), (0, 8, 1, 0), (0, 8, 1, 1), (1, 16, 0, 0),
                   (1, 16, 1, 0)]


def test_foreign_report_with_other_counts_is_not_guessed() -> None:
    runs = _runs({(0, 0): 1, (1, 0): 1})
    launches, how = R.attribute_launches(_rows(3), ["n"], [{"n": 8}, {"n": 16}], runs)
    assert launches.empty and "not attributed" in how
    alone, how = R.attribute_launches(_rows(3), [R.CONFIG_INDEX], [{R.CONFIG_INDEX: 0}], None)
    assert how == R.ATTRIBUTED_NONE and alone[C.RUN].tolist() == [0, 1, 2]


@pytest.mark.parametrize("name, data", [("junk.ncu-rep", b"not a report" * 10),
                                        ("junk.ncu-rep.gz", b"not gzip at all")])
def test_unreadable_report_fails_with_name_and_hint(tmp_path: Path, name: str,
                                                    data: bytes) -> None:
    src = tmp_path / name
    src.write_bytes(data)
    with pytest.raises(ImportFailed) as err:
        import_nsight_output([src], tmp_path / "out", "bad")
    assert name in err.value.message and err.value.hint
    assert not (tmp_path / "out" / "bad").exists()


def test_gzip_that_is_no_report_fails(tmp_path: Path) -> None:
    src = tmp_path / "x.ncu-rep.gz"
    src.write_bytes(gzip.compress(b"\x00garbage" * 100))
    with pytest.raises(ImportFailed, match="x.ncu-rep.gz"):
        import_nsight_output([src], tmp_path / "out", "bad")


def test_cli_import_of_a_report(tmp_path: Path) -> None:
    out = tmp_path / "store" / "cli-rep"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(REPORT_GZ),
                           "--out", str(out)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    event = json.loads(proc.stdout.strip().splitlines()[-1])
    assert event["event"] == "result" and Path(event["bundle"]) == out
    assert read_manifest(out)["status"] == "done"


def test_cli_import_error_event_has_message_and_hint(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(bad),
                           "--out", str(tmp_path / "x")], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 1
    event = json.loads(proc.stdout.strip().splitlines()[-1])
    assert event["kind"] == "import_failed" and "notes.txt" in event["message"]
    assert event["hint"] and event["hint"] not in event["message"]


def test_default_set_report_gives_dram_pct_from_its_speed_of_light_name(tmp_path: Path) -> None:
    """ncu 2025.3's default set holds DRAM % as gpu__dram_throughput (Speed Of Light): the
    import reads it as DRAM %, launch for launch, says so, and the bound view draws from it."""
    import ncu_report

    from profiling_worker.bundle.loader import load_bundle
    from app.core.frame_columns import DRAM_PCT as F_DRAM_PCT
    from app.core.views.bound import BoundOptions, bound_frame
    from profiling_worker.bundle.schema import metrics as M

    report = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"
    ctx = ncu_report.load_report(str(report))
    actions = [ctx.range_by_idx(0).action_by_idx(i) for i in range(ctx.range_by_idx(0).num_actions())]
    expected = [a[M.GPU_DRAM_PCT].value() for a in actions]
    assert all(M.DRAM_PCT not in a.metric_names() for a in actions)

    bundle = import_nsight_output([report], tmp_path, "default-set")
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    got = launches[launches[C.METRIC] == M.DRAM_PCT]
    assert sorted(got[C.VALUE]) == pytest.approx(sorted(expected))  # every launch, its own value
    notes = [n["message"] for n in read_manifest(bundle)["notes"]]
    assert any(f"{M.DRAM_PCT} read from {M.GPU_DRAM_PCT}" in n for n in notes)
    frame = bound_frame(load_bundle(bundle), BoundOptions())
    assert len(frame) and frame[F_DRAM_PCT].between(0, 100).all()


@pytest.mark.parametrize("kept", [1_000, 50_000, 300_000, 600_000])
def test_a_report_cut_before_its_first_whole_launch_is_called_cut_short(tmp_path, kept) -> None:
    """A new user's find: ncu's own default-set report (885,833 bytes, recorded on the H200)
    cut at these sizes was refused as "no profiled launch" with a re-profile fix. Now: cut
    short, by how much, with the fix of copying it again; the whole file still imports."""
    whole = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(whole.read_bytes()[:kept])
    with pytest.raises(ImportFailed) as info:
        import_nsight_output([cut], tmp_path / "out", "cut")
    said = str(info.value) + " " + info.value.hint
    assert "cut short" in said and f"({kept:,} bytes kept)" in said
    assert "copy the report again" in said and "--set basic" not in said
