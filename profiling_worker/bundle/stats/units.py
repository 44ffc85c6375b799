"""Nsight Compute units -> the bundle's units (ns, byte, Hz, byte/s, %), without ncu_report."""

from __future__ import annotations

from typing import Any

import pandas as pd

# Nsight Compute unit -> (factor, our unit). Durations in ns, sizes in bytes, rates in Hz.
UNITS = {
    "nsecond": (1.0, "ns"), "usecond": (1e3, "ns"), "msecond": (1e6, "ns"), "second": (1e9, "ns"),
    "ns": (1.0, "ns"), "us": (1e3, "ns"), "ms": (1e6, "ns"),
    "byte": (1.0, "byte"), "Kbyte": (1e3, "byte"), "Mbyte": (1e6, "byte"), "Gbyte": (1e9, "byte"),
    "Tbyte": (1e12, "byte"),
    "cycle/nsecond": (1e9, "Hz"), "cycle/usecond": (1e6, "Hz"), "cycle/second": (1.0, "Hz"),
    "hz": (1.0, "Hz"), "Khz": (1e3, "Hz"), "Mhz": (1e6, "Hz"), "Ghz": (1e9, "Hz"),
    "byte/second": (1.0, "byte/s"), "Kbyte/second": (1e3, "byte/s"),
    "Mbyte/second": (1e6, "byte/s"), "Gbyte/second": (1e9, "byte/s"),
    "Tbyte/second": (1e12, "byte/s"),
    "%": (1.0, "%"),
}


def normalise_unit(value: Any, unit: str) -> tuple[Any, str]:
    """Scale a value to ns / byte / Hz / byte/s / % where the unit is known; others pass
    through unchanged (value and unit)."""
    factor, new_unit = UNITS.get(unit, (1.0, unit))
    if isinstance(value, (int, float)) and factor != 1.0:
        return float(value) * factor, new_unit
    return value, new_unit


def unit_factors(units: pd.Series) -> tuple[pd.Series, pd.Series, dict[str, str]]:
    """:func:`normalise_unit` for a whole column of units, worked out once per distinct unit.

    Args:
        units: Nsight Compute unit names (``usecond``, ``Kbyte``...); None/NaN = unknown.
    Returns:
        (factor, unit, scaled): per row, the factor that takes a value to ns / byte / Hz /
        byte/s / % and that unit where the unit is in :data:`UNITS` (1.0 and the unit as
        given otherwise); ``scaled`` maps each unit whose factor is not 1 to a description,
        ``"usecond -> ns (x 1000)"``.
    """
    known = {u: UNITS[u] for u in units.dropna().unique() if u in UNITS}
    factor = units.map(lambda u: known[u][0] if u in known else 1.0).astype("float64")
    unit = units.map(lambda u: known[u][1] if u in known else u)
    scaled = {u: f"{u} -> {to} (x {f:g})" for u, (f, to) in known.items() if f != 1.0}
    return factor, unit, scaled
