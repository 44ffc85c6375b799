"""How a number, a count and a time are written as text, for the worker's text outputs (the
gate's Markdown, console and JUnit summaries; its messages' counts) and the app's pages alike
(``app.core.numbers`` and ``app.core.derived`` take these from here): significant digits with
thousands separators, a count with its noun in its number ("1 run", never "run(s)"), the
time unit (ns, µs, ms, s) that fits a duration, so a time never reads "8,700,436.0 ns", and a
recorded time of day as a person reads it ("2026-12-07 09:12:33 UTC", never ISO 8601's
"2026-12-07T09:12:33.123456+00:00").
Display only: tables and JSON keep their exact values in ns."""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Iterable

SIG_DIGITS = 4
#: Decimals a written number has at most.
MAX_DECIMALS = 6
#: Time unit -> its size in ns (divide a value in ns by it), smallest first.
TIME_UNITS = {"ns": 1.0, "µs": 1e3, "ms": 1e6}
#: The units a fitted time may take: :data:`TIME_UNITS` and seconds.
_FITTING_UNITS = {**TIME_UNITS, "s": 1e9}
#: A unit the tables give -> the unit a person reads it in and its size in the tables' unit
#: (divide a value by it): an SM clock in Hz reads "1,979 MHz", as the run audit writes it,
#: never "1,979,203,821 Hz" (a fresh user of session 23 read both on one Stability page).
#: Nsight Compute's report files (the deep dive's sections) spell it "hz".
SHOWN_UNITS = {"Hz": ("MHz", 1e6), "hz": ("MHz", 1e6)}
#: Hz in a MHz: the clocks' unit in every sentence and column named ...MHz.
HZ_PER_MHZ = SHOWN_UNITS["Hz"][1]


def shown_unit(unit: str) -> tuple[str, float]:
    """The unit a value in ``unit`` is shown in and the divisor to it (:data:`SHOWN_UNITS`):
    "Hz" -> ("MHz", 1e6); any other unit (a duration's ns included: the pages' time-unit
    control chooses that) -> (``unit``, 1.0)."""
    return SHOWN_UNITS.get(unit, (unit, 1.0))


def literal(text: str) -> str:
    """``text`` as a literal part of a :func:`with_durations` template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def with_durations(template: str, value: str, reference: str, unit: str) -> str:
    """A sentence of durations kept as data (the run audit's evidence, tables/run_audit's
    ``EvidenceTemplate``) written out: ``template``'s ``{value}`` and ``{reference}`` are the
    written durations, ``{unit}`` their unit: ``("{value} {unit} above {reference} {unit}",
    "6,123", "500", "ns")`` -> "6,123 ns above 500 ns".

    Raises:
        KeyError: the template names another field; ValueError: a lone brace in it.
    """
    return template.format(value=value, reference=reference, unit=unit)


def ns_text(value: float) -> str:
    """A duration in ns as the worker's texts write it (whole ns): 3677390.4 -> "3,677,390"."""
    return f"{value:,.0f}"


def counted(count: int, noun: str, plural: str = "") -> str:
    """``count`` with thousands separators and ``noun`` in its number: "1 kernel", "2 kernels",
    "1,969 configs" (``plural`` where adding "s" is wrong), never "kernel(s)"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def counted_span(low: int, high: int, noun: str, plural: str = "") -> str:
    """A count from ``low`` to ``high`` with ``noun`` in its number: "5-100 runs"; one number
    where they are equal, "100 runs" (issue 37: "with 100-100 runs")."""
    if low == high:
        return counted(low, noun, plural)
    return f"{low:,}-{high:,} {plural or noun + 's'}"


def fmt(value: float | int | None, sig: int = SIG_DIGITS) -> str:
    """``value`` with ``sig`` significant digits and thousands separators, never in exponent
    form between 1e-6 and 1e15: 21437.49 -> "21,437", 16.768 -> "16.77", 0.0012345 ->
    "0.001235"; None or NaN -> "—"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    magnitude = math.floor(math.log10(abs(v)))
    if magnitude < -6 or magnitude >= 15:
        return f"{v:.{sig - 1}e}"
    decimals = max(0, sig - 1 - magnitude)
    return f"{v:,.{decimals}f}"


def fitting_time_unit(values_ns: Iterable[float]) -> tuple[str, float]:
    """The largest time unit (ns, µs, ms, s) in which the smallest finite non-zero magnitude of
    ``values_ns`` is still at least 1, and its size in ns: [8_700_436.0, 8_512_000.0] ->
    ("ms", 1e6); [24_921.5, 999.0] -> ("ns", 1.0); ("ns", 1.0) when none is finite and
    non-zero. One unit for values read side by side (a gate row's two means), so they never
    read in two units."""
    shown = [abs(float(v)) for v in values_ns if math.isfinite(float(v)) and float(v) != 0]
    if not shown:
        return "ns", 1.0
    smallest = min(shown)
    unit = "ns"
    for name, size in _FITTING_UNITS.items():
        if smallest >= size:
            unit = name
    return unit, _FITTING_UNITS[unit]


def mean_decimals(mean: float, spread: float | None = None, sig: int = SIG_DIGITS) -> int:
    """Decimals that write ``mean`` with ``sig`` significant digits, more where ``spread`` (its
    std dev, same unit) needs them to keep two significant digits; at most
    :data:`MAX_DECIMALS`: (8.700436, 3.2965) -> 3; (1.45363, 0.0097867) -> 4."""
    decimals = 0
    if math.isfinite(mean) and mean != 0:
        decimals = max(0, sig - 1 - math.floor(math.log10(abs(mean))))
    if spread is not None and math.isfinite(spread) and spread > 0:
        decimals = max(decimals, 1 - math.floor(math.log10(spread)))
    return min(MAX_DECIMALS, decimals)


def mean_text(mean: float, spread: float | None, unit: str, decimals: int | None = None) -> str:
    """``mean ± spread unit``, both already in ``unit``, with ``decimals`` (default
    :func:`mean_decimals`; give values read side by side the same): (8.700436, 3.2965286,
    "ms") -> "8.700 ± 3.297 ms"; no spread (None or NaN: one run) -> "8.700 ms"."""
    if decimals is None:
        decimals = mean_decimals(mean, spread)
    said = f"{mean:,.{decimals}f}"
    if spread is not None and not math.isnan(spread):
        said += f" ± {spread:,.{decimals}f}"
    return f"{said} {unit}"


#: A number as a sentence writes it: signed, with thousands separators, decimals or an
#: exponent (the gate's "baseline mean is -3.98e+06 byte"); not one inside a word ("fp16").
_NUMBER = r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"


def _in_unit(unit: str) -> re.Pattern[str]:
    """A value a sentence writes in ``unit``: ``3,677,390 ns``, or a pair ``3,677,390 vs
    1,440,196 ns`` (the run audit's evidence, written by the worker in ns whatever the page
    shows); "Hz" is not the end of "MHz"."""
    return re.compile(rf"(?P<a>{_NUMBER})(?: vs (?P<b>{_NUMBER}))? {re.escape(unit)}(?![\w/])")


def values_in(text: str, unit: str, shown: str, divisor: float) -> str:
    """``text`` with each value it writes in ``unit`` (the tables' unit: ns, Hz, byte) written
    in ``shown`` instead (the page's: µs, MHz), divided by ``divisor`` and written by
    :func:`fmt`: "baseline mean is 1.98e+09 Hz" -> "baseline mean is 1,980 MHz"; ``text``
    unchanged where ``shown`` is ``unit`` and ``divisor`` 1 (a "%" metric's sentence has
    differences in % too, which no unit change may touch)."""
    if shown == unit and divisor == 1.0:
        return text

    def written(match: re.Match[str]) -> str:
        values = [fmt(float(v.replace(",", "")) / divisor) for v in match.group("a", "b") if v]
        return f"{' vs '.join(values)} {shown}"

    return _in_unit(unit).sub(written, text)


#: An ISO 8601 time as the manifests, Python's ``isoformat`` and Slurm write it: date, "T",
#: time, optional fraction of a second and zone.
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                       r"(?:Z|[+-]\d{2}:?\d{2})?")


def recorded_time(stamp: object) -> _dt.datetime | None:
    """A recorded time (ISO 8601, as the manifests write it) as an aware datetime in UTC (UTC
    where it names no zone); None for None or a text that is no such time. The one reading of
    a manifest's times: :func:`when_text` and the pages' orderings go through it."""
    try:
        when = _dt.datetime.fromisoformat(str(stamp).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(_dt.timezone.utc) if when.tzinfo else when.replace(
        tzinfo=_dt.timezone.utc)


def when_text(stamp: object, date: bool = True) -> str:
    """A recorded time (ISO 8601; UTC where it names no zone) as a person reads it, in UTC to
    the second: "2026-12-07T09:12:33.123456+00:00" -> "2026-12-07 09:12:33 UTC" (``date``
    False: "09:12:33 UTC", for times of one event read side by side). A text that is no such
    time comes back as it was ("" for None)."""
    text = "" if stamp is None else str(stamp).strip()
    when = recorded_time(text)
    if when is None:
        return text
    return when.strftime("%Y-%m-%d %H:%M:%S UTC" if date else "%H:%M:%S UTC")


def times_in(text: str, date: bool = True) -> str:
    """``text`` with each ISO 8601 time in it written by :func:`when_text`: a recorded note
    ("SIGTERM at 2026-12-07T09:12:33+00:00") as the panel shows it."""
    return _ISO_TIME.sub(lambda m: when_text(m.group(0), date), text)
