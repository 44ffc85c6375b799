"""The Nsight Compute version a file records, for the import's provenance (issue 20).

Where a file carries it (read from the files ncu 2025.3 wrote in tests/fixtures):

- a report (``.ncu-rep``) holds a tool record ``Nsight Compute Target`` with ncu's version
  string (``2025.3.1.0 (build 36398880) (public-release)``) inside one of its block headers,
  wherever in the file that block falls. ``ncu_report``'s ``IContext.get_version()`` is not it:
  it returns the version of ``ncu_report`` itself (2026.3.1 here, for a 2025.3.1 report, and
  for a file that is no report at all);
- console text or a CSV printed live holds it only where ``ncu --version`` was printed into the
  same output (``NVIDIA (R) Nsight Compute Command Line Profiler`` .. ``Version 2025.3.1.0
  (build 36398880) (public-release)``): ncu's ``==PROF==`` lines and the CSV header of the
  versions seen (2020.1, 2025.3) name no version.

Anything else: :data:`NOT_IN_FILE`, said as such on the Import page.
"""

from __future__ import annotations

import re
from pathlib import Path

#: What the Import page says when the file records no ncu version.
NOT_IN_FILE = "ncu version: not in file"
#: Manifest ``provenance`` key: {report file name: the version it records, or None}.
PROVENANCE_KEY = "ncu_versions"
#: The report's tool record: protobuf field 1 = this name, then field 2 (tag 0x12) = version.
_REPORT_TOOL = b"\n\x15Nsight Compute Target\x12"
_BANNER = "Nsight Compute Command Line Profiler"
_VERSION_LINE = re.compile(r"^Version (\d{4}\.\d+(?:\.\d+)* \(build \d+\)(?: \([\w-]+\))?)\s*$",
                           re.MULTILINE)
#: Bytes read at a time from a report.
_CHUNK = 1 << 20
#: Bytes of a text file searched for the ``ncu --version`` banner (it precedes the output).
_TEXT_HEAD = 1 << 20


def label(version: str | None) -> str:
    """``ncu <version>`` for the Import page, or :data:`NOT_IN_FILE`."""
    return f"ncu {version}" if version else NOT_IN_FILE


def from_report(plain: Path) -> str | None:
    """The ncu version a plain (inflated) ``.ncu-rep`` records, e.g.
    ``2025.3.1.0 (build 36398880) (public-release)``; None when it holds no tool record.
    Read into one 1 MiB buffer (a memory map, or a new buffer per read, would leave the file's
    size, or several MiB, in the resident set)."""
    keep = len(_REPORT_TOOL) + 0x80  # a record cut by a read boundary is searched again whole
    buf = bytearray(_CHUNK + keep)
    view = memoryview(buf)
    held = 0
    with open(plain, "rb") as fh:
        while got := fh.readinto(view[held:]):
            held += got
            at = buf.find(_REPORT_TOOL, 0, held)
            start = at + len(_REPORT_TOOL) + 1
            if at >= 0 and start <= held and start + buf[start - 1] <= held:
                length = buf[start - 1]
                if length >= 0x80:  # no version string is this long (a one-byte length)
                    return None
                return bytes(buf[start:start + length]).decode("utf-8", "replace").strip() or None
            if held == len(buf):  # full: keep the tail, read on
                buf[:keep] = buf[held - keep:held]
                held = keep
    return None


def from_text(path: Path) -> str | None:
    """The version of the ``ncu --version`` banner at the head of console text or a CSV
    printed live, e.g. ``2025.3.1.0 (build 36398880) (public-release)``; None without one."""
    with open(path, "rb") as fh:
        head = fh.read(_TEXT_HEAD).decode("utf-8", errors="replace")
    if _BANNER not in head:
        return None
    match = _VERSION_LINE.search(head, head.index(_BANNER))
    return match.group(1) if match else None


__all__ = ["NOT_IN_FILE", "PROVENANCE_KEY", "from_report", "from_text", "label"]
