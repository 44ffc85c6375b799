"""Foreign text is text, a full disk or a broken index loses nothing, the job flow says what
happens (issue 15, and the job-flow points of issue 14)."""

from __future__ import annotations

import errno
import json
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import DEFAULT_PAGE, markdown_sources, open_folds, plotly_specs, texts
from app.services import history_index, import_client
from tests.hostile import (BIDI_ANNOTATION, BIDI_GPU, BIDI_KERNEL, GPU, IMAGE, NSPY_CSV,
                           hostile_import)
from app.services import job_manager as jm

REPO = Path(__file__).resolve().parents[2]
JOB = "20261129-230000-matmul-0001"
PAGES = sorted(p.stem for p in (REPO / "app" / "app_pages").glob("*.py"))
# a Markdown image or link whose brackets are not backslash-escaped
RENDERED = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\((?:http|www)")
CODE_SPAN = re.compile(r"(`+).*?\1")  # nothing inside a code span is rendered


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """``imported(results, **names)``: the hostile CSV with ``names`` (tests.hostile's
    defaults unless given) imported by the real worker once per module, its bundle copied into
    ``results``; returns its job id. One worker import per set of names, not one per test."""
    made: dict[tuple[tuple[str, str], ...], Path] = {}

    def copy(results: Path, **names: str) -> str:
        key = tuple(sorted(names.items()))
        if key not in made:
            cache = tmp_path_factory.mktemp("hostile") / "results"
            made[key] = cache / hostile_import(cache, **names)
        shutil.copytree(made[key], results / made[key].name)
        return made[key].name

    return copy


def _every_page(app, job_id: str) -> Iterator[tuple[str, AppTest]]:
    """Each page with ``job_id`` selected, in one session (as a user clicks through the pages:
    one start of the app, not one per page), once its run ended without an exception."""
    at = app(query={"job": job_id})  # the default page
    for page in [DEFAULT_PAGE, *(p for p in PAGES if p != DEFAULT_PAGE)]:
        if page != DEFAULT_PAGE:  # the first run showed it
            at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        yield page, at


def test_names_from_an_imported_file_are_never_rendered(store, imported, app) -> None:
    job_id = imported(store["results"])
    for page, at in _every_page(app, job_id):
        sources = markdown_sources(at)
        rendered = [s for s in sources if RENDERED.search(CODE_SPAN.sub("", s))]
        assert rendered == [], (page, rendered)
        for spec in plotly_specs(at):  # plotly renders <a href> in names: none may appear
            for trace in spec["data"]:
                trace.pop("meta", None)  # not drawn
            assert "<a " not in json.dumps(spec), page


BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _shown_strings(at) -> list[str]:
    """Every string the page shows: Markdown sources, table cells and column names, widget
    labels and options, plotly figures."""
    shown = markdown_sources(at)
    for frame in (d.value for d in at.dataframe):
        shown += [str(c) for c in frame.columns]
        shown += [v for c in frame.columns for v in frame[c] if isinstance(v, str)]
    for kind in ("selectbox", "multiselect", "radio"):
        for widget in getattr(at, kind):
            shown += [widget.label, *map(str, widget.options)]
    shown += [json.dumps(spec, ensure_ascii=False) for spec in plotly_specs(at)]
    return shown


def test_bidi_controls_in_names_are_shown_not_obeyed(store, imported, app) -> None:
    """Issue 25: a right-to-left override in a name read "evil" as "live"; every name from a
    file shows such a character as ⟨U+202E⟩ on every page."""
    job_id = imported(store["results"], annotation=BIDI_ANNOTATION, kernel=BIDI_KERNEL,
                      gpu=BIDI_GPU)
    for page, at in _every_page(app, job_id):
        obeyed = [s for s in _shown_strings(at) if BIDI.search(s)]
        assert obeyed == [], (page, obeyed[:3])


def test_bidi_controls_read_as_code_points(store, imported, app) -> None:
    job_id = imported(store["results"], annotation=BIDI_ANNOTATION, kernel=BIDI_KERNEL,
                      gpu=BIDI_GPU)
    at = app("one_kernel", query={"job": job_id})
    text = "\n".join(_shown_strings(at))
    assert "fp16 ⟨U+202E⟩live⟨U+202C⟩" in text
    assert "NVIDIA H200 ⟨U+2067⟩⟨U+202E⟩evil⟨U+2069⟩" in text


def test_hostile_names_are_still_shown_as_text(store, imported, app) -> None:
    job_id = imported(store["results"])
    at = app("one_kernel", query={"job": job_id})
    assert not at.exception
    assert GPU in texts(at) and IMAGE in texts(at)  # readable, just not rendered


def test_submit_on_a_full_disk_says_disk_full(store, app, monkeypatch) -> None:
    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jm, "write_manifest", full)
    at = app()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value("cpu")
    at.button(key="builder-submit").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.sidebar.error]
    assert "**disk\\_full**" in error and "df -h" in error
    assert [p for p in store["results"].iterdir() if not p.name.startswith(".")] == []


def test_history_is_readable_when_the_index_cannot_be_written(seeded, app,
                                                               monkeypatch) -> None:
    def full(*_a, **_k):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(history_index, "sync", full)
    at = app("history")
    assert not at.exception
    assert at.dataframe[0].value["Job"].tolist() == [JOB]
    assert "database or disk is full" in texts(at)


def test_a_valid_tag_after_a_rejected_one_is_saved(seeded, app) -> None:
    at = app("history", query={"job": JOB})
    key = f"history-tags-{JOB}"
    at.multiselect(key=key).set_value(["bad tag with ;"]).run()
    assert "is not a tag" in texts(at)
    at.multiselect(key=key).set_value([*at.multiselect(key=key).value, "baseline"]).run()
    assert not at.exception
    (row,) = history_index.rows(seeded["results"])
    assert row.tags == ("baseline",)


def test_unknown_job_in_the_url_is_named(seeded, app) -> None:
    at = app(query={"job": "20990101-000000-nothing-ffff"})
    assert not at.exception
    assert "There is no job `20990101-000000-nothing-ffff`" in texts(at)
    assert at.session_state["sidebar-job"] == JOB  # the pages show a real job meanwhile


def test_a_symlinked_worker_log_is_not_shown(seeded, app, tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE\n", encoding="utf-8")
    log = seeded["results"] / JOB / "worker.log"
    log.unlink(missing_ok=True)
    log.symlink_to(secret)
    at = app("files", query={"job": JOB})
    assert not at.exception
    assert all("TOP-SECRET-LINE" not in c.value for c in open_folds(at).code)


def test_own_job_is_shown_even_behind_other_sessions_jobs(seeded, app) -> None:
    from app.sidebar.job_panel import SHOW_LAST, newest_first
    from app.services.job_model import Job
    from profiling_worker.bundle.schema.spec import JobSpec

    jobs = [Job(job_id=f"j{i}", path=Path("."), spec=JobSpec(kernels=(), configs=()),
            lane="cpu") for i in range(12)]  # all queued
    listed, more = newest_first(jobs, own=["j1"], stored=[])
    shown = [j.job_id for j in listed]
    assert "j1" in shown and len(shown) == SHOW_LAST + 1
    assert more == 12 - SHOW_LAST - 1
    assert shown[0] == "j11"  # newest first


def test_cancel_says_cancelling_at_once_and_ends_neutral(store, app) -> None:
    from apptest_helpers import submit_cpu_matmul, wait_until
    from app.ui import cached

    at = app()
    job_id = submit_cpu_matmul(at, "256", 5000)
    manager = cached.job_manager()
    wait_until(lambda: manager.get(job_id).status == "running")
    at.run()
    at.button(key=f"panel-cancel-{job_id}").click().run()
    assert "Cancelling…" in texts(at)  # before the worker has stopped
    assert manager.wait(job_id, 60) == "cancelled"
    at.run()
    assert not at.exception
    assert not at.error, "a cancel is not an error, in the panel or on the page"
    assert f"Job `{job_id}` cancelled." in texts(at)
    assert "This job was cancelled" in texts(at)  # the page showing it says so, neutrally
    shutil.rmtree(store["results"] / job_id, ignore_errors=True)


def test_import_on_a_full_disk_says_so(store, app, monkeypatch) -> None:
    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(import_client, "save_uploads", full)
    at = app("import_files")
    at.file_uploader(key="import-files").set_value(
        [("profiled_data-x-0.csv", NSPY_CSV.read_bytes(), "text/csv")])
    at.run()
    at.button(key="import-run").click().run()
    assert not at.exception
    assert "No space left on device" in texts(at) and "free space" in texts(at)
