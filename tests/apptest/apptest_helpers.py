"""Helpers and constants shared by the AppTests: a module of its own name, never imported as
``conftest`` (a whole-suite run has several ``conftest`` modules and one of them wins)."""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamlit.testing.v1 import AppTest

from app import settings
from app.core.numbers import UNBOUNDED, UNIT_VALUE_COLUMNS
from app.core.pages import SECTIONS
from profiling_worker.bundle.schema import columns as C

if TYPE_CHECKING:
    import pandas as pd

REPO = Path(__file__).resolve().parents[2]
TINY_SPEC = {"kernels": ["matmul"], "configs": [{"n": 32}, {"n": 64}], "runs": 3,
             "backend": "cpu", "warmup": 1}
JOB_ID = "20261129-230000-matmul-0001"
ONE_RUN_JOB_ID = "20261129-230100-matmul-0002"
#: A report Nsight Compute wrote on the H200 with its default set (4 sections, rule results),
#: and the job id its import gets (the ``default_set_import`` fixture).
DEFAULT_SET = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"
IMPORTED = "import-default-set"
_DEFAULT = next(iter(SECTIONS.values()))[0]  # the bar's first page: the root URL
#: The default page, shown by a first run that names no page, and its header (its title).
DEFAULT_PAGE, DEFAULT_HEADER = Path(_DEFAULT.script).stem, _DEFAULT.title


def record_cpu_job(path: Path, spec: dict) -> Path:
    """Run the real worker on ``spec`` (cpu backend) into the new directory ``path``."""
    path.mkdir()
    (path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return path


#: Variables of the tests' environment that ``python -m profiling_worker env`` never reads
#: (profiling_worker reads KPROF_BUNDLED_DIR only in ``import``, KPROF_RESULTS_DIR nowhere) and
#: that differ in every test; ``test_env_probe_once`` checks that the report ignores them.
NOT_PROBED = ("PYTEST_CURRENT_TEST", "KPROF_RESULTS_DIR", "KPROF_BUNDLED_DIR")


def _stats(paths: list[Path]) -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime in ns) of each existing file of ``paths``: a changed file changes it."""
    out = []
    for path in paths:
        if path.is_file():
            stat = path.stat()
            out.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(out)


def probe_inputs(worker_python: str) -> Hashable:
    """What the worker's ``env`` report of ``worker_python`` depends on, as the app would run it
    now: the interpreter, the working folder, the worker's environment (PATH, CUDA_VISIBLE_DEVICES,
    KPROF_KERNEL_DIRS, ...) less :data:`NOT_PROBED`, and the files it reads that a test may
    write: the user kernel folders' files and the ``ncu`` found on PATH."""
    env = settings.worker_env()
    kernel_files = [f for d in env.get("KPROF_KERNEL_DIRS", "").split(os.pathsep) if d
                    for f in sorted(Path(d).rglob("*"))]
    ncu = shutil.which("ncu", path=env.get("PATH"))
    return (worker_python, os.getcwd(),
            frozenset((k, v) for k, v in env.items() if k not in NOT_PROBED),
            _stats(kernel_files), _stats([Path(ncu)] if ncu else []))


def wait_until(predicate: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Poll ``predicate`` every 0.2 s (AppTest never ticks run_every fragments)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


def plotly_specs(at: AppTest) -> list[dict]:
    """The figure JSON of every plotly chart on the page."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def markdown_sources(at: AppTest) -> list[str]:
    """The Markdown source of every markdown, caption, info, warning, error and success."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success"):
        parts += [str(el.value) for el in getattr(at, kind)]
    return parts


#: Element kinds a closed expander may hold on a page load (app.ui.panels.fold): text.
TEXT_KINDS = frozenset({"markdown", "caption"})


def fold_key(box: Any) -> str | None:
    """The key of an expander drawn by ``app.ui.panels.fold`` (its widget id ends with it:
    ``$$ID-<hash>-<key>``), None for a plain expander."""
    return str(box.proto.id).split("-", 2)[2] if box.proto.id else None


def element_kinds(node: Any) -> list[str]:
    """The kinds (``markdown``, ``code``, ...) of the elements drawn inside a block, at any
    depth."""
    return [kind for child in getattr(node, "children", {}).values()
            for kind in ([] if hasattr(child, "children") else [child.type])
            + element_kinds(child)]


def closed_contents(at: AppTest) -> dict[str, list[str]]:
    """Each closed expander's label -> the kinds of the elements drawn inside it (none for a
    fold not yet opened)."""
    return {str(box.label): element_kinds(box) for box in at.expander if not box.proto.expanded}


def open_folds(at: AppTest) -> AppTest:
    """Open every fold of the page, as a user's clicks would, each opening a rerun (here one
    rerun for all); returns ``at``."""
    for box in at.expander:
        if (key := fold_key(box)) is not None:
            at.session_state[key] = True
    return at.run()


def unescape(source: str) -> str:
    """Markdown source without the backslash escapes and invisible word joiners of names from
    files (app/core/markdown.py): the text as a reader sees it."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", source).replace("\u2060", "")  # word joiner


def texts(at: AppTest) -> str:
    """Every markdown, caption, info, warning, error and success text, joined, as read."""
    return unescape("\n".join(markdown_sources(at)))


def texts_with_progress(at: AppTest) -> str:
    """The page's texts and its progress bars' texts (the job panel's progress lines)."""
    return "\n".join([texts(at), *(el.proto.text for el in at.get("progress"))])


def trace_values(trace: dict, axis: str) -> list[float]:
    """A trace's x or y values from the figure JSON (plotly sends numpy arrays as base64)."""
    import base64

    import numpy as np

    data = trace[axis]
    if isinstance(data, dict) and "bdata" in data:
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).tolist()
    return list(data)


def submit_cpu_matmul(at: AppTest, sizes: str, runs: int) -> str:
    """Submit a cpu-backend matmul job from the sidebar; returns its job id."""
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value("cpu")
    at.text_input(key="builder-sizes").set_value(sizes)
    at.text_input(key="builder-runs").set_value(str(runs))
    at.button(key="builder-submit").click().run()
    return str(at.session_state["sidebar-job"])


def shown_cells(at: AppTest) -> list[str]:
    """Every cell of every table on the page as the browser draws it: a missing value (None,
    NaN) as the table's placeholder (Streamlit draws "None" when it has none), others as
    ``str`` of the value (before the column's number format)."""
    import pandas as pd

    cells = []
    for el in at.dataframe:
        missing = el.proto.placeholder if el.proto.HasField("placeholder") else "None"
        for value in el.value.to_numpy().ravel():
            cells.append(missing if value is None or (not isinstance(value, str) and pd.isna(value))
                         else str(value))
    return cells


def displayed(element: Any) -> pd.DataFrame:
    """A table's frame as the browser writes it where a pandas Styler sets a number column's
    text (``app.ui.panels.styled``) and the column config gives it no number format (which
    would take precedence): those columns as the Styler's text; every other column as its
    values. The values behind the text stay in ``element.value`` (what sorting reads)."""
    import pandas as pd
    from streamlit import dataframe_util

    frame = element.value
    if not element.proto.arrow_data.HasField("styler"):
        return frame
    text = dataframe_util.convert_arrow_bytes_to_pandas_df(
        element.proto.arrow_data.styler.display_values)
    columns = json.loads(element.proto.columns) if element.proto.columns else {}
    frame = frame.copy()
    for i, name in enumerate(frame.columns):
        config = (columns.get(str(name)) or {}).get("type_config") or {}
        number = (pd.api.types.is_numeric_dtype(frame[name])
                  and not pd.api.types.is_bool_dtype(frame[name]))
        if number and not config.get("format"):
            frame[name] = text.iloc[:, i].to_numpy(dtype=object)
    return frame


_NUMBER_TEXT = re.compile(r"^-?[\d,]*\.?\d+(e[+-]\d+)?$")
_NOT_A_NUMBER = ("—", UNBOUNDED, "")


def text_number_problems(frame: pd.DataFrame, columns: dict,
                         in_unit: Iterable[str] = UNIT_VALUE_COLUMNS,
                         one_format: bool = False) -> list[str]:
    """Numbers a table writes as text (an "unbounded" interval bound, a column of rows in
    several units) keep one format: one number of decimals per column, or per unit where the
    column holds each row's value in the row's Unit; and a column of values in several units is
    never given one number format (the deep dive wrote "183,360.00 ns" and "1,535,586,414.70 Hz"
    with the decimals of its % rows; Compare's DiffCI95UpperPct read "6.891" under "0.8191").
    ``columns``: the table's column config (``proto.columns``); ``in_unit``: the columns that
    hold each row's value in the row's Unit; ``one_format``: the table has more cells than
    ``app.ui.panels.STYLED_CELLS``, where such a column keeps one number format for all its rows
    (its caption says so) so that a header click sorts it by value."""
    out = []
    units = frame[C.UNIT].astype(str) if C.UNIT in frame.columns else None
    for name in frame.columns:
        series = frame[name]
        fmt = ((columns.get(str(name)) or {}).get("type_config") or {}).get("format")
        per_row_unit = units is not None and name in set(in_unit) and units.nunique() > 1
        if per_row_unit and fmt and not one_format:
            out.append(f"{name}: one format {fmt} for rows in {sorted(set(units))}")
        if series.dtype != object:
            continue
        cells = [(str(v), u) for v, u in zip(series, units if per_row_unit else [""] * len(series))
                 if v is not None and str(v) not in _NOT_A_NUMBER]
        if not cells or not all(_NUMBER_TEXT.match(v) for v, _ in cells):
            continue  # text, or numbers among text (a report's values): each by its own digits
        for unit in dict.fromkeys(u for _, u in cells):
            shown = [v for v, u in cells if u == unit]
            decimals = {len(v.partition("e")[0].partition(".")[2]) for v in shown}
            exponent = {"e" in v for v in shown}
            if len(decimals) > 1 or len(exponent) > 1:
                out.append(f"{name}{' in ' + unit if unit else ''}: mixed decimals {shown[:6]}")
    return out


def count_cache_misses(monkeypatch: Any, functions: Iterable[tuple[str, str]]) -> list[str]:
    """The list that collects the name of every call of ``functions`` ((module, name) pairs)
    made by app/ui/cached.py, i.e. a cache miss (a hit calls nothing; a view calling another
    directly is not counted). ``monkeypatch`` is pytest's fixture, which undoes the wrappers."""
    from app.ui import cached

    calls: list[str] = []
    for module_name, name in functions:
        module = importlib.import_module(module_name)
        real = getattr(module, name)

        def counted(*args, _real=real, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            if Path(sys._getframe(1).f_code.co_filename) == Path(cached.__file__):
                calls.append(_name)
            return _real(*args, **kwargs)

        # the same module and name: the caches key a function by them (app/ui/cached.py)
        wrapper = functools.update_wrapper(counted, real)
        monkeypatch.setattr(module, name, wrapper)
        for other in list(sys.modules.values()):  # a module imported before this test
            held = getattr(other, name, None)  # its own reference, or an earlier test's
            if (getattr(other, "__name__", "").startswith("app.")  # wrapper (imported then)
                    and (held is real or getattr(held, "__wrapped__", None) is real)):
                monkeypatch.setattr(other, name, wrapper)
    return calls


def sent_elements(monkeypatch: Any) -> list[str]:
    """The list that collects the type of every new element the script runs send, in the order
    sent (``plotly_chart``, ``selectbox``, ``button_group`` for a segmented control,
    ``checkbox`` for a toggle ...): the order the browser renders them in, which AppTest's tree
    (ordered by place on the page) does not keep. ``monkeypatch`` undoes the wrapper."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    sent: list[str] = []
    real = ScriptRunContext.enqueue

    def recording(self: ScriptRunContext, msg: Any) -> None:
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            sent.append(str(msg.delta.new_element.WhichOneof("type")))
        real(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", recording)
    return sent
