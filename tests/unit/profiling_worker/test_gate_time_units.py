"""The gate's text outputs (Markdown summary, the console's copy of it, JUnit's system-out) write
a side's mean and std dev in the time unit that fits them, never "8,700,436.0 ± 3,296,528.6 ns":
on the recorded H200 pair h200-cupti-gate-base / h200-cupti-gate-again (25 µs to 1.45 ms)."""

from __future__ import annotations

import re

import pytest

from profiling_worker.bundle.gate import report
from profiling_worker.bundle.gate.judge import (AVG, BASELINE, CANDIDATE, CONFIG_LABEL, REASON,
                                                GateOptions, judge)
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.number_text import (TIME_UNITS, fitting_time_unit, mean_decimals,
                                                 mean_text, shown_unit)
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import scenario_dir


SIZES = {**TIME_UNITS, "s": 1e9}
#: "24.92 ± 0.26 µs (n=20)"
MEAN = re.compile(r"^([\d,]+(?:\.\d+)?) ± ([\d,]+(?:\.\d+)?) (ns|µs|ms|s) \(n=(\d+)\)$")


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    return judge(GateSide.load(scenario_dir("h200-cupti-gate-base")),
                 GateSide.load(scenario_dir("h200-cupti-gate-again")),
                 GateOptions(max_slowdown_pct=3.0))


def _cells(markdown: str) -> dict[str, list[str]]:
    """config label -> the row's cells of the Markdown table."""
    rows = [line.strip("|").split(" | ") for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith(("| region", "| ---"))]
    return {cells[1].strip(): [c.strip() for c in cells] for cells in rows}


def test_markdown_means_in_a_fitting_unit_equal_the_recorded_ones(result) -> None:  # type: ignore[no-untyped-def]
    md = report.markdown(result)
    assert not re.search(r"\d{1,3}(,\d{3}){2,}(\.\d+)? ", md), md  # no 7-digit number at all
    cells = _cells(md)
    assert len(cells) == len(result.rows) == 3
    units = []
    for _, row in result.rows.iterrows():
        assert row[C.UNIT] == "ns"
        shown = cells[row[CONFIG_LABEL]]
        for side, cell in ((BASELINE, shown[2]), (CANDIDATE, shown[3])):
            m = MEAN.match(cell)
            assert m, cell
            mean, std, unit, runs = (float(m[1].replace(",", "")), float(m[2].replace(",", "")),
                                     m[3], int(m[4]))
            size = SIZES[unit]
            assert 1 <= mean < 1000, cell  # the unit fits: no "0.025 ms", no "24,921.5 ns"
            decimals = len(m[1].partition(".")[2])
            half_step = 0.5 * 10 ** -decimals * size * (1 + 1e-9)
            assert abs(mean * size - row[side + AVG]) <= half_step, (cell, row[side + AVG])
            assert abs(std * size - row[side + C.STD]) <= half_step, (cell, row[side + C.STD])
            assert runs == row[side + C.RUNS] == 20
            units.append(unit)
        # both sides of a row in one unit and with one number of decimals
        assert shown[2].split()[-2] == shown[3].split()[-2]
        assert len(shown[2].split()[0].partition(".")[2]) == len(shown[3].split()[0].partition(".")[2])
    assert units == ["µs"] * 4 + ["ms"] * 2  # n=2048 and 4096 in µs, n=8192 (1.45 ms) in ms


def test_junit_says_the_means_as_the_markdown_does(result) -> None:  # type: ignore[no-untyped-def]
    md, xml = report.markdown(result), report.junit_xml(result)
    cells = _cells(md)
    for config, shown in cells.items():
        assert f"baseline h200-cupti-gate-base (mean ± SD): {shown[2]}" in xml, config
        assert f"candidate h200-cupti-gate-again (mean ± SD): {shown[3]}" in xml, config
    assert " ns (n=" not in xml and " ns (n=" not in md


@pytest.mark.parametrize(("values", "unit"), [
    ([8_700_436.0, 8_512_000.0], "ms"), ([24_921.5, 25_048.0], "µs"), ([999.0, 1_200.0], "ns"),
    ([2.5e9], "s"), ([float("nan")], "ns"), ([], "ns"), ([0.0, 1_500.0], "µs")])
def test_fitting_time_unit(values: list[float], unit: str) -> None:
    assert fitting_time_unit(values) == (unit, SIZES[unit])


def test_the_readme_case_reads_in_ms() -> None:
    """The fresh user's gate.md said "8,700,436.0 ± 3,296,528.6 ns"."""
    unit, size = fitting_time_unit([8_700_436.0])
    assert mean_text(8_700_436.0 / size, 3_296_528.6 / size, unit) == "8.700 ± 3.297 ms"
    assert mean_text(8.7004, float("nan"), "ms") == "8.700 ms"  # one run: no std dev
    assert mean_decimals(1.4536301, 0.0097867) == 4  # the spread keeps two digits


def test_a_clock_gate_reads_in_mhz_and_its_reasons_in_the_rows_unit() -> None:
    """Issue 37: the gate's table wrote a clock's means in Hz ("1,979,203,821 ± ... Hz") where
    the pages read MHz."""
    jobs = [GateSide.load(scenario_dir(n))
            for n in ("h200-ncu-elementwise", "h200-ncu-elementwise-cache-none")]
    clock = judge(*jobs, GateOptions(metric="gpc__cycles_elapsed.avg.per_second"))
    assert set(clock.rows[C.UNIT]) == {"Hz"}
    md = report.markdown(clock)
    rows = [line.strip("|").split(" | ") for line in md.splitlines()
            if line.startswith("| ") and not line.startswith(("| region", "| ---"))]
    cells = {(r[0].strip(), r[1].strip()): r[2].strip() for r in rows}
    unit, size = shown_unit("Hz")
    for _, row in clock.rows.iterrows():
        mean = cells[(row[C.ANNOTATION], row[CONFIG_LABEL])].split(" (n=")[0]
        said = mean.split()[0]
        assert mean.endswith(f" {unit}"), mean
        half_step = 0.5 * 10 ** -len(said.partition(".")[2]) * size * (1 + 1e-9)
        assert abs(float(said.replace(",", "")) * size - row[BASELINE + AVG]) <= half_step
    assert " Hz" not in md


def test_the_reasons_durations_read_in_the_unit_of_their_means() -> None:
    """The run audit's evidence in a row's reason ("(23,895 vs 13,680 ns)") in the unit of
    the means beside it, as Compare's Reason column."""
    pair = judge(GateSide.load(scenario_dir("h200-cupti-gate-base")),
                 GateSide.load(scenario_dir("h200-cupti-timeline")), GateOptions())
    assert any(" ns" in r for r in pair.rows[REASON]), "the pair's reasons give ns durations"
    md = report.markdown(pair)
    assert not [line for line in md.splitlines() if line.startswith("| ") and " ns" in line]
