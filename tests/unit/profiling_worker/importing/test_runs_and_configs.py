"""Issue 20's cases 10 and 11 on files recorded on the H200: how launches become runs and
configs when nothing recorded them. Expected values are recomputed here from the files
themselves (ncu_report for the reports, pandas for the CSV), never copied from the importer.

Inputs: tests/fixtures/import_cases/10-two-launches-per-pass, 11-same-grid-sizes (README there).
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import ncu_report
import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.number_text import fitting_time_unit, fmt
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing import launch_runs as L
from profiling_worker.bundle.inflate import check_report
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

CASES = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "import_cases"
RANGES = CASES / "10-two-launches-per-pass" / "ranges.ncu-rep.gz"
SIZES = CASES / "11-same-grid-sizes"
RANDN = "distribution_elementwise_grid_stride_kernel"
VECTORIZED = "vectorized_elementwise_kernel"


def _launches(report_gz: Path, tmp_path: Path) -> list[tuple[str | None, str, int, float]]:
    """(innermost push/pop range of the default domain or None, kernel, grid size, duration ns)
    of every launch, in report order, read with ncu_report."""
    plain = tmp_path / "r.ncu-rep"
    plain.write_bytes(gzip.decompress(report_gz.read_bytes()))
    report = ncu_report.load_report(str(plain))
    out = []
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            state = act.nvtx_state()
            ranges = [p for d in (state.domains() if state else ())
                      for p in state.domain_by_id(d).push_pop_ranges()]
            out.append((ranges[-1] if ranges else None, act.name(),
                        int(act["launch__grid_size"].value()),
                        float(act["gpu__time_duration.sum"].value())))
    return out


def _agg_time(bundle: Path) -> pd.DataFrame:
    agg = read_table(bundle, C.TABLE_AGGREGATED)
    return agg[agg[C.METRIC] == C.GPU_TIME].reset_index(drop=True)


# --- case 10: a pass launches one kernel twice -------------------------------------------------

@pytest.fixture(scope="module")
def ranges_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_nsight_output([RANGES], tmp_path_factory.mktemp("s"), "r")


def test_case10_a_run_is_one_stretch_of_the_region(ranges_bundle: Path, tmp_path: Path) -> None:
    launches = _launches(RANGES, tmp_path)
    passes = [sum(t for *_, t in group) for rng, group in
              itertools.groupby(launches, key=lambda x: x[0]) if rng == "two_gemms"]
    assert len(passes) == 3  # three stretches of two GEMM launches
    t = _agg_time(ranges_bundle).set_index(C.ANNOTATION)
    assert t.loc["two_gemms", C.NUM_RUNS] == 3
    assert t.loc["two_gemms", C.AVG] == pytest.approx(np.mean(passes))
    assert round(t.loc["two_gemms", C.AVG]) == 65099  # the README's figure
    runs = read_table(ranges_bundle, C.TABLE_RUNS)
    gemm = runs[(runs[C.ANNOTATION] == "two_gemms") & (runs[C.METRIC] == C.GPU_TIME)]
    assert gemm.sort_values(C.RUN)[C.VALUE].tolist() == passes
    assert (gemm[C.KERNELS] == 2).all()
    softmax = [t for rng, _, _, t in launches if rng == "softmax"]
    assert t.loc["softmax", C.NUM_RUNS] == 3
    assert t.loc["softmax", C.AVG] == pytest.approx(np.mean(softmax))


def test_case10_the_other_reading_is_named(ranges_bundle: Path, tmp_path: Path) -> None:
    launches = _launches(RANGES, tmp_path)
    single = np.mean([t for rng, *_, t in launches if rng == "two_gemms"])
    notes = read_manifest(ranges_bundle)["import_notes"]
    note = next(n for n in notes if "two_gemms: " in n)
    assert "cannot tell runs from launches" in note
    assert "read as 3 runs of 2 launches" in note
    # the mean in the unit that fits it ("32.55 µs"), not "32,549 ns" (issue 37)
    assert f"6 runs of one launch (mean {fmt(single / 1e3)} µs a run)" in note
    assert " ns a run" not in note
    # the outside-any-range randn launches stay regions of their own
    regions = set(_agg_time(ranges_bundle)[C.ANNOTATION])
    assert {"two_gemms", "softmax"} < regions and len(regions) == 4


# --- case 11: one grid for three sizes ---------------------------------------------------------

def _by_kernel(launches: list[tuple[str | None, str, int, float]], name: str
               ) -> list[tuple[int, float]]:
    return [(g, t) for _, k, g, t in launches if k.startswith(name)]


def test_case11_report_launches_of_different_work_are_not_pooled(tmp_path: Path) -> None:
    b = import_nsight_output([SIZES / "sizes.ncu-rep.gz"], tmp_path / "s", "s")
    launches = _launches(SIZES / "sizes.ncu-rep.gz", tmp_path)
    randn = _by_kernel(launches, RANDN)
    assert len({g for g, _ in randn}) == 1  # one grid for all three sizes
    t = _agg_time(b)
    got = t[t[C.ANNOTATION] == RANDN].sort_values(C.CONFIG)
    assert got[C.NUM_RUNS].tolist() == [1, 1, 1]
    assert got[C.AVG].tolist() == [d for _, d in randn]
    note = next(n for n in read_manifest(b)["import_notes"] if "did different work" in n)
    assert RANDN in note and "taken as 3 configs" in note
    # in the time unit that fits them (7.776 / 17.66 / 56.16 µs), not "7,776 / ... ns"
    unit, size = fitting_time_unit([d for _, d in randn])
    assert unit == "µs" and " / ".join(fmt(d / size) for _, d in randn) + " µs" in note
    _vectorized_as_today(t, _by_kernel(launches, VECTORIZED))


def _vectorized_as_today(t: pd.DataFrame, vec: list[tuple[int, float]]) -> None:
    got = t[t[C.ANNOTATION] == VECTORIZED].sort_values(C.CONFIG)
    assert got[C.NUM_RUNS].tolist() == [3, 3, 3]
    grids = list(dict.fromkeys(g for g, _ in vec))
    assert grids == [1024, 4096, 16384]
    expected = [np.mean([d for g2, d in vec if g2 == g]) for g in grids]
    assert got[C.AVG].tolist() == pytest.approx(expected)


def test_case11_raw_csv_gives_the_same_configs(tmp_path: Path) -> None:
    path = SIZES / "sizes_raw.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    frame = pd.read_csv(path, dtype=str, skiprows=start).iloc[1:]  # row 1: units (ns)
    times = frame[C.GPU_TIME].str.replace(",", "").astype(float)
    grids = frame["Grid Size"].str.extract(r"\((\d+)")[0].astype(int)
    kernels = frame["Kernel Name"]
    vec = [(g, d) for k, g, d in zip(kernels, grids, times) if VECTORIZED in k]
    randn = [d for k, d in zip(kernels, times) if RANDN in k]
    assert randn == [7744.0, 17568.0, 55584.0]  # the README's values
    b = import_nsight_output([path], tmp_path / "s", "c")
    t = _agg_time(b)
    got = t[t[C.ANNOTATION] == RANDN].sort_values(C.CONFIG)
    assert got[C.AVG].tolist() == randn and got[C.NUM_RUNS].tolist() == [1, 1, 1]
    _vectorized_as_today(t, vec)
    assert [round(v) for v in t[t[C.ANNOTATION] == VECTORIZED].sort_values(C.CONFIG)[C.AVG]] \
        == [4533, 9771, 31584]


# --- the rules on their own --------------------------------------------------------------------

def test_sizes_of_one_kernel_are_never_summed_into_one_run() -> None:
    """Four launches of one kernel with four grids, one stretch: four configs of one run each
    (the old rule summed them into one run and said every launch had the same parameters)."""
    sigs = [("k", str(g), "256") for g in (1, 2, 4, 8)]
    reading = L.read_region("k", [[0, 1, 2, 3]], ["k"] * 4, sigs,
                            {C.GPU_TIME: [1.0, 2.0, 4.0, 8.0]})
    assert reading.runs == [[0], [1], [2], [3]] and reading.configs == [0, 1, 2, 3]
    assert "with different launch parameters (grids 1, 2, 4, 8)" in reading.notes[0]
    assert "never summed into one run" in reading.notes[0]


def test_counters_of_equal_work_keep_runs_together_whatever_their_durations() -> None:
    found, _ = L.split_by_work({M: np.array([1e6, 1e6, 1e6]) for M in (L.WORK_COUNTERS[0],)}
                               | {C.GPU_TIME: np.array([1.0, 2.0, 1.0])})
    assert found is None
    found, told = L.split_by_work({L.WORK_COUNTERS[0]: np.array([1e6, 4e6, 1e6])})
    assert found is not None and found.tolist() == [0, 1, 0] and L.WORK_COUNTERS[0] in told


# --- a report cut short where a config ends ----------------------------------------------------

NORMALIZED = CASES.parent / "h200_import" / "nspy096" / "normalized" / "ncu-output-scale-0.ncu-rep.gz"
#: Where the record of the 11th of the report's 12 launches ends (found with ncu_report; the
#: test checks it): torch and inplace alternate run by run, so the cut ends torch's config 1
#: with all 3 runs and leaves inplace's config 1 with 2.
AFTER_11 = 3891633


def _cut(tmp_path: Path, size: int) -> tuple[Path, list[int]]:
    data = gzip.decompress(NORMALIZED.read_bytes())
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:size if size > 0 else len(data) + size])
    report = ncu_report.load_report(str(cut))
    metrics = [len(report.range_by_idx(r).action_by_idx(a).metric_names())
               for r in range(report.num_ranges())
               for a in range(report.range_by_idx(r).num_actions())]
    return cut, metrics


def test_a_report_cut_at_a_config_boundary_does_not_look_complete(tmp_path: Path) -> None:
    """Told by the file's structure (the block walk), not by unequal runs per config (issue 35:
    a program's regions may have any number of runs)."""
    cut, metrics = _cut(tmp_path, AFTER_11)
    assert len(metrics) == 11 and all(metrics)  # every launch there is whole
    missing = check_report(cut).missing()
    assert missing > 0
    m = read_manifest(import_nsight_output([cut], tmp_path / "s", "cut"))
    assert m["partial"] == [f"partial: cut.ncu-rep ends {missing:,} bytes before the end of its "
                            "last block: the file was cut short (an interrupted copy), so its "
                            "last launches may be missing; copy it again from where it was "
                            "recorded"]


def test_a_report_that_ends_inside_a_launch_says_so(tmp_path: Path) -> None:
    cut, metrics = _cut(tmp_path, -1)  # one byte short
    assert len(metrics) == 12 and metrics[-1] == 0 and all(metrics[:-1])
    m = read_manifest(import_nsight_output([cut], tmp_path / "s", "cut"))
    assert any(w.startswith("partial: 1 launch(es) at the end of cut.ncu-rep hold no metric at "
                            "all") for w in m["partial"])


def test_a_cut_report_beside_the_csvs_is_named_partial(tmp_path: Path) -> None:
    """The CSVs were written from the whole recording: they name 6 launches of inplace."""
    cut, _ = _cut(tmp_path, AFTER_11)
    csvs = sorted(NORMALIZED.parent.glob("*.csv"))
    m = read_manifest(import_nsight_output([*csvs, cut], tmp_path / "s", "cut"))
    assert m["partial"] == ["partial: cut.ncu-rep holds 5 of the 6 launches of inplace that the "
                            "CSVs' runs name; the report was probably cut short (an interrupted "
                            "copy), so its per-launch values are not used"]
