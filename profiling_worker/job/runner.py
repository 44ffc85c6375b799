"""validate -> probe -> collect -> aggregate -> write bundle, emitting events on the way."""

from __future__ import annotations

import json
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiling_worker import __version__
from profiling_worker.probes import gpu_select, metric_check
from profiling_worker.probes.environment import ProbeInBackground
from profiling_worker.backends.base import Collection, note_cancel
from profiling_worker.backends.registry import environment_report, run_side
from profiling_worker.backends.run_side import BackendStatus, RunJob
from profiling_worker.catalog.registry import Registry, load_registry
from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.backends.channel import Channel, log_tail
from profiling_worker.extract.ignored import leave_out_ignored
from profiling_worker.bundle.errors import (OUT_OF_MEMORY_HINT, BackendUnavailable, Cancelled,
                                            KernelFailed, SpecRejected, WorkerError, classify_known,
                                            is_out_of_memory)
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.events import WRITING_STAGE
from profiling_worker.bundle.schema.manifest import JobStatus, now_iso, update_manifest
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema.configs import device_memory
from profiling_worker.bundle.schema.memory_need import chosen_annotations
from profiling_worker.bundle.schema.spec import (COLLECTORS, SPEC_DEFAULTS, JobSpec, SpecInvalid,
                                                 check_fits, load_spec, validate_spec)
from profiling_worker.bundle.schema.spec_file import read_spec_json

if TYPE_CHECKING:
    import pandas as pd


def _annotations(spec: JobSpec, registry: Registry) -> dict[str, tuple[str, ...]]:
    # the memory check counts the inputs of these very annotations
    return {k: chosen_annotations(registry.kernels[k].annotations, spec.annotations)
            for k in spec.kernels}


def _provenance(started: str) -> dict[str, Any]:
    """Who recorded the bundle; KPROF_PROVENANCE (a JSON object) adds e.g. the device run."""
    extra = os.environ.get("KPROF_PROVENANCE", "")
    try:
        added = json.loads(extra) if extra else {}
    except ValueError:
        added = {"note": extra[:200]}
    return {"recorded_by": f"profiling_worker {__version__}", "date": started,
            **(added if isinstance(added, dict) else {})}


def _resolve_gpu(spec: JobSpec, env: dict[str, Any]
                 ) -> tuple[gpu_select.SelectedGpu | None, SpecRejected | None]:
    """The job's GPU (None for cpu), or the error saying that ``gpu`` is not visible."""
    if not B.on_gpu(spec.backend):
        return None, None
    try:
        return gpu_select.resolve(spec.gpu, env.get("gpus") or ()), None
    except SpecRejected as exc:
        return None, exc


def _prepare_gpu_env(selected: gpu_select.SelectedGpu, env: dict[str, Any]) -> None:
    """Pin CUDA to the job's GPU by UUID and put the ncu that was found on PATH (nsight-python
    runs plain ``ncu``)."""
    gpu_select.pin(selected)
    ncu = (env.get("ncu") or {}).get("path")
    path = os.environ.get("PATH", "")
    if ncu and path.split(os.pathsep, 1)[0] != os.path.dirname(ncu):  # a warm worker's next job
        os.environ["PATH"] = os.pathsep.join([os.path.dirname(ncu), path])


#: The signals a worker takes as a cancel: SIGTERM (the app's Cancel, ``cancel_job``, Slurm's
#: cancel, a dashboard server that stops) and SIGINT (Ctrl-C in the terminal that runs it).
CANCEL_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class CancelWatch:
    """How the worker takes a cancel (:data:`CANCEL_SIGNALS`: SIGTERM, SIGINT).

    While runs are measured a cancel stops the job: :class:`Cancelled` is raised where it lands
    (the backends that time regions keep the whole configs before it). Once measuring has ended
    (:meth:`stop_measuring`: every run measured, or the backend returned what it kept) nothing
    is left to stop, and the bundle must be written whole: a cancel is then only noted
    (:attr:`late`), and the job ends as its measurements say (done when every run was). A
    SIGINT the process was started ignoring (``nohup``, a sweep task's ``trap '' INT``) stays
    ignored: whoever started it asked for that.
    """

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.writing = False  # measuring has ended: a cancel is noted, not raised
        self.late: str | None = None  # how a cancel that came while writing came
        self.signalled = False  # a cancel signal came during the job
        self.before: dict[int, Any] = {}  # signal -> its handler before the job

    def install(self) -> None:
        """Make :meth:`on_sigterm` the process's handler of :data:`CANCEL_SIGNALS` (the
        handlers before kept); of SIGINT only when it is not ignored."""
        note_cancel(None)  # a warm worker's job before this one may have been cancelled
        for signum in CANCEL_SIGNALS:
            before = signal.getsignal(signum)
            if signum == signal.SIGINT and before is signal.SIG_IGN:
                continue
            self.before[signum] = before if before is not None else signal.SIG_DFL
            signal.signal(signum, self.on_sigterm)

    def uninstall(self) -> None:
        """The job is over (its manifest written): with no cancel during it, the handlers from
        before the job again (a warm worker between jobs is stopped by a SIGTERM, not only
        noted). After a cancel, later cancel signals stay ignored: a sweep task's worker is
        signalled on every poll and must exit with its job's own code, not be killed in its
        teardown."""
        note_cancel(None)
        if not self.signalled:
            for signum, before in self.before.items():
                signal.signal(signum, before)

    def on_sigterm(self, signum: int, _frame: Any) -> None:
        """Raise :class:`Cancelled` while measuring; note the cancel once it has ended. Taken
        for SIGTERM and SIGINT alike."""
        # one cancel is enough: a later signal (a sweep's task is signalled on every poll, a
        # second Ctrl-C) must not cut the writing of the configs measured so far; SIGKILL
        # still ends a stuck worker
        for other in self.before:
            signal.signal(other, signal.SIG_IGN)
        self.signalled = True
        # the reason its sender left (e.g. the server stopped), as a queued job's cancel reads it
        how = partial.cancel_how(signal.Signals(signum).name, self.channel.job_dir)
        if self.writing:
            self.late = how
            return
        cancel = Cancelled(partial.cancelled_message(how), "", how)
        note_cancel(cancel)  # raised again at the next run where an nsight `try` swallows it
        raise cancel

    def stop_measuring(self) -> None:
        """Measuring has ended: from now on a cancel is only noted, and the job manager is told
        (progress stage :data:`~profiling_worker.bundle.schema.events.WRITING_STAGE`) that the
        worker writes a bundle to keep. Called by the backends that time regions right after
        their last run (:class:`~profiling_worker.backends.run_side.RunJob`'s ``measured``), and
        by :func:`profile_and_write` when any backend returns; only the first call acts."""
        if self.writing:
            return
        self.writing = True
        self.channel.emit("progress", done=1, total=1, stage=WRITING_STAGE)

    def record(self, manifest: dict[str, Any]) -> None:
        """Put a cancel that came while writing in ``manifest`` (the job's final status set):
        :data:`~profiling_worker.bundle.schema.partial.LATE_CANCEL_KEY` and its note among the
        ``warnings``, also sent as a warning event. Nothing when no cancel came."""
        if self.late is None or manifest.get(partial.LATE_CANCEL_KEY):
            return
        text = partial.late_cancel_note(self.late, manifest["status"] == JobStatus.DONE.value)
        manifest[partial.LATE_CANCEL_KEY] = self.late
        manifest["warnings"] = [*(manifest.get("warnings") or ()), text]
        self.channel.emit("warning", message=text)


def collect(spec: JobSpec, registry: Registry, job_dir: Path, backend: BackendStatus,
            channel: Channel, uuid: str | None = None,
            ready: Callable[[], None] = lambda: None,
            measured: Callable[[], None] = lambda: None) -> Collection | None:
    """Run the job's backend (its :class:`~profiling_worker.backends.run_side.RunSide`,
    backends/registry.py) on the GPU ``uuid`` (the one CUDA_VISIBLE_DEVICES is pinned to; None
    for cpu); ``backend``: its status in the environment report; ``ready``: the preflight's
    verdict, called just before the first profiled launch (:class:`Prepared`); ``measured``:
    :meth:`CancelWatch.stop_measuring`. None in nsight-python's launch-mode child."""
    job = RunJob(spec, registry, _annotations(spec, registry), job_dir, backend, channel, uuid,
                 ready, measured)
    return run_side(spec.backend).run(job)


#: The ncu backend's status in nsight-python's launch-mode child (the parent probed it).
LAUNCH_CHILD = BackendStatus(True, "launch-mode child of the ncu backend (re-run under ncu)",
                             nsight_mode=B.NCU_LAUNCH.nsight_mode)


def run_child(job_dir: Path) -> None:
    """The launch-mode child: profile under ncu (nsight-python exits the process itself)."""
    registry = load_registry()
    spec = load_spec(str(job_dir / C.SPEC_FILE), registry.kernels)
    channel = Channel(job_dir, None)
    try:  # the parent pinned CUDA_VISIBLE_DEVICES to the job's GPU UUID
        collect(spec, registry, job_dir, LAUNCH_CHILD, channel, gpu_select.pinned_uuid())
    except BaseException as exc:
        traceback.print_exc()
        err = exc if isinstance(exc, WorkerError) else classify_unexpected(exc)
        channel.emit("error", **err.to_event_fields())
        raise


def classify_unexpected(exc: BaseException) -> WorkerError:
    """Turn an exception no backend classified into a WorkerError (out of memory, disk full,
    thermal timeout and counter permission are named)."""
    known = classify_known(exc)
    if known is not None:
        return known
    text = f"{type(exc).__name__}: {exc}"
    if is_out_of_memory(exc):
        return KernelFailed(f"out of memory: {exc}", OUT_OF_MEMORY_HINT)
    return WorkerError(f"unexpected error {text}", "see worker.log for the traceback",
                       kind="internal")


def classify_failure(exc: BaseException, job_dir: Path) -> WorkerError:
    """The error a failed job reports: a known fault (disk full, thermal timeout, counter
    permission, also found in the worker and ncu logs), else the backend's own error."""
    if isinstance(exc, (Cancelled, SpecRejected)):
        return exc
    logs = "" if isinstance(exc, (KernelFailed, BackendUnavailable)) else _ncu_logs(job_dir)
    known = classify_known(exc, str(job_dir.parent), logs)
    if known is not None:
        return known
    return exc if isinstance(exc, WorkerError) else classify_unexpected(exc)


def _ncu_logs(job_dir: Path, max_bytes: int = 65536) -> str:
    """The ends of worker.log (ncu's own output lands there) and of the ncu logs in nsight/."""
    parts = []
    names = [C.LOG_FILE, *sorted(f"{C.NSIGHT_DIR}/{p.name}"
                                 for p in (job_dir / C.NSIGHT_DIR).glob("*.log"))]
    for path in filter(None, (inside_bundle(job_dir, n) for n in names)):
        try:
            with open(path, "rb") as fh:
                fh.seek(max(0, path.stat().st_size - max_bytes))
                parts.append(fh.read().decode("utf-8", "replace"))
        except OSError:
            continue
    return "\n".join(parts)


@dataclass
class Prepared:
    """What a job needs before profiling: spec, kernels, the backend's status and the env
    report."""

    spec: JobSpec
    registry: Registry
    backend: BackendStatus
    report: dict[str, Any]
    notes: list[str]  # things the spec asked for that this backend does not do
    gpu: gpu_select.SelectedGpu | None = None  # None for the cpu backend
    #: Waits for the checks started in the background (the ncu metric-name query) and raises
    #: what they found; called just before the first profiled launch.
    ready: Callable[[], None] = lambda: None


def prepare(job_dir: Path, manifest: dict[str, Any], report: dict[str, Any] | None,
            probe: ProbeInBackground | None = None) -> Prepared:
    """Load and validate the spec, probe (unless a warm worker passes its ``report``; ``probe``:
    a cold job's probe started earlier, waited for here) and check that the backend can run;
    fills the manifest's spec, environment and provenance.

    Raises:
        SpecRejected, BackendUnavailable: the job cannot run as asked.
    """
    registry = load_registry()
    manifest["kernel_files"] = {"errors": registry.errors}  # file names only, no paths
    try:
        raw = read_spec_json(job_dir / C.SPEC_FILE)  # load_spec's steps, the raw kept for notes
        spec = validate_spec(raw, registry.kernels, known_collectors=registry.collectors)
    except SpecInvalid as exc:
        raise SpecRejected(str(exc), "fix the named fields and submit again") from exc
    manifest.update(spec=spec.to_json(), spec_hash=spec.spec_hash(),
                    provenance=_provenance(manifest["started_at"]))
    manifest["kernel_files"]["sources"] = {k: getattr(registry.kernels[k], "source", "")
                                           or "built-in" for k in spec.kernels}
    report = report or environment_report(env=probe.result() if probe else None)
    backend = BackendStatus.from_json(report["backends"][spec.backend])
    manifest["environment"] = report["environment"]
    gpu, not_visible = _resolve_gpu(spec, report["environment"])
    manifest["gpu"] = gpu.to_json() if gpu else None
    if not backend.available:  # says more than "gpu: 0 is not visible" on a host with none
        raise BackendUnavailable(f"backend {spec.backend} cannot run here: {backend.reason}",
                                 backend.fix)
    if not_visible:
        raise not_visible
    _check_memory(spec, registry, report["environment"], gpu)
    if gpu:
        _prepare_gpu_env(gpu, report["environment"])
    ready = (metric_check.start(report["environment"], spec.metrics).verdict
             if B.get(spec.backend).counters else Prepared.ready)
    return Prepared(spec, registry, backend, report, _ignored_by_backend(spec, raw), gpu, ready)


def _check_memory(spec: JobSpec, registry: Registry, env: dict[str, Any],
                  gpu: gpu_select.SelectedGpu | None) -> None:
    """Refuse configs that cannot fit in the memory free now on the job's GPU (NVML; its total
    where NVML cannot say) or available on the host for cpu, by the kernels' memory (else byte)
    formulas for the chosen annotations, before anything runs."""
    free = gpu_select.free_memory(gpu.uuid) if gpu else None
    memory, memory_of = device_memory(spec.backend, env.get("gpus") or (),
                                      gpu.uuid if gpu else None, free)
    try:
        check_fits(spec, registry.kernels, memory, memory_of)
    except SpecInvalid as exc:
        raise SpecRejected(str(exc), "fix the named fields and submit again") from exc


#: What the host-only field is, in a GPU job's note that it was ignored.
_THREADS_ARE = " (the cpu backend's torch threads)"


def _ignored_by_backend(spec: JobSpec, raw: dict[str, Any]) -> list[str]:
    """Say what the job's backend ignores: a field it never uses
    (:func:`~profiling_worker.bundle.schema.backends.unused`, the form's rule too: a run option
    it does not apply, the thermal limits where it applies no thermal_mode, the GPU's fields on
    the host, the torch threads on a GPU), set to other than its default (the default asks for
    nothing), on a host backend the metrics besides its duration (spec validation keeps only
    that one; ``raw``: the spec.json as submitted), and built-in (NVML) info collectors where it
    takes none (user collectors run on every backend, by the worker around each run where
    nsight-python does not call them)."""
    caps = B.get(spec.backend)
    notes = [f"the {caps.name} backend does not apply {name} {getattr(spec, name)!r}"
             f"{_THREADS_ARE if name in B.HOST_ONLY else ''}; ignored"
             for name in B.unused(caps.name) if getattr(spec, name) != SPEC_DEFAULTS[name]]
    if not caps.on_gpu:  # a GPU backend refuses metrics it cannot measure at validation instead
        dropped = [m for m in raw.get("metrics") or () if m != caps.duration_metric]
        notes += [f"the {caps.name} backend records {caps.duration_metric} only "
                  f"({caps.measures}); ignored metrics: {', '.join(dropped)}"] if dropped else []
    builtin = [c for c in spec.collectors if c in COLLECTORS]
    if builtin and not caps.collectors:
        why = ("takes no nsight-python info collectors (the NVML trace samples the GPU)"
               if caps.on_gpu else "has no GPU to sample")
        notes.append(f"the {caps.name} backend {why}; ignored info collectors: "
                     + ", ".join(builtin))
    return notes


def profile_and_write(job: Prepared, job_dir: Path, watch: CancelWatch,
                      ready: Callable[[], None] | None = None
                      ) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """Collect with the job's backend (NVML sampled meanwhile) and write the tables; returns
    the manifest entries of a finished job (backend, warnings, status) and the tables written
    (for finish_bundle's checks); ``ready`` is called once runs and aggregated are written
    (:func:`_result_ready`). A backend that kept part of the configs (a cancel, a kernel
    that raised at some: ``Collection.shortfall``) gets its tables written all the same, the
    job ``cancelled`` or ``failed`` with its :mod:`~profiling_worker.bundle.schema.partial`
    entries. Once the backend has stopped measuring, a cancel no longer stops the job
    (``watch``: :class:`CancelWatch`): the tables are written whole."""
    from profiling_worker.job import results
    from profiling_worker.probes.nvml_trace import NvmlSampler

    spec, channel = job.spec, watch.channel
    channel.emit("log", message=f"backend {spec.backend}: {job.backend.reason}")
    uuid = job.gpu.uuid if job.gpu else None
    interval = spec.nvml_interval_ms if uuid else None  # the cpu backend has no GPU to sample
    with NvmlSampler(uuid, interval) as sampler:
        result = collect(spec, job.registry, job_dir, job.backend, channel, uuid, job.ready,
                         watch.stop_measuring)
    # the backends that time regions stopped measuring after their last run already; the
    # others have measured all they will once they return
    watch.stop_measuring()
    assert result is not None
    result = leave_out_ignored(result, spec.ignore_kernels)
    warnings = job.notes + result.warnings + ([sampler.error] if sampler.error else [])
    for w in warnings:
        channel.emit("warning", message=w)
    # the NVML trace's frame (about 1 ms) is made after the result-ready write: the first
    # chart does not read it
    tables = results.write_result_tables(job_dir, spec, job.registry,
                                         _annotations(spec, job.registry), result.launches,
                                         sampler.frame, result.collectors,
                                         result.unattributed, result.launch_times, ready)
    nvml_start = sampler.start_on(result.backend_info.get("clock_pair"))
    return {"backend": {"name": spec.backend, "nsight_mode": job.backend.nsight_mode,
                        "reason": job.backend.reason, **result.backend_info,
                        **({"nvml_trace_start_ns": nvml_start} if nvml_start else {})},
            "warnings": warnings, **_ended(result.shortfall, spec, job_dir)}, tables


def _ended(short: partial.Shortfall | None, spec: JobSpec, job_dir: Path) -> dict[str, Any]:
    """The status of a job whose backend returned (done, or, with a shortfall, cancelled or
    failed with the configs it kept: :func:`partial.manifest_entries`) and its error."""
    if short is None:
        return {"status": JobStatus.DONE.value}
    entries = partial.manifest_entries(short, spec.configs)
    if short.cancelled:
        err: WorkerError = Cancelled(f"{partial.CANCELLED_HEAD}{short.cancelled})", "",
                                     short.cancelled)
    else:
        first = min(short.failed)
        of = counted(len(spec.configs), "config")
        label = partial.config_label(spec.configs[first])
        said = short.failed[first]  # names the config where the kernel's own error does
        fix = short.hint or "fix the kernel code (traceback in worker.log) and run again"
        err = WorkerError(f"{len(short.failed):,} of {of} failed; "
                          + ("" if f"config {label} " in said else f"config {label}: ") + said,
                          f"{fix}; the configs measured are kept",
                          kind=short.kind or KernelFailed.kind)
    status = JobStatus.CANCELLED if short.cancelled else JobStatus.FAILED
    return {"status": status.value, **entries,
            "error": {**err.to_event_fields(), "log_tail": log_tail(job_dir)}}


def run_job(job_dir: Path, channel: Channel, report: dict[str, Any] | None = None,
            probe: ProbeInBackground | None = None) -> int:
    """Run the job in ``job_dir`` and write its bundle; returns the exit code (0 done, 1 not).

    ``report``: a warm worker's cached environment report (None: probe now, or take
    ``probe``'s environment: a cold job's probe started before its imports, cli.py). A SIGTERM
    or SIGINT cancels the job while it measures and is only noted once it writes
    (:class:`CancelWatch`); after the job it ends the process again.
    """
    t0 = time.perf_counter()
    watch = CancelWatch(channel)
    watch.install()
    try:
        return _run(job_dir, channel, watch, report, probe, t0)
    finally:
        watch.uninstall()


def _run(job_dir: Path, channel: Channel, watch: CancelWatch, report: dict[str, Any] | None,
         probe: ProbeInBackground | None, t0: float) -> int:
    """:func:`run_job` under ``watch`` (installed); ``t0``: its start (perf_counter s)."""
    from profiling_worker.job import results
    from profiling_worker.job.folder import record_worker

    started = now_iso()
    # who queued and runs it, on disk before profiling; the final manifest keeps them
    manifest: dict[str, Any] = {"job_id": job_dir.name, "started_at": started,
                                "worker_version": __version__, **record_worker(job_dir, started)}
    tables = None  # a failed job's finish_bundle reads whatever tables it has
    try:
        entries, tables = profile_and_write(prepare(job_dir, manifest, report, probe), job_dir,
                                            watch, lambda: _result_ready(job_dir, manifest,
                                                                         channel))
        manifest.update(entries)
        tables = results.write_run_audit(job_dir, tables, manifest)
    except Exception as exc:
        manifest.update(_failure(exc, job_dir))
    watch.record(manifest)
    manifest.update(finished_at=now_iso(), wall_s=round(time.perf_counter() - t0, 3))
    if manifest.get("error"):
        channel.emit("error", **manifest["error"])
    try:
        results.finish_bundle(job_dir, manifest, tables=tables)
    except OSError as exc:  # disk full: say so on the channel; the app writes what it can
        traceback.print_exc()
        err = classify_failure(exc, job_dir)
        channel.emit("error", **err.to_event_fields(), log_tail=log_tail(job_dir))
        return 1
    _record_after(watch, manifest, job_dir)
    channel.emit("result", status=manifest["status"])
    return 0 if manifest["status"] == JobStatus.DONE.value else 1


#: Called with the job folder right after the result-ready manifest is written and before the
#: rest of the bundle (None: nothing): where a test stands in for a worker that dies between the
#: two manifest writes (it raises a BaseException, which no handler of the run path takes).
AFTER_RESULT_READY: Callable[[Path], None] | None = None


def _result_ready(job_dir: Path, manifest: dict[str, Any], channel: Channel) -> None:
    """The job's runs and aggregated tables are written: say so in its manifest (status still
    ``running``, :func:`~profiling_worker.bundle.writer.mark_result_ready`) and to the job
    manager (a progress event of the writing stage with ``result_ready``), before the rest of
    the bundle. A manifest that cannot be written is printed: the final write says what
    failed."""
    from profiling_worker.job import results

    try:
        at = results.mark_result_ready(job_dir, manifest)
    except OSError:
        traceback.print_exc()
        return
    channel.emit("progress", done=1, total=1, stage=WRITING_STAGE, result_ready=at)
    if AFTER_RESULT_READY is not None:
        AFTER_RESULT_READY(job_dir)


def _record_after(watch: CancelWatch, manifest: dict[str, Any], job_dir: Path) -> None:
    """A cancel that came while ``manifest.json`` was written (:meth:`CancelWatch.record` saw
    none before): add its note to the written manifest, atomically (an OSError is printed: the
    job's result stands without the note)."""
    if watch.late is None or manifest.get(partial.LATE_CANCEL_KEY):
        return
    watch.record(manifest)
    late = {k: manifest[k] for k in (partial.LATE_CANCEL_KEY, "warnings")}
    try:
        update_manifest(job_dir, lambda written: {**written, **late})
    except OSError:
        traceback.print_exc()


def _failure(exc: Exception, job_dir: Path) -> dict[str, Any]:
    """Manifest entries of a failed or cancelled job; the traceback goes to the log."""
    # the log tail goes into the job's error: a spec error or a cancel is its message alone
    if not isinstance(exc, (SpecRejected, Cancelled)) and (
            not isinstance(exc, WorkerError) or exc.__cause__ is not None):
        traceback.print_exc()
    err = classify_failure(exc, job_dir)
    status = JobStatus.CANCELLED if isinstance(err, Cancelled) else JobStatus.FAILED
    return {"status": status.value, "error": {**err.to_event_fields(),
                                              "log_tail": log_tail(job_dir)}}
