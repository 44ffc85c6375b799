"""Region names of launches in no NVTX range: the kernel's function name, told apart when two
different kernels shorten alike (``void at::vectorized_elementwise_kernel<4,
...MulFunctor...>(...)``
-> ``vectorized_elementwise_kernel (MulFunctor)``).

Below ``extract/`` and ``importing/`` alike: the importer names regions so, and the deep dive and
the rule digest name a report's unranged launches the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
