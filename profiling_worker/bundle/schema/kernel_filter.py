"""Kernels a job leaves out of every value: the entries of the spec's ``ignore_kernels``.

An entry is either

* an exact kernel name, compared with the whole name as the backend records it: Nsight Compute
  gives the function name without parameters (``vectorized_elementwise_kernel``,
  ``nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT``), CUPTI the raw, *mangled* name of a C++ kernel
  (``_ZN2at6native29vectorized_elementwise_kernel...``), the cpu backend ``host:<annotation>``;
  exact names are also passed to nsight-python as ``ignore_kernel_list`` (same exact comparison,
  see docs of ``nsight.analyze.kernel``); or
* ``re:<pattern>``: a Python regular expression searched anywhere in the name, so
  ``re:distribution_elementwise`` matches the ``torch.randn`` fill kernel in both name forms.

The worker applies the entries to the launches it extracts itself (``.ncu-rep``, CUPTI records,
host timer): a matching launch leaves the per-launch, per-run and aggregated tables and is
listed in the ``unattributed`` table with :data:`IGNORED_REASON` (the Kernels page shows it).
Stdlib only, like the spec.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

FIELD = "ignore_kernels"
REGEX_PREFIX = "re:"
#: Reason of an ignored launch in the ``unattributed`` table (it starts with "ignored").
IGNORED_REASON = "ignored: its kernel matches the job's ignore_kernels; in no table's values"
HINT = ("write an exact kernel name (as the Kernels page shows it), or re:<regular expression> "
        "to match part of a name")


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def entry_problem(entry: str) -> str | None:
    """What is wrong with one ``ignore_kernels`` entry (None: it is usable)."""
    if not entry.startswith(REGEX_PREFIX):
        return None
    pattern = entry[len(REGEX_PREFIX):]
    if not pattern:
        return f"{entry!r} has no regular expression after {REGEX_PREFIX!r}"
    try:
        _compiled(pattern)
    except re.error as exc:
        return f"{entry!r} is not a valid regular expression: {exc}"
    return None


def exact_names(entries: Sequence[str]) -> list[str]:
    """The exact-name entries (what nsight-python's ``ignore_kernel_list`` can take)."""
    return [e for e in entries if not e.startswith(REGEX_PREFIX)]


def matching_entry(kernel: str, entries: Sequence[str]) -> str | None:
    """The first entry that matches this kernel name, or None."""
    for entry in entries:
        if entry.startswith(REGEX_PREFIX):
            if _compiled(entry[len(REGEX_PREFIX):]).search(kernel):
                return entry
        elif entry == kernel:
            return entry
    return None
