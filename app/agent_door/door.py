"""What the agent door does, as plain functions over the dashboard's own parts: the worker's
kernel catalog and spec validation (as the sidebar), the job manager (as the job panel), the
result store and bundle loader (as the pages), the regression gate's verdict (as the compare
page and ``python -m profiling_worker compare``), the deep-dive and rule views, and the
importer (as the Import page). No Streamlit, no MCP: :mod:`app.agent_door.server` puts these on
the Model Context Protocol.

Every answer is a JSON-able dict. Bad input raises :class:`DoorError` with a message that
names the field and the fix; the server hands it to the agent as a tool error.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiling_worker.bundle.gate.command import slowdown_arg, unknown_metric
from profiling_worker.bundle.schema import columns as C, interval_words as W, metrics as M, partial
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

from app import settings
from app.agent_door import confine
from app.core import config_grid, derived, job_size, pages, spec_form
from profiling_worker.bundle.loader import Bundle, load_bundle
from app.core.kernel_catalog import catalog_from_report
from app.core.metrics import MissingData
from app.core.share.job import caption, contention_note, host_timer_note, spec_json
from app.core.share.verdict import decision, judged, refused
from app.core.views import deep_dive as D
from app.core.views.replication import replication, verdict_table
from app.core.views.run_audit import AUDIT_ELSEWHERE, badge_frame, failed_text
from app.services import (call_time, history_index, import_client, repeat_guard, result_store,
                          worker_client)
from app.services.job_manager import JobManager
from app.services.job_model import Job
from app.services.share_report import report_bytes, worker_answers

#: Rows of a frame an answer carries at most (an agent's context is small; the bundle has all).
MAX_ROWS = 60
#: How long ``submit_and_wait`` waits by default (s); a longer job is still running after it.
WAIT_S = 600.0
#: The longest wait ``submit_and_wait`` accepts (s): a wait holds one of the server's threads.
MAX_WAIT_S = 3600.0
#: How long ``cancel_job`` waits for the job to end after the cancel (s).
CANCEL_WAIT_S = 60.0


class DoorError(ValueError):
    """A request the door refuses: ``message`` says what and ``hint`` how to fix it."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(f"{message}" + (f" Fix: {hint}" if hint else ""))


def _plain(value: Any) -> Any:
    """A JSON-able cell: numpy scalars as Python, NaN and missing as None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return None if value is pd.NA or value is pd.NaT else value


def records(frame: pd.DataFrame, limit: int = MAX_ROWS, elsewhere: str = "") -> dict[str, Any]:
    """``{"rows": [...], "rows_not_listed": n}``: the first ``limit`` rows as dicts; where rows
    were left out and ``elsewhere`` says where every row is, ``rows_elsewhere``: that place
    (an answer carries a page of rows, never thousands: issue 37)."""
    rows = [{str(k): _plain(v) for k, v in row.items()}
            for row in frame.head(limit).to_dict(orient="records")]
    left = max(0, len(frame) - limit)
    return {"rows": rows, "rows_not_listed": left,
            **({"rows_elsewhere": elsewhere} if left and elsewhere else {})}


def page_rows(script: str, job_id: str) -> str:
    """Where every row of the table of page ``script`` (``app/app_pages/<script>``) on job
    ``job_id`` is: the page's URL path and its table's CSV download."""
    page = pages.page(script)
    return (f"the dashboard's {page.title} page (/{page.url_path}?job={job_id}): its table's "
            "CSV download")


class Door:
    """The door over one result store (the dashboard's settings: ``KPROF_RESULTS_DIR``,
    ``KPROF_BUNDLED_DIR``, ``KPROF_WORKER_PYTHON``, ``KPROF_KERNEL_DIRS`` and
    ``KPROF_IMPORT_DIRS``, read when the door is made). It reads and writes only where
    :mod:`app.agent_door.confine` allows. Thread-safe: the SDK runs tools in threads."""

    def __init__(self) -> None:
        self.results = settings.results_dir()
        self.bundled = settings.bundled_dir()
        self.worker_python = settings.worker_python()
        self.env = settings.worker_env()
        self.readable = confine.readable_roots(self.results, self.bundled)
        self._manager: JobManager | None = None
        self._report: dict[str, Any] | None = None
        # one environment probe and one job manager, however many first calls come at once
        self._setup = threading.Lock()

    # -- parts made on first use ------------------------------------------------------------
    def env_report(self) -> dict[str, Any]:
        """The worker's environment report (probed once): backends, GPUs, kernels."""
        with self._setup:
            if self._report is None:
                self._report = worker_client.probe_environment(self.worker_python)
            return self._report

    def manager(self) -> JobManager:
        """The door's job manager (as the dashboard's: the History index follows each job)."""
        with self._setup:
            if self._manager is None:
                results, bundled = self.results, self.bundled

                def index(_job: Job) -> None:
                    history_index.sync_quietly(results, bundled)

                self._manager = JobManager(results, self.worker_python, env=self.env,
                                           warm=settings.warm_worker(), on_end=index,
                                           process="agent door")
            return self._manager

    def bundle(self, job_id: str) -> Bundle:
        """The loaded bundle of ``job_id`` (results, then bundled jobs).

        Raises:
            DoorError: no such job, an unsafe id, or an unreadable bundle.
        """
        try:
            path = result_store.find_bundle(job_id, self.results, self.bundled)
            if path is None:
                raise DoorError(f"job_id {job_id!r}: no such job",
                                "call list_jobs for the ids there are")
            return load_bundle(path)
        except result_store.InvalidJobId as exc:
            raise DoorError(f"job_id {job_id!r}: {exc}", "use an id list_jobs gives") from exc
        except (ManifestError, OSError) as exc:
            raise DoorError(f"job {job_id}: the bundle cannot be read ({exc})") from exc

    # -- the tools --------------------------------------------------------------------------
    def list_kernels(self) -> dict[str, Any]:
        """Kernels the worker can run (built-in and user files), their parameters, regions
        (annotations), default configs, and the backends that can run here."""
        catalog, errors = catalog_from_report(self.env_report())
        kernels = [{"id": k.id, "title": k.title, "parameters": list(k.parameters),
                    "annotations": list(k.annotations),
                    "default_configs": [dict(c) for c in k.default_configs],
                    "cpu_configs": [dict(c) for c in k.cpu_configs], "builtin": k.builtin}
                   for k in catalog.values()]
        backends = {name: {"available": bool(b.get("available")), "reason": b.get("reason")}
                    for name, b in (self.env_report().get("backends") or {}).items()}
        return {"kernels": kernels, "backends": backends, "kernel_file_errors": errors}

    def list_jobs(self, limit: int = 50) -> dict[str, Any]:
        """Jobs of the result store and the bundled jobs, newest first: the first ``limit``
        (a negative ``limit``: all), and how many are not listed."""
        infos, problems = result_store.list_bundles(self.results, self.bundled)
        shown = infos if limit < 0 else infos[:limit]
        jobs = [{"job_id": i.job_id, "status": i.status.value, "created_at": i.created_at,
                 "kernels": list(i.kernels), "backend": i.backend, "gpu": i.gpu_name,
                 "label": i.label, "source": i.source} for i in shown]
        return {"jobs": jobs, "jobs_not_listed": len(infos) - len(shown),
                "unreadable": [str(p) for p in problems][:10]}

    def submit_and_wait(self, spec: dict[str, Any], timeout_s: float = WAIT_S,
                        again: bool = False, confirm: bool = False) -> dict[str, Any]:
        """Validate ``spec`` as the sidebar does (the worker's catalog, the backends that can run
        here), queue it on the job manager and wait up to ``timeout_s`` s; the job's summary.
        A job estimated over :data:`~app.core.job_size.ASK_ABOVE_S` s or
        :data:`~app.core.job_size.ASK_ABOVE_RUNS` runs, as the sidebar's Run asks about, is not
        queued unless ``confirm``: the answer is then ``job_id`` None, status ``"not queued"``,
        its ``estimate`` (:meth:`~app.core.job_size.Estimate.to_json`) and a note saying so.

        Raises:
            DoorError: ``timeout_s`` is not within 0 .. :data:`MAX_WAIT_S`, the spec is invalid
                (every field error with its fix), or an identical spec was queued moments ago
                (:mod:`app.services.repeat_guard`) and ``again`` is false.
        """
        if not 0 <= timeout_s <= MAX_WAIT_S:  # NaN and inf too: a wait holds a thread
            raise DoorError(f"timeout_s {timeout_s:g}: give 0 to {MAX_WAIT_S:g} s",
                            "for a longer job, call job_summary with the id returned later")
        report = self.env_report()
        try:
            job_spec = validate_spec(spec, catalog_from_report(report)[0])
        except SpecInvalid as exc:
            raise DoorError("spec is invalid: " + "; ".join(str(e) for e in exc.errors)) from exc
        refused = spec_form.backend_errors(job_spec, report)
        if refused:
            raise DoorError("spec cannot run here: " + "; ".join(str(e) for e in refused))
        est = job_size.estimate(job_spec)
        ask = call_time.ask_before(job_spec, job_size.confirm_text(job_spec, est),
                                   self.results, self.bundled).text()
        if not confirm and ask:
            return {"job_id": None, "status": "not queued", "estimate": est.to_json(),
                    "note": f"{ask} Pass confirm=true to queue it."}
        with repeat_guard.SUBMITTING:
            if not again and (twin := repeat_guard.recent_twin(self.results, job_spec)):
                raise DoorError(repeat_guard.twin_text(self.results, twin), "call job_summary on "
                                                                            "that job, or "
                                "pass again=true to queue another copy")
            job_id = self.manager().submit(job_spec)
        status = self.manager().wait(job_id, float(timeout_s))
        if not status.finished:
            return {"job_id": job_id, "status": status.value,
                    "note": f"still {status.value} after {timeout_s:g} s; call job_summary "
                            "later, or cancel_job (the job runs on while this server runs)"}
        return self.job_summary(job_id)

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        """Cancel a job this server runs (queued: never started; running: its worker stopped)
        and wait up to :data:`CANCEL_WAIT_S` s for it to end; its id and status.

        Raises:
            DoorError: ``job_id`` is not a job of this server's job manager.
        """
        manager = self.manager()
        job = manager.get(job_id)
        if job is None:
            raise DoorError(f"job_id {job_id!r}: not a job this server runs",
                            "cancel only a job submit_and_wait started here (its job_id)")
        manager.cancel(job_id, partial.DOOR_CANCEL)  # the job records who cancelled it
        return {"job_id": job_id, "status": manager.wait(job_id, CANCEL_WAIT_S).value}

    def job_summary(self, job_id: str) -> dict[str, Any]:
        """The job: status, backend, GPU, what durations measure, its spec, notes, error, the
        stability page's table of the duration metric (µs) per region x config with ``ci95``
        (the CI95's method and coverage, as the page's caption says them), and the run
        audit per region x config (``run_audit``: runs passed, the checks flagged, those the
        files cannot support), each its first :data:`MAX_ROWS` rows (``rows_not_listed``
        counts the rest, ``rows_elsewhere`` says where they are), ``caveats`` (the warnings
        every page of the job shows: the configs a partial job measured and not, the cpu
        backend's timer and contention, what the run audit failed; empty when none applies)
        and the keys of the analyses :meth:`analysis_table` gives."""
        bundle = self.bundle(job_id)
        out: dict[str, Any] = {
            "job_id": bundle.job_id, "caption": caption(bundle), "status": bundle.status.value,
            "backend": bundle.backend, "measurement": bundle.measurement,
            "duration_metric": bundle.duration_metric,
            "spec": spec_json(bundle),
            "error": bundle.error, "problems": list(bundle.problems),
            "notes": [n.get("message") for n in bundle.notes][:20],
            "analyses": [a.key for a in pages.ANALYSES]}
        try:
            frame = pages.STABILITY.table(bundle)
            cols = [C.ANNOTATION, C.CONFIG_LABEL, C.UNIT, C.NUM_RUNS, C.AVG, C.STD, C.CI95_LOWER,
                    C.CI95_UPPER, C.RSD, C.STABLE, C.CI95_HALF_PCT]
            out["durations"] = records(frame[[c for c in cols if c in frame]],
                                       elsewhere=page_rows(pages.STABILITY.script, job_id))
            out["ci95"] = W.line(W.MEAN, bundle.host_timer)  # its method and coverage
        except MissingData as exc:
            out["durations"] = {"missing": str(exc)}
        audit = badge_frame(bundle)
        out["run_audit"] = records(audit[[C.ANNOTATION, C.CONFIG_LABEL, C.RUNS, "Passed", "Flags",
                                          "NotChecked"]], elsewhere=AUDIT_ELSEWHERE)
        failed = failed_text(bundle)
        out["caveats"] = [c for c in (partial.note(bundle.manifest), host_timer_note(bundle),
                                      contention_note(bundle),
                                      failed and failed[:1].upper() + failed[1:]) if c]
        return out

    def analysis_table(self, job_id: str, analysis: str) -> dict[str, Any]:
        """The table of one analysis of :data:`app.core.pages.ANALYSES` (``analysis``: its key,
        e.g. ``bound``) as its dashboard page opens on the job (the HTML report's section of
        the same name shows it too): the page's title and URL path, and the first
        :data:`MAX_ROWS` rows (``rows_not_listed``, ``rows_elsewhere``: :func:`records`);
        ``interval`` (the method and coverage the page says beside its
        CI95 columns) where the table has them; ``missing`` (why) where the job cannot feed it.

        Raises:
            DoorError: an unknown job or analysis (the message lists the analyses there are).
        """
        try:
            entry = pages.analysis(analysis)
        except KeyError as exc:
            raise DoorError(f"analysis {analysis!r}: not one of the dashboard's analyses",
                            f"give one of {', '.join(a.key for a in pages.ANALYSES)}") from exc
        bundle = self.bundle(job_id)
        page = pages.page(entry.script)
        out: dict[str, Any] = {"job_id": bundle.job_id, "analysis": entry.key,
                               "title": entry.title, "page": page.title,
                               "url_path": page.url_path}
        try:
            frame = entry.table(bundle)
        except (MissingData, derived.MissingWork) as exc:
            return {**out, "missing": str(exc)}
        if C.CI95_LOWER in frame:  # the page's caption beside its mean CI95 columns
            out["interval"] = W.line(W.MEAN, bundle.host_timer)
        return {**out, **records(frame, elsewhere=page_rows(entry.script, bundle.job_id))}

    def compare_jobs(self, baseline: str, candidate: str, max_slowdown_pct: float | str = 3.0,
                     metric: str | None = None) -> dict[str, Any]:
        """The regression gate's verdict on ``candidate`` against ``baseline`` (at most 4 KB);
        its arguments checked by the CLI's own functions (:func:`allowed_slowdown`).

        Raises:
            DoorError: a job is unknown, ``max_slowdown_pct`` is not one the CLI's
                ``--max-slowdown`` takes (a bare 0.03 is ambiguous), or ``metric`` is not in
                both jobs.
        """
        allowed = allowed_slowdown(max_slowdown_pct)
        sides = [self.bundle(baseline), self.bundle(candidate)]
        unknown = unknown_metric("metric", metric, {
            b.job_id: set(b.table(C.TABLE_AGGREGATED).get(C.METRIC, ())) for b in sides})
        if unknown:
            raise DoorError(unknown)
        return gate_decision(sides[0], sides[1], allowed, metric)

    def replicate_job(self, job_id: str, tolerance_pct: float = 3.0, against: str | None = None,
                      timeout_s: float = WAIT_S) -> dict[str, Any]:
        """The replication verdict on ``job_id``: its spec run again here (validated and queued
        as :meth:`submit_and_wait`), or the job ``against`` (a re-run made elsewhere), judged
        with two one-sided tests against ``tolerance_pct`` after the gate's checks.

        Raises:
            DoorError: an unknown job, a tolerance <= 0, a job without a spec to re-run.
        """
        if not (0 < tolerance_pct < math.inf):
            raise DoorError(f"tolerance_pct {tolerance_pct}: give a percentage > 0", "e.g. 3")
        reference = self.bundle(job_id)
        if against is None:
            spec = spec_json(reference)
            if spec is None:
                raise DoorError(f"job {job_id} records no spec to run again",
                                "give against= a re-run made elsewhere")
            # a re-run is a twin, and its size was the asked-for job's: both asked already
            rerun = self.submit_and_wait(spec, timeout_s, again=True, confirm=True)
            if rerun.get("status") != JobStatus.DONE.value:
                return {"reference": job_id, "replica": rerun.get("job_id"),
                        "verdict": None, "replica_status": rerun.get("status"),
                        "note": rerun.get("note") or rerun.get("error")}
            against = str(rerun["job_id"])
        result = replication(reference, self.bundle(against), tolerance_pct)
        said = {k: v for k, v in result.to_json().items() if k != "rows"}
        return {**said, **records(verdict_table(result), 20)}

    def deep_dive(self, job_id: str, launch_id: int | None = None) -> dict[str, Any]:
        """One launch of the job's Nsight Compute report as the deep-dive page shows it (speed
        of light, memory workload, occupancy and its limiter, warp stalls, launch statistics,
        hot spots, rule results), and the job's rule digest; ``launch_id`` None = the first."""
        bundle = self.bundle(job_id)
        answers = worker_answers(bundle, self.worker_python, self.env)
        out: dict[str, Any] = {"job_id": job_id}
        if answers.rules is not None:
            out["rule_digest"] = records(answers.rules.drop(columns=["Message"],
                                                            errors="ignore"), 20)
        data = answers.deep_dive
        if data is None:
            return {**out, **{f"no_{k}": v for k, v in (answers.why_not or {}).items()}}
        labels = D.launch_labels(data, D.config_labeler(bundle.spec.configs if bundle.spec
                                                        else ()))
        if not labels:
            return {**out, "no_deep_dive": "The report holds no profiled launch."}
        launch = next(iter(labels)) if launch_id is None else int(launch_id)
        if launch not in labels:
            raise DoorError(f"launch_id {launch_id}: not in {job_id}'s report",
                            f"give one of 0..{max(labels)} (launches listed first)")
        return {**out, **launch_panels(data, launch, labels)}

    def import_files(self, paths: list[str]) -> dict[str, Any]:
        """Import nsight-python CSVs, Nsight Compute CSV exports or ``.ncu-rep`` reports (paths
        on this machine, inside the folders :func:`confine.readable_roots` names) as new jobs,
        as the Import page does (``profiling_worker import --each``): each report or table
        becomes a job of its own.

        Raises:
            DoorError: a path is not a regular file inside a folder this server may read.
        """
        files, refused = [], []
        for given in paths:
            try:
                files.append(confine.readable_file(given, self.readable))
            except confine.Confined as exc:
                refused.append(str(exc))
        if not files or refused:
            raise DoorError(f"paths: {'; '.join(refused) or '(none given)'}",
                            "give absolute paths of files inside the result store, a kernel "
                            "folder (KPROF_KERNEL_DIRS) or a folder allowed with --import-dir")
        outcomes = import_client.run_import(files, self.results, self.worker_python, self.env)
        history_index.sync_quietly(self.results, self.bundled)
        return {"imports": [{"ok": o.ok, "job_id": o.job_id if o.ok else None,
                             "files": list(o.files), "message": o.message, "hint": o.hint}
                            for o in outcomes]}

    def write_report(self, job_ids: list[str], out: str, max_slowdown_pct: float | str = 3.0
                     ) -> dict[str, Any]:
        """Write the shareable HTML report of one job, or of two (baseline, candidate: with
        the gate's verdict), to ``out`` inside the result store (relative to it, or an
        absolute path inside it; never through a link); its path and size in bytes.

        Raises:
            DoorError: not one or two jobs, an unknown job, ``max_slowdown_pct`` refused as the
                CLI's ``--max-slowdown`` refuses it, or ``out`` not an ``.html`` path inside the
                result store (or not writable).
        """
        if len(job_ids) not in (1, 2):
            raise DoorError(f"job_ids: {len(job_ids)} given", "give one job or two")
        allowed = allowed_slowdown(max_slowdown_pct)
        try:
            target = confine.report_target(out, self.results)
        except confine.Confined as exc:
            raise DoorError(f"out {exc}", "give a file name ending in .html: it is written "
                            "in the result store (or a path inside it)") from exc
        except OSError as exc:
            raise DoorError(f"out {out}: cannot make its folder ({exc})") from exc
        paths = [self.bundle(j).path for j in job_ids]
        try:
            size = confine.write_new(target, report_bytes(paths, allowed,
                                                          self.worker_python, self.env))
        except OSError as exc:
            raise DoorError(f"out {out}: cannot write it ({exc})",
                            "give a writable path inside the result store") from exc
        return {"out": str(target), "bytes": size}

    def shutdown(self) -> list[str]:
        """Stop the door's workers; a job still running or queued ends ``interrupted`` (on
        disk when this returns). Returns their ids. Its workers are SIGKILLed at once, not
        given the dashboard's cancel path: the MCP client that closed the door's stdin kills
        the door 2 s later (the SDK's ``PROCESS_TERMINATION_TIMEOUT``)."""
        if self._manager is None:
            return []
        return self._manager.shutdown(keep_measured=False)


def allowed_slowdown(max_slowdown_pct: float | str) -> float:
    """``max_slowdown_pct`` (a number, or text as ``"3%"``) as the CLI's ``--max-slowdown``
    reads it (:func:`profiling_worker.bundle.gate.command.slowdown_arg`: >= 0, finite, a bare number
    below 1 refused as ambiguous), in %.

    Raises:
        DoorError: with the CLI's message.
    """
    problem = (config_grid.digits_problem(max_slowdown_pct.strip().removesuffix("%"))
               if isinstance(max_slowdown_pct, str) else None)
    try:
        if problem:  # float() reads "٣%" and "1_0%" without a word
            raise ValueError(problem)
        return slowdown_arg(max_slowdown_pct)
    except ValueError as exc:
        raise DoorError(f"max_slowdown_pct: {exc}",
                        'a number of percent (3 for 3 %) or text such as "0.5%"') from None


def gate_decision(baseline: Bundle, candidate: Bundle, max_slowdown_pct: float,
                  metric: str | None) -> dict[str, Any]:
    """The adapter to the gate, in one place: its judgement (the compare page's call) as the
    small JSON decision of :func:`app.core.share.verdict.decision`, or its refusal of the pair
    as the Compare page says it (:func:`app.core.share.verdict.refused`)."""
    return (refused(baseline, candidate, "the door")
            or decision(judged(baseline, candidate, max_slowdown_pct, metric)))


def launch_panels(data: Mapping[str, Any], launch: int, labels: dict[int, str]) -> dict[str, Any]:
    """The deep-dive page's panels of one launch, as records."""
    occ, limiter = D.occupancy(data, launch)
    panels = {"speed_of_light": D.metric_panel(data, launch, "speed of light",
                                               (M.GPU_TIME, M.GPC_HZ, *M.SPEED_OF_LIGHT)),
              "memory_workload": D.metric_panel(data, launch, "memory", M.MEMORY_WORKLOAD),
              "occupancy": occ, "warp_stalls": D.stalls(data, launch),
              "launch_statistics": D.metric_panel(data, launch, "launch", M.LAUNCH_STATISTICS),
              "hot_spots": D.table(data, "hot_spots", launch, "source"),
              "rules": D.table(data, "rules", launch)}
    out: dict[str, Any] = {"launch_id": launch, "launch": labels[launch],
                           "launches": len(labels),
                           "sections": D.section_names(data, launch),
                           "occupancy_limited_by": ({"resource": limiter[0],
                                                     "blocks_per_sm": limiter[1]}
                                                    if limiter else None)}
    for name, panel in panels.items():
        out[name] = {**records(panel.frame, 12 if name == "hot_spots" else MAX_ROWS),
                     **({"missing": panel.missing} if panel.missing else {})}
    return out
