"""Names from an imported file are shown as text by the real renderer: a Markdown image, a
Markdown link and an HTML link as annotation / kernel / GPU names make no <img>, no link and
no request leave the machine, on the pages that show those names."""

from __future__ import annotations

import pytest

from tests.hostile import GPU, hostile_import
from tests.e2e.conftest import AppServer, open_app, wait_for_elements

pytestmark = pytest.mark.e2e
PAGES = ["one-kernel", "kernels", "stability", "", "files", "environment", "history"]


def test_hostile_names_render_as_text(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    job_id = hostile_import(app_server.results_dir)
    outside = []
    page.on("request", lambda r: outside.append(r.url) if "evil.example" in r.url else None)
    for path in PAGES:
        open_app(page, f"{app_server.url}/{path}", f"?job={job_id}")
        wait_for_elements(page)
        main = page.get_by_test_id("stMain")
        assert main.locator("img[src*='evil.example']").count() == 0, path
        assert page.locator("a[href*='evil.example']").count() == 0, path
        assert page.locator("svg a").count() == 0, path  # no link inside a plotly chart
    open_app(page, f"{app_server.url}/one-kernel", f"?job={job_id}")
    shown = page.get_by_test_id("stMain").inner_text().replace("\u2060", "")  # word joiners
    assert GPU in shown  # the name is readable, as typed
    assert outside == []
