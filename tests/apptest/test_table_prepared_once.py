"""A table is prepared once per distinct frame (app.ui.panels.prepare, issue 40): a rerun of a
page prepares none of its tables again, and a cached table is drawn exactly as an uncached one
(values, display text, column config), on One kernel, Kernels and Stability of two bundled jobs
(ncu, cupti) each: a sample of the pages that draw tables through panels.table."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from app.ui import panels
from tests.scenarios import SCENARIOS

PAGES = ["one_kernel", "kernels", "stability"]
JOBS = ["h200-ncu-matmul-sweep", "h200-cupti-matmul-sweep"]


def _drawn(at) -> list[tuple]:
    """Each table as drawn: its values, display text (pyarrow tables, compared by content:
    their IPC bytes differ in layout alone), column config, and every other field of the
    element but the Styler's random id (pandas draws a new one per Styler)."""
    out = []
    for frame in at.dataframe:
        proto = type(frame.proto)()
        proto.CopyFrom(frame.proto)
        arrow = proto.arrow_data
        values = [pa.ipc.open_stream(b).read_all() if b else None
                  for b in (arrow.data, arrow.styler.display_values)]
        arrow.data = arrow.styler.display_values = b""
        arrow.styler.uuid = ""
        out.append((*(v.to_pandas() if v is not None else None for v in values),
                    [v.schema.metadata if v is not None else None for v in values],
                    proto.SerializeToString()))
    return out


def _same(one: list[tuple], other: list[tuple]) -> bool:
    return len(one) == len(other) and all(
        all((x.equals(y) and list(x.dtypes) == list(y.dtypes))
            if isinstance(x, pd.DataFrame) else x == y for x, y in zip(a, b))
        for a, b in zip(one, other))


@pytest.mark.parametrize("job", JOBS)
@pytest.mark.parametrize("page", PAGES)
def test_a_rerun_prepares_no_table_and_draws_the_same(store, monkeypatch, app, page: str,
                                                      job: str) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    prepared: list[str] = []
    real = panels.prepare

    def counted(frame):  # type: ignore[no-untyped-def]
        prepared.append(str(frame.shape))
        return real(frame)

    monkeypatch.setattr(panels, "prepare", counted)
    at = app(page, query={"job": job})
    assert not at.exception, at.exception
    assert at.dataframe and prepared, "the page drew no table through panels.table"
    first = len(prepared)
    at.run()
    assert not at.exception, at.exception
    assert len(prepared) == first, f"a rerun prepared again: {prepared[first:]}"
    cached = _drawn(at)
    # the same page with every table prepared at this run, as before the cache
    monkeypatch.setattr(panels, "_prepared", lambda digest, frame: counted(frame))
    fresh = app(page, query={"job": job})
    assert not fresh.exception, fresh.exception
    assert _same(_drawn(fresh), cached)
