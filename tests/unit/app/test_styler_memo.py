"""app/streamlit_patches/styler_memo.py: a prepared table's Styler is marshalled once per place
and every later draw gets the same proto part that Streamlit's own marshalling writes."""

from __future__ import annotations

from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler
from streamlit.elements import arrow
from streamlit.proto.ArrowData_pb2 import ArrowData

from app.streamlit_patches import styler_memo
from app.ui import panels
from profiling_worker.bundle.schema import columns as C


#: Streamlit's own marshalling, whether or not the app's wrapper is installed
STOCK = getattr(arrow.marshall_styler, "__wrapped__", arrow.marshall_styler)


def _prepared_styler() -> Styler:
    """The Styler :func:`panels.prepare` makes of a table whose rows are in two units."""
    frame = pd.DataFrame({C.METRIC: ["gpu__time_duration.sum", "dram__bytes.sum"],
                          C.UNIT: ["ns", "byte"], "Value": [12345.678, 1.5e9]})
    data = panels.prepare(frame).data
    assert isinstance(data, Styler)
    return data


def _stock(styler: Styler, uuid: str) -> bytes:
    proto = ArrowData()
    STOCK(proto, styler, uuid)
    return proto.styler.SerializeToString()


def test_a_prepared_styler_is_marked_and_a_copy_shares_its_memo() -> None:
    styler = _prepared_styler()
    memo = getattr(styler, styler_memo.MEMO)
    assert getattr(styler_memo.copy_of(styler), styler_memo.MEMO) is memo


def _counting(calls: list[str]) -> Any:
    def counted(proto: Any, data: Styler, uuid: str) -> None:
        calls.append(uuid)
        STOCK(proto, data, uuid)
    return counted


def _draws(marshall: Any, styler: Styler, places: tuple[str, ...]) -> list[bytes]:
    got = []
    for uuid in places:
        proto = ArrowData()
        marshall(proto, styler_memo.copy_of(styler), uuid)
        got.append(proto.styler.SerializeToString())
    return got


def test_later_draws_copy_what_the_first_wrote_and_run_no_styler() -> None:
    styler = _prepared_styler()  # pandas gave it a uuid: the same proto at any place
    expected = _stock(styler_memo.copy_of(styler), "123")
    assert expected == _stock(styler_memo.copy_of(styler), "456")
    calls: list[str] = []
    got = _draws(styler_memo.memoised(_counting(calls)), styler, ("123", "123", "456"))
    assert calls == ["123"]
    assert got == [expected] * 3


def test_a_styler_without_its_own_uuid_is_marshalled_once_per_place() -> None:
    styler = _prepared_styler()
    styler.uuid = None  # Streamlit then writes the place's uuid
    calls: list[str] = []
    got = _draws(styler_memo.memoised(_counting(calls)), styler, ("123", "456", "123"))
    assert calls == ["123", "456"]
    assert got[0] == got[2] == _stock(styler_memo.copy_of(styler), "123") != got[1]


def test_warm_marshals_ahead_through_the_installed_wrapper(monkeypatch: Any) -> None:
    calls: list[str] = []
    monkeypatch.setattr(arrow, "marshall_styler", styler_memo.memoised(_counting(calls)))
    styler = _prepared_styler()
    styler_memo.warm(styler)
    styler_memo.warm(styler)  # marshalled already
    got = _draws(arrow.marshall_styler, styler, ("789",))
    assert calls == [""]
    assert got == [_stock(styler_memo.copy_of(styler), "789")]


def test_an_unmarked_styler_is_marshalled_every_time() -> None:
    calls: list[str] = []
    marshall = styler_memo.memoised(lambda proto, data, uuid: calls.append(uuid))
    plain = pd.DataFrame({"a": [1.0]}).style
    for _ in range(2):
        marshall(ArrowData(), plain, "1")
    assert calls == ["1", "1"]


def test_install_wraps_once() -> None:
    styler_memo.install()
    first = arrow.marshall_styler
    styler_memo.install()
    assert arrow.marshall_styler is first
    assert getattr(first, "__wrapped__", None) is not None
