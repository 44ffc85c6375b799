"""Command line of the worker. Nothing here imports nsight or torch at module level."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import JobStatus

#: Where the app's bundled jobs live unless KPROF_BUNDLED_DIR says otherwise (app/settings.py).
BUNDLED_DIR_DEFAULT = Path(__file__).resolve().parents[1] / "app" / "bundled"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m profiling_worker",
                                     description="Profile GPU kernels and write a result bundle.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the job whose spec.json is in JOB_DIR")
    run.add_argument("job_dir", type=Path)
    run.add_argument("--force", action="store_true",
                     help="run again over a finished result in JOB_DIR (it is replaced)")
    env = sub.add_parser("env", help="print the environment report and the backends that can "
                         "run (JSON)")
    env.add_argument("--out", type=Path, default=None,
                     help="write the report to this file instead (the dashboard's channel: "
                          "nothing a user kernel file prints can mix into it)")
    srv = sub.add_parser("serve", help="warm worker: run job dirs read from stdin, one per line")
    srv.add_argument("--backend", choices=B.WARM_NAMES, required=True)
    srv.add_argument("--gpu", type=int, default=0)
    kern = sub.add_parser("kernels", help="list the built-in and user kernels (JSON)")
    kern.add_argument("--dirs", default=None,
                      help="user kernel folders, separated by ':' (default: KPROF_KERNEL_DIRS)")
    summ = sub.add_parser("summarize", help="write nsight/report_summary.json from the bundle's "
                          ".ncu-rep (or .ncu-rep.gz)")
    summ.add_argument("bundle", type=Path)
    rules = sub.add_parser("rules", help="digest of the Nsight Compute rule results of a "
                           "bundle's report (CSV on stdout)")
    rules.add_argument("bundle", type=Path)
    deep = sub.add_parser("deepdive", help="sections, rules, stalls and hot spots of a bundle's "
                          "report (JSON on stdout)")
    deep.add_argument("bundle", type=Path)
    pms = sub.add_parser("pmsampling", help="PM sampling (metrics sampled while each launch ran) "
                         "of a bundle's report (JSON on stdout)")
    pms.add_argument("bundle", type=Path)
    imp = sub.add_parser("import", help="turn plain nsight-python output into a bundle")
    imp.add_argument("sources", type=Path, nargs="+",
                     help="profiled_data/processed_data CSVs, .ncu-rep, or a dashboard "
                          "bundle's zip (the Files page's download), reopened as the job it is; "
                          "or folders of them (each bundle zip in one reopened as its own job)")
    imp.add_argument("--out", type=Path, required=True, help="bundle directory to create")
    imp.add_argument("--each", action="store_true",
                     help="import each report or table (with the files that belong to it) as a "
                          "bundle of its own, OUT-1, OUT-2 ... when there are several; one "
                          "JSON event per bundle")
    imp.add_argument("--nvtx", choices=("innermost", "stack"), default="innermost",
                     help="region of a launch in NVTX ranges of an Nsight Compute CSV export or "
                          "console text: its innermost range, or the whole stack (outer > inner)")
    tl = sub.add_parser("timeline", help="write the job's Chrome/Perfetto trace (JSON)")
    tl.add_argument("bundle", type=Path)
    tl.add_argument("-o", "--out", type=Path, required=True, help="trace file to write")
    from profiling_worker.bundle.gate.command import add_arguments as gate_arguments

    gate_arguments(sub.add_parser("compare", help="regression gate: judge a candidate bundle "
                                  "against a baseline (exit 1 regressed, 3 not judged)"))
    from profiling_worker.bundle.gate.replicate_command import add_arguments as replicate_arguments

    replicate_arguments(sub.add_parser("replicate", help="run a bundle's spec again (or take a "
                                       "re-run) and judge whether it reproduced (TOST)"))
    return parser


def _timeline(bundle: Path, out: Path) -> int:
    from profiling_worker.bundle.schema.manifest import ManifestError
    from profiling_worker.bundle.timeline import TimelineError, write_trace

    try:
        write_trace(bundle, out)
    except (ManifestError, TimelineError, OSError) as exc:
        hint = getattr(exc, "hint", "pass a finished job's bundle directory and a writable -o")
        print(json.dumps({"event": "error", "kind": "timeline", "message": str(exc),
                          "hint": hint}), flush=True)
        return 1
    print(json.dumps({"event": "result", "status": JobStatus.DONE.value, "trace": str(out)}),
          flush=True)
    return 0


def _finished(job_dir: Path) -> str | None:
    """The status of a finished result already in ``job_dir`` (None: nothing finished there)."""
    from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest

    try:
        status = JobStatus(read_manifest(job_dir)["status"])
    except (ManifestError, ValueError):
        return None
    return status.value if status.finished else None


def _require(module: str) -> None:
    """Raise :class:`ModuleNotFoundError` (``name`` set) when ``module`` cannot be imported
    here, without importing it (:func:`importlib.util.find_spec` of a top-level package)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _missing_dependency(job_dir: Path, exc: ImportError) -> int:
    """End the job ``failed`` when this interpreter lacks a package the worker imports: the
    manifest and an error event name the module, so the job never just vanishes."""
    from profiling_worker.job.folder import fail_job

    module = exc.name or str(exc)
    return fail_job(job_dir, {
        "kind": "missing_dependency",
        "message": f"the worker interpreter {sys.executable} cannot import {module} ({exc})",
        "hint": "install the GPU requirements into it: pip install -r requirements-gpu.txt "
                "(torch first, from the CUDA wheel index)"})


def _run(job_dir: Path, force: bool = False) -> int:
    # nsight_backend.in_launch_child's test, read here before that module's pandas import
    if B.LAUNCH_CHILD_ENV in os.environ:  # nsight-python 0.9.x's copy under ncu only
        # profiles: the parent checked the packages and writes the bundle (scipy.special would
        # cost the child about 0.6 s, worker_breakdown.py on the H200)
        from profiling_worker.job import runner

        runner.run_child(job_dir.resolve())
        return 0
    from profiling_worker.backends import gc_pause
    from profiling_worker.probes.environment import ProbeInBackground

    gc_pause.pause()  # until the first kernel body is built (RunJob.body): imports scan nothing
    probe = ProbeInBackground()  # NVML, ncu, package versions: while the imports below run
    try:  # every package a run needs, now (results: pandas, pyarrow, scipy): a missing one
        # fails the job with a manifest instead of a traceback halfway
        from profiling_worker.job import results, runner  # noqa: F401
        from profiling_worker.backends.channel import Channel, redirect_output
        _require("scipy")  # imported only where needed (bundle/schema/intervals.py): 0.4-0.5 s cold
    except ImportError as exc:  # a package of requirements-gpu.txt is missing here
        return _missing_dependency(job_dir.resolve(), exc)

    from profiling_worker.job.folder import fail_job, layout_problem

    job_dir = job_dir.resolve()
    problem = layout_problem(job_dir) if job_dir.exists() else None
    if problem:
        return fail_job(job_dir, {"kind": "job_folder", "message": problem,
                                  "hint": "remove or rename that entry (the worker writes it), "
                                          "or submit the job again into a new folder"})
    if not (job_dir / C.SPEC_FILE).is_file():
        print(json.dumps({"event": "error", "kind": "spec_missing",
                          "message": f"{job_dir.name}: no spec.json",
                          "hint": "write the job spec to JOB_DIR/spec.json"}), flush=True)
        return 2
    finished = _finished(job_dir)
    if finished and not force:  # never overwrite a result without being asked
        print(json.dumps({"event": "error", "kind": "already_finished",
                          "message": f"{job_dir.name} already holds a {finished} result",
                          "hint": "copy spec.json to a new directory, or pass --force to "
                                  "replace the result"}), flush=True)
        return 2
    if finished:
        for name in (C.MANIFEST_FILE, C.EVENTS_FILE):
            (job_dir / name).unlink(missing_ok=True)
    return runner.run_job(job_dir, Channel(job_dir, redirect_output(job_dir)), probe=probe)


def _import(sources: list[Path], out: Path, each: bool, nvtx: str = "innermost") -> int:
    from profiling_worker.bundle.errors import WorkerError
    from profiling_worker.importing import import_nsight_output
    from profiling_worker.importing.bundle_zip import import_bundle_zip, split_sources
    from profiling_worker.importing.grouping import import_each
    from profiling_worker.importing.how_read import grouping_rules

    # The dashboard lists bundled jobs beside the results; an import must not hide one.
    bundled = Path(os.environ.get("KPROF_BUNDLED_DIR", BUNDLED_DIR_DEFAULT))
    kept = [p for p in bundled.iterdir() if p.is_dir()] if bundled.is_dir() else []
    taken = {p.name for p in kept}
    # A dashboard bundle's zip (the Files page's download) is reopened as the job it is.
    zips, sources = split_sources(sources)
    failed = 0
    for z in zips:
        event = import_bundle_zip(z, out.parent, reserved=kept)
        print(json.dumps(event), flush=True)
        failed += event["event"] == "error"
    if not sources:
        return 1 if failed else 0
    if each:
        for event in import_each(sources, out.parent, out.name, reserved_ids=taken, nvtx=nvtx):
            print(json.dumps(event), flush=True)
            failed += event["event"] == "error"
        return 1 if failed else 0
    try:
        path = import_nsight_output(sources, out.parent, out.name, reserved_ids=taken,
                                    nvtx=nvtx)
    except WorkerError as exc:
        print(json.dumps({"event": "error", **exc.to_event_fields()}), flush=True)
        return 1
    print(json.dumps({"event": "result", "status": JobStatus.DONE.value, "bundle": str(path),
                      "grouping": grouping_rules(path)}), flush=True)
    return 1 if failed else 0


def _summarize(bundle: Path) -> int:
    from profiling_worker.bundle.paths import bundle_reports
    from profiling_worker.extract.ncu_report_reader import merged_summary, summarize
    from profiling_worker.bundle.inflate import InflateError, plain_file

    reports = bundle_reports(bundle)
    if not reports:
        print(json.dumps({"event": "error", "kind": "no_report",
                          "message": f"{bundle.name}: no .ncu-rep in {C.NSIGHT_DIR}/",
                          "hint": "only Nsight Compute jobs have a report"}), flush=True)
        return 1
    summaries = []
    try:  # a job of several ncu calls has a report each (backends/ncu_calls.py)
        for path in reports:
            if path.name.endswith(".gz") and path.with_suffix("") in reports:
                continue  # the same report, plain beside it
            with plain_file(path) as report:  # ncu_report needs the plain file
                summaries.append(summarize(report))
    except InflateError as exc:
        print(json.dumps({"event": "error", "kind": "bad_report", "message": exc.message,
                          "hint": exc.hint}), flush=True)
        return 1
    (bundle / C.REPORT_SUMMARY_FILE).write_text(
        json.dumps(merged_summary(summaries), indent=1, default=str))
    print(json.dumps({"event": "result", "status": JobStatus.DONE.value}), flush=True)
    return 0


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code (0 done, 1 failed, 2 bad usage)."""
    from profiling_worker.bundle.gate.command import join_signed_values, junit_on_usage_error

    with junit_on_usage_error(argv):
        args = _parser().parse_args(join_signed_values(argv))
    from profiling_worker.bundle.inflate import sweep_scratch

    sweep_scratch()  # what a killed worker left (an inflated report): gone at the next start
    if args.command == "env":
        from profiling_worker.backends.registry import environment_report

        text = json.dumps(environment_report(with_kernels=True), indent=2)
        if args.out is None:
            print(text)
        else:
            args.out.write_text(text, encoding="utf-8")
        return 0
    if args.command == "import":
        return _import(args.sources, args.out, args.each, args.nvtx)
    if args.command == "serve":
        from profiling_worker.backends import gc_pause
        from profiling_worker.probes.environment import ProbeInBackground

        gc_pause.pause()  # until serve's warm-up is done: its imports scan nothing
        probe = ProbeInBackground()  # NVML, ncu, package versions: while serve's imports run
        from profiling_worker.job.serve import serve

        return serve(args.backend, args.gpu, sys.stdin, probe)
    if args.command == "kernels":
        from profiling_worker.catalog.registry import load_registry

        dirs = args.dirs.split(os.pathsep) if args.dirs else None
        print(json.dumps(load_registry(dirs).describe(), indent=1))
        return 0
    if args.command == "summarize":
        return _summarize(args.bundle)
    if args.command == "timeline":
        return _timeline(args.bundle, args.out)
    if args.command in ("rules", "deepdive", "pmsampling"):
        from profiling_worker.extract import report_cli

        return report_cli.main(args.command, args.bundle)
    if args.command == "compare":
        from profiling_worker.bundle.gate.command import run as gate

        return gate(args)
    if args.command == "replicate":
        from profiling_worker.bundle.gate.replicate_command import run as replicate

        return replicate(args)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return _run(args.job_dir, args.force)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
