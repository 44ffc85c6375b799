"""``python -m profiling_worker replicate REFERENCE (--out DIR | --against REPLICA)``: run a
bundle's spec again into a new job folder (or take a re-run already made) and give the
replication verdict (:mod:`profiling_worker.bundle.gate.replication`). Stdlib only at import, as
:mod:`profiling_worker.bundle.gate.command`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from profiling_worker.bundle.gate import exit_codes
from profiling_worker.bundle.gate.command import percent

#: Exit codes: 0 reproduced, 1 not reproduced, 3 not comparable, 4 not decided, 2 bad input.
EXIT = {"reproduced": exit_codes.EXIT_OK, "not reproduced": exit_codes.EXIT_REGRESSED,
        "not comparable": exit_codes.EXIT_NOT_JUDGED, "not decided": exit_codes.EXIT_UNDECIDED}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``replicate`` sub-command's arguments."""
    parser.description = (
        "Run REFERENCE's spec again (--out DIR) or take a re-run made elsewhere (--against), "
        "check the two were measured alike (the regression gate's checks) and judge each "
        "region x config with two one-sided tests against the tolerance: reproduced (the 90 %% "
        "interval of the difference inside +/- tolerance), not reproduced (wholly outside), "
        "not decided (the runs a side that would decide it are said). Exit codes: 0 "
        "reproduced, 1 not reproduced, 3 not comparable, 4 not decided, 2 bad input.")
    parser.add_argument("reference", type=Path, help="the bundle whose spec is replicated")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--out", type=Path, metavar="DIR",
                     help="new job folder: run the reference's spec there on this machine")
    how.add_argument("--against", type=Path, metavar="REPLICA",
                     help="a bundle of the same spec run elsewhere (another GPU, day, machine)")
    parser.add_argument("--tolerance", type=percent, default=3.0, metavar="PCT",
                        help="equivalence margin, +/- (default 3%%)")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help="write the Markdown summary here too")


def reference_spec(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The spec to run again: the reference manifest's recorded ``spec`` (None: it has none,
    e.g. an import without one)."""
    spec = manifest.get("spec")
    return dict(spec) if isinstance(spec, dict) and spec.get("kernels") else None


def _error(message: str, hint: str) -> int:
    print(json.dumps({"event": "error", "kind": "replicate", "message": message,
                      "hint": hint}), flush=True)
    return exit_codes.EXIT_BAD_INPUT


def run_worker(job_dir: Path) -> int:
    """``python -m profiling_worker run JOB_DIR`` in a process of its own (a fresh CUDA context
    and nsight-python import, as every job gets); its events pass through to stdout."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job_dir)],
                          check=False).returncode


def run(args: argparse.Namespace) -> int:
    """Replicate and judge. Prints the re-run's events (with --out), then one
    ``{"event": "replication", ...}`` line with the verdict and its rows; the Markdown summary
    goes to stderr."""
    from profiling_worker.bundle.gate.replication import judge_replication, markdown
    from profiling_worker.bundle.gate.sides import GateInputError, GateSide
    from profiling_worker.bundle.schema import columns as C

    try:
        reference = GateSide.load(args.reference)
    except GateInputError as exc:
        return _error(str(exc), "pass a finished job's bundle directory")
    replica_dir = args.against
    if args.out is not None:
        spec = reference_spec(reference.manifest)
        if spec is None:
            return _error(f"{reference.job_id} records no spec to run again",
                          "replicate a job the worker ran, or judge a re-run with --against")
        if args.out.exists():
            return _error(f"{args.out} exists", "give a new folder for the re-run")
        args.out.mkdir(parents=True)
        (args.out / C.SPEC_FILE).write_text(json.dumps(spec, indent=1), encoding="utf-8")
        run_worker(args.out)
        replica_dir = args.out
    try:
        replica = GateSide.load(replica_dir)
    except GateInputError as exc:
        return _error(f"the re-run cannot be judged: {exc}", "see the re-run's worker.log")
    result = judge_replication(reference, replica, args.tolerance)
    text = markdown(result)
    print(json.dumps({"event": "replication", **result.to_json()}, default=str), flush=True)
    print(text, file=sys.stderr)
    if args.markdown is not None:
        try:
            args.markdown.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"replicate: cannot write {args.markdown} ({exc})", file=sys.stderr)
    return EXIT[result.verdict.value]
