"""The Job box's entries show a job id of more than ``ID_CHARS`` characters cut in its middle
(issue 37: a ``batched_matmul`` run's id lost its last ~16 px in the closed box; the widths as
drawn: tests/e2e/test_nothing_cut.py), and a stale entry's label that shows one is read back
to its job."""

from __future__ import annotations

from profiling_worker.bundle.schema.spec import JobSpec

from app.core.kernel_catalog import CATALOG
from app.services import job_model
from app.sidebar.job_selector import CUT_CHARS, ID_CHARS, _picked, shown_id
from app.ui.state import LABEL_SEP


def _run_id(kernel: str) -> str:
    return job_model.new_job_id(JobSpec(kernels=(kernel,), configs=()))


def test_a_long_id_keeps_its_start_and_end_around_an_ellipsis() -> None:
    long = _run_id("batched_matmul")
    assert len(long) > ID_CHARS
    shown = shown_id(long)
    head, tail = shown.split("…")
    assert len(shown) == CUT_CHARS and long.startswith(head) and long.endswith(tail)
    assert head == long[:len(head)] and long[:15] in head  # the run's date and time
    assert tail.endswith(long.rsplit("-", 1)[1])  # its hex


def test_ids_that_fit_are_shown_whole() -> None:
    fits = [i for i in map(_run_id, CATALOG) if len(i) <= ID_CHARS]
    assert fits and all(shown_id(i) == i for i in fits)


def test_a_stale_label_of_a_shortened_id_is_read_back() -> None:
    long, short = _run_id("batched_matmul"), _run_id("matmul")
    stale = LABEL_SEP.join([shown_id(long), "batched_matmul", "cpu", "running"])
    assert _picked(stale, [short, long]) == long
    assert _picked(LABEL_SEP.join([short, "matmul"]), [short, long]) is None  # read whole
    assert _picked(None, [long]) is None
