"""Copy bundles recorded on the GPU machine into ``app/bundled/`` (the no-GPU default).

Usage: ``python scripts/bundle_recorded.py DEST SRC [SRC ...] --redact DEVICE_REPO [--reps DIR]``.
Keeps everything the worker wrote except the raw ``.ncu-rep`` (14-26 MB with cuBLAS code);
a gzip-compressed copy from ``--reps`` (``<job>.ncu-rep.gz``) is kept where one came back.
A written deep dive (``nsight/deep_dive.json``, 2.2 MB for 48 launches with rules) is kept
gzip-compressed (``deep_dive.json.gz``, which its readers take as well).
The device's checkout path (``--redact``) in logs is replaced by ``<repo>``. What was changed is
recorded under ``bundled`` in each manifest, with the size of a report left out under
``bundled_bytes``; nothing else in the manifest is touched.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from pathlib import Path

from profiling_worker.bundle.schema.columns import DEEP_DIVE_FILE

BUNDLED_BYTES = "bundled_bytes"  # manifest key: bytes of each file left out (app/core/bundle_files)

def redact_report(path: Path, checkout: str) -> bool:
    """Replace the device checkout path inside a report (``.ncu-rep`` or ``.ncu-rep.gz``: ncu
    stores the profiled command line) by ``<checkout>`` padded to the same length, so every
    length-prefixed field stays valid; True if anything was replaced."""
    token = "<checkout>"[:len(checkout)].ljust(len(checkout), "_").encode()
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if checkout.encode() not in data:
        return False
    with opener(path, "wb") as f:
        f.write(data.replace(checkout.encode(), token))
    return True


def bundle_one(src: Path, dest: Path, reps: Path | None, redact: str) -> None:
    """Copy one bundle directory ``src`` to ``dest/<name>`` with the changes above."""
    out = dest / src.name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("*.ncu-rep"))
    notes = {"paths_redacted": "the device checkout path -> <repo> in logs"}
    for log in list(out.glob("*.log")) + list(out.glob("nsight/**/*.log")):
        log.write_text(log.read_text(errors="replace").replace(redact, "<repo>"))
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    reps_in_bundle = [f for f in manifest.get("files", []) if f.endswith(".ncu-rep")]
    sizes: dict[str, int] = {}
    for rep in reps_in_bundle:
        gz = reps / f"{src.name}.ncu-rep.gz" if reps else None
        if gz and gz.exists():
            shutil.copy(gz, out / f"{rep}.gz")
            redact_report(out / f"{rep}.gz", redact)
            notes[rep] = ("kept gzip-compressed (.ncu-rep.gz); gunzip to open in Nsight Compute; "
                          "the checkout path in its command line reads <checkout>")
        else:
            notes[rep] = "left out (too large for the repository); its per-launch table is kept"
            if (src / rep).is_file():  # the Files page shows it where the report would be
                sizes[rep] = (src / rep).stat().st_size
    deep_dive = out / DEEP_DIVE_FILE
    if deep_dive.is_file():
        with gzip.open(f"{deep_dive}.gz", "wb", compresslevel=9) as gz_out:
            gz_out.write(deep_dive.read_bytes())
        deep_dive.unlink()
        notes[DEEP_DIVE_FILE] = "kept gzip-compressed (.json.gz)"
    manifest["files"] = sorted(str(p.relative_to(out)) for p in out.rglob("*")
                               if p.is_file() and p.name != "manifest.json")
    manifest["bundled"] = notes
    if sizes:
        manifest[BUNDLED_BYTES] = sizes
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dest", type=Path)
    parser.add_argument("sources", type=Path, nargs="+")
    parser.add_argument("--reps", type=Path)
    parser.add_argument("--redact", required=True, help="the device checkout path to hide")
    args = parser.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    for src in args.sources:
        bundle_one(src, args.dest, args.reps, args.redact)


if __name__ == "__main__":
    main()
