"""No page offers two downloads under one file name (new-user trial: Compare's chart and its
report both saved as ``compare-<a>-vs-<b>.html``, one overwriting the other)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from streamlit.elements.widgets import button

from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(p.stem for p in (REPO / "app" / "app_pages").glob("*.py"))


@pytest.mark.parametrize("page", PAGES)
def test_every_download_of_a_page_has_its_own_file_name(page, store, monkeypatch, app) -> None:
    """Each ``st.download_button`` a page shows on the default bundled job (Compare: its
    default pair) is recorded with its file name where Streamlit marshals it."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    names: list[str] = []
    marshall = button.marshall_file

    def recording(coordinates: str, data: Any, proto: Any, mimetype: str | None,
                  file_name: str | None = None, **kwargs: Any) -> None:
        names.append(str(file_name))
        marshall(coordinates, data, proto, mimetype, file_name, **kwargs)

    monkeypatch.setattr(button, "marshall_file", recording)
    at = app(page)
    assert not at.exception, at.exception
    names.clear()  # the default page's run before the switch
    at.run()
    assert not at.exception, at.exception
    twice = [name for name, count in Counter(names).items() if count > 1]
    assert not twice, f"{page}: {twice} of {names}"
    if page == "compare":
        assert any(n.endswith("-chart.html") for n in names), names
