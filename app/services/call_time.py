"""How long one call of a planned job's largest config takes, from recorded evidence, and when a
door asks before queuing it (issue 37: ``matmul`` at n=40000 on the cpu backend passed the
memory check, and its Pre-flight ran one call estimated at 11 h while a second waited).

A call's time is its FLOP count (the kernel's declared ``flops`` formula, built-in kernels only:
the app never imports a user's kernel file) over a rate that some finished job measured: the
best FLOP/s (FLOP over the mean time of a config, as the Size sweep's throughput) of a finished
job of the same kernel and annotation, on the cpu backend this host's jobs of the cpu backend
(the result store), on a GPU backend this host's GPU jobs and the bundled H200 jobs. The best
rate makes the estimate a lower bound. Where no job measured one, no time is estimated and the
question, where another asks one, states the FLOP count and that no rate is known.

Every door that queues a job (the sidebar's Run and Pre-flight, ``kernel-sweep``, the agent
door) asks above :data:`ASK_ABOVE_CALL_S` (:func:`call_question`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from profiling_worker.bundle import loader
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec

from app.core import job_size, numbers
from app.core.kernel_catalog import builtin_kernels
from app.services import result_store

#: One call estimated longer than this (s) is asked about before a job is queued: a minute of
#: one call is past any size a dashboard user profiles by accident (the default job's calls
#: take ms), and Pre-flight runs several such calls before it says anything.
ASK_ABOVE_CALL_S = 60.0


@dataclass(frozen=True)
class Rate:
    """The best FLOP/s (``flop_per_s``) a finished job (``job_id``, ``where``: "this host's"
    or "the bundled H200") measured for a kernel and annotation."""

    flop_per_s: float
    job_id: str
    where: str

    def text(self) -> str:
        """``3.100 GFLOP/s, the best of this host's job 20261207-...``
        (:func:`~app.core.numbers.flop_text`)."""
        return (f"{numbers.flop_text(self.flop_per_s, per_s=True)}, the best of {self.where} "
                f"job {self.job_id}")


@dataclass(frozen=True)
class CallTime:
    """The largest call of a planned job: its ``kernel``, ``annotation`` and ``config``, its
    ``flop`` count and its estimated ``seconds`` at ``rate`` (both None where no job measured
    a rate)."""

    kernel: str
    annotation: str
    config: dict[str, Any]
    flop: float
    rate: Rate | None

    @property
    def seconds(self) -> float | None:
        """The call's time (s) at :attr:`rate`, None without one."""
        return None if self.rate is None else self.flop / self.rate.flop_per_s

    def what(self) -> str:
        """``One call of matmul at n=40000 is 128.0 TFLOP``: the kernel and size, not the
        annotation (a kernel's annotations count the same FLOP; the question names the one
        whose rate it took), the count as the pages write one
        (:func:`~app.core.numbers.flop_text`)."""
        where = ", ".join(f"{k}={v}" for k, v in self.config.items())
        return f"One call of {self.kernel} at {where} is {numbers.flop_text(self.flop)}"


#: Annotation -> the best FLOP/s of one job (:func:`job_rates`).
Rates = dict[str, float]


def job_rates(path: Path) -> Rates:
    """Annotation -> the best FLOP/s over the configs of the finished job at ``path``: the
    work table's Flops over the aggregated table's mean duration (ns); {} where the tables
    lack either. Read each call: the dashboard caches it per manifest (``app.ui.cached.
    job_rates``).

    Raises:
        OSError: the job's folder went away meanwhile."""
    agg = loader.read_table(path, C.TABLE_AGGREGATED)
    work = loader.read_table(path, C.TABLE_WORK)
    if not ({C.METRIC, C.AVG, C.ANNOTATION, C.CONFIG} <= set(agg) and C.FLOPS in work):
        return {}
    times = agg[agg[C.METRIC].isin(C.DURATION_METRICS)][[C.ANNOTATION, C.CONFIG, C.AVG]]
    both = times.merge(work[[C.ANNOTATION, C.CONFIG, C.FLOPS]], on=[C.ANNOTATION, C.CONFIG])
    per_s = pd.to_numeric(both[C.FLOPS], errors="coerce") / (
        pd.to_numeric(both[C.AVG], errors="coerce") * 1e-9)
    best = per_s[per_s > 0].groupby(both[C.ANNOTATION].astype(str)).max()
    return {str(a): float(r) for a, r in best.items()}


@dataclass(frozen=True)
class Witnesses:
    """Where rates are looked for: the result store's folder and the bundled one, or a
    ``listed`` store (:func:`app.services.result_store.list_bundles` of both, a caller's
    listing: not listed again), and how a job's rates are read (``rates``: a caller's cache
    of :func:`job_rates`)."""

    results_dir: Path
    bundled_dir: Path | None = None
    listed: list[result_store.BundleInfo] | None = None
    rates: Callable[[Path], Rates] = job_rates

    def bundles(self, on_gpu: bool) -> list[result_store.BundleInfo]:
        """The listed jobs, the bundled ones only for a GPU backend (``on_gpu``)."""
        if self.listed is None:
            return result_store.list_bundles(self.results_dir,
                                             self.bundled_dir if on_gpu else None)[0]
        return [b for b in self.listed if on_gpu or b.source != result_store.SOURCE_BUNDLED]


def _witnesses(backend: str, where: Witnesses
               ) -> Iterable[tuple[result_store.BundleInfo, str]]:
    """The finished single-kernel jobs whose rates count for ``backend``, each with where it
    was measured: this host's jobs of the cpu backend for cpu; this host's GPU jobs and the
    bundled ones for a GPU backend."""
    on_gpu = B.on_gpu(backend)
    for info in where.bundles(on_gpu):
        if info.status != JobStatus.DONE or len(info.kernels) != 1:
            continue
        if (B.on_gpu(info.backend) if on_gpu else info.backend == backend):
            bundled = info.source == result_store.SOURCE_BUNDLED
            yield info, "the bundled H200" if bundled else "this host's"


def best_rate(kernel: str, annotation: str, backend: str, results_dir: Path,
              bundled_dir: Path | None = None, where: Witnesses | None = None) -> Rate | None:
    """The best FLOP/s of ``kernel``'s ``annotation`` that a finished job measured
    (:func:`_witnesses` for ``backend`` of ``where``, default the two folders), None where
    none did."""
    where = where or Witnesses(results_dir, bundled_dir)
    best: Rate | None = None
    for info, said in _witnesses(backend, where):
        if info.kernels[0] != kernel:
            continue
        try:
            rate = where.rates(info.path).get(annotation)
        except OSError:  # deleted while listed
            continue
        if rate is not None and (best is None or rate > best.flop_per_s):
            best = Rate(rate, info.job_id, said)
    return best


def largest_call(spec: JobSpec, results_dir: Path, bundled_dir: Path | None = None,
                 where: Witnesses | None = None) -> CallTime | None:
    """The call of ``spec`` estimated longest (by time where a rate is known, else by FLOP);
    None where no kernel of ``spec`` is built in with a ``flops`` formula. ``where``: as
    :func:`best_rate`."""
    calls: list[CallTime] = []
    for kid in spec.kernels:
        kernel = builtin_kernels().get(kid)
        flops = None if kernel is None else kernel.flops
        if kernel is None or flops is None:
            continue
        for annotation in spec.annotations or kernel.annotations:
            if annotation not in kernel.annotations:
                continue
            flop, config = max(((float(flops(annotation, c)), i) for i, c in
                                enumerate(spec.configs)))
            calls.append(CallTime(kid, annotation, dict(spec.configs[config]), flop,
                                  best_rate(kid, annotation, spec.backend, results_dir,
                                            bundled_dir, where)))
    if not calls:
        return None
    timed = [c for c in calls if c.seconds is not None]
    if timed:
        return max(timed, key=lambda c: c.seconds or 0.0)
    return max(calls, key=lambda c: c.flop)


def call_check(spec: JobSpec, results_dir: Path, bundled_dir: Path | None = None,
               where: Witnesses | None = None) -> tuple[str | None, str | None]:
    """(question, note) for ``spec``'s longest call (:func:`largest_call`; ``where``: as
    :func:`best_rate`): the question a door asks before queuing it where its call is
    estimated over :data:`ASK_ABOVE_CALL_S`; the note where no finished job measured a rate,
    with its FLOP count; None for either where it does not apply."""
    call = largest_call(spec, results_dir, bundled_dir, where)
    if call is None:
        return None, None
    if call.rate is None:
        return None, (f"{call.what()}; no rate is known for {call.kernel} on {spec.backend} "
                      "(no finished job measured one), so its time is not estimated.")
    seconds = call.seconds or 0.0
    if seconds <= ASK_ABOVE_CALL_S:
        return None, None
    return (f"{call.what()}: at {call.rate.text()} ({call.kernel} {call.annotation} on "
            f"{spec.backend}), {job_size.duration_text(seconds)} a call, over "
            f"{ASK_ABOVE_CALL_S:g} s a call."), None


@dataclass(frozen=True)
class Ask:
    """What a door says before queuing a job (:func:`ask_before`): its ``question`` (its
    longest call's, its size's; None where none is asked) and the ``note`` that no rate is
    known for its longest call (None where one is, or no built-in kernel says its FLOP)."""

    question: str | None
    note: str | None

    def text(self) -> str | None:
        """The question with the note after it, as one text (the command line, the agent
        door); None where no question is asked."""
        return None if self.question is None else " ".join(
            p for p in (self.question, self.note) if p)


def ask_before(spec: JobSpec, size_ask: str | None, results_dir: Path,
               bundled_dir: Path | None = None, where: Witnesses | None = None) -> Ask:
    """What a door says before queuing ``spec``: its longest call's question
    (:func:`call_check`) and ``size_ask`` (the job's size question,
    :func:`app.core.job_size.confirm_text`, or None) as the question, the no-rate note apart
    (the sidebar says it in a caption under the question: its answers stay inside the window,
    tests/e2e/test_nothing_cut.py). ``where``: as :func:`best_rate`."""
    question, note = call_check(spec, results_dir, bundled_dir, where)
    return Ask(" ".join(p for p in (question, size_ask) if p) or None, note)
