"""The regression gate (`python -m profiling_worker compare`) on real bundles: the H200 bundles
the app ships and cpu-backend jobs this test records with the worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from profiling_worker.bundle.gate import exit_codes as report
from profiling_worker.bundle.gate.judge import (DETECTABLE_PCT, DIFF_CI95_LOWER_PCT, DIFF_PCT,
                                                OUTCOME, REASON, GateOptions, Outcome, judge)
from profiling_worker.bundle.gate.sides import GateInputError, GateSide
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]
GATE_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_gate"


def compare(base: Path, cand: Path, tmp_path: Path, *extra: str
            ) -> tuple[subprocess.CompletedProcess[str], ET.Element, str]:
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(base),
                           str(cand), "--max-slowdown", "3%", "--junit", str(junit),
                           "--markdown", str(md), *extra],
                          capture_output=True, text=True, timeout=120, check=False)
    return proc, ET.parse(junit).getroot(), md.read_text(encoding="utf-8")


def outcomes(base: Path, cand: Path, **options: object) -> list[str]:
    result = judge(GateSide.load(base), GateSide.load(cand), GateOptions(**options))  # type: ignore[arg-type]
    return list(result.rows[OUTCOME])


def test_ncu_against_cupti_of_the_same_sweep_is_not_comparable(tmp_path: Path) -> None:
    proc, xml, md = compare(SCENARIOS / "h200-ncu-matmul-sweep", SCENARIOS / "h200-cupti-matmul-sweep",
                            tmp_path)
    assert proc.returncode == report.EXIT_NOT_JUDGED, proc.stdout
    assert outcomes(SCENARIOS / "h200-ncu-matmul-sweep", SCENARIOS / "h200-cupti-matmul-sweep") == [
        Outcome.NOT_COMPARABLE.value] * 15
    assert "backend: ncu vs cupti" in md and "nsight-python version: 0.9.6 vs 1.1.0" in md
    assert xml.get("tests") == "15" and xml.get("errors") == "15"
    assert md == proc.stdout


def test_a_difference_is_written_unlike_the_threshold_it_crossed() -> None:
    """A tester's find: at --max-slowdown 0.47 the H200 gate pair's n=4096 row (+0.4714 %) read
    "+0.47 % ...: beyond the 0.47 % allowed"; the figures now get the decimals they need."""
    rows = judge(GateSide.load(SCENARIOS / "h200-cupti-gate-base"),
                 GateSide.load(SCENARIOS / "h200-cupti-gate-again"),
                 GateOptions(max_slowdown_pct=0.47)).rows.set_index("n")
    row = rows.loc[4096]
    assert 0.47 < row[DIFF_PCT] < 0.475 and row[OUTCOME] == Outcome.AMBIGUOUS.value
    assert row[REASON].startswith(f"{row[DIFF_PCT]:+.3f} % (95 % CI ")  # not "+0.47 %"
    assert "straddles ±0.47 %" in row[REASON]
    assert rows.loc[8192, REASON].startswith(f"{rows.loc[8192, DIFF_PCT]:+.2f} %")


def test_a_durations_fall_is_never_below_minus_100_pct(tmp_path: Path) -> None:
    """A new user's find: two noisy cpu jobs read "-99.96 % (95 % CI -117.95 .. -81.97 %)", a
    fall a duration cannot have. Here the candidate is the H200 gate baseline at 1 % of its
    time with a spread as large as its mean: the interval's lower bound stops at -100 %."""
    import shutil

    import pandas as pd

    cand = tmp_path / "faster-and-noisy"
    shutil.copytree(SCENARIOS / "h200-cupti-gate-base", cand)
    table = cand / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet"
    agg = pd.read_parquet(table)
    agg[C.AVG] = agg[C.AVG] * 0.01
    agg[C.STD] = agg[C.AVG] * 3
    agg.to_parquet(table)
    rows = judge(GateSide.load(SCENARIOS / "h200-cupti-gate-base"), GateSide.load(cand),
                 GateOptions()).rows
    assert (rows[DIFF_PCT] - rows[DETECTABLE_PCT] < -100).all()  # the uncut bound
    assert (rows[DIFF_CI95_LOWER_PCT] == -100).all()
    assert all("(95 % CI -100.00 .. " in r for r in rows[REASON])

def test_a_bundle_against_itself_is_indistinguishable_everywhere(tmp_path: Path) -> None:
    sweep = SCENARIOS / "h200-cupti-matmul-sweep"
    proc, xml, _ = compare(sweep, sweep, tmp_path)
    assert proc.returncode == report.EXIT_OK, proc.stdout
    rows = judge(GateSide.load(sweep), GateSide.load(sweep), GateOptions()).rows
    assert set(rows[OUTCOME]) == {Outcome.SAME.value} and len(rows) == 15
    assert (rows[DIFF_PCT] == 0).all() and (rows[DETECTABLE_PCT] > 0).all()
    assert xml.get("failures") == "0" and xml.get("errors") == "0"


def test_cache_control_differs_not_comparable() -> None:
    rows = judge(GateSide.load(SCENARIOS / "h200-cupti-elementwise"),
                 GateSide.load(SCENARIOS / "h200-cupti-elementwise-cache-none"), GateOptions()).rows
    assert set(rows[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}
    # the context first; a side whose runs are two modes says so before what the runs give
    assert all(r.startswith("cache control: all vs none; ") and "; the runs alone: " in r
               for r in rows[REASON])


def test_zero_baseline_is_not_comparable() -> None:
    """x*2 and a+b at 2^20 write 0 DRAM bytes inside the region on the H200 (the write-back
    comes after it): no relative difference can be formed."""
    job = GateSide.load(SCENARIOS / "h200-ncu-elementwise")
    rows = judge(job, job, GateOptions(metric="dram__bytes_write.sum")).rows
    zero = rows[rows["BaselineAvg"] == 0]
    assert len(zero) == 2 and set(zero[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}
    assert set(zero[REASON]) == {"baseline mean is 0 byte"}


def record(store: Path, name: str, spec: dict[str, object], **env: str) -> Path:
    job = store / name
    job.mkdir(parents=True)
    (job / C.SPEC_FILE).write_text(json.dumps(spec))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env={**os.environ, "KPROF_KERNEL_DIRS": str(GATE_KERNELS), "OMP_NUM_THREADS": "1",
                               **env},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return job


@pytest.fixture(scope="module")
def cpu_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """gate_matmul on the cpu backend: a baseline, a 1-run job and a job with one config fewer
    (outcomes that do not depend on the host's timing). A regression and its reverse are judged
    on recorded H200 bundles (test_gate_verdicts.py): a cpu slowdown planted here failed under
    host load (issue 21). One torch thread: on a loaded host, thread oversubscription spreads a
    128^2 matmul over 0.1..90 ms."""
    store = tmp_path_factory.mktemp("gate-store")
    spec = {"kernels": ["gate_matmul"], "configs": [{"n": 128}, {"n": 256}], "runs": 20,
            "warmup": 1, "backend": "cpu"}
    return {"base": record(store, "base", spec),
            "one-run": record(store, "one-run", {**spec, "runs": 1}),
            "fewer": record(store, "fewer", {**spec, "configs": [{"n": 256}]})}


def test_cpu_too_few_runs_and_missing_config(cpu_jobs: dict[str, Path],
        tmp_path: Path) -> None:
    proc, xml, md = compare(cpu_jobs["base"], cpu_jobs["one-run"], tmp_path)
    assert proc.returncode == report.EXIT_NOT_JUDGED
    assert "(n=1)" in md and "nan" not in md.lower()  # one run: no '± nan' std dev
    result = judge(GateSide.load(cpu_jobs["base"]), GateSide.load(cpu_jobs["one-run"]),
                   GateOptions())
    # a job timed on a contended CPU (a busy CI host) adds that to every row's reason, first
    said = "; ".join(result.context + ["candidate has 1 run; at least 2 needed for a spread"])
    assert set(result.rows[REASON]) == {said}
    result = judge(GateSide.load(cpu_jobs["base"]), GateSide.load(cpu_jobs["fewer"]),
                   GateOptions())
    rows = result.rows.set_index("n")
    assert rows.loc[128, REASON] == "; ".join(result.context + ["only in the baseline"])
    # a busy host may also leave a side's runs two modes (the run audit): said in the reason
    audited = "runs are not one population" in str(rows.loc[256, REASON])
    assert (rows.loc[256, OUTCOME] != Outcome.NOT_COMPARABLE.value) == (
        not result.context and not audited)


def test_a_cpu_job_timed_on_a_contended_cpu_is_not_comparable(cpu_jobs: dict[str, Path],
                                                              tmp_path: Path) -> None:
    """A real cpu job timed while its CPU was shared with busy loops: its host times hold the
    wait, so against the baseline nothing is judged, and the reason says how much it waited."""
    from tests.contended_cpu import record_contended_job

    proc = record_contended_job(tmp_path / "contended")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = judge(GateSide.load(cpu_jobs["base"]), GateSide.load(tmp_path / "contended"),
                   GateOptions())
    fraction = json.loads((tmp_path / "contended" / C.MANIFEST_FILE).read_text())[
        "backend"]["host_contention"]["waiting_fraction"]
    said = [c for c in result.context if c.startswith("host contention, ")]
    assert len(said) == 1 and f" vs {fraction:,.2f}, over" in said[0], (said, fraction)
    assert "timed on a contended CPU" in result.context_headline
    assert set(result.rows[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}


def test_two_cpu_jobs_both_timed_on_a_contended_cpu_say_so_not_measured_differently(
        tmp_path: Path) -> None:
    """Issue 37: two cpu jobs of one spec, both timed on a contended CPU, were measured alike:
    the reason is the contention on both sides, with the recorded field and both values, never
    "measured differently" (the compare page, the share report and gate.md say the same)."""
    from profiling_worker.bundle.gate.report import not_comparable
    from tests.contended_cpu import record_contended_job

    for name in ("base", "again"):
        proc = record_contended_job(tmp_path / name)
        assert proc.returncode == 0, proc.stderr[-2000:]
    figures = [json.loads((tmp_path / n / C.MANIFEST_FILE).read_text())["backend"][
        "host_contention"] for n in ("base", "again")]
    waited = [f["waiting_fraction"] for f in figures]
    result = judge(GateSide.load(tmp_path / "base"), GateSide.load(tmp_path / "again"),
                   GateOptions())
    # the facts of the reason: the recorded field, both values, both over the threshold (the
    # words are the gate's: a loaded machine may add no other reason of its own here)
    (said,) = [c for c in result.context if "host_contention" in c]
    assert "backend.host_contention.waiting_fraction" in said, said
    assert f"{waited[0]:,.2f} vs {waited[1]:,.2f}" in said and "both sides" in said, said
    assert f"({figures[0]['threshold']:g})" in said, said  # the threshold both recorded
    assert not [c for c in result.context if "measured differently" in c], result.context
    assert result.context_headline.startswith("both jobs were timed on a contended CPU")
    proc, _, md = compare(tmp_path / "base", tmp_path / "again", tmp_path)
    assert proc.returncode == report.EXIT_NOT_JUDGED
    assert not_comparable(result) in md and "measured differently" not in md
    assert "| not comparable (above)" in md


def test_cpu_against_gpu_bundle_not_comparable(cpu_jobs: dict[str, Path]) -> None:
    result = judge(GateSide.load(SCENARIOS / "h200-cupti-matmul-sweep"),
                   GateSide.load(cpu_jobs["base"]), GateOptions())
    assert set(result.rows[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}
    assert "backend: cupti vs cpu" in result.context
    assert "GPU model: NVIDIA H200 vs host CPU" in result.context


def test_unreadable_bundle_exits_2(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(tmp_path),
                           str(SCENARIOS / "h200-cupti-matmul-sweep")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == report.EXIT_BAD_INPUT and "not a result bundle" in proc.stderr


def _without(src: Path, dest: Path, column: str, runs: bool) -> Path:
    """A copy of ``src`` whose aggregated table lacks ``column`` (a hand-made bundle), without
    its runs table unless ``runs``."""
    import shutil

    import pandas as pd

    shutil.copytree(src, dest)
    base = dest / C.TABLES_DIR / C.TABLE_AGGREGATED
    table = pd.read_parquet(base.with_suffix(".parquet")).drop(columns=[column])
    table.to_parquet(base.with_suffix(".parquet"), index=False)
    table.to_csv(base.with_suffix(".csv"), index=False)
    for path in [] if runs else (dest / C.TABLES_DIR).glob(f"{C.TABLE_RUNS}.*"):
        path.unlink()
    return dest


def test_a_hand_made_bundle_is_judged_from_its_runs_or_refused_by_column(tmp_path: Path) -> None:
    base, again = SCENARIOS / "h200-cupti-gate-base", SCENARIOS / "h200-cupti-gate-again"
    written = judge(GateSide.load(base), GateSide.load(again), GateOptions()).rows
    hand_made = _without(base, tmp_path / "base", C.STD, runs=True)
    rows = judge(GateSide.load(hand_made), GateSide.load(again), GateOptions()).rows
    assert rows[[OUTCOME, DIFF_PCT, DETECTABLE_PCT]].equals(
        written[[OUTCOME, DIFF_PCT, DETECTABLE_PCT]])  # StdDev recomputed as the worker wrote it
    no_runs = _without(base, tmp_path / "no-runs", C.STD, runs=False)
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(no_runs),
                           str(again)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == report.EXIT_BAD_INPUT
    assert "has no StdDev column and no runs table to recompute it from" in proc.stderr
    keyless = _without(base, tmp_path / "keyless", C.METRIC, runs=True)  # rebuilt from its runs
    assert judge(GateSide.load(keyless), GateSide.load(again), GateOptions()).rows[
        [OUTCOME, DIFF_PCT]].equals(written[[OUTCOME, DIFF_PCT]])
    with pytest.raises(GateInputError, match="has no Metric column"):
        GateSide.load(_without(base, tmp_path / "keyless-no-runs", C.METRIC, runs=False))


@pytest.mark.parametrize("args, says", [
    (["--metric", "gpu__time_duraton.sum"], "--metric gpu__time_duraton.sum is not in"),
    (["--max-slowdown", "0.03"], "a bare number is percent"),
    (["--max-slowdown", "inf"], "finite percentage"),
    (["--max-slowdown", "-3%"], "'-3%': the allowed slowdown must be a finite percentage >= 0"),
    (["--max-slowdown", "-0.5"], "'-0.5': the allowed slowdown must be"),
    (["--max-slowdown", "-.5%"], "'-.5%': the allowed slowdown must be"),
    (["--min-runs", "1"], "at least 2"),
])
def test_options_that_would_judge_nothing_or_the_wrong_thing_exit_2(args: list[str],
                                                                     says: str) -> None:
    """A typo in --metric judged nothing and exited 3 (looked like "not comparable"); 0.03 was
    0.03 %, a 100x stricter gate than a fraction meant (found by a new-user trial)."""
    base = SCENARIOS / "h200-cupti-gate-base"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(base),
                           str(SCENARIOS / "h200-cupti-gate-again"), *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == report.EXIT_BAD_INPUT and says in proc.stderr, proc.stderr


def test_a_bundle_against_itself_says_so(tmp_path: Path) -> None:
    same = SCENARIOS / "h200-cupti-gate-base"
    proc, _, _ = compare(same, same, tmp_path)
    assert proc.returncode == report.EXIT_OK and "the same bundle" in proc.stderr

def test_the_gate_pages_ci_job_uses_the_real_options_and_exit_codes() -> None:
    """docs/regression-gate.md's GitHub Actions job: its compare line parses with the worker's
    parser, and the exit codes it documents are the gate's."""
    import shlex

    from profiling_worker.cli import _parser

    recipe = (REPO / "docs" / "regression-gate.md").read_text(encoding="utf-8")
    line = recipe[recipe.index(".venv/bin/python -m profiling_worker compare"):]
    line = line[:line.index("\n          #")].replace("\\\n", " ")
    args = _parser().parse_args(shlex.split(line)[3:])
    assert (args.command, args.max_slowdown, str(args.junit)) == ("compare", 3.0, "gate/junit.xml")
    for code, words in ((report.EXIT_OK, "all judged same or improved"),
                        (report.EXIT_REGRESSED, "at least one regressed"),
                        (report.EXIT_NOT_JUDGED, "none regressed but something could not be judged"),
                        (report.EXIT_UNDECIDED, "none regressed or not comparable but at least "
                                                "one ambiguous or clock-explained")):
        assert f"**{code}** {words}" in recipe
    assert f"test $? -ge {report.EXIT_NOT_JUDGED}" in recipe
    assert report.EXIT_UNDECIDED > report.EXIT_NOT_JUDGED  # so -ge passes both


def imported(out: Path, *sources: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", *map(str, sources),
                           "--out", str(out)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_imported_reports_two_calls_ambiguous_and_against_a_worker_job(
        tmp_path: Path) -> None:
    """nsight-python 0.9.6 output from the H200 (tests/fixtures/h200_import): the same decorated
    function called twice, 3 runs each: every interval (over 5 % half-width) straddles the 3 %
    allowed, so ambiguous with the runs that would decide it; an import records no tool
    versions (its CSV names the GPU only), so against a worker bundle nothing is comparable."""
    src = REPO / "tests" / "fixtures" / "h200_import" / "nspy096"
    calls = [imported(tmp_path / f"call{i}", src / "two_calls" / f"processed_data-scale-{i}.csv",
                      src / "two_calls" / f"profiled_data-scale-{i}.csv") for i in (0, 1)]
    result = judge(GateSide.load(calls[0]), GateSide.load(calls[1]), GateOptions())
    assert list(result.rows[OUTCOME]) == [Outcome.AMBIGUOUS.value] * 4
    assert (result.rows["BaselineRuns"] == 3).all() and (result.rows[DETECTABLE_PCT] > 5).all()
    assert (result.rows["RunsToDecide"] > 3).all()
    assert "about 20 runs a side would likely decide it" in result.rows[REASON][0]
    derived = imported(tmp_path / "derived", src / "derived")
    result = judge(GateSide.load(SCENARIOS / "h200-ncu-matmul-sweep"), GateSide.load(derived),
                   GateOptions())
    assert set(result.rows[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}
    # nsight-python's CSV names the GPU (its GPU column): the same model, not "not recorded"
    assert not [c for c in result.context if c.startswith("GPU model")]
    assert "Nsight Compute version: 2025.3.1.0 vs not recorded" in result.context


def test_the_gpu_an_imported_csv_names_is_the_one_compared_and_shown(tmp_path: Path) -> None:
    """Case 04 (nsight-python CSVs from an H100: GPU, ComputeClock and MemoryClock columns)
    against the worker's H200 job: the gate names both GPUs and the memory clocks that differ,
    in MHz, and the job's page reads the same GPU (a new user saw "GPU model: not recorded vs
    NVIDIA H200" under a header that said H100)."""
    from app.core.environment import gpu_name
    from profiling_worker.bundle.schema.manifest import job_gpu, read_manifest

    h100 = imported(tmp_path / "c04", *sorted((REPO / "tests" / "fixtures" / "import_cases" /
                                               "04-normalized").glob("*.csv")))
    context = judge(GateSide.load(h100), GateSide.load(SCENARIOS / "h200-ncu-matmul-sweep"),
                    GateOptions(max_slowdown_pct=3.0)).context
    assert "GPU model: NVIDIA H100 80GB HBM3 vs NVIDIA H200" in context
    assert "max memory clock (MHz): 2619 vs 3201" in context
    assert not [c for c in context if c.startswith("max SM clock")]  # 1980 MHz on both
    manifest = read_manifest(h100)
    assert job_gpu(manifest) == {"name": "NVIDIA H100 80GB HBM3", "max_sm_clock_mhz": 1980,
                                 "max_mem_clock_mhz": 2619}
    assert gpu_name(manifest["environment"], 0) == "NVIDIA H100 80GB HBM3"


def test_the_tool_versions_compared_are_those_the_environment_report_writes() -> None:
    """One source (bundle/schema/tools.py): the gate reads each tool its backend uses under the key
    this machine's environment report writes it; a tool the backend does not use never counts."""
    from profiling_worker.probes.environment import probe_environment
    from profiling_worker.bundle.gate.context import context_differences, measurement_context
    from profiling_worker.bundle.schema import backends as B, tools as T
    from profiling_worker.bundle.schema.manifest import read_manifest

    env = probe_environment()  # this machine: no GPU, its installed packages
    assert {tool.key for tool in T.ALL} <= set(env)
    ncu_job = read_manifest(SCENARIOS / "h200-ncu-matmul-sweep")
    recorded = ncu_job["environment"]
    ctx = measurement_context(ncu_job)
    assert ctx["ncu"] == recorded["ncu"]["version"] and ctx["cupti_python"] is None
    assert ctx["nsight_python"] == recorded["nsight_python"]
    other_cupti = {**ncu_job, "environment": {**recorded, "cupti_python": "99.0"}}
    assert context_differences(ncu_job, other_cupti) == []  # ncu does not use cupti-python
    newer_ncu = {**ncu_job, "environment": {**recorded, "ncu": {"version": "2026.2.1.0"}}}
    assert context_differences(ncu_job, newer_ncu) == [
        f"Nsight Compute version: {recorded['ncu']['version']} vs 2026.2.1.0"]
    assert B.tools("unknown") == (T.NSIGHT_PYTHON,) and B.tools(B.CPU) == ()


def test_cpu_jobs_timed_with_other_torch_threads_are_not_comparable(
        cpu_jobs: dict[str, Path]) -> None:
    """The threads a cpu job was timed with (backend.cpu_threads, as the worker recorded them)
    change its times (a 64x64 matmul: microseconds with 1 on a busy 2-core host, milliseconds
    with 2), so two jobs of other counts are measured differently, and so is a job recorded
    before the worker set them (torch's default then) against one that says; a GPU job has
    none to compare."""
    from profiling_worker.bundle.gate.context import context_differences, measurement_context
    from profiling_worker.bundle.schema.manifest import read_manifest

    base = {**read_manifest(cpu_jobs["base"]), "warnings": []}
    base["backend"] = {**base["backend"], "host_contention": {}}  # a quiet host on both sides
    assert base["backend"]["cpu_threads"] == 1 and measurement_context(base)["cpu_threads"] == "1"
    two = {**base, "backend": {**base["backend"], "cpu_threads": 2}}
    older = {**base, "backend": {k: v for k, v in base["backend"].items() if k != "cpu_threads"}}
    assert context_differences(base, base) == []
    assert context_differences(base, two) == ["torch threads (cpu backend): 1 vs 2"]
    assert context_differences(older, base) == ["torch threads (cpu backend): not recorded vs 1"]
    assert context_differences(older, older) == []
    assert measurement_context(read_manifest(SCENARIOS / "h200-ncu-matmul-sweep"))[
        "cpu_threads"] is None


def test_the_worker_writes_the_run_audit_of_a_cpu_job(cpu_jobs: dict[str, Path]) -> None:
    """Every run x check in tables/run_audit (issue 36): the GPU checks say n/a on the host
    timer, host contention follows the backend's own figures, and the stored table is what the
    app would derive from the other files."""
    from profiling_worker.bundle.writer import bundle_tables
    from profiling_worker.bundle.schema import run_audit as A
    from profiling_worker.bundle.schema.manifest import read_manifest
    import pandas as pd

    job = cpu_jobs["base"]
    tables, manifest = bundle_tables(job), read_manifest(job)
    stored = tables[C.TABLE_RUN_AUDIT]
    assert len(stored) == 2 * 20 * len(A.CHECKS)
    by = stored.groupby(A.CHECK)[A.RESULT].agg(set)
    assert by[A.L2] == by[A.CLOCK] == by[A.LAUNCH_BOUND] == {A.NOT_APPLICABLE}
    warned = bool(manifest["backend"]["host_contention"].get("warning"))
    assert by[A.HOST_CONTENTION] == {A.FLAG if warned else A.PASS}
    assert by[A.TIMER] == {A.PASS}  # host times above 0
    derived = A.audit_runs({k: v for k, v in tables.items() if k != C.TABLE_RUN_AUDIT}, manifest)
    pd.testing.assert_frame_equal(stored.reset_index(drop=True), derived, check_dtype=False)
    summary = A.summary_frame(stored)
    assert list(summary[C.RUNS]) == [20, 20]


def test_a_cpu_gate_says_its_intervals_coverage_is_not_known(cpu_jobs: dict[str, Path],
                                                             tmp_path: Path) -> None:
    """Host timings were not part of the coverage study: the CLI text, Markdown and JUnit say
    the H200 figures do not apply, not the H200 figures."""
    from profiling_worker.bundle.schema import interval_words as W

    proc, xml, md = compare(cpu_jobs["base"], cpu_jobs["base"], tmp_path)
    said = W.line(W.RATIO, host_timer=True)
    assert "not known for host timings" in said
    assert md.endswith(f"|\n\n{said}\n") and proc.stdout.endswith(f"|\n\n{said}\n")
    assert {p.get("name"): p.get("value") for p in xml.iter("property")} == {"interval": said}


def _quiet_copy(job: Path, to: Path, **environment: object) -> Path:
    """A copy of a recorded cpu job whose manifest says a quiet host (no contention warning,
    which a loaded test machine may give) and ``environment`` over the recorded one
    (a value None: the key left out, as a bundle recorded before it existed)."""
    import shutil

    shutil.copytree(job, to)
    manifest = json.loads((to / C.MANIFEST_FILE).read_text())
    manifest["warnings"] = []
    manifest["backend"] = {**manifest["backend"], "host_contention": {}}
    env = {**manifest["environment"], **environment}
    manifest["environment"] = {k: v for k, v in env.items() if v is not None}
    (to / C.MANIFEST_FILE).write_text(json.dumps(manifest))
    return to


def test_cpu_jobs_of_another_host_cpu_are_not_comparable(cpu_jobs: dict[str, Path],
                                                         tmp_path: Path) -> None:
    """A new user's find: a copy of a cpu bundle saying host "otherbox", platform
    "Linux-5.4-aarch64" was judged "undecided / 2 ambiguous": the host CPU was no context
    field and a cpu job recorded no CPU model. The worker now records it (environment.cpu);
    the gate says the field and both values, and compares an older bundle (no model) by the
    architecture of its platform string."""
    from profiling_worker.bundle.gate.context import context_differences
    from profiling_worker.bundle.schema.manifest import read_manifest

    recorded = read_manifest(cpu_jobs["base"])["environment"]
    cpu = recorded["cpu"]
    assert cpu["model"] and cpu["count"] == os.cpu_count() and cpu["machine"] == "x86_64"
    base = _quiet_copy(cpu_jobs["base"], tmp_path / "base")
    aarch64 = _quiet_copy(cpu_jobs["base"], tmp_path / "aarch64", host="otherbox",
                          platform="Linux-5.4-aarch64", cpu=None)
    proc, _, md = compare(base, aarch64, tmp_path)
    assert proc.returncode == report.EXIT_NOT_JUDGED, proc.stdout
    assert "host CPU architecture (cpu backend): x86_64 vs aarch64" in md
    assert set(outcomes(base, aarch64)) == {Outcome.NOT_COMPARABLE.value}
    other_model = _quiet_copy(cpu_jobs["base"], tmp_path / "epyc", host="otherbox",
                              cpu={**cpu, "model": "AMD EPYC 9654 96-Core Processor"})
    assert context_differences(read_manifest(base), read_manifest(other_model)) == [
        f"host CPU model (cpu backend): {cpu['model']} vs AMD EPYC 9654 96-Core Processor"]
    # an older bundle (no model) of the same architecture on another host: comparable
    older = _quiet_copy(cpu_jobs["base"], tmp_path / "older", host="otherbox", cpu=None)
    assert context_differences(read_manifest(base), read_manifest(older)) == []
    assert context_differences(read_manifest(older), read_manifest(aarch64)) == [
        "host CPU architecture (cpu backend): x86_64 vs aarch64"]


def test_a_gpu_job_on_another_host_with_the_same_gpu_is_comparable(tmp_path: Path) -> None:
    """The host CPU is a cpu job's context only: a GPU job's durations are the GPU's, so the
    same H200 bundle said to come from an aarch64 host of another CPU is still comparable."""
    import shutil

    from profiling_worker.bundle.gate.context import context_differences, measurement_context
    from profiling_worker.bundle.schema.manifest import read_manifest
    from tests.scenarios import scenario_dir

    copy = tmp_path / "other-host"
    shutil.copytree(scenario_dir("h200-cupti-gate-base"), copy)
    manifest = read_manifest(copy)
    manifest["environment"] = {**manifest["environment"], "host": "otherbox",
                               "platform": "Linux-5.4-aarch64",
                               "cpu": {"model": "Neoverse-V2", "count": 72, "machine": "aarch64"}}
    (copy / C.MANIFEST_FILE).write_text(json.dumps(manifest))
    base = read_manifest(scenario_dir("h200-cupti-gate-base"))
    assert context_differences(base, manifest) == []
    assert measurement_context(manifest)["cpu_architecture"] is None
    assert set(outcomes(scenario_dir("h200-cupti-gate-base"), copy)) <= {
        Outcome.SAME.value, Outcome.AMBIGUOUS.value}


@pytest.mark.parametrize(("platform_text", "architecture"), [
    ("Linux-5.15.0-91-generic-x86_64-with-glibc2.35", "x86_64"), ("Linux-5.4-aarch64", "aarch64"),
    ("macOS-14.2.1-arm64-arm-64bit", "aarch64"), ("Windows-10-10.0.19041-SP0", None), ("", None)])
def test_the_architecture_of_a_platform_string(platform_text: str,
                                               architecture: str | None) -> None:
    from profiling_worker.bundle.gate.context import cpu_architecture

    assert cpu_architecture({"platform": platform_text}) == architecture
    assert cpu_architecture({"platform": platform_text, "cpu": {"machine": "AMD64"}}) == "x86_64"


def test_a_cupti_job_against_an_events_job_lines_up_each_sides_durations(
        tmp_path: Path) -> None:
    """A new user's find: ``compare`` of the CUPTI and the events fp16 jobs read "not
    comparable (above); only in the baseline" on every row, though the events job holds the
    same fp16 n=1024..8192 rows under its own duration metric. Without --metric each side is
    judged on its own backend's durations; the two metrics are the pair's context."""
    from tests.scenarios import scenario_dir

    cupti, events = scenario_dir("h200-cupti-j1-fp16"), scenario_dir("h200-events-j1-fp16")
    proc, xml, md = compare(cupti, events, tmp_path)
    assert proc.returncode == report.EXIT_NOT_JUDGED, proc.stdout
    result = judge(GateSide.load(cupti), GateSide.load(events), GateOptions())
    said = f"duration metric: {C.GPU_TIME} vs {C.EVENTS_TIME}"
    assert said in result.context and said in md
    assert result.metrics_text == f"{C.GPU_TIME} vs {C.EVENTS_TIME}" and result.metrics_text in md
    rows = result.rows
    assert list(rows["n"]) == [1024, 2048, 4096, 8192] and (rows["CandidateRuns"] == 10).all()
    assert set(rows[OUTCOME]) == {Outcome.NOT_COMPARABLE.value}
    assert not [r for r in rows[REASON] if "only in the" in r] and "only in the" not in md
    assert all("; the runs alone: " in r for r in rows[REASON])
    assert xml.get("tests") == "4"
    same = judge(GateSide.load(cupti), GateSide.load(cupti), GateOptions())
    assert same.candidate_metric is None and same.metrics_text == C.GPU_TIME
