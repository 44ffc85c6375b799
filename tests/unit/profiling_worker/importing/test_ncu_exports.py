"""Issue 20 (CSV and text half): every Nsight Compute CSV export and console text opens, or is
refused by kind. Inputs are files ncu wrote (tests/fixtures/import_cases, README there); each
expected value is recomputed here from the file with pandas / re, never copied from the import."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import plausibility as P
from profiling_worker.bundle.schema.manifest import read_manifest

FIX = Path(__file__).resolve().parents[4] / "tests" / "fixtures"
CASES = FIX / "import_cases"
DETAILS_RULES = CASES / "08-details-rule-columns" / "ranges_details_base.csv"
NVTX_RAW = CASES / "09-nvtx-in-csv" / "ranges_raw.csv"
CONSOLE = CASES / "12-ncu-console-text" / "ranges_text.log"
NESTED = CASES / "14-nvtx-nested"
NCU_2020 = CASES / "15-ncu-2020-details" / "nsight_cfd_097K_excerpt.log"
PUSH_POP = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
START_END = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"


def _import(tmp_path: Path, *sources: Path, **kw: str) -> Path:
    return import_nsight_output(list(sources), tmp_path / "store", "job", **kw)


def _csv(path: Path) -> pd.DataFrame:
    """An ncu CSV as text, parsed by pandas from its header line on (short rows padded)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=start)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _innermost(cell: str) -> str | None:
    names = re.findall(r'"(?:\d+:)?<default domain>:([^"]*?)(?::none){6}"', cell)
    return names[-1] if names else None


def _launch_times(bundle: Path) -> pd.DataFrame:
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    return launches[launches[C.METRIC] == C.GPU_TIME]


# --- case 08: the details page with rule columns ---------------------------------------------

@pytest.fixture(scope="module")
def details_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _import(tmp_path_factory.mktemp("d"), DETAILS_RULES)


def test_case08_details_with_rule_columns_opens_with_every_launch(details_bundle: Path) -> None:
    frame = _csv(DETAILS_RULES)
    metric_rows = frame[frame["Metric Name"] != ""]
    durations = metric_rows[metric_rows["Metric Name"] == "Duration"]
    assert set(durations["Metric Unit"]) == {"ns"}  # --print-units base
    times = _launch_times(details_bundle)
    assert len(times) == frame["ID"].nunique() == 12
    expected = {(_innermost(r[PUSH_POP]) or "", _number(r["Metric Value"]))
                for _, r in durations.iterrows()}
    got = {(a if a in ("two_gemms", "softmax") else "", v)
           for a, v in zip(times[C.ANNOTATION], times[C.VALUE])}
    assert got == expected  # every launch's Duration in ns, in its NVTX region


def test_case08_every_numeric_section_metric_and_rule_result_is_kept(details_bundle: Path):
    frame = _csv(DETAILS_RULES)
    metric_rows = frame[frame["Metric Name"] != ""]
    numeric = pd.to_numeric(metric_rows["Metric Value"].str.replace(",", ""), errors="coerce")
    launches = read_table(details_bundle, C.TABLE_LAUNCHES)
    assert len(launches) == int(numeric.notna().sum())
    summary = json.loads((details_bundle / C.REPORT_SUMMARY_FILE).read_text(encoding="utf-8"))
    rules = frame[frame["Rule Name"] != ""]
    assert len(summary["rule_results"]) == len(rules) == 33
    assert {r["rule_identifier"] for r in summary["rule_results"]} == set(rules["Rule Name"])
    how = read_manifest(details_bundle)["provenance"]["how_read"][DETAILS_RULES.name]
    assert how["page"] == "details" and "rule columns" in how["layout"]
    assert how["units"].startswith("base units") and how["regions"].startswith("NVTX push/pop")


def test_case08_a_cut_details_page_is_refused_not_half_imported(tmp_path: Path) -> None:
    text = DETAILS_RULES.read_text(encoding="utf-8")
    cut = tmp_path / "ranges_details_base.csv"
    cut.write_text(text[:len(text) // 2], encoding="utf-8")  # ends inside a row
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, cut)
    assert "not the CSV its header promises" in exc.value.message
    assert not list((tmp_path / "store").glob("job*"))


# --- case 09 and nested ranges: NVTX columns are regions ---------------------------------------

def _raw_rows(path: Path) -> pd.DataFrame:
    frame = _csv(path)
    return frame[frame["ID"] != ""]  # the units row has no ID


def test_case09_nvtx_push_pop_column_gives_the_regions(tmp_path: Path) -> None:
    rows = _raw_rows(NVTX_RAW)
    times = _launch_times(_import(tmp_path, NVTX_RAW))
    for region in ("two_gemms", "softmax"):
        mine = rows[rows[PUSH_POP].map(_innermost) == region]
        expected = [_number(v) for v in mine["gpu__time_duration.sum"]]
        got = times[times[C.ANNOTATION] == region].sort_values([C.RUN, C.LAUNCH])[C.VALUE]
        assert sorted(got) == sorted(expected) and len(expected) == {"two_gemms": 6,
                                                                       "softmax": 3}[region]
    outside = rows[rows[PUSH_POP] == ""]
    kept_apart = times[~times[C.ANNOTATION].isin(["two_gemms", "softmax"])]
    assert sorted(kept_apart[C.VALUE]) == sorted(_number(v) for v in
                                                 outside["gpu__time_duration.sum"])
    assert len(outside) == 3  # the torch.randn fills, in kernel-name regions


def test_case09_softmax_runs_are_the_readme_values(tmp_path: Path) -> None:
    agg = read_table(_import(tmp_path, NVTX_RAW), C.TABLE_AGGREGATED).set_index(
        [C.ANNOTATION, C.METRIC])
    row = agg.loc[("softmax", C.GPU_TIME)]
    assert row[C.NUM_RUNS] == 3 and row[C.AVG] == pytest.approx((70752 + 70464 + 70368) / 3)


def test_case09_two_gemms_is_three_runs_of_two_launches(tmp_path: Path) -> None:
    """Case 09's README values: NVTX regions from the CSV's columns (the reader) and a run as
    one stretch of a region's launches (the run segmentation of case 10) together."""
    runs = read_table(_import(tmp_path, NVTX_RAW), C.TABLE_RUNS)
    mine = runs[(runs[C.ANNOTATION] == "two_gemms") & (runs[C.METRIC] == C.GPU_TIME)]
    assert mine.sort_values(C.RUN)[C.VALUE].tolist() == [65536, 65120, 65280]


@pytest.mark.parametrize("name", ["nested_raw.csv", "nested_details_base.csv", "nested_text.log"])
@pytest.mark.parametrize("mode, scale, add", [("innermost", "scale", "add_phase"),
                                              ("stack", "outer > scale", "outer > add_phase")])
def test_nested_push_pop_and_start_end_ranges_innermost_or_whole_stack(
        tmp_path: Path, name: str, mode: str, scale: str, add: str) -> None:
    rows = _raw_rows(NESTED / "nested_raw.csv")  # the same program's ranges, as ncu exported
    assert rows[PUSH_POP].str.count("<default domain>").tolist() == [0, 2, 1, 2, 1, 2, 1]
    assert (rows[START_END] != "").tolist() == [False, False, True, False, True, False, True]
    times = _launch_times(_import(tmp_path, NESTED / name, nvtx=mode))
    assert times[C.ANNOTATION].value_counts()[scale] == 3
    assert times[C.ANNOTATION].value_counts()[add] == 3
    how = read_manifest(tmp_path / "store" / "job")["provenance"]["how_read"][name]
    assert how["regions"].startswith("NVTX push/pop and start/end")


# --- case 12: console text -----------------------------------------------------------------------

def test_case12_console_text_is_imported_with_display_precision_noted(tmp_path: Path) -> None:
    text = CONSOLE.read_text(encoding="utf-8")
    blocks = re.split(r"\n  (?=\S)", text)[1:]  # one block per launch line
    expected = []
    for block in blocks:
        stack = re.findall(r"^ {8}<\d+,(.*)>$", block, flags=re.M)
        duration = re.search(r"^ {4}Duration +us +([\d.,]+)$", block, flags=re.M)
        expected.append((stack[-1] if stack else "", _number(duration.group(1)) * 1e3))
    bundle = _import(tmp_path, CONSOLE)
    times = _launch_times(bundle)
    got = [(a if a in ("two_gemms", "softmax") else "", v)
           for a, v in zip(times[C.ANNOTATION], times[C.VALUE])]
    assert len(expected) == 12 and sorted(got) == sorted(expected)
    notes = " ".join(read_manifest(bundle)["import_notes"])
    assert "console text: values as printed, in display units rounded" in notes
    how = read_manifest(bundle)["provenance"]["how_read"][CONSOLE.name]
    assert how["kind"] == "Nsight Compute console text" and how["units"].startswith("display")


def test_console_text_of_a_report_has_the_rules_and_values_of_its_details_export(
        tmp_path: Path) -> None:
    """`ncu -i nested.ncu-rep` (text) and `--csv --page details --print-units base` (CSV) of
    one report: the same rule results per launch, durations equal within display rounding."""
    frame = _csv(NESTED / "nested_details_base.csv")
    rules = frame[frame["Rule Name"] != ""]
    text = _import(tmp_path, NESTED / "nested_import_text.log")
    summary = json.loads((text / C.REPORT_SUMMARY_FILE).read_text(encoding="utf-8"))
    per_launch = pd.Series([r["ID"] for r in summary["rule_results"]]).value_counts()
    assert per_launch.sort_index().to_dict() == rules["ID"].value_counts().sort_index().to_dict()
    speedups = sorted(float(r["speedup"]) for r in summary["rule_results"] if "speedup" in r)
    assert speedups == sorted(float(v) for v in rules["Estimated Speedup"] if v)
    csv_ns = frame[frame["Metric Name"] == "Duration"]["Metric Value"].map(_number)
    text_ns = _launch_times(text)
    for a, b in zip(sorted(csv_ns), sorted(text_ns[C.VALUE])):
        assert abs(a - b) <= 5.0  # us printed with 2 decimals: at most 5 ns off


def test_one_display_name_in_two_sections_of_a_launch_stays_two_metrics(tmp_path: Path):
    """Edited from case 08 (a name printed twice in one launch, as sections of other sets do):
    neither value is lost or combined with the other."""
    text = DETAILS_RULES.read_text(encoding="utf-8").replace(
        '"Average SM Active Cycles"', '"SM Active Cycles"')
    edited = tmp_path / "twice.csv"
    edited.write_text(text, encoding="utf-8")
    launches = read_table(_import(tmp_path, edited), C.TABLE_LAUNCHES)
    names = set(launches[C.METRIC])
    assert {"SM Active Cycles (GPU Speed Of Light Throughput)",
            "SM Active Cycles (GPU and Memory Workload Distribution)"} <= names


def test_console_text_without_launch_lines_is_refused_as_console_text(tmp_path: Path) -> None:
    """Case 12 with its launch lines cut out (sections, no launch: a paste cut short, or a
    layout this reader does not know): refused naming it, with the command."""
    text = CONSOLE.read_text(encoding="utf-8")
    other = tmp_path / "sections_only.log"
    other.write_text(re.sub(r"(?m)^  \S.*\n", "", text), encoding="utf-8")
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, other)
    assert "Nsight Compute console text with no launch in the layout" in exc.value.message
    assert "ncu --nvtx -o report" in exc.value.hint
    assert not list((tmp_path / "store").glob("job*"))


def test_ncu_2020_console_text_reads_time_stamp_launch_lines(tmp_path: Path) -> None:
    """nv-nsight-cu-cli 2020 console output (import_cases/16, public): launch lines carry a
    time stamp, tables no header, program output is mixed into the ==PROF== lines."""
    text = (CASES / "16-ncu-2020-console" / "hw4_2a.txt").read_text(encoding="utf-8")
    kernels = re.findall(r"(?m)^  (\w+)\(.*\), \d{4}-\w{3}-\d{2} [\d:]+, Context", text)
    ms = [_number(v) * 1e6 for v in re.findall(r"(?m)^ {4}Duration +msecond +([\d.,]+)$", text)]
    grid = re.findall(r"(?m)^ {4}Grid Size +(\d+)$", text)
    bundle = _import(tmp_path, CASES / "16-ncu-2020-console" / "hw4_2a.txt")
    times = _launch_times(bundle)
    assert list(times[C.ANNOTATION]) == kernels == ["row_sums", "column_sums"]
    assert list(times[C.VALUE]) == ms and list(times[C.GRID]) == grid
    assert "2019.x-2021 layout" in read_manifest(bundle)["provenance"]["how_read"][
        "hw4_2a.txt"]["layout"]


def test_console_text_in_a_decimal_comma_locale_is_read_with_a_note(tmp_path: Path) -> None:
    """nv-nsight-cu-cli 2020 output pasted from a machine with a decimal comma and
    space-grouped digits (import_cases/16, hpc2n): 10,55 msecond is 10.55 ms, not dropped."""
    path = CASES / "16-ncu-2020-console" / "hpc2n_ax_locale.txt"
    text = path.read_text(encoding="utf-8")
    value = re.search(r"(?m)^ {4}Duration +msecond +([\d,]+)$", text).group(1)
    cycles = re.search(r"(?m)^ {4}Elapsed Cycles +cycle +([\d ]+)$", text).group(1)
    bundle = _import(tmp_path, path)
    launches = read_table(bundle, C.TABLE_LAUNCHES).set_index(C.METRIC)[C.VALUE]
    assert launches[C.GPU_TIME] == pytest.approx(float(value.replace(",", ".")) * 1e6)
    assert launches["gpc__cycles_elapsed.max"] == int(cycles.replace(" ", ""))
    notes = " ".join(read_manifest(bundle)["import_notes"])
    assert "decimal comma and digits grouped by spaces" in notes
    assert "no grid or block size printed" in notes
    # the grouping note agrees (a fresh user read "told apart by kernel, grid, block" beside
    # "told apart by kernel name only")
    assert "told apart by kernel name (no grid or block in the file)" in notes
    assert "kernel, grid, block" not in notes


# --- older layouts: Nsight Compute 2020.1 -------------------------------------------------------

def test_ncu_2020_details_layout_reads_grid_block_rows_and_kernel_time(tmp_path: Path) -> None:
    frame = _csv(NCU_2020)
    assert "Kernel Time" in frame.columns and "Grid Size" not in frame.columns
    stats = frame[frame["Section Name"] == "Launch Statistics"]
    grid = stats[stats["Metric Name"] == "Grid Size"].set_index("ID")["Metric Value"]
    dur = frame[frame["Metric Name"] == "Duration"]
    assert set(dur["Metric Unit"]) == {"nsecond"}
    bundle = _import(tmp_path, NCU_2020)
    times = _launch_times(bundle)
    assert sorted(times[C.VALUE]) == sorted(_number(v) for v in dur["Metric Value"])
    assert set(times[C.GRID]) == set(grid)  # "506": grid from the Launch Statistics rows
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    mem = launches[launches[C.METRIC] == "Memory Throughput"]  # byte/second, not the SOL %
    assert set(mem[C.UNIT]) == {"byte/s"}
    checks = {n["check"] for n in read_manifest(bundle)[P.NOTES_KEY]}
    assert P.PERCENT_ABOVE_100 not in checks
    assert "2019.x-2020.1 layout" in read_manifest(bundle)["provenance"]["how_read"][
        NCU_2020.name]["layout"]


# --- percentages: by unit where given, else by Nsight Compute naming ----------------------------

def test_occupancy_curves_raise_no_percent_note(tmp_path: Path) -> None:
    raw = pd.read_csv(NESTED / "nested_raw_default_set.csv", dtype=str, keep_default_na=False)
    units = raw.iloc[0]
    curve = "derived__pct_occupancy_per_block_size"
    assert units[curve] == "%" and _number(raw[curve].iloc[1]) > 100  # as ncu exported it
    bundle = _import(tmp_path, NESTED / "nested_raw_default_set.csv")
    above = [n for n in read_manifest(bundle)[P.NOTES_KEY] if n["check"] == P.PERCENT_ABOVE_100]
    assert above == []
    assert curve in set(read_table(bundle, C.TABLE_LAUNCHES)[C.METRIC])  # kept, not dropped


@pytest.mark.parametrize("metric, unit, percent", [
    ("derived__pct_occupancy_per_block_size", "%", False),
    ("derived__pct_occupancy_per_register_count", "%/register", False),
    ("derived__pct_occupancy_per_barrier_count", None, False),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", None, True),
    ("lts__t_sector_hit_rate.pct", None, True),
    ("launch__occupancy_cluster_pct", None, True),
    ("gpu__time_duration.sum relative to torch", "ratio", False),
    ("Theoretical Occupancy", "%", True),
])
def test_is_percent_follows_the_unit_then_nsight_naming(metric, unit, percent) -> None:
    assert P.is_percent(metric, unit) is percent


# --- refused by kind ---------------------------------------------------------------------------

def test_a_bom_only_file_is_not_called_ncu_console_output(tmp_path: Path) -> None:
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf")
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, bom)
    what = exc.value.message.split("; expected")[0]  # what the file is, before the expected
    assert "only a byte-order mark" in what and "console" not in what


def test_a_lone_ncu_log_is_refused_with_the_command_that_records_values(tmp_path: Path) -> None:
    log = FIX / "h200_import" / "ncu_plain" / "record.log"
    assert "==PROF==" in log.read_text(encoding="utf-8")
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, log)
    assert "ncu's log" in exc.value.message and "ncu --nvtx -o report" in exc.value.hint


def test_an_nsight_systems_report_is_refused_by_its_content(tmp_path: Path) -> None:
    head = CASES / "16-ncu-2020-console" / "multi_one_device_head.qdrep"
    renamed = tmp_path / "profile.csv"  # by content, whatever the name
    renamed.write_bytes(head.read_bytes())
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, renamed)
    assert "an Nsight Systems report" in exc.value.message
    assert "ncu --nvtx -o report" in exc.value.hint  # the fix, once: not in the message too
    assert "ncu --nvtx -o report" not in exc.value.message


def test_an_nsight_systems_csv_is_refused_by_name(tmp_path: Path) -> None:
    nsys = tmp_path / "kern_sum.csv"  # the header nsys stats --format csv writes
    nsys.write_text('"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)",'
                    '"Max (ns)","StdDev (ns)","Name"\n"100.0","4000","4","1000.0","1000.0",'
                    '"900","1100","80.0","kernel"\n', encoding="utf-8")
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, nsys)
    assert "an Nsight Systems CSV export" in exc.value.message
    assert "ncu --nvtx -o report" in exc.value.hint  # the fix, once: not in the message too
    assert "ncu --nvtx -o report" not in exc.value.message


def test_an_old_details_page_without_launch_statistics_opens_with_a_note(tmp_path: Path):
    """Edited from the ncu 2020.1 file: its Launch Statistics rows removed (a profile of other
    sections, or a metric list): no grid or block anywhere; it opens, and says what follows."""
    lines = NCU_2020.read_text(encoding="utf-8").splitlines(keepends=True)
    edited = tmp_path / "no_launch_stats.log"
    edited.write_text("".join(ln for ln in lines if '"Launch Statistics"' not in ln),
                      encoding="utf-8")
    bundle = _import(tmp_path, edited)
    dur = _csv(edited)
    dur = dur[dur["Metric Name"] == "Duration"]
    assert sorted(_launch_times(bundle)[C.VALUE]) == sorted(dur["Metric Value"].map(_number))
    assert any("no grid or block size in the file" in n
               for n in read_manifest(bundle)["import_notes"])


def test_details_in_display_units_match_base_units_within_rounding(tmp_path: Path) -> None:
    """The same report's details page with display units (us, Ghz) and with base units: the
    same launches, regions and rule results; durations equal within the printed digits."""
    base = _import(tmp_path / "b", NESTED / "nested_details_base.csv")
    shown = _import(tmp_path / "d", NESTED / "nested_details.csv")
    frame = _csv(NESTED / "nested_details.csv")
    us = frame[frame["Metric Name"] == "Duration"]
    assert set(us["Metric Unit"]) == {"us"}
    a, b = _launch_times(base), _launch_times(shown)
    assert list(a[C.ANNOTATION]) == list(b[C.ANNOTATION])
    assert sorted(b[C.VALUE]) == sorted(_number(v) * 1e3 for v in us["Metric Value"])
    assert all(abs(x - y) <= 5.0 for x, y in zip(a[C.VALUE], b[C.VALUE]))
    notes = " ".join(read_manifest(shown)["import_notes"])
    assert "values in display units are rounded as printed" in notes
    how = read_manifest(shown)["provenance"]["how_read"]["nested_details.csv"]
    assert how["units"].startswith("display units")


def test_a_raw_page_without_grid_and_block_columns_uses_the_launch_metrics(tmp_path: Path):
    """Edited from case 09 (its Block Size and Grid Size columns dropped, as ncu 2019.x-2021
    raw pages print none): grid and block from launch__grid_size / launch__block_size."""
    frame = _csv(NVTX_RAW).drop(columns=["Block Size", "Grid Size"])
    edited = tmp_path / "old_raw.csv"
    frame.to_csv(edited, index=False, quoting=1)
    rows = frame[frame["ID"] != ""]
    times = _launch_times(_import(tmp_path, edited))
    assert sorted(times[C.GRID]) == sorted(rows["launch__grid_size"])  # as printed: "1,056"
    assert sorted(times[C.VALUE]) == sorted(rows["gpu__time_duration.sum"].map(_number))


def test_a_raw_csv_cut_in_its_head_says_so_in_words(tmp_path: Path) -> None:
    """Case 09's raw export cut after 600 characters: pyarrow's "Could not skip initial 3 rows
    from CSV file, either file is too short or header is larger than block size" reached the
    page (a new user's find); the message says what it means."""
    text = (CASES / "09-nvtx-in-csv" / "ranges_raw.csv").read_text(encoding="utf-8")
    cut = tmp_path / "ranges_raw.csv"
    cut.write_text(text[:600], encoding="utf-8")
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, cut)
    assert "ends before the first row the header announces" in exc.value.message
    assert "Could not skip" not in exc.value.message
