"""The sidebar lists the user's info collectors (a real user file, tests/fixtures/
collector_files) beside the built-in NVML ones; a cpu job with them runs, and the Clocks page
shows each with its scope, its ONCE value and the faulty ones named."""

from __future__ import annotations

import platform
from pathlib import Path

from apptest_helpers import wait_until
from app.ui import cached

FILES = Path(__file__).resolve().parents[1] / "fixtures" / "collector_files"


def test_sidebar_offers_user_collectors_and_the_clocks_page_shows_them(store, app,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(FILES))
    at = app()
    at.session_state["builder-options"] = True
    at.run()
    box = at.multiselect(key="builder-collectors")
    assert "sm_clock (NVML, RUN)" in box.options
    assert "unix_time (user, RUN)" in box.options
    assert "python_version (user, ONCE)" in box.options
    assert "`unix_time`: RUN, s, host_collectors.py" in box.help  # unit and file: on hover
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.text_input(key="builder-sizes").set_value("32")
    at.text_input(key="builder-runs").set_value("2")
    box.set_value(["python_version", "unix_time", "fails_on_large"])
    at.button(key="builder-submit").click().run()
    assert not at.exception and not at.sidebar.error
    job_id = at.session_state["sidebar-job"]
    manager = cached.job_manager()
    wait_until(lambda: not manager.get(job_id).active)
    assert manager.get(job_id).status == "done", manager.get(job_id).error
    at.switch_page("app_pages/clocks_thermal.py").run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "Collector" in df.value.columns)
    rows = table.set_index("Collector")
    assert rows.loc["python_version", "Scope"] == "ONCE"
    assert rows.loc["python_version", "Value"] == platform.python_version()
    assert rows.loc["unix_time", "Scope"] == "RUN" and rows.loc["unix_time", "Unit"] == "s"
    assert rows.loc["fails_on_large", "Problem"] == ""  # n=32 reads fine
