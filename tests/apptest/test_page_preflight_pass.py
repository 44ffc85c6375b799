"""A Pre-flight pass's pages say what it is at their top (issue 37: only the Job box said
"Pre-flight pass"; its Size sweep, Stability and tables read as a job's results). The line is
:func:`app.core.preflight.pass_line`'s, said once by every page that shows the selected job's
caption, and on Compare, which does not compare passes; an ordinary job's pages say none."""

from __future__ import annotations

from apptest_helpers import TINY_SPEC, record_cpu_job, unescape
from app.core import preflight
from app.core.pages import SECTIONS
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema.spec import validate_spec

#: Every page of the bar, by its script's stem.
PAGES = [entry.script.removesuffix(".py") for entries in SECTIONS.values() for entry in entries]


def _boxes(at) -> list[str]:
    """The main area's info boxes, as read."""
    return [unescape(str(box.value)) for box in at.main.info]


def _captioned(at, job: str) -> bool:
    """Whether the page shows the job's caption (``Job `<id>` · <status> · ...``)."""
    return any(unescape(str(c.value)).startswith(f"Job `{job}` ·") for c in at.main.caption)


def test_every_results_page_of_a_pass_says_so_at_its_top(seeded, app) -> None:
    quick = preflight.preflight_spec(validate_spec(TINY_SPEC))
    path = record_cpu_job(seeded["results"] / "pass-1", quick.to_json())
    line = preflight.pass_line(load_bundle(path).spec)
    assert line is not None and quick.label.removeprefix(f"{preflight.LABEL} of ") in line
    assert f"{preflight.CALLS} calls of each of its 2 configs" in line  # what it measured
    at = app()
    at.sidebar.selectbox(key="sidebar-job").set_value("pass-1").run()
    captioned = []
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        boxes = _boxes(at)
        if _captioned(at, "pass-1"):  # a page of the job's results: the line first, once
            captioned.append(page)
            assert boxes[:1] == [line], (page, boxes)
            assert sum(line in box for box in boxes) == 1, (page, boxes)
        elif page == "compare":  # the pass is not compared: said with what it is
            assert [box for box in boxes if box.startswith(line)], boxes
    assert {"sweep", "stability", "results", "one_kernel", "files"} <= set(captioned), captioned
    job = next(p.name for p in seeded["results"].iterdir() if p.name != "pass-1")
    at.sidebar.selectbox(key="sidebar-job").set_value(job).run()
    for page in captioned:  # an ordinary job's pages: no such line
        at.switch_page(f"app_pages/{page}.py").run()
        assert not [box for box in _boxes(at) if preflight.PASS_WORDS in box], page
