"""Reading a ``spec.json`` file into a JSON value, every way it can be broken named as a
:class:`~profiling_worker.bundle.schema.spec_errors.SpecInvalid` (never a traceback in a job's
error): not text, another encoding, not JSON, nested past Python's recursion limit, an integer past
its digit limit, too large (issue 26's fuzzed worker CLI). Stdlib only."""

from __future__ import annotations

import json
import os
from typing import Any

from profiling_worker.bundle.schema.spec_errors import FieldError, SpecInvalid

#: Largest ``spec.json`` read (10,000 configs take about 0.5 MB).
MAX_SPEC_BYTES = 16 * 1024**2


def read_spec_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value of a ``spec.json`` file: UTF-8 (with or without BOM), or UTF-16/32 with
    a BOM (``json.loads`` of bytes tells them apart, RFC 8259 section 8.1), at most
    :data:`MAX_SPEC_BYTES`.

    Raises:
        SpecInvalid: unreadable, too large, not text, not JSON, nested too deeply (Python's
            recursion limit) or an integer of more than 4,300 digits; the message says which.
    """
    def bad(what: str) -> SpecInvalid:
        return SpecInvalid([FieldError("spec.json", what, "write the spec as a JSON object "
                                       "(UTF-8), as the dashboard writes it")])

    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise bad(f"cannot be read ({exc.strerror or exc})") from exc
    if len(data) > MAX_SPEC_BYTES:
        raise bad(f"larger than {MAX_SPEC_BYTES // 1024**2} MiB")
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise bad("nested too deeply to read (hundreds of [ or { levels)") from exc
    except UnicodeDecodeError as exc:
        raise bad(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except ValueError as exc:  # JSONDecodeError, and ints past sys.get_int_max_str_digits()
        raise bad(f"not valid JSON ({str(exc)[:200]})") from exc
