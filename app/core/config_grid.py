"""Typed parameter values -> a list of configs (pure).

Each parameter of a kernel gets its own text field in the sidebar. A field holds either values
separated by commas (``64, 128, 256``) or a range: ``1024..8192 *2`` (multiply by 2 up to the
stop: 1024, 2048, 4096, 8192) or ``256..1024 +256`` (add 256: 256, 512, 768, 1024). The configs
of a job are the product of the parameters' values (every combination) or their zip (the i-th
value of each, lists of equal length), as the user picks.

Errors are :class:`FieldError` s on the field the user typed in (``sizes`` for a kernel with
one parameter, else the parameter's name). The values' kinds follow the kernel's declared
``parameter_kinds`` ("size": whole number > 0, the default; "int"; "float"; "str").
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from profiling_worker.bundle.schema.spec import FieldError, typed_instead

PRODUCT = "product"
ZIP = "zip"
COMBINE = {PRODUCT: "every combination (product)", ZIP: "pairwise (zip)"}
#: The worker refuses more configs than this (``profiling_worker.bundle.schema.spec``); a range that
#: would make more is refused here before it is expanded further.
MAX_VALUES = 4096
VALUES_HINT = ("write values separated by commas (64, 128, 256) or a range: 1024..8192 *2 "
               "(doubling) or 256..1024 +256 (adding)")
_RANGE_RE = re.compile(r"^\s*(\S+)\s*\.\.\s*(\S+?)\s*(?:([*+])\s*(\S+))?\s*$")


#: Python's int() and float() read these silently; a form field refuses them (digits_problem)
_GROUPED = re.compile(r"[+-]?[0-9.]+(?:_[0-9.]+)+(?:[eE][+-]?[0-9]+)?")


def digits_problem(text: str) -> str | None:
    """Why the typed number ``text`` is refused although Python's ``int()`` would read it, with
    the number to type instead; None for any other text (what is wrong with that is said where
    it is read).

    Refused: digits other than 0-9 (``١٢٨``, full-width ``１２８``: int() reads 128, a reader
    of the field may not) and ``_`` between digits (``1_000``), each read silently before.
    """
    text = text.strip()
    if any(ch.isdecimal() and not ch.isascii() for ch in text):
        typed = "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() else ch for ch in text)
        return f"{text!r} has digits other than 0-9: type {typed}"
    if _GROUPED.fullmatch(text):
        return f"{text!r} groups digits with _: type {text.replace('_', '')}"
    return None


#: The fix of a number :func:`digits_problem` refuses
DIGITS_FIX = "type the number with the digits 0-9 alone"


class NotTyped(ValueError):
    """A number typed in a form Python reads but the form refuses (:func:`digits_problem`)."""


#: Bounds :func:`typed_instead` offers a whole number within (a size's > 0 is checked after)
_ANY_WHOLE = (-(10**18), 10**18)


def _number(text: str, kind: str) -> int | float:
    """``text`` as a ``kind`` value (float for "float", else int).

    Raises:
        NotTyped: digits Python reads but the form refuses (:func:`digits_problem`).
        ValueError: no number of that kind, in words with what to type where there is one
            (``'1e3' is not a whole number: type 1000``; was Python's "invalid literal for
            int() with base 10" in a range).
    """
    problem = digits_problem(text)
    if problem:
        raise NotTyped(problem)
    try:
        return float(text) if kind == "float" else int(text)
    except ValueError:
        noun = "a number" if kind == "float" else "a whole number"
        raise ValueError(f"{text.strip()!r} is not {noun}"
                         f"{'' if kind == 'float' else typed_instead(text, *_ANY_WHOLE)}") from None


def _none_given(kind: str) -> str:
    return "no sizes given" if kind == "size" else "no values given"


def _check(value: Any, kind: str) -> str | None:
    """Why ``value`` is not a valid value of ``kind``, or None."""
    if kind == "size" and value <= 0:
        return f"{value} is not greater than 0"
    return None


def _expand_range(match: re.Match[str], kind: str) -> list[int | float]:
    start, stop = _number(match[1], kind), _number(match[2], kind)
    op, step = match[3] or "+", _number(match[4], kind) if match[4] else 1
    if (op == "*" and (step <= 1 or start <= 0)) or (op == "+" and step <= 0) or stop < start:
        raise ValueError("a range needs start <= stop and a step that grows (+k with k > 0, "
                         "*k with k > 1 and start > 0)")
    values: list[int | float] = []
    value = start
    while value <= stop:
        values.append(value)
        if len(values) > MAX_VALUES:
            raise ValueError(f"the range gives more than {MAX_VALUES:,} values")
        value = value * step if op == "*" else value + step
    return values


def parse_values(text: str, field: str, kind: str = "size") -> tuple[list[Any], list[FieldError]]:
    """One parameter's text -> its values (in order, repeats kept: :func:`repeats` and
    :func:`combine` refuse the repeated configs they make) and the errors; an empty item
    (``64,,128``, a trailing comma) is an error naming its place.

    Args:
        text: ``"64, 128"``, ``"1024..8192 *2"`` or ``"256..1024 +256"`` (``;`` also separates).
        field: the field name the errors carry (``sizes`` or the parameter's name).
        kind: "size" (int > 0), "int", "float" or "str" (no ranges).

    Returns:
        (values, errors); values are ints, floats or strings following ``kind``.
    """
    text = str(text or "").strip()
    if not text:
        return [], [FieldError(field, _none_given(kind), VALUES_HINT)]
    match = _RANGE_RE.match(text) if kind != "str" else None
    if match:
        try:
            expanded = _expand_range(match, kind)
        except ValueError as exc:
            return [], [FieldError(field, f"{text!r}: {exc}", DIGITS_FIX
                                   if isinstance(exc, NotTyped) else VALUES_HINT)]
        bad = [p for p in (_check(v, kind) for v in expanded) if p]
        return (expanded, []) if not bad else ([], [FieldError(field, bad[0], VALUES_HINT)])
    values: list[int | float | str] = []
    errors: list[FieldError] = []
    items = [t.strip() for t in text.replace(";", ",").split(",")]
    empty = [place for place, item in enumerate(items, 1) if not item]
    if empty:  # one box for all of them (", ,64," drew three nearly alike)
        errors.append(FieldError(field, f"{_places(empty)} of {len(items)} "
                                 f"{'is' if len(empty) == 1 else 'are'} empty in {text!r}",
                                 "remove the extra comma or semicolon; " + VALUES_HINT))
    for item in items:
        if not item:
            continue
        if kind == "str":
            values.append(item)
            continue
        try:
            value = _number(item, kind)
        except NotTyped as exc:
            errors.append(FieldError(field, str(exc), DIGITS_FIX))
            continue
        except ValueError as exc:
            errors.append(FieldError(field, str(exc), VALUES_HINT))
            continue
        problem = _check(value, kind)
        if problem:
            errors.append(FieldError(field, problem, VALUES_HINT))
        else:
            values.append(value)
    if not values and not errors:
        errors.append(FieldError(field, _none_given(kind), VALUES_HINT))
    return values, errors


def _places(places: Sequence[int]) -> str:
    """``item 2``, ``items 1, 2 and 4`` (1-based places in a field's list)."""
    if len(places) == 1:
        return f"item {places[0]}"
    return f"items {', '.join(map(str, places[:-1]))} and {places[-1]}"


#: The fix of a repeated config, the same rule as the worker's (``configs[i] repeats ...``).
REPEAT_HINT = "give each value once: a config given twice is refused"


def repeats(values: Sequence[Any], field: str) -> list[FieldError]:
    """One error per value given again in one parameter's field (``64, 64``): with one
    parameter, or every combination of several, it makes a config twice."""
    first: dict[Any, int] = {}
    errors = []
    for place, value in enumerate(values, 1):
        if value in first:
            errors.append(FieldError(field, f"{value!r} is given twice "
                                     f"({_places([first[value], place])})", REPEAT_HINT))
        first.setdefault(value, place)
    return errors


def _repeated_pairs(configs: Sequence[Mapping[str, Any]]) -> list[FieldError]:
    """Pairwise configs that repeat an earlier pair, named on ``combine``."""
    first: dict[tuple[Any, ...], int] = {}
    errors = []
    for place, config in enumerate(configs, 1):
        row = tuple(config.values())
        if row in first:
            shown = ", ".join(f"{k}={v!r}" for k, v in config.items())
            errors.append(FieldError("combine", f"pair {place} ({shown}) repeats pair "
                                     f"{first[row]}", REPEAT_HINT))
        first.setdefault(row, place)
    return errors


def combine(values: dict[str, list[Any]], mode: str
            ) -> tuple[list[dict[str, Any]], list[FieldError]]:
    """Parameter -> values to configs: every combination (``product``, first parameter varying
    slowest; a value given twice is an error on its parameter) or the i-th value of each
    (``zip``, equal lengths required, error on ``combine``, as is a pair given twice)."""
    names = list(values)
    if mode == ZIP:
        lengths = {n: len(v) for n, v in values.items()}
        if len(set(lengths.values())) > 1:
            given = ", ".join(f"{n}: {k}" for n, k in lengths.items())
            return [], [FieldError("combine", f"pairwise needs as many values for each parameter "
                                   f"({given})", "give each parameter the same number of values, "
                                   "or choose every combination")]
        rows: Iterable[tuple[Any, ...]] = zip(*values.values())
        count = min(lengths.values(), default=0)
    else:
        rows = itertools.product(*values.values())
        count = math.prod(len(v) for v in values.values())
    if count > MAX_VALUES:  # counted before building: 4096 values of three parameters is 2^36
        return [], [FieldError("combine", f"{count:,} configs is more than {MAX_VALUES:,}",
                               "use fewer values or pairwise, or split the sweep into jobs")]
    if mode != ZIP:
        errors = [e for name, v in values.items() for e in repeats(v, name)]
        if errors:
            return [], errors
    configs = [dict(zip(names, row)) for row in rows]
    errors = _repeated_pairs(configs) if mode == ZIP else []
    return ([], errors) if errors else (configs, [])


def split(configs: Sequence[Mapping[str, Any]], params: Sequence[str]
          ) -> tuple[dict[str, list[Any]], str]:
    """Configs -> the values of each parameter (in order, once each) and the combination that
    gives them back: ``product`` when they are every combination, ``zip`` when they pair up in
    order, else ``product`` of their values (the closest grid). Prefills the sidebar's
    per-parameter fields from a kernel's default configs."""
    values = {p: list(dict.fromkeys(c[p] for c in configs if p in c)) for p in params}
    rows = [tuple(c.get(p) for p in params) for c in configs]
    if rows == list(zip(*values.values())):
        return values, ZIP
    return values, PRODUCT
