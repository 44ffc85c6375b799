"""The bundle reads kernel-dashboard begins with the server (app/ui/prewarm.py, issue 37): the
first page load takes the read instead of reading the bundle again, and shows the same."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import profiling_worker.bundle.loader as loader
from apptest_helpers import plotly_specs
from app.ui import cached, prewarm
from tests.scenarios import SCENARIOS

JOB = "h200-ncu-matmul-sweep"  # recorded on the H200


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every bundle read, the thread's and the page's."""
    calls: list[str] = []
    real = loader.load_bundle

    def counted(path):  # type: ignore[no-untyped-def]
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(loader, "load_bundle", counted)  # the thread imports it from here
    monkeypatch.setattr(cached, "load_bundle", counted)
    return calls


def _page(app: Callable[..., AppTest]) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """The Size sweep of JOB: its chart's figure JSON and its table."""
    at = app(query={"job": JOB})
    assert not at.exception
    return plotly_specs(at), at.dataframe[0].value


def test_the_first_page_takes_the_read_begun_with_the_server(store, reads, app) -> None:
    shutil.copytree(SCENARIOS / JOB, store["results"] / JOB)
    prewarm.start(sys.executable)
    prewarm.wait_for_imports()
    specs, table = _page(app)
    assert reads == [str(store["results"] / JOB)]  # the thread's read, taken by the page
    # the same page on a server that began no read: it reads the bundle itself
    st.cache_resource.clear()
    st.cache_data.clear()
    again, table_again = _page(app)
    assert len(reads) == 2
    assert again == specs
    pd.testing.assert_frame_equal(table_again, table)


def test_a_job_changed_since_the_read_is_read_again(store, reads, app) -> None:
    shutil.copytree(SCENARIOS / JOB, store["results"] / JOB)
    prewarm.start(sys.executable)
    prewarm.wait_for_imports()
    manifest = store["results"] / JOB / "manifest.json"
    later = manifest.stat().st_mtime + 10
    os.utime(manifest, (later, later))  # e.g. a sweep merged again after the server started
    _page(app)
    assert reads == [str(store["results"] / JOB)] * 2  # the thread's, then the page's own
