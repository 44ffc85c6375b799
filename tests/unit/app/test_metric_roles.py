"""Derived and normalised imported metrics are labelled from the bundle's manifest."""

from __future__ import annotations

from pathlib import Path

from app.core import metric_roles, metric_words
from profiling_worker.bundle.gate import cycles
from profiling_worker.bundle.schema import metrics as M
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema.manifest import read_manifest

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "import_cases"


def test_imported_derived_and_normalised_metrics_are_labelled(tmp_path: Path) -> None:
    derived = read_manifest(import_nsight_output([CASES / "03-derived-0.9.5"], tmp_path, "d"))
    assert metric_roles.label(derived, "compute_tflops") == "compute_tflops (derived)"
    assert metric_roles.label(derived, "gpu__time_duration.sum") == "gpu__time_duration.sum"
    normal = read_manifest(import_nsight_output([CASES / "04-normalized"], tmp_path, "n"))
    name = "gpu__time_duration.sum relative to torch"
    assert metric_roles.label(normal, name) == f"{name} (normalised)"
    assert "AvgValue of torch" in metric_roles.describe(normal)[0]
    assert metric_roles.roles({"metric_roles": "not a dict"}) == {}


def test_a_picker_shows_a_metrics_words_with_its_raw_name_beside() -> None:
    """Stability's and Compare's Metric pickers showed ``host__time_duration.sum``: words
    first, the raw Nsight Compute name in parentheses; no unit for a duration (the page's time
    unit chooses it); a metric without words, or with an imported role, as before."""
    for metric in M.DURATION_METRICS:
        assert metric_roles.readable({}, metric, "ns") == f"{M.WORDS[metric]} ({metric})"
    assert metric_roles.readable({}, M.DRAM_BYTES, "byte") == (
        f"{M.WORDS[M.DRAM_BYTES]} [byte] ({M.DRAM_BYTES})")
    assert metric_roles.readable({}, "my_counter", "x") == "my_counter [x]"  # no words to add
    # a name WORDS lacks: words read from its parts, the raw name beside them (issue 37)
    bare = "lts__t_sectors_srcunit_tex_op_read.sum"
    assert metric_roles.readable({}, bare, "sector") == (
        f"{metric_words.derived_words(bare)} [sector] ({bare})")
    assert all("__" not in words for words in M.WORDS.values())


def test_the_cycle_check_says_a_clock_rate_is_multiplied_by_the_duration() -> None:
    """``gpc__cycles_elapsed.avg.per_second`` is a rate (Hz): the cycles are it × the run's
    duration (its factor in cycles.CLOCK_METRICS), not the metric itself."""
    for source, (metric, factor) in cycles.CLOCK_METRICS.items():
        said = cycles.source_words(source, lambda m: f"`{m}`")
        assert f"`{metric}`" in said
        assert ("(Hz) × the run's duration" in said) == (factor is not None)
    assert "× the run's duration" in cycles.source_words(cycles.COLLECTOR_SOURCE)
