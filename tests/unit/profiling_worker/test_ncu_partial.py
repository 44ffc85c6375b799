"""An Nsight Compute job keeps the calls finished before a cancel (backends/ncu_calls.py, issue
37), without a GPU: a stand-in for nsight-python runs the profiled function per config and run
(the worker's real run ranges and progress) and, as ncu does when a call ends, leaves a real
report in the call's files: the H200 report of job J1 (4 configs x 10 runs of fp16 matmul),
which the worker's reader (ncu_report) reads, keeping the launches of the call's configs. The
real collector is cancelled in tests/gpu/test_partial_gpu.py."""

from __future__ import annotations

import contextlib
import gzip
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from profiling_worker import cli
from profiling_worker.backends import base, ncu, ncu_calls
from profiling_worker.backends.channel import Channel
from profiling_worker.backends.run_side import BackendStatus
from profiling_worker.bundle.errors import Cancelled, KernelFailed, ProfilingFailed
from profiling_worker.bundle.schema import backends as B, columns as C, partial
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.registry import GuardedBody, kernel_error, load_registry
from profiling_worker.extract.ncu_report_reader import merged_summary, read_launches
from profiling_worker.job import runner
from tests.scenarios import scenario_dir, scenario_report
from tests.unit.profiling_worker.test_nsight_options import VERSIONS

HOW = "SIGTERM at 2026-12-07T19:00:00+00:00"
J1 = json.loads((scenario_dir("h200-ncu-j1-fp16") / "manifest.json").read_text())["spec"]
#: CALL_BUDGET_S for two of J1's configs a call: 10 runs x NCU_LAUNCH_S = 1.9 s a config.
TWO_A_CALL_S = 4.0
REPORT = "ncu-output-profiled-0.ncu-rep"
#: A process standing in for ncu (its command line names the report after ``-o``) with a child
#: standing in for the program it profiles (launch mode: the worker's copy); prints that pid.
FAKE_NCU = ("import subprocess, sys, time; child = subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(60)']); print(child.pid, flush=True); time.sleep(60)")


@pytest.fixture(scope="module")
def j1_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("j1") / REPORT
    with gzip.open(scenario_report("h200-ncu-j1-fp16")) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def stand_in(monkeypatch: pytest.MonkeyPatch, report: Path, version: str = "1.1.0",
             ncu_process: list[tuple[subprocess.Popen[bytes], int]] | None = None,
             collector: Any = None) -> tuple[Any, list]:
    """A stand-in nsight module and the configs of each call it was given. Its call runs the
    profiled function ``runs`` times per config, then writes ``report`` as the call's report
    (``<output_prefix>ncu-output-profiled-0.ncu-rep``). With ``ncu_process``, each call first
    starts a process standing in for ncu (:data:`FAKE_NCU`) and notes it with its child's pid.
    ``collector(values, run)`` is called before each run inside ``try: ... except Exception``,
    as nsight-python's ``run_profile_session`` calls a RUN-scope info collector."""
    name = f"ncu_stand_in_{version.replace('.', '_')}"
    calls: list[list[tuple[Any, ...]]] = []

    def kernel(**options: Any) -> Any:
        def decorate(func: Any) -> Any:
            def run(configs: list[tuple[Any, ...]]) -> None:
                calls.append(configs)
                target = f"{options['output_prefix']}{REPORT}"
                if ncu_process is not None:  # its program runs before the profiled runs
                    ncu = subprocess.Popen([sys.executable, "-c", FAKE_NCU, "-o", target],
                                           stdout=subprocess.PIPE)
                    ncu_process.append((ncu, int(ncu.stdout.readline())))
                for values in configs:
                    for run in range(options["runs"]):
                        try:
                            if collector is not None:
                                collector(values, run)
                        except Exception:  # nsight-python warns and goes on
                            pass
                        func(*values)
                shutil.copyfile(report, target)
            return run
        return decorate

    kernel.__signature__ = inspect.signature(VERSIONS[version])  # type: ignore[attr-defined]
    module = types.SimpleNamespace(__name__=name, __version__=version,
                                   analyze=types.SimpleNamespace(kernel=kernel),
                                   annotate=lambda _n: None)
    monkeypatch.setitem(sys.modules, "nvtx",  # the run ranges: no NVTX without a profiler here
                        types.SimpleNamespace(annotate=lambda *a, **k: contextlib.nullcontext()))
    return module, calls


def cancel_at(values: tuple[Any, ...], run: int) -> Any:
    """A kernel body that raises Cancelled in run ``run`` of the config of ``values``, as the
    worker's signal handler does where a cancel lands."""
    seen: dict[tuple[Any, ...], int] = {}

    def body(*config: Any, annotate: Any = None) -> None:
        seen[config] = seen.get(config, -1) + 1
        if config == values and seen[config] == run:
            raise Cancelled("the job was cancelled", "", HOW)
    return body


def collect(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, report: Path,
            bodies: list[Any] | None = None, budget_s: float = TWO_A_CALL_S,
            **stand: Any) -> tuple[Any, list, list]:
    """:func:`ncu.collect_ncu` of J1 through :func:`stand_in` (``stand``: its options), at most
    ``budget_s`` estimated a call: the result, each call's configs, the events."""
    monkeypatch.setattr(ncu_calls, "CALL_BUDGET_S", budget_s)
    module, calls = stand_in(monkeypatch, report, **stand)
    events: list[tuple[str, dict[str, Any]]] = []
    out = tmp_path / C.NSIGHT_DIR
    out.mkdir()
    result = ncu.collect_ncu(module, validate_spec({**J1, "thermal_mode": "off"}), bodies or [],
                             out, lambda kind, **fields: events.append((kind, fields)))
    return result, calls, events


def _files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / C.NSIGHT_DIR).iterdir())


def _summary(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / C.REPORT_SUMMARY_FILE).read_text())


# the plan of calls --------------------------------------------------------------------------

def test_j1_is_one_call_with_its_files_where_they_were() -> None:
    spec = validate_spec(J1)
    assert ncu_calls.plan(spec) == [[0, 1, 2, 3]]
    assert ncu_calls.prefix([0, 1, 2, 3], 4) == ""


def test_a_job_over_the_budget_is_split_into_calls_of_the_budget() -> None:
    configs = [{"n": n} for n in range(64, 64 * 17, 64)]  # 16 configs of 100 runs: 19 s each
    spec = validate_spec({**J1, "configs": configs, "runs": 100})
    calls = ncu_calls.plan(spec)
    per_config = 100 * ncu_calls.NCU_LAUNCH_S
    size = int(ncu_calls.CALL_BUDGET_S // per_config)
    assert sum(calls, []) == list(range(16))
    assert all(len(c) == size for c in calls[:-1]) and 0 < len(calls[-1]) <= size
    # the warm-up's times count where they are known (attach mode)
    slow = ncu_calls.plan(spec, [ncu_calls.CALL_BUDGET_S / 100] * 16)
    assert slow == [[i] for i in range(16)]


def test_a_deep_dive_stays_one_call() -> None:
    configs = [{"n": n} for n in range(64, 64 * 17, 64)]
    spec = validate_spec({**J1, "configs": configs, "runs": 100, "section_set": "full"})
    assert ncu_calls.plan(spec) == [list(range(16))]


# calls of a split job -----------------------------------------------------------------------

def test_each_call_is_read_before_the_next(monkeypatch, tmp_path, j1_report) -> None:
    result, calls, events = collect(monkeypatch, tmp_path, j1_report)
    values = [(c["n"],) for c in J1["configs"]]
    assert calls == [values[:2], values[2:]]
    assert _files(tmp_path) == [f"configs0-1-{REPORT}", f"configs2-3-{REPORT}",
                                "report_summary.json"]
    assert [f["ncu_call_read"] for kind, f in events if "ncu_call_read" in f] == [[0, 1], [2, 3]]
    (plan,) = [f for kind, f in events if kind == "log" and "calls" in f]
    assert plan["calls"] == [[0, 1], [2, 3]]
    # the launches are the report's, each config from its own call's report
    whole, _device = read_launches(j1_report, J1["metrics"])
    got = result.launches.sort_values([C.CONFIG, C.RUN])
    assert list(got[C.VALUE]) == [r[C.VALUE] for r in sorted(
        whole, key=lambda r: (r[C.CONFIG], r[C.RUN]))]
    assert result.shortfall is None
    summary = _summary(tmp_path)  # of both reports (each J1's whole report here: 40 launches)
    assert summary["launches"] == 80 and sum(summary["kernels"].values()) == 80
    assert summary["report"] == f"configs0-1-{REPORT}, configs2-3-{REPORT}"
    done = [f["done"] for kind, f in events if kind == "progress"]
    assert done == list(range(1, 41))


def test_a_cancel_keeps_the_calls_read_before_it(monkeypatch, tmp_path, j1_report) -> None:
    """The cancel lands in run 2 of n=8192, in the second call after n=4096 ran all its runs:
    the first call's configs are kept with its report's values, the second call's files are
    removed, and n=4096 is named as lost with it."""
    body = cancel_at((8192,), 2)
    result, calls, _events = collect(monkeypatch, tmp_path, j1_report, [body])
    short = result.shortfall
    assert (short.measured, short.cancelled, short.cut, short.failed) == ([0, 1], HOW, 3, {})
    assert "n=4096" in short.lost and short.lost == ncu_calls.lost_text([2], J1["configs"])
    assert sorted(result.launches[C.CONFIG].unique()) == [0, 1]
    whole, _device = read_launches(j1_report, J1["metrics"])
    assert sorted(result.launches[C.VALUE]) == sorted(r[C.VALUE] for r in whole
                                                     if r[C.CONFIG] in (0, 1))
    assert _files(tmp_path) == [f"configs0-1-{REPORT}", "report_summary.json"]
    assert _summary(tmp_path)["report"] == f"configs0-1-{REPORT}"  # the kept call's only
    record = partial.manifest_entries(short, J1["configs"])[partial.CONFIGS_KEY]
    assert [m["config"] for m in record["not_measured"]] == [2, 3]
    assert short.lost in partial.note_of(record)


def test_a_cancel_in_the_first_call_keeps_nothing(monkeypatch, tmp_path, j1_report) -> None:
    with pytest.raises(Cancelled) as raised:
        collect(monkeypatch, tmp_path, j1_report, [cancel_at((2048,), 0)])
    assert raised.value.how == HOW


def test_a_cancel_in_a_job_of_one_call_keeps_nothing(monkeypatch, tmp_path, j1_report) -> None:
    with pytest.raises(Cancelled):
        collect(monkeypatch, tmp_path, j1_report, [cancel_at((8192,), 5)], budget_s=60.0)


def test_a_cancelled_calls_ncu_and_its_program_are_stopped(monkeypatch, tmp_path,
                                                         j1_report) -> None:
    """nsight-python 1.1 leaves the ncu it started for a call unwaited-for when the call is
    left by an exception, and 0.9.x's subprocess.run kills only its shell: the worker ends the
    process that writes the cut call's report, and the program it runs, not the first call's
    (ended here by the test, as ncu ends after a call; its program left running) nor another
    job's; and the launch-mode child of the cut call whose ncu is gone."""
    started: list[tuple[subprocess.Popen[bytes], int]] = []
    out = tmp_path / C.NSIGHT_DIR
    # a launch-mode child whose ncu died with its shell, and another job's child of that call
    orphan, other_job = (subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**os.environ, ncu_calls.CALL_ENV: ncu_calls.call_value([2, 3], folder)})
        for folder in (out, tmp_path / "other" / C.NSIGHT_DIR))

    def end_first_call(*config: Any, annotate: Any = None) -> None:
        if config == (4096,) and started[0][0].poll() is None:
            started[0][0].terminate()
            started[0][0].wait()

    result, _calls, _events = collect(monkeypatch, tmp_path, j1_report,
                                      [end_first_call, cancel_at((4096,), 0)],
                                      ncu_process=started)
    assert result.shortfall.measured == [0, 1] and len(started) == 2
    (first, first_child), (cut, cut_child) = started
    assert cut.wait(timeout=5) == -signal.SIGTERM  # stopped by the worker
    assert not ncu_calls._alive(cut_child)
    assert orphan.wait(timeout=5) == -signal.SIGTERM
    # not the cut call's: left alone
    assert ncu_calls._alive(first_child) and other_job.poll() is None
    os.kill(first_child, signal.SIGKILL)
    other_job.kill()
    other_job.wait()


def test_a_cancel_an_info_collector_swallowed_is_raised_at_the_next_run(
        monkeypatch, tmp_path, j1_report) -> None:
    """The signal lands while nsight-python calls an info collector (1.1: around every run),
    where its ``except Exception`` swallows the worker's Cancelled: the next run raises it
    again, and the job keeps the first call, as with a cancel that landed in a kernel."""
    watch = runner.CancelWatch(Channel(tmp_path, None))

    def signal_lands(values: tuple[Any, ...], run: int) -> None:
        if values == (4096,) and run == 3:
            watch.on_sigterm(signal.SIGTERM, None)  # the real handler, as the signal calls it

    try:
        result, _calls, _events = collect(monkeypatch, tmp_path, j1_report,
                                          collector=signal_lands)
    finally:
        watch.uninstall()
    short = result.shortfall
    assert short is not None and short.measured == [0, 1] and short.cut == 2
    assert short.cancelled.startswith("SIGTERM at")
    base.raise_pending_cancel()  # the job is over: nothing pending for the next one


def test_a_warm_workers_next_job_starts_with_no_cancel_pending(tmp_path) -> None:
    base.note_cancel(Cancelled("the job was cancelled", "", HOW))  # a job that ended uncleared
    watch = runner.CancelWatch(Channel(tmp_path, None))
    watch.install()
    try:
        base.raise_pending_cancel()  # the next job's first run goes on
    finally:
        watch.uninstall()


def test_a_cut_call_run_elsewhere_is_dropped_whole(monkeypatch, tmp_path, j1_report) -> None:
    """In launch mode the child under ncu runs the call: the parent saw no run of it, so no
    config is named as cut and the call's configs are said lost together."""
    stopped = Cancelled("the job was cancelled", "", HOW)
    module, _calls = stand_in(monkeypatch, j1_report, "0.9.6")
    kernel = module.analyze.kernel

    def cancelled_second_call(**options: Any) -> Any:
        if "configs2-3" in options["output_prefix"]:
            return lambda _func: lambda configs: (_ for _ in ()).throw(stopped)
        return kernel(**options)

    cancelled_second_call.__signature__ = kernel.__signature__  # type: ignore[attr-defined]
    module.analyze.kernel = cancelled_second_call
    monkeypatch.setattr(ncu_calls, "CALL_BUDGET_S", TWO_A_CALL_S)
    out = tmp_path / C.NSIGHT_DIR
    out.mkdir()
    result = ncu.collect_ncu(module, validate_spec({**J1, "thermal_mode": "off"}), [], out,
                             lambda *_a, **_k: None)
    short = result.shortfall
    assert (short.measured, short.cut) == ([0, 1], None)
    assert short.lost == ncu_calls.dropped_call_text([2, 3], J1["configs"], "under way")
    assert "n=4096" in short.lost and "n=8192" in short.lost


# the launch-mode child ----------------------------------------------------------------------

def test_the_launch_child_runs_the_call_its_parent_named(monkeypatch, tmp_path,
                                                          j1_report) -> None:
    monkeypatch.setenv(B.LAUNCH_CHILD_ENV, "signature")
    monkeypatch.setenv(ncu_calls.CALL_ENV, ncu_calls.call_value([2, 3], tmp_path))
    module, calls = stand_in(monkeypatch, j1_report, "0.9.6")
    events: list[tuple[str, dict[str, Any]]] = []
    spec = validate_spec({**J1, "thermal_mode": "off"})
    assert ncu.collect_ncu(module, spec, [], tmp_path,
                           lambda kind, **f: events.append((kind, f))) is None
    assert calls == [[(4096,), (8192,)]]
    assert [f["done"] for kind, f in events if kind == "progress"] == list(range(21, 41))
    assert ncu.NcuBackend().warm_configs(spec) == [2, 3]


def test_a_child_without_a_named_call_runs_every_config(monkeypatch) -> None:
    spec = validate_spec(J1)
    assert ncu.NcuBackend().warm_configs(spec) is None  # not a child: every config warms up
    monkeypatch.setenv(B.LAUNCH_CHILD_ENV, "signature")
    for named in ("", "x", "7", "1,9"):
        monkeypatch.setenv(ncu_calls.CALL_ENV, named)
        assert ncu_calls.child_configs(spec) == [0, 1, 2, 3], named


def test_the_parent_names_the_call_only_while_it_runs(monkeypatch, tmp_path, j1_report) -> None:
    seen: list[str | None] = []
    body = lambda *_c, annotate=None: seen.append(os.environ.get(ncu_calls.CALL_ENV))  # noqa
    collect(monkeypatch, tmp_path, j1_report, [body])
    out = tmp_path / C.NSIGHT_DIR
    assert set(seen[:20]) == {ncu_calls.call_value([0, 1], out)}
    assert set(seen[20:]) == {ncu_calls.call_value([2, 3], out)}
    assert ncu_calls.CALL_ENV not in os.environ


def test_the_summaries_of_the_calls_add_up() -> None:
    one = {"report": "a", "launches": 3, "kernels": {"k1": 2, "k2": 1}, "metrics_per_launch": 5,
           "rule_results": []}
    two = {"report": "b", "launches": 4, "kernels": {"k2": 4}, "metrics_per_launch": 5,
           "rule_results": [{"kernel": "k2"}]}
    merged = merged_summary([one, two])
    assert merged == {"report": "a, b", "launches": 7, "kernels": {"k2": 5, "k1": 2},
                      "metrics_per_launch": 5, "rule_results": [{"kernel": "k2"}]}
    assert merged_summary([one]) == one


def test_summarize_reads_every_calls_report(tmp_path, j1_report, capsys) -> None:
    """``profiling_worker summarize`` of a job of two calls writes the summary the job wrote:
    both reports (a gzipped twin of a plain report counted once)."""
    nsight = tmp_path / C.NSIGHT_DIR
    nsight.mkdir()
    for start in ("configs0-1-", "configs2-3-"):
        shutil.copyfile(j1_report, nsight / f"{start}{REPORT}")
    shutil.copyfile(scenario_report("h200-ncu-j1-fp16"), nsight / f"configs2-3-{REPORT}.gz")
    assert cli.main(["summarize", str(tmp_path)]) == 0
    summary = _summary(tmp_path)
    assert summary["report"] == f"configs0-1-{REPORT}, configs2-3-{REPORT}"
    assert summary["launches"] == 80


def test_a_counter_resumed_counts_on() -> None:
    spec = validate_spec(J1)
    events: list[dict[str, Any]] = []
    counter = base.RunCounter(spec, lambda _k, **f: events.append(f))
    counter.resume_at(20)
    assert counter.next((4096,)) == (2, 0) and events[-1]["done"] == 21


# a later call that fails --------------------------------------------------------------------

#: What the failing kernel and the failing ncu say (their error text must reach the manifest).
REFUSED = "size 8192 is refused by this kernel"
NCU_ERROR = "==ERROR== stand-in ncu: the profiled process failed"


def raises_at(values: tuple[Any, ...], run: int) -> Any:
    """A kernel body as the worker builds it (registry.GuardedBody: its error a KernelFailed
    naming the kernel and the config) that raises ValueError in run ``run`` of ``values``."""
    seen: dict[tuple[Any, ...], int] = {}

    def body(*config: Any, annotate: Any = None) -> None:
        seen[config] = seen.get(config, -1) + 1
        if config == values and seen[config] == run:
            raise ValueError(REFUSED)
    return GuardedBody("matmul", body, ("n",))


def second_call(monkeypatch: pytest.MonkeyPatch, report: Path, version: str,
                instead: Any) -> Any:
    """:func:`stand_in` whose call of configs 2-3 is ``instead(options, configs)`` (what ncu
    and a launch-mode child do there), the first call as the stand-in does it."""
    module, _calls = stand_in(monkeypatch, report, version)
    kernel = module.analyze.kernel

    def kernel_of(**options: Any) -> Any:
        if "configs2-3" in options["output_prefix"]:
            return lambda _func: lambda configs: instead(options, configs)
        return kernel(**options)

    kernel_of.__signature__ = kernel.__signature__  # type: ignore[attr-defined]
    module.analyze.kernel = kernel_of
    monkeypatch.setattr(ncu_calls, "CALL_BUDGET_S", TWO_A_CALL_S)
    return module


def _collect_with(module: Any, tmp_path: Path, bodies: list[Any] | None = None) -> Any:
    out = tmp_path / C.NSIGHT_DIR
    out.mkdir()
    return ncu.collect_ncu(module, validate_spec({**J1, "thermal_mode": "off"}), bodies or [],
                           out, Channel(tmp_path, None).emit)


def ncu_exits_with_an_error(report: Path) -> Any:
    """The second call as ncu that exits non-zero after the runs: its log and a report are
    written (what is in that report is not known), and nsight-python raises its
    ProfilerException with the log's errors."""
    def call(options: dict[str, Any], _configs: Any) -> None:
        target = Path(f"{options['output_prefix']}{REPORT}")
        shutil.copyfile(report, target)
        target.with_suffix(".log").write_text(NCU_ERROR + "\n")
        raise ProfilerException(f"{NCU_ERROR} (see {target.with_suffix('.log')})")
    return call


class ProfilerException(Exception):
    """nsight-python's exception of a call whose ncu exited non-zero (nsight.exceptions)."""


def test_a_kernel_that_raises_in_a_later_call_keeps_the_calls_read_before_it(
        monkeypatch, tmp_path, j1_report) -> None:
    """Attach mode: the kernel raises in run 2 of n=8192, in the second call after n=4096 ran
    all its runs: the first call's configs are kept with their report's values, n=8192 failed
    with the kernel's own error, n=4096 dropped with its call, and nothing else of it is kept."""
    result, _calls, events = collect(monkeypatch, tmp_path, j1_report, [raises_at((8192,), 2)])
    short = result.shortfall
    assert (short.measured, list(short.failed), short.cancelled, short.cut) == ([0, 1], [3],
                                                                                 None, None)
    assert REFUSED in short.failed[3] and "n=8192" in short.failed[3]
    assert short.kind == KernelFailed.kind
    assert short.lost == ncu_calls.dropped_call_text([2, 3], J1["configs"], "that failed")
    whole, _device = read_launches(j1_report, J1["metrics"])
    assert sorted(result.launches[C.CONFIG].unique()) == [0, 1]
    assert sorted(result.launches[C.VALUE]) == sorted(r[C.VALUE] for r in whole
                                                     if r[C.CONFIG] in (0, 1))
    assert _files(tmp_path) == [f"configs0-1-{REPORT}", "report_summary.json"]
    assert _summary(tmp_path)["report"] == f"configs0-1-{REPORT}"
    assert [f["ncu_call_failed"] for _k, f in events if "ncu_call_failed" in f] == [[2, 3]]
    record = partial.manifest_entries(short, J1["configs"])[partial.CONFIGS_KEY]
    assert [m["config"] for m in record["not_measured"]] == [2, 3]
    assert record["cancelled"] is None
    why = {m["label"]: m["why"] for m in record["not_measured"]}
    assert why["n=8192"].startswith("failed: ") and REFUSED in why["n=8192"]
    assert short.dropped == [2] and "dropped" in why["n=4096"]  # it ran: not "not run"
    note = partial.note_of(record)
    assert REFUSED in note and "n=8192" in note and "n=4096" in note


def test_ncu_that_fails_in_a_later_call_keeps_the_calls_read_before_it(
        monkeypatch, tmp_path, j1_report) -> None:
    """ncu exits with an error in the second call: no kernel raised, so both of its configs
    are said failed with ncu's error; the report it wrote is never read (removed), its log is
    kept and named."""
    module = second_call(monkeypatch, j1_report, "1.1.0", ncu_exits_with_an_error(j1_report))
    result = _collect_with(module, tmp_path)
    short = result.shortfall
    assert (short.measured, sorted(short.failed), short.cancelled) == ([0, 1], [2, 3], None)
    assert short.dropped == []
    assert NCU_ERROR in short.failed[2] and NCU_ERROR not in short.failed[3]  # said once
    assert "n=2048" not in short.failed[3] and "n=4096" in short.failed[3]
    assert short.kind == ProfilingFailed.kind and "ncu log" in short.hint
    log = f"configs2-3-{Path(REPORT).stem}.log"
    assert _files(tmp_path) == [f"configs0-1-{REPORT}", log, "report_summary.json"]
    assert short.lost == ncu_calls.dropped_call_text([2, 3], J1["configs"], "that failed",
                                                     [f"{C.NSIGHT_DIR}/{log}"])
    assert sorted(result.launches[C.CONFIG].unique()) == [0, 1]


def child_raises(tmp_path: Path, ncu_exit: int) -> Any:
    """The second call in launch mode: its child (the worker's copy under ncu) counts the runs
    of n=4096 and the first of n=8192, where the kernel raises: the child's progress and error
    events in the job's events.jsonl, as runner.run_child writes them; then ncu exits
    ``ncu_exit`` (nsight-python raises for non-zero) without a report."""
    error = kernel_error("matmul", (8192,), ValueError(REFUSED), ("n",))

    def call(_options: dict[str, Any], _configs: Any) -> None:
        child = Channel(tmp_path, None)
        for config, run in [(2, r) for r in range(10)] + [(3, 0)]:
            child.emit("progress", done=(config - 2) * 10 + run + 21, total=40,
                       stage="profiling", config=config, run=run)
        child.emit("error", **error.to_event_fields())
        if ncu_exit:
            raise ProfilerException(NCU_ERROR)
    return call


@pytest.mark.parametrize("ncu_exit", [1, 0])
def test_a_launch_childs_kernel_that_raised_in_a_later_call_is_named(
        monkeypatch, tmp_path, j1_report, ncu_exit) -> None:
    """Launch mode: the child runs the second call and its kernel raises at n=8192; the
    parent keeps the first call, names n=8192 failed with the child's own error (read from
    its events), whether ncu then exits with an error or not (the child's error event says
    the call failed: its report would not be whole)."""
    module = second_call(monkeypatch, j1_report, "0.9.6", child_raises(tmp_path, ncu_exit))
    result = _collect_with(module, tmp_path)
    short = result.shortfall
    expected = kernel_error("matmul", (8192,), ValueError(REFUSED), ("n",))
    assert (short.measured, short.failed, short.dropped) == ([0, 1], {3: expected.message}, [2])
    assert short.kind == KernelFailed.kind and short.hint == expected.hint
    assert sorted(result.launches[C.CONFIG].unique()) == [0, 1]


def test_a_kernel_that_raises_in_the_first_call_fails_the_job_naming_it(
        monkeypatch, tmp_path, j1_report) -> None:
    with pytest.raises(KernelFailed) as raised:
        collect(monkeypatch, tmp_path, j1_report, [raises_at((2048,), 3)])
    assert REFUSED in raised.value.message and "n=2048" in raised.value.message


def test_ncu_that_fails_in_the_first_call_fails_the_job_naming_it(
        monkeypatch, tmp_path, j1_report) -> None:
    module, _calls = stand_in(monkeypatch, j1_report)
    fail = ncu_exits_with_an_error(j1_report)
    module.analyze.kernel = lambda **options: lambda _func: lambda configs: fail(options, configs)
    with pytest.raises(ProfilingFailed) as raised:
        _collect_with(module, tmp_path)
    assert NCU_ERROR in raised.value.message


# the job the runner writes of it ------------------------------------------------------------

def record_failed_ncu_job(monkeypatch: pytest.MonkeyPatch, job_dir: Path, report: Path,
                          ncu_fails: bool = False) -> Path:
    """Run J1 (4 configs, two a call) through the worker's ``runner.run_job`` with the stand-in
    nsight in attach mode, its second call failing: a kernel that raises at n=8192
    (:func:`raises_at`), or with ``ncu_fails`` ncu exiting with an error
    (:func:`ncu_exits_with_an_error`). The runner's own tables, manifest and error around the
    stand-in's calls: only the probe (no GPU, no ncu here: the recorded H200 job's environment
    stands in) and the backend's run (the stand-in nsight) are replaced. Returns ``job_dir``."""
    recorded = json.loads((scenario_dir("h200-ncu-j1-fp16") / C.MANIFEST_FILE).read_text())
    spec = validate_spec({**J1, "thermal_mode": "off"})
    job_dir.mkdir(parents=True)
    (job_dir / C.SPEC_FILE).write_text(json.dumps(spec.to_json()), encoding="utf-8")
    module = second_call(monkeypatch, report, "1.1.0", ncu_exits_with_an_error(report)) \
        if ncu_fails else stand_in(monkeypatch, report)[0]
    bodies = [] if ncu_fails else [raises_at((8192,), 2)]
    monkeypatch.setattr(ncu_calls, "CALL_BUDGET_S", TWO_A_CALL_S)

    def prepare(job_dir: Path, manifest: dict[str, Any], *_args: Any) -> runner.Prepared:
        manifest.update(spec=spec.to_json(), spec_hash=spec.spec_hash(),
                        environment=recorded["environment"])
        status = BackendStatus(True, recorded["backend"]["reason"],
                               nsight_mode=recorded["backend"]["nsight_mode"])
        return runner.Prepared(spec, load_registry(), status, {}, [])

    def collect(spec: Any, _registry: Any, job_dir: Path, _status: Any, channel: Channel,
                *_args: Any) -> Any:
        return ncu.collect_ncu(module, spec, bodies, job_dir / C.NSIGHT_DIR, channel.emit)

    monkeypatch.setattr(runner, "prepare", prepare)
    monkeypatch.setattr(runner, "collect", collect)
    (job_dir / C.NSIGHT_DIR).mkdir()
    old = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert runner.run_job(job_dir, Channel(job_dir, None)) == 1  # not done
    finally:
        signal.signal(signal.SIGTERM, old[0])
        signal.signal(signal.SIGINT, old[1])
    return job_dir


def test_the_job_of_a_later_call_that_failed_is_failed_with_the_calls_read_kept(
        monkeypatch, tmp_path, j1_report) -> None:
    """The runner writes the first call's configs as the job's tables (their values the
    report's), its manifest says failed, partial, which configs were not measured and why,
    and its error names the config and the kernel's error, with the worker log's tail."""
    job = record_failed_ncu_job(monkeypatch, tmp_path / "20270101-000000-ncu-0001", j1_report)
    manifest = read_manifest(job)
    assert manifest["status"] == JobStatus.FAILED.value
    record = manifest[partial.CONFIGS_KEY]
    assert (record["measured"], record["total"], record["cancelled"]) == ([0, 1], 4, None)
    assert [m["config"] for m in record["not_measured"]] == [2, 3]
    assert manifest[partial.PARTIAL_KEY] == [partial.note(manifest)]
    error = manifest["error"]
    assert error["kind"] == KernelFailed.kind and error["message"].startswith("1 of 4 configs")
    assert REFUSED in error["message"] and "n=8192" in error["message"]
    assert "the configs measured are kept" in error["hint"] and "log_tail" in error
    text = partial.status_text(manifest["status"], manifest)
    assert text.startswith(JobStatus.FAILED.value) and "partial" in text and "2 of 4" in text
    bundle = load_bundle(job)
    runs = bundle.table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0, 1]
    whole, _device = read_launches(j1_report, J1["metrics"])
    assert sorted(runs[runs[C.METRIC] == C.GPU_TIME][C.VALUE]) == sorted(
        r[C.VALUE] for r in whole if r[C.CONFIG] in (0, 1) and r[C.METRIC] == C.GPU_TIME)
    assert sorted(bundle.table(C.TABLE_AGGREGATED)[C.CONFIG].unique()) == [0, 1]
