"""Where the worker's time goes, cold and warm (issue 24): statistical profiles of job J1.

For each backend (``ncu``, ``cupti``) one cold worker process (``python -m profiling_worker
run``) runs J1 under pyinstrument; then, for CUPTI, a warm worker's path (what
``profiling_worker serve`` does: probe once, warm up once, then ``runner.run_job`` per job) runs
J1 ``--repeats`` times in one process, profiled after the first job. Beside the profiles it
times the subprocesses the worker starts before profiling (``ncu --version``,
``ncu --query-metrics``) and the imports (``python -X importtime``).

Writes into OUT_DIR: ``cold_<backend>.txt`` (pyinstrument's text profile),
``warm_cupti.txt``, ``importtime_<backend>.txt`` and ``breakdown.json`` (wall times, the
subprocess times and the warm job walls). With ``--bare-libcupti`` it also profiles the bare
nsight-python script of J1 (``benchmarks/bare_nsight_j1.py``) on each backend, the same way
(``cold_bare_<backend>.txt``, ``importtime_bare_<backend>.txt``), so the two cold profiles can
be read side by side. Needs pyinstrument on PROF_PYTHONPATH.

Usage: ``python benchmarks/worker_breakdown.py OUT_DIR NCU_PYTHONPATH CUPTI_PYTHONPATH
PROF_PYTHONPATH [--repeats 5] [--backends ncu cupti] [--bare-libcupti LIBCUPTI]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
J1 = {"kernels": ["matmul"], "annotations": ["fp16"],
      "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)], "runs": 10}

WARM = """
import json, sys, tempfile, time
from pathlib import Path
import pyinstrument
from profiling_worker.probes import gpu_select
from profiling_worker.job import runner
from profiling_worker.backends.registry import environment_report, run_side
from profiling_worker.backends.run_side import BackendStatus
from profiling_worker.backends.channel import Channel
spec, out, repeats = json.loads(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
report = environment_report()
gpu_select.pin(gpu_select.resolve(0, report["environment"].get("gpus") or ()))
run_side("cupti").warm_up(BackendStatus.from_json(report["backends"]["cupti"]))
ready = time.perf_counter() - t0
def job():
    d = Path(tempfile.mkdtemp(prefix="warm-"))
    (d / "spec.json").write_text(json.dumps(spec))
    t = time.perf_counter()
    runner.run_job(d, Channel(d, None), report)
    return time.perf_counter() - t
first = job()
prof = pyinstrument.Profiler(interval=0.0002)
prof.start()
walls = [job() for _ in range(repeats)]
prof.stop()
(out / "warm_cupti.txt").write_text(prof.output_text(show_all=False))
print(json.dumps({"ready_s": ready, "first_job_s": first, "warm_job_s": walls}))
"""


def _env(pythonpath: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{REPO}:{pythonpath}"}


def _timed(argv: list[str], env: dict[str, str], **kw: object) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=False, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - t0


#: The worker under pyinstrument: its quick exit (``job/quick_exit.py``) skips the teardown
#: where ``python -m pyinstrument`` would write the profile, but runs the atexit handlers.
PROFILED_WORKER = """
import atexit, runpy, sys
import pyinstrument
out, job = sys.argv[1], sys.argv[2]
prof = pyinstrument.Profiler(interval=0.0005)
prof.start()
def write():
    prof.stop()
    with open(out, "w") as fh:
        fh.write(prof.output_text(show_all=False))
atexit.register(write)
sys.argv = ["profiling_worker", "run", job]
runpy.run_module("profiling_worker", run_name="__main__", alter_sys=True)
"""


def _import_trace(name: str, argv: list[str], out: Path, env: dict[str, str],
                  log: Path | None = None) -> float:
    """Wall time (s) of ``python -X importtime ARGV``, its trace in ``importtime_<name>.txt``;
    ``log``: where the process moved its stderr meanwhile (the worker's ``worker.log``), whose
    import lines are appended."""
    trace = out / f"importtime_{name}.txt"
    with open(trace, "w") as fh:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, cwd=REPO,
                       stdout=subprocess.DEVNULL, stderr=fh, check=False)
        wall = time.perf_counter() - t0
    if log is not None and log.exists():
        lines = [ln for ln in log.read_text(errors="replace").splitlines()
                 if ln.startswith("import time:")]
        with open(trace, "a") as fh:
            fh.write("\n".join(lines) + "\n")
    return wall


def cold(backend: str, out: Path, pythonpath: str, root: Path) -> dict[str, object]:
    """One profiled cold job and one import-time trace, each in a new job folder; wall times
    (s) and the profiled job's status."""
    jobs = []
    for prefix in ("cold", "imp"):
        jobs.append(Path(tempfile.mkdtemp(prefix=f"{prefix}-{backend}-", dir=root)))
        (jobs[-1] / "spec.json").write_text(json.dumps({**J1, "backend": backend}))
    env = _env(pythonpath)
    wall = _timed([sys.executable, "-c", PROFILED_WORKER, str(out / f"cold_{backend}.txt"),
                   str(jobs[0])], env, cwd=REPO)
    plain = _import_trace(backend, ["-m", "profiling_worker", "run", str(jobs[1])], out, env,
                          log=jobs[1] / "worker.log")
    status = json.loads((jobs[0] / "manifest.json").read_text()).get("status")
    return {"profiled_wall_s": wall, "importtime_wall_s": plain, "status": status}


def cold_bare(backend: str, out: Path, pythonpath: str, root: Path,
              libcupti: str) -> dict[str, float]:
    """The bare nsight-python script of J1 (``bare_nsight_j1.py``), profiled and traced as
    :func:`cold` does the worker (``cold_bare_<backend>.txt``); wall times (s)."""
    env = _env(pythonpath)
    argv = ["benchmarks/bare_nsight_j1.py", backend, str(root), libcupti]
    wall = _timed([sys.executable, "-m", "pyinstrument", "-i", "0.0005", "-o",
                   str(out / f"cold_bare_{backend}.txt"), *argv], env, cwd=REPO)
    return {"profiled_wall_s": wall,
            "importtime_wall_s": _import_trace(f"bare_{backend}", argv, out, env)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("ncu_path")
    parser.add_argument("cupti_path")
    parser.add_argument("prof_path")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backends", nargs="+", choices=("ncu", "cupti"),
                        default=["ncu", "cupti"])
    parser.add_argument("--bare-libcupti", default=None,
                        help="also profile the bare script (the libcupti it preloads)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="breakdown-"))
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    result: dict[str, object] = {
        "ncu_version_s": _timed([ncu, "--version"], dict(os.environ)),
        "ncu_query_metrics_s": _timed([ncu, "--query-metrics", "--devices", "0"],
                                      dict(os.environ)),
        "python_bare_start_s": _timed([sys.executable, "-c", "pass"], dict(os.environ)),
    }
    paths = {"ncu": args.ncu_path, "cupti": args.cupti_path}
    for backend in args.backends:
        pythonpath = f"{paths[backend]}:{args.prof_path}"
        result[f"cold_{backend}"] = cold(backend, args.out, pythonpath, root)
        if args.bare_libcupti:
            result[f"cold_bare_{backend}"] = cold_bare(backend, args.out, pythonpath, root,
                                                       args.bare_libcupti)
        (args.out / "breakdown.json").write_text(json.dumps(result, indent=1))
    warm = subprocess.run([sys.executable, "-c", WARM, json.dumps({**J1, "backend": "cupti"}),
                           str(args.out), str(args.repeats)],
                          env=_env(f"{args.cupti_path}:{args.prof_path}"), cwd=REPO,
                          capture_output=True, text=True, check=False)
    result["warm_cupti"] = (json.loads(warm.stdout.strip().splitlines()[-1]) if warm.returncode == 0
                            else {"error": warm.stderr[-3000:]})
    (args.out / "breakdown.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
