"""The one resolver for every read of a bundle's file (tables, manifest, spec, logs, reports,
deep dive, downloads, recovery): a path is read only where it resolves, through links and
``..``, to a regular file inside the bundle folder. A ``tables/aggregated.csv`` linked to a
file elsewhere is not drawn, a ``worker.log`` linked to ``/etc/passwd`` is not copied into a
manifest (issue 26)."""

from __future__ import annotations

import os
from pathlib import Path

from profiling_worker.bundle.schema import columns as C


class OutsideBundle(ValueError):
    """A bundle file that is a link (or ``..`` path) leading out of the bundle, or not a
    regular file; the message names it."""


def bundle_file(bundle_dir: str | os.PathLike[str], relpath: str) -> Path:
    """The resolved path of ``relpath`` inside ``bundle_dir``.

    Raises:
        FileNotFoundError: there is no such file (or a link to nothing, or a link loop).
        OutsideBundle: it resolves outside the bundle, or to something not a regular file.
    """
    root = Path(bundle_dir).resolve()
    try:
        path = (root / relpath).resolve(strict=True)
    except RuntimeError as exc:  # a symlink loop (Python < 3.13)
        raise FileNotFoundError(f"{relpath}: a link loop") from exc
    except OSError as exc:
        raise FileNotFoundError(f"{relpath}: not in the bundle ({exc.strerror or exc})") from exc
    if not path.is_relative_to(root):
        raise OutsideBundle(f"{Path(bundle_dir).name}/{relpath} leads out of the bundle (to "
                            f"{path}): not read")
    if not path.is_file():
        raise OutsideBundle(f"{Path(bundle_dir).name}/{relpath} is not a regular file: not read")
    return path


def inside_bundle(bundle_dir: str | os.PathLike[str], relpath: str) -> Path | None:
    """:func:`bundle_file`, or None where it raises (missing, or leading out)."""
    try:
        return bundle_file(bundle_dir, relpath)
    except (OSError, OutsideBundle):
        return None


def bundle_reports(bundle_dir: str | os.PathLike[str]) -> list[Path]:
    """The bundle's Nsight Compute reports inside it (``nsight/*.ncu-rep``, then
    ``nsight/*.ncu-rep.gz``), links out left out."""
    nsight = Path(bundle_dir) / C.NSIGHT_DIR
    names = sorted(p.name for p in nsight.glob("*.ncu-rep"))
    names += sorted(p.name for p in nsight.glob("*.ncu-rep.gz"))
    found = (inside_bundle(bundle_dir, f"{C.NSIGHT_DIR}/{n}") for n in names)
    return [p for p in found if p is not None]
