"""sweep_frame on the real cpu bundle, the bundled H200 jobs and an imported shape/dtype job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bundled import bundled

from profiling_worker.bundle.loader import load_bundle
from app.core.figures.sweep import build_sweep_figure
from app.core.views.sweep import SweepOptions, annotations_of, sweep_frame, sweep_x, x_choices
from profiling_worker.bundle.schema import columns as C


def test_time_sweep_rows_and_units(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    assert sweep_x(bundle) == "n"
    assert annotations_of(bundle) == ["fp32", "fp16", "bf16"]
    frame = sweep_frame(bundle, SweepOptions(time_unit="ms"))
    assert len(frame) == 3 * 2
    assert frame[C.ANNOTATION].tolist() == ["fp32", "fp32", "fp16", "fp16", "bf16", "bf16"]
    assert frame["n"].tolist() == [32, 64] * 3
    assert set(frame[C.UNIT]) == {"ms"}
    assert (frame[C.CI95_LOWER] <= frame[C.AVG]).all() and (frame[C.AVG] <= frame[C.CI95_UPPER]).all()
    agg = bundle.table(C.TABLE_AGGREGATED).set_index([C.ANNOTATION, "n"])[C.AVG] / 1e6
    assert frame.set_index([C.ANNOTATION, "n"])[C.AVG].to_numpy() == pytest.approx(
        agg.loc[frame.set_index([C.ANNOTATION, "n"]).index].to_numpy())


def test_throughput_and_baseline(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    tflops = sweep_frame(bundle, SweepOptions(quantity="tflops"))
    # issue 37: a host matmul's 1e-4 TFLOP/s is written in the FLOP/s unit its median fits
    (unit,) = set(tflops[C.UNIT])
    scale = {"GFLOP/s": 1.0, "MFLOP/s": 1e3, "kFLOP/s": 1e6}[unit]  # from FLOP/ns (= GFLOP/s)
    runs = bundle.table(C.TABLE_RUNS)
    mean_ns = runs[runs[C.METRIC] == bundle.duration_metric].groupby(
        [C.ANNOTATION, C.CONFIG])[C.VALUE].mean()
    work = bundle.table(C.TABLE_WORK).set_index([C.ANNOTATION, C.CONFIG])[C.FLOPS]
    keys = list(zip(tflops[C.ANNOTATION], tflops[C.CONFIG]))
    expected = (work.loc[keys] / mean_ns.loc[keys] * scale).to_numpy()
    assert tflops[C.AVG].to_numpy() == pytest.approx(expected, rel=1e-9)
    assert tflops[C.AVG].median() >= 1
    rel = sweep_frame(bundle, SweepOptions(quantity="gbps", baseline="fp32"))
    assert set(rel[C.UNIT]) == {"× fp32"}
    assert rel[rel[C.ANNOTATION] == "fp32"][C.AVG].tolist() == pytest.approx([1.0, 1.0])


def test_falls_back_to_aggregated_without_runs(cpu_bundle: Path) -> None:
    (cpu_bundle / "tables" / "runs.parquet").unlink()  # no CSV beside it (issue 40)
    frame = sweep_frame(load_bundle(cpu_bundle), SweepOptions(time_unit="ns"))
    assert len(frame) == 6 and set(frame[C.UNIT]) == {"ns"}


def test_empty_bundle_gives_empty_frame(cpu_bundle: Path) -> None:
    for path in (cpu_bundle / "tables").iterdir():
        path.unlink()
    assert sweep_frame(load_bundle(cpu_bundle), SweepOptions()).empty


# --- issue 11, case 6: the x axis is the parameter that varies; text parameters are categories ---

REPO = Path(__file__).resolve().parents[3]


def test_linear_sweeps_over_features_not_the_constant_batch() -> None:
    bundle = bundled("h200-cupti-linear-backward")
    assert x_choices(bundle) == ["features"] and sweep_x(bundle) == "features"
    frame = sweep_frame(bundle, SweepOptions())
    fig = build_sweep_figure(frame, "features", False)
    assert sorted({x for t in fig.data for x in t.x}) == [1024, 2048, 4096]


def test_two_varying_parameters_give_a_choice_and_series() -> None:
    bundle = bundled("h200-cupti-triton-vector-add")
    assert x_choices(bundle) == ["block_size", "n"]
    frame = sweep_frame(bundle, SweepOptions(x="block_size"))
    torch_lines = sorted(s for s in frame["Series"].unique() if s.startswith("torch"))
    assert torch_lines == ["torch · n=4194304", "torch · n=67108864"]
    for _, line in frame.groupby("Series"):  # no zig-zag: one point per block size, in order
        assert line["block_size"].tolist() == [128, 256, 512, 1024]
    by_n = sweep_frame(bundle, SweepOptions(x="n"))
    assert {s.split(" · ")[1] for s in by_n["Series"]} == {f"block_size={b}"
                                                          for b in (128, 256, 512, 1024)}


@pytest.fixture(scope="module")
def tuple_dtype_bundle(tmp_path_factory: pytest.TempPathFactory):
    """The shape/dtype nsight-python output of tests/fixtures/cases, imported by the worker."""
    out = tmp_path_factory.mktemp("imp") / "tuple-dtype"
    src = REPO / "tests" / "fixtures" / "cases" / "06-tuple-dtype-configs"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                           *map(str, sorted(src.glob("*.csv"))), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return load_bundle(out)


def test_text_parameters_are_categories(tuple_dtype_bundle) -> None:
    bundle = tuple_dtype_bundle
    assert set(x_choices(bundle)) == {"shape", "dtype"}
    for x in x_choices(bundle):
        frame = sweep_frame(bundle, SweepOptions(x=x))
        fig = build_sweep_figure(frame, x, False)
        assert fig.layout.xaxis.type == "category"
        other = ({"shape", "dtype"} - {x}).pop()
        assert all(f"{other}=" in s for s in frame["Series"])


def test_one_throughput_estimator_across_pages() -> None:
    """Issue 34: the Size sweep's TFLOP/s was mean(F/t_i), the Roofline's F/mean(t), 34 % apart
    on h200-events-j1-fp16 n=1024. Both are F/mean(t) now, its CI95 the time's mapped through
    F/t; and on the ncu roofline job the sweep's and the roofline's points agree."""
    import numpy as np

    from app.core.views.roofline import RooflineOptions, roofline_frame

    events = bundled("h200-events-j1-fp16")
    tflops = sweep_frame(events, SweepOptions(quantity="tflops")).set_index("n")
    times = sweep_frame(events, SweepOptions(quantity="time", time_unit="ns")).set_index("n")
    work = events.table(C.TABLE_WORK).set_index(C.CONFIG)[C.FLOPS]
    for n, row in tflops.iterrows():
        flops = float(work.loc[row[C.CONFIG]])
        t = times.loc[n]
        assert row[C.AVG] == pytest.approx(flops / t[C.AVG] / 1e3, rel=1e-12)
        assert (row[C.CI95_LOWER], row[C.CI95_UPPER]) == pytest.approx(
            (flops / t[C.CI95_UPPER] / 1e3, flops / t[C.CI95_LOWER] / 1e3), rel=1e-12)
    per_run = events.table(C.TABLE_RUNS)
    d = per_run[(per_run[C.METRIC] == events.duration_metric) & (per_run["n"] == 1024)]
    old = float(np.mean(float(work.loc[0]) / d[C.VALUE].to_numpy() / 1e3))
    assert old / tflops.loc[1024, C.AVG] > 1.3  # what the sweep showed before
    ncu = bundled("h200-ncu-roofline")
    sweep = sweep_frame(ncu, SweepOptions(quantity="tflops")).set_index([C.ANNOTATION, "n"])
    roof = roofline_frame(ncu, RooflineOptions(flops_source="analytic")).set_index(
        [C.ANNOTATION, "n"])
    assert list(sweep[C.AVG].sort_index()) == pytest.approx(
        list(roof["AchievedTFLOPs"].sort_index()), rel=1e-12)


def test_the_roofline_shows_counted_and_useful_flops_apart() -> None:
    """cuBLAS pads fp16 n=8192 to tiles: the tensor counter reads 1.015625 x 2n^3, the kernel's
    useful work is 2n^3; both are shown, with their ratio."""
    from app.core.views.roofline import RooflineOptions, roofline_frame

    roof = roofline_frame(bundled("h200-ncu-roofline"), RooflineOptions()).set_index(
        [C.ANNOTATION, "n"])
    point = roof.loc[("fp16", 8192)]
    assert point["UsefulFlops"] == 2 * 8192**3
    assert point["CountedOverUseful"] == pytest.approx(1.015625, abs=1e-9)
    assert point["UsefulTFLOPs"] == pytest.approx(point["AchievedTFLOPs"] / 1.015625)
