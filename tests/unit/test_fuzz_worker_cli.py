"""Fuzzed ``python -m profiling_worker run JOB``: 1,000 generated cases of spec bytes (JSON
values near a valid spec, cut short, bombs, other encodings, binary), job-folder states
(entries of the wrong kind, links, a finished result, no spec) and user kernel files (that
print, raise, exit, do not parse, shadow a built-in). Each case runs the worker's CLI entry
(``cli.main``) in a child forked by a fork server - its own fds, signals and environment, as a
subprocess has, without paying the interpreter start 1,000 times; the server is a fresh
interpreter holding only what the worker imports, so a fork copies a small process, not pytest
(in a whole-suite run pytest holds torch and the apptests' memory, and each fork cost about twice
as much) - and must end within 10 s in a clear state:
exit 0/1 with a manifest whose error names the problem (never ``internal``, no traceback in a
spec or folder error), or exit 2 for nothing to run; stdout carries only event lines.
KPROF_FUZZ_CLI changes the count."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.events import parse_line

REPO = Path(__file__).resolve().parents[2]
CASE_S = 10.0
BATCH = 10
FUZZ = settings(max_examples=max(1, int(os.environ.get("KPROF_FUZZ_CLI", "1000")) // BATCH),
                deadline=None, database=None, derandomize=True, print_blob=False,
                phases=[Phase.generate],  # no shrinking: the failing case is named as it is
                suppress_health_check=list(HealthCheck))
GOOD = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "cpu",
        "warmup": 0}
GOOD_TEXT = json.dumps(GOOD)
KERNEL_FILES: dict[str, bytes] = {
    "loud.py": b"print('{\"event\": \"result\"}')\nimport os\nos.write(1, b'fd 1 noise\\n')\n",
    "raises.py": b"raise RuntimeError('boom at import')\n",
    "syntax.py": b"def (:\n",
    "exits.py": b"import sys\nsys.exit(3)\n",
    "binary.py": bytes(range(256)),
    "empty.py": b"",
    "good.py": (b"from profiling_worker.catalog.user import kernel\n"
                b"@kernel(id='fz_ok', parameters=('n',), annotations=('fz',), "
                b"default_configs=[{'n': 16}])\ndef fz_ok(n, *, annotate, device):\n"
                b"    with annotate('fz'):\n        print('inside the kernel')\n"),
    "bad_body.py": (b"from profiling_worker.catalog.user import kernel\n"
                    b"@kernel(id='fz_raise', parameters=('n',), annotations=('fz',), "
                    b"default_configs=[{'n': 16}])\ndef fz_raise(n, *, annotate, device):\n"
                    b"    raise ValueError('kernel body failed')\n"),
    "dup.py": (b"from profiling_worker.catalog.user import kernel\n"
               b"@kernel(id='matmul', parameters=('n',), annotations=('x',))\n"
               b"def m(n, *, annotate, device):\n    pass\n"),
    "bad_decl.py": (b"from profiling_worker.catalog.user import kernel\n"
                    b"@kernel(id=3, parameters='n')\ndef m(n):\n    pass\n"),
}
#: Folder states: how the job folder looks before the run, and the exit code it must give.
STATES = {"fresh": None, "manifest_garbage": None, "tables_file": 1, "nsight_file": 1,
          "log_dir": 1, "events_dir": 1, "manifest_dir": 1, "spec_dir": 1, "log_link_out": 1,
          "tables_link_out": 1, "no_spec": 2, "finished": 2}
BOMBS = [b"[" * 100_000, b"{" * 5_000, ('{"runs": ' + "9" * 5000 + "}").encode(), b"",
         b"null", b"\xef\xbb\xbf" + GOOD_TEXT.encode(), b'"\\ud800"', b"1e999999",
         GOOD_TEXT.encode() * 3, b"\x00" * 64]

values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                   st.lists(st.integers(-3, 70), max_size=2))
near_valid = st.fixed_dictionaries({}, optional={
    "kernels": st.lists(st.sampled_from(["matmul", "fz_ok", "fz_raise", "nope", "", 3]),
                        max_size=2),
    "configs": st.lists(st.dictionaries(st.sampled_from(["n", "m", "x"]),
                                        st.one_of(st.sampled_from([16, 32, -1, 0, 2**70]),
                                                  values), max_size=2), max_size=2),
    "runs": st.one_of(st.sampled_from([-1, 0, 1, 2, 10_001]), values),
    "backend": st.sampled_from(["cpu", "ncu", "cupti", "CPU", "", None]),
    "warmup": st.one_of(st.sampled_from([0, 1, -1]), values),
    "metrics": st.lists(st.sampled_from(["gpu__time_duration.sum", "nope", ""]), max_size=2),
    "gpu": st.one_of(st.sampled_from([0, 7, -1]), values),
    "bogus": values,
}).map(lambda d: {**GOOD, **d})
spec_texts = st.one_of(near_valid.map(lambda d: json.dumps(d, allow_nan=True)),
                       st.integers(0, len(GOOD_TEXT)).map(lambda k: GOOD_TEXT[:k]),
                       values.map(json.dumps))
spec_bytes = st.one_of(
    st.tuples(spec_texts, st.sampled_from(["utf-8", "utf-16", "utf-32", "cp1252"])).map(
        lambda t: t[0].encode(t[1], "replace")),
    st.integers(0, len(BOMBS) - 1).map(lambda i: ("bomb", i)), st.binary(max_size=200))
cases = st.tuples(spec_bytes, st.sampled_from(sorted(STATES)),
                  st.lists(st.sampled_from(sorted(KERNEL_FILES)), max_size=3, unique=True))


def _prepare(case_dir: Path, spec: bytes | tuple[str, int], state: str, files: list[str]) -> Path:
    job = case_dir / "results" / "job"
    (case_dir / "kernels").mkdir(parents=True)
    for name in files:
        (case_dir / "kernels" / name).write_bytes(KERNEL_FILES[name])
    job.mkdir(parents=True)
    (case_dir / "outside").mkdir()
    spec = BOMBS[spec[1]] if isinstance(spec, tuple) else spec  # a bomb by its index
    if state != "no_spec":
        (job / C.SPEC_FILE).mkdir() if state == "spec_dir" else (job / C.SPEC_FILE).write_bytes(spec)
    make = {"tables_file": lambda: (job / C.TABLES_DIR).write_text("x"),
            "nsight_file": lambda: (job / C.NSIGHT_DIR).write_text("x"),
            "log_dir": lambda: (job / C.LOG_FILE).mkdir(),
            "events_dir": lambda: (job / C.EVENTS_FILE).mkdir(),
            "manifest_dir": lambda: (job / C.MANIFEST_FILE).mkdir(),
            "manifest_garbage": lambda: (job / C.MANIFEST_FILE).write_bytes(b"\x00{garbage"),
            "log_link_out": lambda: (job / C.LOG_FILE).symlink_to(case_dir / "outside" / "log"),
            "tables_link_out": lambda: (job / C.TABLES_DIR).symlink_to(case_dir / "outside"),
            "finished": lambda: (job / C.MANIFEST_FILE).write_text(json.dumps(
                {"schema_version": 1, "job_id": "job", "status": "done"}))}
    make.get(state, lambda: None)()
    return job


def _start(case_dir: Path, job: Path) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 99
    try:  # the child: a worker process of its own
        os.environ["KPROF_KERNEL_DIRS"] = str(case_dir / "kernels")
        for fd, name in ((1, "stdout"), (2, "stderr")):
            out = os.open(case_dir / name, os.O_WRONLY | os.O_CREAT, 0o644)
            os.dup2(out, fd)
            os.close(out)
        # the fork server's sys.stdout/err own fds 1 and 2 (now the case's files): held, so
        # that dropping them does not close those fds
        held = (sys.stdout, sys.stderr)  # noqa: F841
        # a worker process has sys.stdout/err on fds 1 and 2
        sys.stdout = sys.__stdout__ = os.fdopen(1, "w", buffering=1)
        sys.stderr = sys.__stderr__ = os.fdopen(2, "w", buffering=1)
        from profiling_worker import cli

        code = cli.main(["run", str(job)])
    except BaseException:  # noqa: BLE001 - reported through the exit code 99
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _run_all(dirs: list[tuple[Path, Path]], parallel: int = 2) -> dict[Path, tuple[int, float]]:
    """Run every case, ``parallel`` at a time; (exit code, seconds) per case (-9: killed)."""
    pending, running, done = list(dirs), {}, {}
    while pending or running:
        while pending and len(running) < parallel:
            case_dir, job = pending.pop()
            running[_start(case_dir, job)] = (case_dir, time.monotonic())
        for pid, (case_dir, t0) in list(running.items()):
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == 0 and time.monotonic() - t0 > CASE_S:
                os.kill(pid, signal.SIGKILL)
                got, status = os.waitpid(pid, 0)
            if got:
                done[case_dir] = (os.waitstatus_to_exitcode(status), time.monotonic() - t0)
                del running[pid]
        time.sleep(0.002)
    return done


def serve() -> None:
    """The fork server (a fresh interpreter started by :func:`forker`): per line of stdin, a
    JSON list of [case folder, job folder] pairs, runs them (:func:`_run_all`) and answers
    one JSON line {case folder: [exit code, seconds]}."""
    # what every child imports, imported once here (not torch: it makes a fork 3x slower, and
    # only the few valid cpu cases import it)
    import scipy.special  # noqa: F401
    from profiling_worker import cli  # noqa: F401
    from profiling_worker.job import results, runner  # noqa: F401

    for line in sys.stdin:
        done = _run_all([(Path(c), Path(j)) for c, j in json.loads(line)])
        print(json.dumps({str(c): list(v) for c, v in done.items()}), flush=True)


Runner = Callable[[list[tuple[Path, Path]]], dict[Path, tuple[int, float]]]


@pytest.fixture(scope="module")
def forker() -> Iterator[Runner]:
    """Runs cases through one fork server for the module: (exit code, seconds) per case."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from tests.unit.test_fuzz_worker_cli import serve; serve()"],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None

    def run(dirs: list[tuple[Path, Path]]) -> dict[Path, tuple[int, float]]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps([[str(c), str(j)] for c, j in dirs]) + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        assert answer, f"the fork server ended (exit code {proc.poll()})"
        return {Path(c): (code, took) for c, (code, took) in json.loads(answer).items()}

    try:
        yield run
    finally:
        proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _check(case_dir: Path, job: Path, state: str, code: int, took: float) -> None:
    where = f"{case_dir.name} ({state}): {(case_dir / 'stderr').read_text(errors='replace')[-800:]}"
    assert took < CASE_S and code in (0, 1, 2), (code, took, where)
    lines = (case_dir / "stdout").read_text(errors="replace").splitlines()
    assert all(parse_line(ln) for ln in lines if ln.strip()), (lines[:5], where)
    last = parse_line(lines[-1]) if lines else None
    expected = STATES[state]
    if expected is not None:
        assert code == expected, (code, where)
    if state in ("no_spec", "finished", "manifest_dir"):
        assert last is not None and last["event"] == "error", where
        return
    manifest = json.loads((job / C.MANIFEST_FILE).read_text())
    assert manifest["status"] in ("done", "failed"), where
    assert (code == 0) == (manifest["status"] == "done"), where
    error = manifest.get("error") or {}
    assert error.get("kind") != "internal", (error, where)
    if error.get("kind") in ("spec_invalid", "job_folder"):
        assert "Traceback" not in json.dumps(error), error
    if state != "fresh" and state != "manifest_garbage":
        assert error["kind"] == "job_folder", error
    assert not (case_dir / "outside" / "log").exists()  # nothing written through a link
    assert not any((case_dir / "outside").iterdir())


@FUZZ
@given(batch=st.lists(cases, min_size=BATCH, max_size=BATCH))
def test_worker_cli_ends_every_case_clearly(tmp_path_factory, forker, batch) -> None:
    # a memory file system where there is one: the worker fsyncs each manifest, and a disk's
    # fsync (tens of ms on a busy CI disk) would be most of a case's time
    shm = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="kprof-fuzzcli-", dir=shm if os.access(shm, os.W_OK)
                                 else tmp_path_factory.getbasetemp()))
    prepared = []
    for i, (spec, state, files) in enumerate(batch):
        case_dir = root / f"case{i}"
        prepared.append((case_dir, _prepare(case_dir, spec, state, files), state))
    try:
        outcome = forker([(c, j) for c, j, _ in prepared])
        for case_dir, job, state in prepared:
            _check(case_dir, job, state, *outcome[case_dir])
    finally:
        shutil.rmtree(root, ignore_errors=True)
