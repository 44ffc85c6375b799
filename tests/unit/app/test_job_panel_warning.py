"""A job's warnings in its card of the sidebar's job panel: the head, the whole in the help."""

from __future__ import annotations

from profiling_worker.bundle.schema import backends as B

from app.sidebar.job_panel import warning_head


def test_a_contention_warning_takes_one_clause_of_its_card() -> None:
    """A fresh user's find: each cpu job's card repeated the nine-line contention sentence, so
    five jobs took several screens. The card now shows its first clause; the caption's help
    holds the whole warning, figures and all."""
    full = B.waited_for_cpu(1.36, B.contention_detail(4.8e8, 3.5e8, 0.05, 2), whose="the job's")
    head = warning_head(full)
    assert head == ("the time the job's threads waited for a CPU adds up to 1.36 x the timing "
                    "loop's elapsed time …")
    assert full.startswith(head[:-2])


def test_a_short_warning_is_shown_whole() -> None:
    assert warning_head("the host was busy") == "the host was busy"
    assert warning_head("no NVML: clocks not sampled (driver)") == "no NVML: clocks not sampled …"


def test_the_app_names_the_torch_threads_by_the_form_s_label() -> None:
    """A fresh user's find: the contention advice said "the spec's cpu_threads", which names no
    control in the sidebar. The pages and the job panel say the form's label
    (spec_form.in_form_words); the worker's own text (CLI, manifest) keeps the spec's key."""
    from app.core import spec_form
    from app.sidebar.job_builder import LABELS
    from profiling_worker.backends.cpu import threads_warning

    label = LABELS["cpu_threads"]
    assert label == spec_form.CPU_THREADS_LABEL == "Torch threads (cpu backend)"
    crowded = threads_warning(8, 2)
    assert crowded is not None
    for worker_text in (B.CONTENTION_ADVICE, crowded):
        assert "cpu_threads" in worker_text  # the CLI's words
        shown = spec_form.in_form_words(worker_text)
        assert "cpu_threads" not in shown and f'"{label}" under Options in the sidebar' in shown
    assert spec_form.in_form_words(B.CONTENTION_ADVICE).endswith(
        'one torch thread ("Torch threads (cpu backend)" under Options in the sidebar at 1, '
        "the default)")
    assert spec_form.in_form_words(crowded).endswith(
        'set "Torch threads (cpu backend)" under Options in the sidebar to at most 2, or 1 '
        "(the default)")
