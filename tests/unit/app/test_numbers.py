"""Number display: significant digits, separators, a time unit that fits, table formats."""

from __future__ import annotations

import pandas as pd
import pytest

from app.core import numbers


@pytest.mark.parametrize("value, text", [
    (21437.4944, "21,437"), (16.768, "16.77"), (0.0012345, "0.001234"), (1458.0, "1,458"),
    (0.0, "0"), (None, "—"), (float("nan"), "—"), (-3.14159, "-3.142"), (1.5e-9, "1.500e-09"),
])
def test_fmt(value, text) -> None:
    assert numbers.fmt(value) == text


@pytest.mark.parametrize("value, unit, out", [
    (21437.5, "µs", (21.4375, "ms")), (9999.0, "µs", (9999.0, "µs")),
    (2.5e7, "ns", (25.0, "ms")), (5e7, "ms", (50000.0, "s")), (12.0, "GB/s", (12.0, "GB/s")),
])
def test_fit_time(value, unit, out) -> None:
    got = numbers.fit_time(value, unit)
    assert got[1] == out[1] and got[0] == pytest.approx(out[0])


def test_table_formats_keep_four_significant_digits_of_the_smallest_value() -> None:
    assert numbers.printf_format(pd.Series([21437.4944, 0.1415])) == "%,.4f"
    assert numbers.printf_format(pd.Series([512, 8192])) == "%,d"
    assert numbers.printf_format(pd.Series([512.0, 8192.0])) == "%,.0f"
    assert numbers.printf_format(pd.Series([1e-9, 2e-9])) is None  # exponent form: default
    assert numbers.printf_format(pd.Series(["a"])) is None
    assert numbers.printf_format(pd.Series([True, False])) is None
