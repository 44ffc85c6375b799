"""``kernel-dashboard --compare BASE CANDIDATE``: make two bundle directories visible to the
dashboard and name the compare page's URL for them.

A bundle already in the result store or the bundled directory is used where it is; one
elsewhere (e.g. a CI artifact) is copied into the result store under its directory name, as
an import would, so the dashboard lists it like any job. Nothing is ever overwritten.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlencode

from profiling_worker.bundle.schema import columns as C

from app.services.result_store import InvalidJobId, job_path, zip_reason
from profiling_worker.importing.sniff import is_bundle_zip


class CompareIntakeError(ValueError):
    """A --compare argument that cannot be opened; the message names it and the fix."""


def into_store(bundle: Path, results_dir: Path, bundled_dir: Path) -> str:
    """The job id under which the dashboard lists ``bundle`` (copied into ``results_dir`` when
    it lives elsewhere).

    Raises:
        CompareIntakeError: not a bundle directory, a name the store refuses, or another job of
            that name already in the result store.
    """
    bundle = bundle.expanduser().resolve()
    if is_bundle_zip(bundle):  # the Files page's download: said as the result store says it
        raise CompareIntakeError(f"--compare {bundle}: " + zip_reason(
            bundle, results_dir, "--compare opens job folders") + ", then give its folder")
    if not (bundle / C.MANIFEST_FILE).is_file():
        raise CompareIntakeError(f"--compare {bundle}: not a result bundle (no "
                                 f"{C.MANIFEST_FILE}); give the directory a job wrote")
    if bundle.parent in (results_dir.resolve(), bundled_dir.resolve()):
        return bundle.name
    try:
        target = job_path(results_dir, bundle.name)
    except InvalidJobId as exc:
        raise CompareIntakeError(f"--compare {bundle}: {exc}; rename the directory") from exc
    if target.exists():
        raise CompareIntakeError(f"--compare {bundle}: the result store already holds a job "
                                 f"{bundle.name!r} ({target}); rename the directory or pass "
                                 "another --results")
    results_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(bundle, target, symlinks=False)
    return bundle.name


def compare_url(host: str, port: int, baseline: str, candidate: str) -> str:
    """The compare page's address for two job ids (``0.0.0.0``/``::`` shown as localhost)."""
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    return (f"http://{shown}:{port}/compare?"
            + urlencode({"baseline": baseline, "candidate": candidate}))
