"""What a page tells a reader to do about a failed job (app.core.failure_advice): run it again
only where a second run can end otherwise (issue 37: a spec refused for an unknown kernel and
one refused by the memory check read "Run it again")."""

from __future__ import annotations

import pytest

from profiling_worker.bundle import errors as E
from profiling_worker.bundle.schema.manifest import JobStatus
from app.core.failure_advice import RUN_AGAIN, named_fields, next_step, rerun_helps
from app.core.metrics import DURATIONS, no_values_text

UNKNOWN_KERNEL = E.SpecRejected("kernels: unknown kernel(s): nope (choose from matmul)",
                                "fix the named fields and submit again").to_event_fields()
TOO_BIG = E.SpecRejected("configs[1]: kernel matmul at n=655360 moves at least 4,800 GiB, more "
                         "than the 22.20 GiB of memory available on the host (choose smaller "
                         "sizes)", "fix the named fields and submit again").to_event_fields()


@pytest.mark.parametrize("error, field", [(UNKNOWN_KERNEL, "kernels"), (TOO_BIG, "configs[1]")])
def test_a_refused_spec_names_its_field_and_hint(error, field) -> None:
    text = next_step(error)
    assert not rerun_helps(error) and RUN_AGAIN not in text
    assert f"({field})" in text and error["hint"] in text


def test_every_field_of_a_message_is_named_once() -> None:
    assert named_fields("runs: 0 is out of range; configs[0]: n must be >= 1; runs: again") == [
        "runs", "configs[0]"]
    assert named_fields("no field here: the text") == []


@pytest.mark.parametrize("error", [None, {"kind": E.Cancelled.kind, "hint": "h"},
                                   {"kind": E.DiskFull.kind, "hint": "free space"},
                                   {"kind": "internal", "message": "x", "hint": ""}])
def test_a_failure_a_rerun_may_fix_says_run_it_again(error) -> None:
    assert rerun_helps(error) and next_step(error) == RUN_AGAIN


def test_a_kernel_that_raised_gives_its_hint_not_run_again() -> None:
    error = E.KernelFailed("kernel k at config n=8 raised ValueError: bad", "fix the kernel code "
                           "(traceback in worker.log) and run again").to_event_fields()
    assert next_step(error).endswith(f": {error['hint']}.")


def test_the_no_values_sentence_of_a_refused_job_gives_the_fix() -> None:
    text = no_values_text(DURATIONS, JobStatus.FAILED, error=TOO_BIG)
    assert text.endswith(next_step(TOO_BIG)) and RUN_AGAIN not in text
    # a cancelled job's error is no refusal of its spec: it may run
    assert no_values_text(DURATIONS, JobStatus.CANCELLED, error=TOO_BIG).endswith(RUN_AGAIN)
