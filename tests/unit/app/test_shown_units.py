"""One unit and one name for a quantity on every page (a fresh user of session 23): Compare's
table in the pages' µs, a clock in MHz, the pickers' one format."""

from __future__ import annotations

import pandas as pd
import pytest
from bundled import bundled

from app.core import derived, metric_roles, numbers
from app.core import frame_columns as F
from app.core.views.compare import VALUE_COLUMNS, CompareOptions, compare_frame, compare_table
from profiling_worker.bundle.gate import judge as gate
from profiling_worker.bundle.number_text import SHOWN_UNITS, shown_unit
from profiling_worker.bundle.schema import columns as C, metrics as M


def test_shown_unit_moves_hz_to_mhz_and_keeps_the_others() -> None:
    assert shown_unit("Hz") == SHOWN_UNITS["Hz"] == ("MHz", 1e6)
    assert shown_unit("hz") == shown_unit("Hz")  # as the deep dive's report files spell it
    for unit in ("ns", "byte", "%", ""):
        assert shown_unit(unit) == (unit, 1.0)


def test_shown_scale_needs_one_unit_that_reads_otherwise() -> None:
    assert derived.shown_scale(["Hz", "Hz"]) == (1e6, "MHz")
    assert derived.shown_scale(["byte"]) == (1.0, None)
    assert derived.shown_scale(["Hz", "byte"]) == (1.0, None)  # rows in two units: as given
    assert derived.shown_scale([None, float("nan")]) == (1.0, None)


def test_per_run_metric_writes_a_clock_in_mhz() -> None:
    runs = pd.DataFrame({C.ANNOTATION: ["a", "a"], C.CONFIG: [0, 0], C.RUN: [0, 1],
                         C.METRIC: [M.GPC_HZ] * 2, C.VALUE: [1.98e9, 1.515e9],
                         C.UNIT: ["Hz", "Hz"]})
    out = derived.per_run_metric(runs, M.GPC_HZ)
    assert out[C.VALUE].tolist() == pytest.approx([1980.0, 1515.0])
    assert set(out[C.UNIT]) == {"MHz"}


def test_one_picker_format_and_the_chart_words() -> None:
    units = {M.GPU_TIME: "ns", M.SM_PCT: "%"}
    shown = metric_roles.picker({}, units)
    assert shown(M.SM_PCT) == metric_roles.readable({}, M.SM_PCT, "%")
    assert "[%]" in shown(M.SM_PCT) and M.WORDS[M.SM_PCT] in shown(M.SM_PCT)
    assert shown(M.GPU_TIME) == metric_roles.readable({}, M.GPU_TIME)  # no [ns]: time unit
    clock = metric_roles.picker({}, {M.GPC_HZ: "Hz"})(M.GPC_HZ)
    assert clock == metric_roles.readable({}, M.GPC_HZ, shown_unit("Hz")[0]) != \
        metric_roles.readable({}, M.GPC_HZ, "Hz")  # in the unit the chart and table use
    assert metric_roles.words({}, M.GPC_HZ) == M.WORDS[M.GPC_HZ]
    assert metric_roles.words({}, "my_counter") == "my_counter"
    imported = {"metric_roles": {"compute_tflops": {"role": "derived"}}}
    assert metric_roles.words(imported, "compute_tflops") == "compute_tflops (derived)"


def test_compare_table_is_in_the_pages_time_unit_at_full_precision() -> None:
    """Compare showed BaselineAvg 17,242 with Unit ns and a Reason "(23,895 vs 13,680 ns)"
    where Size sweep and Stability said 17.2 µs."""
    frame = compare_frame(bundled("h200-cupti-gate-base"), bundled("h200-cupti-timeline"),
                          CompareOptions())
    table = compare_table(frame)
    assert set(table[C.UNIT]) == {derived.DEFAULT_TIME_UNIT}
    size = numbers.TIME_UNITS[derived.DEFAULT_TIME_UNIT]
    for name in VALUE_COLUMNS:
        assert table[name].tolist() == pytest.approx((frame[name] / size).tolist(), rel=1e-12)
    assert table[F.RATIO].tolist() == frame[F.RATIO].tolist()  # a ratio has no unit
    in_ns = [r for r in frame[gate.REASON] if " ns" in r]
    assert in_ns, "the pair's Reason gives durations (the run audit's evidence)"
    assert table[gate.REASON].tolist() == [numbers.durations_in(r, derived.DEFAULT_TIME_UNIT)
                                           for r in frame[gate.REASON]]
    assert not [r for r in table[gate.REASON] if " ns" in r]
    assert frame[C.UNIT].iloc[0] == "ns"  # the frame itself keeps ns (report, agent door)
    assert compare_table(frame, "ns")[F.BASELINE_AVG].tolist() == frame[F.BASELINE_AVG].tolist()


def test_compare_reason_of_a_clock_reads_in_the_tables_mhz() -> None:
    """A Reason's values in the metric's own unit read in the unit of the columns beside it
    (issue 37: durations were rescaled, a clock's Hz were not); a "%" metric's Reason, whose
    differences are in % too, is left as the gate wrote it."""
    jobs = bundled("h200-ncu-elementwise"), bundled("h200-ncu-elementwise-cache-none")
    frame = compare_frame(*jobs, CompareOptions(metric=M.GPC_HZ))
    assert set(frame[C.UNIT]) == {"Hz"}
    # the gate's sentence of a side's mean (judge's "baseline mean is <value> <unit>")
    said = [f"baseline mean is {v:g} Hz; {r}" for v, r in zip(frame[F.BASELINE_AVG],
                                                             frame[gate.REASON])]
    table = compare_table(frame.assign(**{gate.REASON: said}))
    unit, size = shown_unit("Hz")
    assert set(table[C.UNIT]) == {unit}
    for reason, value in zip(table[gate.REASON], frame[F.BASELINE_AVG]):
        assert reason.startswith(f"baseline mean is {numbers.fmt(value / size)} {unit}; ")
        assert " Hz" not in reason and "e+" not in reason, reason
    pct = compare_frame(*jobs, CompareOptions(metric=M.SM_PCT))
    assert compare_table(pct)[gate.REASON].tolist() == pct[gate.REASON].tolist()


def test_values_in_rewrites_only_values_in_the_unit_named() -> None:
    text = "baseline mean is -1.98e+09 Hz; SM clock 1755 vs 1980 MHz; 3 vs 4 Hz"
    said = numbers.values_in(text, "Hz", "MHz", 1e6)
    assert said == (f"baseline mean is {numbers.fmt(-1980)} MHz; SM clock 1755 vs 1980 MHz; "
                    f"{numbers.fmt(3e-6)} vs {numbers.fmt(4e-6)} MHz")
    assert numbers.values_in("+3.10 % (95 % CI +2.65 .. +3.56 %)", "%", "%", 1.0) == \
        "+3.10 % (95 % CI +2.65 .. +3.56 %)"


def test_with_words_names_each_metric_beside_its_raw_name() -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["a", "a"], C.METRIC: [M.HOST_TIME, "my_counter"],
                          C.AVG: [1.0, 2.0]})
    out = metric_roles.with_words(frame, {})
    assert list(out.columns) == [C.ANNOTATION, C.METRIC, F.METRIC_WORDS, C.AVG]
    assert out[C.METRIC].tolist() == frame[C.METRIC].tolist()  # the key stays
    assert out[F.METRIC_WORDS].tolist() == [M.WORDS[M.HOST_TIME], "my_counter"]
    assert metric_roles.with_words(frame.drop(columns=C.METRIC), {}).equals(
        frame.drop(columns=C.METRIC))


def test_a_deep_dive_section_reads_in_the_pages_units() -> None:
    """A section's GPU time in µs and SM clock in MHz, as the other pages; a % row, a text
    value and a frame without Metric / Value / Unit unchanged."""
    frame = pd.DataFrame({C.METRIC: [M.GPU_TIME, M.GPC_HZ, M.SM_PCT, "launch__func_cache"],
                          C.VALUE: [17_242.0, 1.98e9, 55.5, "none"],
                          C.UNIT: ["ns", "Hz", "%", ""]})
    out = derived.rows_in_shown_units(frame)
    assert out[C.UNIT].tolist() == [derived.DEFAULT_TIME_UNIT, shown_unit("Hz")[0], "%", ""]
    size = numbers.TIME_UNITS[derived.DEFAULT_TIME_UNIT]
    assert out[C.VALUE].tolist()[:3] == pytest.approx([17_242.0 / size, 1980.0, 55.5])
    assert out[C.VALUE].iloc[3] == "none"
    assert frame[C.UNIT].tolist() == ["ns", "Hz", "%", ""]  # a copy
    plain = pd.DataFrame({"source": ["a.cu"], C.VALUE: [1.0]})
    assert derived.rows_in_shown_units(plain) is plain


def test_the_comparison_reports_ratio_table_is_the_pages() -> None:
    """The report's Candidate / baseline table is Compare's table: µs, the Reason's evidence
    in µs, the metric's words (its gate table stays as CI's gate writes it)."""
    import re

    from app.core.share.build import comparison_report

    html = comparison_report(bundled("h200-cupti-gate-base"), bundled("h200-cupti-timeline"))
    unit = re.escape(derived.DEFAULT_TIME_UNIT)
    assert F.METRIC_WORDS in html and f">{derived.DEFAULT_TIME_UNIT}<" in html
    assert re.search(rf"\d vs [\d,.]+ {unit}\)", html)
