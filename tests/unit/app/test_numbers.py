"""Number display: significant digits, separators, a FLOP/s unit that fits, table formats."""

from __future__ import annotations

import pandas as pd
import pytest

from app.core import numbers
from tests.scenarios import scenario, scenario_names


@pytest.mark.parametrize("value, text", [
    (21437.4944, "21,437"), (16.768, "16.77"), (0.0012345, "0.001234"), (1458.0, "1,458"),
    (0.0, "0"), (None, "—"), (float("nan"), "—"), (-3.14159, "-3.142"), (1.5e-9, "1.500e-09"),
])
def test_fmt(value, text) -> None:
    assert numbers.fmt(value) == text


@pytest.mark.parametrize("size, text", [
    (0, "0 bytes"), (654, "654 bytes"), (999, "999 bytes"), (1000, "1.0 kB"), (2911, "2.9 kB"),
    (99_949, "99.9 kB"), (100_000, "0.1 MB"), (12_345_678, "12.3 MB"),
    (2_500_000_000, "2,500.0 MB"),
])
def test_fmt_bytes_shows_small_sizes_in_kb_or_bytes(size, text) -> None:
    assert numbers.fmt_bytes(size) == text


@pytest.mark.parametrize("value, unit, out", [
    (16.01, "TFLOP/s", (16.01, "TFLOP/s")), (0.5, "TFLOP/s", (500.0, "GFLOP/s")),
    (1.1e-5, "TFLOP/s", (11.0, "MFLOP/s")), (2e-12, "TFLOP/s", (2.0, "FLOP/s")),
    (2e-14, "TFLOP/s", (0.02, "FLOP/s")), (0.385, "GB/s", (385.0, "MB/s")),
    (4800.0, "GB/s", (4800.0, "GB/s")), (0.0, "GB/s", (0.0, "GB/s")),
])
def test_rate_step(value, unit, out) -> None:
    factor, shown = numbers.rate_step(value, unit)
    assert shown == out[1] and value * factor == pytest.approx(out[0])


def test_table_formats_follow_the_spread_of_a_column() -> None:
    """Four significant digits for the median value, one at least for the smallest (issue 37:
    one tiny value put a column of microseconds into exponent form, "1.948e+4")."""
    assert numbers.printf_format(pd.Series([21437.4944, 0.1415])) == "%,.1f"
    assert numbers.printf_format(pd.Series([19478.2, 19480.1, 1e-9])) == "%,.6f"  # not 1.948e+4
    assert numbers.printf_format(pd.Series([1.90840, -3.9819, 7.798649])) == "%,.3f"
    assert numbers.printf_format(pd.Series([512, 8192])) == "%,d"
    assert numbers.printf_format(pd.Series([512.0, 8192.0])) == "%,.0f"
    # exponent form, four significant digits: Streamlit's default drew 1.3e-7 in full, cut
    assert numbers.printf_format(pd.Series([1e-9, 2e-9])) == "%.3e"  # to "0000001" in a cell
    assert numbers.printf_format(pd.Series(["a"])) is None
    assert numbers.printf_format(pd.Series([True, False])) is None


def test_a_column_of_numbers_and_text_is_shown_as_text() -> None:
    """A new user's find: the Deep dive's metric tables (a value "CachePreferNone" among
    numbers) made Arrow fail on every visit, a traceback in the server log each time."""
    import pandas as pd
    import pyarrow as pa

    from app.core.numbers import mixed_as_text

    mixed = pd.Series([1024, "CachePreferNone", 2.5, None, 256.0], dtype=object)
    with pytest.raises(pa.ArrowInvalid):
        pa.array(mixed)
    text = mixed_as_text(mixed)
    # a whole metric value (launch__grid_size 256.0) without decimals: it read "256.0"
    assert text is not None and text.tolist() == ["1,024", "CachePreferNone", "2.500", "—",
                                                  "256"]
    pa.array(text)  # converts
    assert mixed_as_text(pd.Series(["a", None], dtype=object)) is None
    assert mixed_as_text(pd.Series([1.0, 2.0])) is None


def test_numbers_or_missing_become_float() -> None:
    """A gate column of run counts and None (RunsToDecide) is drawn as numbers with empty cells;
    text, booleans and numeric columns stay as they are."""
    runs = numbers.numbers_or_missing(pd.Series([46, None, None], dtype=object))
    assert runs is not None and runs.dtype == float and runs.isna().tolist() == [False, True, True]
    assert runs.iloc[0] == 46.0 and numbers.printf_format(runs) == "%,.0f"
    empty = numbers.numbers_or_missing(pd.Series([None, None], dtype=object))  # CyclesDiffPct
    assert empty is not None and empty.isna().all()
    for kept in (pd.Series(["same", None], dtype=object), pd.Series([True, None], dtype=object),
                 pd.Series([1.0, float("nan")])):
        assert numbers.numbers_or_missing(kept) is None


def test_an_unbounded_upper_bound_reads_unbounded() -> None:
    """Issue 34: Fieller's interval with g >= 1 has an upper bound of +inf; tables say
    "unbounded" in the interval's upper-bound columns only, and leave other columns alone."""
    upper = pd.Series([14.82837799, float("inf"), float("nan")])
    assert list(numbers.unbounded_as_text("RatioCI95Upper", upper)) == ["14.83", "unbounded", "—"]
    assert list(numbers.unbounded_as_text("DiffCI95UpperPct", upper))[1] == "unbounded"
    assert numbers.unbounded_as_text("RelativeStdDevPct", upper) is None
    # the gate's DetectablePct is that interval's half-width: +inf with it (issue 37: the
    # comparison report showed "inf" there beside "unbounded")
    assert list(numbers.unbounded_as_text("DetectablePct", upper))[1] == "unbounded"
    assert numbers.unbounded_as_text("CI95_Upper", upper.fillna(1.0).replace(float("inf"), 2.0)) \
        is None


def test_an_unbounded_column_keeps_its_family_s_decimals() -> None:
    """Compare's DiffCI95UpperPct, text for its "unbounded" cell, wrote each finite bound to 4
    significant digits ("6.891" under "0.8191") beside DiffPct's 4 decimals (a new user's
    find): the finite bounds now in the format the family's other columns show."""
    upper = pd.Series([6.890862, 0.81912, float("inf"), float("nan")])
    assert list(numbers.unbounded_as_text("DiffCI95UpperPct", upper, "%,.4f")) == [
        "6.8909", "0.8191", "unbounded", "—"]
    assert [numbers.printf_text(v, f) for v, f in (
        (1234.5, "%,.2f"), (1234.0, "%,d"), (1.334e-7, "%.3e"), (float("nan"), "%,.2f"))] == [
        "1,234.50", "1,234", "1.334e-07", "—"]


def test_rows_in_several_units_get_each_unit_s_decimals() -> None:
    """The deep dive's Speed of light (job h200-ncu-deepdive-fp16-4096, its values as recorded):
    one format for the column wrote "183,360.00 ns" and "1,535,586,414.70 Hz" with the decimals
    of the % rows; each unit's rows now take their own."""
    frame = pd.DataFrame({"Metric": ["gpu__time_duration.sum", "gpc__cycles_elapsed.avg.per_second",
                                     "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                     "lts__throughput.avg.pct_of_peak_sustained_elapsed"],
                          "Value": [183360.0, 1535586414.7, 90.0638, 43.2291],
                          "Unit": ["ns", "Hz", "%", "%"]})
    shown = numbers.by_unit_as_text(frame)
    assert list(shown) == ["Value"]
    assert list(shown["Value"]) == ["183,360", "1,535,586,415", "90.06", "43.23"]
    assert numbers.by_unit_as_text(frame[frame["Unit"] == "%"]) == {}  # one unit: a number column
    display = numbers.column_display(frame)  # the tables' and the report's one decision
    assert display.by_rows == {"Value"} and display.number_formats == {}
    assert list(display.text(frame)["Value"]) == list(shown["Value"])


def _shown_width(fmt: str, lower: float, upper: float) -> float:
    decimals = int(fmt.rstrip("f").rpartition(".")[2] or 0)
    return round(upper, decimals) - round(lower, decimals)


@pytest.mark.parametrize("name", scenario_names())
def test_no_shown_ci95_collapses_or_widens_past_rounding(name: str) -> None:
    """Issue 37: a table of a recorded job, its aggregated AvgValue and CI95 bounds in ns and
    in us (the pages' time unit) with the rows of every other scenario beside them (a table of
    20,000 us rows set 0 decimals, so 61.44, CI95 61.23-61.65 read 61, 61-62): each interval's
    shown width is its width to a tenth of it, and one format serves a mean and its bounds."""
    own = scenario(name).table("aggregated")
    others = pd.concat([scenario(n).table("aggregated") for n in scenario_names()])
    for scale in (1.0, 1e-3):
        frame = pd.concat([own, others])[["AvgValue", "CI95_Lower", "CI95_Upper"]] * scale
        formats = numbers.table_formats(frame)
        assert len(set(formats.values())) == 1, formats
        fmt = formats["CI95_Lower"]
        for lower, upper in zip(own["CI95_Lower"] * scale, own["CI95_Upper"] * scale):
            width = upper - lower
            if fmt.endswith("f") and width > 0 and int(fmt.rpartition(".")[2][:-1]) < 6:
                assert abs(_shown_width(fmt, lower, upper) - width) <= width / 10, (
                    name, scale, fmt, lower, upper)


@pytest.mark.parametrize("centre, lower, upper, shown", [
    (61.44, 61.23, 61.65, ("61.44", "61.23", "61.65")),
    (21437.49, 21437.2, 21437.8, ("21,437.49", "21,437.20", "21,437.80")),
    (6233.7, 6015.798, 6451.602, ("6,234", "6,016", "6,452")),  # h200-cupti-j1-fp16, n=1024
    (0.0, -1.0, 1.0, ("0", "-1.000", "1.000")),
])
def test_fmt_interval_keeps_the_width(centre, lower, upper, shown) -> None:
    assert numbers.fmt_interval(centre, lower, upper) == shown


def test_counted_puts_the_noun_in_its_number() -> None:
    """A count is written with its noun in the right number, never "kernel(s)" (issue 37's
    polish: "1 kernel(s)" in Pre-flight and the size check)."""
    assert numbers.counted(1, "kernel") == "1 kernel"
    assert numbers.counted(0, "note") == "0 notes"
    assert numbers.counted(1969, "config") == "1,969 configs"
    assert numbers.counted(2, "sample", "samples") == "2 samples"


def test_one_format_for_byte_counts_and_percents_keeps_every_unit_s_digits() -> None:
    """Over the styled cells a column has one number format: the one with the most decimals its
    units' rows need, on the values themselves (each row rounded to its own decimals lost the
    table's own CSV its precision: a reviewer's find)."""
    import pandas as pd

    from app.core import numbers

    frame = pd.DataFrame({"Unit": ["byte", "%", "byte", "%"],
                          "AvgValue": [4096.0, 2.1634, 1_048_576.0, 86.5977]})
    shown = numbers.column_display(frame)
    assert shown.one_format("AvgValue") == "%,.2f"


def test_percent_columns_show_one_number_of_decimals_for_cpu_and_h200_jobs() -> None:
    """Compare's DiffPct read 2 decimals for a cpu job (diffs of tens of %) and 4 for an H200
    one (h200-cupti-gate-base vs -again: 0.5 %), 4 significant digits each (a fresh user of
    session 22): every percent column now shows PCT_DECIMALS, the same in both."""
    cpu = pd.DataFrame({"DiffPct": [12.53, -30.2], "DiffCI95LowerPct": [-3.21, -41.9],
                        "DiffCI95UpperPct": [28.1, -18.5], "ThresholdPct": [3.0, 3.0]})
    h200 = pd.DataFrame({"DiffPct": [0.507393, -0.113045], "DiffCI95LowerPct": [-0.17687, -0.4397],
                         "DiffCI95UpperPct": [1.196066, 0.215581], "ThresholdPct": [3.0, 3.0]})
    said = f"%,.{numbers.PCT_DECIMALS}f"
    for frame in (cpu, h200):
        formats = numbers.table_formats(frame)
        assert [formats[c] for c in ("DiffPct", "DiffCI95LowerPct", "DiffCI95UpperPct")] == \
            [said] * 3, formats
        assert formats["ThresholdPct"] == "%,.0f"  # a whole percent keeps no decimals


def test_a_percent_keeps_more_decimals_only_where_two_would_hide_it() -> None:
    """0.003 % never reads 0.00, and an interval narrower than a hundredth keeps its width."""
    tiny = pd.DataFrame({"RelativeStdDevPct": [0.003, 1.5]})
    assert numbers.table_formats(tiny)["RelativeStdDevPct"] == "%,.3f"
    narrow = pd.DataFrame({"DiffPct": [1.2345], "DiffCI95LowerPct": [1.2301],
                           "DiffCI95UpperPct": [1.2389]})
    assert numbers.table_formats(narrow)["DiffPct"] == "%,.4f"  # width 0.0088: 2 digits of it


@pytest.mark.parametrize("text, unit, values", [
    ("at 1.023x the others' median (65,632 vs 64,176 ns)", "µs", (65632, 64176)),
    ("1,433,911 ns above 1,111,291 ns (datasheet)", "ms", (1433911, 1111291)),
    ("32.5 ns at or below 32 ns", "µs", (32.5, 32)),
])
def test_durations_in_writes_each_ns_duration_in_the_pages_unit(text, unit, values) -> None:
    said = numbers.durations_in(text, unit)
    assert " ns" not in said  # a µs page showed "(3,677,390 vs 1,440,196 ns)" beside 33.57
    shown = [numbers.fmt(v / numbers.TIME_UNITS[unit]) for v in values]
    assert [said.index(s) for s in shown] == sorted(said.index(s) for s in shown)  # in order
    assert said.count(unit) == text.count(" ns")
    assert numbers.durations_in(text, "ns") == text


def test_durations_in_leaves_other_words_and_refuses_other_units() -> None:
    text = "1,470 MHz vs its config's median 1,980 MHz; nsight reads 3 runs"
    assert numbers.durations_in(text, "µs") == text
    with pytest.raises(KeyError):
        numbers.durations_in("3 ns", "s")


@pytest.mark.parametrize("flop, per_s, unit", [(1.28e14, False, "TFLOP"), (6.5536e4, False,
                                                "kFLOP"), (3.1e9, True, "GFLOP/s")])
def test_flop_text_is_in_a_unit_that_fits_never_exponent_form(flop, per_s, unit) -> None:
    """Run's no-rate note read "1.28e+14 FLOP" (session 25): a FLOP count (or rate) is in
    the largest unit in which it is at least 1, written by fmt."""
    said = numbers.flop_text(flop, per_s)
    value, shown = said.rsplit(" ", 1)
    assert shown == unit and "e" not in value
    factor = {"TFLOP": 1e12, "GFLOP": 1e9, "kFLOP": 1e3}[unit.removesuffix("/s")]
    assert value == numbers.fmt(flop / factor)
