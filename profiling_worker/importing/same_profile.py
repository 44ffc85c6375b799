"""Whether two Nsight Compute CSV exports hold the same profile (one report exported twice: its
raw and details pages, base or display units) or two profiles of the same launches (two runs of
one program: before and after a change).

The same launches (ID and kernel name) are not enough: two runs of one program list the same
launches with other values (case 13: -1.4 % to +2.4 % per launch). Exports of one profile hold
equal values, up to the rounding of what ncu prints: two decimals at least (``0.03`` % for
0.0343 %, base units too), six significant digits on a raw page in display units
(``266.208`` Mbyte for 266,207,508 byte), and three significant digits on a details page in display
units (``6.05 us``
for 6,048 ns). So two exports are one profile when every value both hold in the same unit
(launch x metric) is equal within that rounding (checked on the raw and details pages of one
H200 report, base and display units, against two live runs of the same program:
tests/unit/profiling_worker/importing/test_two_profiles.py). A details page's rounding is
allowed only where one of the two is such a page: between full-precision exports two runs of
a long kernel may differ by less than three significant digits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C

#: Significant digits a display-unit details page prints at least.
DISPLAY_DIGITS = 3


#: Decimals ncu prints at least (``--print-units base`` too).
PRINTED_DECIMALS = 2
#: Significant digits a raw page in display units prints at least.
RAW_DIGITS = 6


def _tolerance(values: np.ndarray, rounded: bool) -> np.ndarray:
    """Half a unit of the last digit ncu prints of each value (module doc)."""
    magnitude = np.floor(np.log10(np.where(values == 0, 1.0, np.abs(values))))
    digits = DISPLAY_DIGITS if rounded else RAW_DIGITS
    return np.maximum(0.5 * 10.0 ** (magnitude - (digits - 1)), 0.5 * 10.0 ** -PRINTED_DECIMALS)


def same_values(a: pd.DataFrame, b: pd.DataFrame, rounded: bool) -> bool:
    """True when the launch rows of two exports hold the same values (module doc).

    Args:
        a, b: launch x metric rows with ``ID``, ``Kernel Name``, Metric, Unit and Value
            (numbers in the bundle's units), as the ncu CSV reader gives them.
        rounded: one of the two is a details page in display units (values as printed).

    Returns:
        False when they share no value, or one shared value differs beyond the rounding.
    """
    keys = ["ID", "Kernel Name", C.METRIC, C.UNIT]
    both = a[[*keys, C.VALUE]].merge(b[[*keys, C.VALUE]], on=keys, suffixes=("_a", "_b"))
    x = both[f"{C.VALUE}_a"].to_numpy(dtype=float)
    y = both[f"{C.VALUE}_b"].to_numpy(dtype=float)
    if not len(both):
        return False
    tol = np.maximum(_tolerance(x, rounded), _tolerance(y, rounded))
    return bool(np.all((np.abs(x - y) <= tol) | (np.isnan(x) & np.isnan(y))))


def differ_note(name: str, first: str, a: pd.DataFrame, b: pd.DataFrame) -> str:
    """Why ``name`` is another profile than ``first`` (the per-launch duration change)."""
    keys = ["ID", "Kernel Name"]
    t = [r[r[C.METRIC] == C.GPU_TIME][[*keys, C.VALUE]] for r in (a, b)]
    both = t[0].merge(t[1], on=keys, suffixes=("_a", "_b"))
    change = (both[f"{C.VALUE}_b"] / both[f"{C.VALUE}_a"] - 1.0) * 100.0
    span = (f": {C.GPU_TIME} per launch {change.min():+.1f} % to {change.max():+.1f} %"
            if len(change) else "")
    return (f"{name}: the same launches as {first} with other values (another profile, e.g. "
            f"another run of the program{span})")


__all__ = ["DISPLAY_DIGITS", "PRINTED_DECIMALS", "RAW_DIGITS", "same_values", "differ_note"]
