"""Regions and configs of launches recorded without nsight-python's bookkeeping (a plain
``ncu -o`` report, an ncu CSV export, a report made by nsight-python elsewhere).

* Region: the NVTX range the launch ran in when there is one, else its kernel's name, shortened
  to the function name (``void at::vectorized_elementwise_kernel<4, ...MulFunctor...>(...)``
  -> ``vectorized_elementwise_kernel``); when two different kernels shorten alike, the first
  template argument token only one of them has is added (``(MulFunctor)``).
* Configs: nothing records which size a launch belonged to. Within a region, consecutive runs
  with the same launch parameters (kernel, grid, block) are one config; a change starts the
  next config (:func:`segment`). Sizes that change no launch parameter cannot be told apart:
  the manifest and every page say so.
* Runs: one pass through the region's kernels (the shortest repeating launch sequence).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence

import pandas as pd

from profiling_worker.schema import columns as C

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_SKIP_TOKENS = frozenset({"void", "const", "int", "long", "float", "double", "char", "unsigned",
                          "std", "array", "instance", "lambda", "operator", "unnamed"})


def short_name(kernel: str) -> str:
    """The function name of a demangled kernel signature (no namespace, template or args)."""
    text = str(kernel).strip()
    text = re.sub(r"^void\s+", "", text)
    text = text.replace("<unnamed>::", "").replace("(anonymous namespace)::", "")
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):  # first '<' or '(' at depth 0 ends the qualified name
        if ch in "<(" and depth == 0:
            cut = i
            break
    name = text[:cut].strip() or text
    return name.split("::")[-1] or name


def region_names(kernels: Iterable[object]) -> dict[str, str]:
    """{full kernel name: region name}, distinct full names always getting distinct regions."""
    full = list(dict.fromkeys(map(str, kernels)))
    by_short: dict[str, list[str]] = {}
    for k in full:
        by_short.setdefault(short_name(k), []).append(k)
    out: dict[str, str] = {}
    for short, names in by_short.items():
        if len(names) == 1:
            out[names[0]] = short
            continue
        tokens = [[t for t in _TOKEN.findall(n) if t not in _SKIP_TOKENS] for n in names]
        for i, name in enumerate(names):
            others = {t for j, ts in enumerate(tokens) if j != i for t in ts}
            unique = [t for t in tokens[i] if t not in others]
            functor = [t for t in unique if re.search("functor|op", t, re.IGNORECASE)]
            tag = (functor or unique or [f"#{i + 1}"])[-1]
            out[name] = f"{short} ({tag})"
    return out


def segment(signatures: Sequence[Hashable]) -> list[tuple[int, int, int]]:
    """(config, run, launch) of each launch of one region, in launch order.

    A run is the shortest sequence after which the first signature recurs; consecutive runs
    with the same sequence of signatures are one config."""
    out: list[tuple[int, int, int]] = []
    i, config, run = 0, -1, 0
    previous: tuple[Hashable, ...] = ()
    n = len(signatures)
    while i < n:
        if previous and tuple(signatures[i:i + len(previous)]) == previous:
            unit = previous  # one more run of the same config
        else:
            period = next((q for q in range(1, n - i) if signatures[i + q] == signatures[i]),
                          n - i)
            unit = tuple(signatures[i:i + period])
            config, run, previous = config + 1, 0, unit
        out.extend((config, run, k) for k in range(len(unit)))
        run += 1
        i += len(unit)
    return out


def attribute(launch_rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Give launches of unknown config their Config, Run and Launch (see :func:`segment`).

    Args:
        launch_rows: one row per launch x metric with Annotation (region), Kernel, Grid, Block,
            and ``_seq`` (the launch's position in the recording).

    Returns:
        (rows with Config/Run/Launch set and ``config_index`` = Config, warnings for the
        pages: a region whose last config has fewer runs than its others, i.e. a recording cut
        short).
    """
    launches = launch_rows.drop_duplicates("_seq").sort_values("_seq")
    place: dict[int, tuple[int, int, int]] = {}
    for _, sub in launches.groupby(C.ANNOTATION, sort=False):
        sigs = list(zip(sub[C.KERNEL], sub[C.GRID].astype(str), sub[C.BLOCK].astype(str)))
        place.update(zip(sub["_seq"], segment(sigs)))
    rows = launch_rows.copy()
    triples = [place[s] for s in rows["_seq"]]
    rows[C.CONFIG] = [t[0] for t in triples]
    rows[C.RUN] = [t[1] for t in triples]
    rows[C.LAUNCH] = [t[2] for t in triples]
    return rows, cut_short(rows)


def cut_short(rows: pd.DataFrame) -> list[str]:
    """Warnings for a recording that ends inside a config: the config launched last has
    fewer runs than the region's other configs."""
    if rows.empty:
        return []
    last = rows.sort_values("_seq").iloc[-1]
    sub = rows[rows[C.ANNOTATION] == last[C.ANNOTATION]]
    runs = sub.groupby(C.CONFIG)[C.RUN].nunique()
    have, full = int(runs.get(last[C.CONFIG], 0)), int(runs.max())
    if have >= full:
        return []
    return [f"partial: the recording ends inside config {int(last[C.CONFIG])} of "
            f"{last[C.ANNOTATION]} ({have} of the {full} runs its other configs have); the file "
            "was probably cut short (an interrupted copy), so that config's values are "
            "incomplete"]


__all__ = ["short_name", "region_names", "segment", "attribute", "cut_short"]
