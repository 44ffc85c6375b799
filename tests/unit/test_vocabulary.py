"""Column and metric names are spelled once, in the vocabulary modules (issue 12).

Read with the AST, outside :data:`VOCABULARY`, every module of ``app/`` and ``profiling_worker/``:

- no string literal is an Nsight metric name (``dram__bytes.sum``...): those live in
  ``profiling_worker/bundle/schema/metrics.py``;
- no string literal equal to a vocabulary column name is used as a column: a subscript key
  (``frame["Config"]``, ``frame[["A", "B"]]``, ``row[side + "Runs"]``), a
  ``columns=``/``on=``/``by=``/... keyword (a list's items, a dict's keys and values:
  ``rename(columns={...})``), a positional column argument of ``groupby``/``sort_values``/
  ``set_index``/..., or a key of the row dicts written inside ``pd.DataFrame(...)``. Widget labels and page titles that
  happen to read like a column ("Kernels", "Config") are not columns, so they are not looked at.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from profiling_worker.bundle.schema import columns, metrics

from app.core import frame_columns

ROOT = Path(__file__).resolve().parents[2]
VOCABULARY = ("profiling_worker/bundle/schema/metrics.py", "profiling_worker/bundle/schema/columns.py",
              "app/core/frame_columns.py")
METRIC_NAME = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")
COLUMN_KEYWORDS = {"columns", "on", "left_on", "right_on", "by", "subset", "index", "values",
                   "id_vars", "value_vars", "x", "y", "color"}
COLUMN_METHODS = {"groupby", "sort_values", "set_index", "drop_duplicates", "pivot_table",
                  "nlargest", "nsmallest", "explode"}


def _vocabulary() -> set[str]:
    """Column names the vocabulary modules define (upper-case module constants)."""
    names = set()
    for module in (columns, frame_columns):
        names |= {v for k, v in vars(module).items()
                  if k.isupper() and isinstance(v, str) and "__" not in v and v[:1].isupper()}
    return names


def _items(node: ast.expr) -> Iterator[ast.expr]:
    """The node, or the items of a list/tuple/set, the keys and values of a dict, or both sides
    of a ``+`` (``side + "Runs"``)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        yield from node.elts
    elif isinstance(node, ast.Dict):
        yield from (n for n in (*node.keys, *node.values) if n is not None)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from (*_items(node.left), *_items(node.right))
    else:
        yield node


def _is_dataframe(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "DataFrame"
            or isinstance(func, ast.Name) and func.id == "DataFrame")


def _column_positions(tree: ast.AST) -> Iterator[ast.expr]:
    """Every expression that names a column (module docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            yield from _items(node.slice)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in COLUMN_KEYWORDS:
                    yield from _items(kw.value)
            if isinstance(node.func, ast.Attribute) and node.func.attr in COLUMN_METHODS:
                for arg in node.args:
                    yield from _items(arg)
            if _is_dataframe(node.func) and node.args:  # keys of the row dicts it is built from
                yield from (k for d in ast.walk(node.args[0]) if isinstance(d, ast.Dict)
                            for k in d.keys if k is not None)


def _sources() -> Iterator[tuple[str, ast.AST]]:
    for part in ("app", "profiling_worker"):
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in VOCABULARY:
                yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def test_no_metric_name_literal_outside_metrics_module() -> None:
    assert METRIC_NAME.match(metrics.GPU_TIME) and METRIC_NAME.match(metrics.DRAM_BYTES)
    found = [f"{rel}:{n.lineno}: {n.value!r}" for rel, tree in _sources() for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and METRIC_NAME.match(n.value)]
    assert not found, "name these in profiling_worker/bundle/schema/metrics.py:\n" + "\n".join(found)


def test_no_column_literal_used_as_a_column() -> None:
    names = _vocabulary()
    assert {"Config", "AvgValue", "ConfigLabel", "Runs"} <= names  # the vocabulary is read
    found = [f"{rel}:{n.lineno}: {n.value!r}" for rel, tree in _sources()
             for n in _column_positions(tree)
             if isinstance(n, ast.Constant) and n.value in names]
    assert not found, ("use the name from profiling_worker/bundle/schema/columns.py or "
                       "app/core/frame_columns.py:\n" + "\n".join(found))
