"""ncu's ``==ERROR==`` lines in console text and CSVs printed live (a launch that failed, an
application that returned an error code): the file's measured launches are read, and a warning
names the failure (issue 35; recorded on the H200: ``import_cases/17-h200-issue35/
launch_fails_text.log``, ``launch_fails_raw.csv``).

ncu 2025.3.1 prints, for a kernel that faults, ``==PROF== Profiling "write_through(float *)" -
3: ... - 1 pass`` then ``==ERROR== LaunchFailed``; that launch's metrics are ``(!) nan`` (text)
or empty (CSV), and the launches before it are whole.
"""

from __future__ import annotations

import re
from pathlib import Path

_ERROR = "==ERROR== "
_PROFILING = re.compile(r'^==PROF== Profiling "(?P<kernel>.+)" - (?P<id>\d+):')


def error_warning(path: Path, encoding: str) -> str | None:
    """A warning naming ncu's errors in ``path`` and the launch ncu was profiling when the
    first came (where the file prints it), or None when there is no ``==ERROR==`` line.

    Reads the file line by line (any size)."""
    errors: list[str] = []
    profiling: str | None = None
    failed: str | None = None
    with open(path, encoding=encoding, errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\r\n")
            if (m := _PROFILING.match(line)) and not errors:
                profiling = f"{m['kernel']} (ID {m['id']})"
            elif line.startswith(_ERROR):
                text = line[len(_ERROR):].strip().rstrip(":.")
                failed = failed or profiling
                if text and text not in errors:
                    errors.append(text)
    if not errors:
        return None
    where = (f"while profiling {failed}, which was not measured (its values, where listed, "
             "are empty and left out)" if failed else "(the launch it concerns is not named in "
             "the file; a launch without values is left out)")
    return (f"{path.name}: ncu reported an error {where}: {'; '.join(errors[:4])}. The launches "
            "it measured are read; the program stopped there, so later launches are missing")


__all__ = ["error_warning"]
