"""The sidebar job form. Draws widgets and returns a plain dict; validation is elsewhere.

Widgets sit inside ``st.form`` so typing never reruns the app; only the kernel choice is
outside, so the size fields can follow the kernel's parameters. On submit the callback
(:func:`on_submit`) runs before the rerun: it validates the dict with
:func:`app.core.spec_form.to_job_spec` and either queues the job or stores the field errors,
which are shown under the form (the submitted job's notice is the job panel's). Widget values
are kept either way.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling_worker.bundle.errors import classify_known
from profiling_worker.bundle.schema import (backends as B, configs as cfgs, run_target,
                                            spec as spec_schema)

from app import settings
from app.core import config_grid, job_size, spec_form
from app.sidebar import preflight_panel, run_on
from app.ui import cached, job_status, jobs, panels, state
from app.core.markdown import code, esc

PAGE = "builder"
FIELDS = ("kernels", "annotations", "size_preset", "sizes", "combine", "runs", "backend",
          "metric_preset", "extra_metrics", "cache_control", "clock_control", "replay_mode",
          "thermal_mode", "thermal_wait", "thermal_cont", "thermal_timeout", "collectors",
          "warmup", "gpu", "cpu_threads", "label", "ignore_kernels", *spec_form.RUN_TARGET_FIELDS)
PARAM_PREFIX = "param-"  # widget key builder-param-<name>: one per parameter of the kernel
#: Session key of what the size fields were last offered: widget key -> (parameter, text).
OFFERED = state.key(PAGE, "sizes-offered")
THERMAL_HELP = {
    "thermal_wait": "Pause before a run when the GPU is this many °C or less from its thermal "
                    "limit (nsight-python default 10; empty = default)",
    "thermal_cont": "Resume when the headroom is back to this many °C (default 20; must be "
                    "above the pause point)",
    "thermal_timeout": "Longest pause in s (default 180); manual mode fails after it, auto "
                       "mode lowers the resume point",
}
AUTO_HELP = ('Used when Runs is "auto": every config gets the fewest runs, then runs are added '
             "where the CI95 is widest until it is within the target, the config has the most "
             "runs, or the budget (wall-clock s of measuring, whole job) is spent")
#: The label each field has on screen (the widgets draw these): errors name a field by it, and
#: by the spec's name only where it does not say it (:func:`error_text`). ``metrics`` is the
#: spec's, made of Metrics and Extra metrics;
#: ``sizes`` depends on the kernel (:func:`labels`).
LABELS = {
    "kernels": "Kernels", "annotations": "Annotations (empty = all)", "backend": "Backend",
    "metric_preset": "Metrics", "metrics": "Metrics / Extra metrics", "size_preset": "Sizes from",
    "extra_metrics": "Extra metrics (Nsight Compute names)", "cache_control": "Cache control",
    "clock_control": "Clock control", "replay_mode": "Replay mode", "thermal_mode": "Thermal mode",
    "thermal_wait": "Pause at (°C)", "thermal_cont": "Resume at (°C)",
    "thermal_timeout": "Longest pause (s)", "warmup": "Warm-up calls", "gpu": "GPU index",
    "cpu_threads": spec_form.CPU_THREADS_LABEL,
    "collectors": "Info collectors (sampled before each run)",
    "ignore_kernels": "Kernels to ignore (one a line)", "label": "Label", "combine": "Configs",
    "runs": "Runs per config",
    "preflight": "Pre-flight",
    "auto_ci95_pct": "Auto runs: target CI95 (± % of mean)", "auto_min_runs": "Auto: fewest runs",
    "auto_max_runs": "Auto: most runs", "auto_budget_s": "Auto: budget (s)",
    **{f"run_target.{key}": "Auto runs" for key in spec_form.RUN_TARGET_FIELDS.values()},
    # Run on (app/sidebar/run_on.py): a cluster's options, checked as ``slurm.<field>``
    "slurm": "Run on", "slurm.partition": "Partition", "slurm.gpu_type": "GPU types (comma)",
    "slurm.gpu_types": "GPU types (comma)", "slurm.gpus_per_task": "GPUs per task",
    "slurm.time_limit_min": "Time limit (min)", "slurm.parallelism": "Tasks at once",
    "slurm.retries": "Retries", "slurm.configs_per_task": "Configs per task",
}


COLLECTORS_HELP = (
    "Built-in (NVML): read by nsight-python >= 1.1 (CUPTI, ncu attach) just before each run. "
    "User: functions of your files beside your kernels (--kernels DIR), tagged "
    "@nsight.experimental.collect(scope=ONCE or RUN) or profiling_worker.catalog.user_collectors."
    "collect; the worker calls them around each run on the other backends. Each becomes a "
    "column; one that raises or is slow is named and the job goes on.")


def collector_label(name: str, user: Mapping[str, Mapping[str, Any]]) -> str:
    """``sm_clock (NVML, RUN)`` or ``unix_time (user, RUN)``: short enough for the sidebar's
    width; a user collector's unit and file are in :func:`collectors_help`."""
    c = user.get(name)
    if c is None:
        return f"{name} (NVML, RUN)"
    return f"{name} (user, {str(c.get('scope', '')).upper()})"


def collectors_help(user: Mapping[str, Mapping[str, Any]]) -> str:
    """:data:`COLLECTORS_HELP`, then each user collector with its scope, unit and file, e.g.
    ``unix_time: RUN, s, host_collectors.py``."""
    lines = [f"- `{name}`: {str(c.get('scope', '')).upper()}"
             f"{', ' + str(c['unit']) if c.get('unit') else ''}, {c.get('source', '')}"
             for name, c in user.items()]
    return COLLECTORS_HELP + ("\n\nYour collectors:\n" + "\n".join(lines) if lines else "")


#: Under an empty Kernels box: what to do (Run would say "no kernel chosen").
NO_KERNEL = ":material/arrow_upward: Pick at least one kernel: the job profiles those chosen here."
#: The fields drawn above the form: a choice reruns the app, so what follows from it (the size
#: fields, the greyed-out fields) follows at once.
ABOVE_FORM = ("kernels", "backend", "metric_preset")
#: The form's buttons, as they are labelled: each sends the form and has its values checked.
BUTTONS = ("Run", "Pre-flight")


def stale_errors_note(by: str) -> str:
    """Under the errors: a field typed in the form is sent (and checked) only by a button, so
    the note names the button ``by`` that found them (issue 37: after Pre-flight it said "the
    last Run")."""
    found = ("Found in the values the link gave" if by == LINK else f"Found at the last {by}")
    return (f"{found}: a field corrected since is checked again when you press "
            f"{' or '.join(BUTTONS)}; the kernel choice is checked at once.")


def labels(params: tuple[str, ...]) -> dict[str, str]:
    """:data:`LABELS` for a kernel of these parameters: one size field ``Sizes (<param>)``, or
    one field per parameter (labelled by its name). ``Runs per config`` for every kernel: a
    config is one set of parameter values, a size for a kernel of one (issue 37: matmul's form
    said "Runs per size", batched_matmul's "Runs per config", of the same field)."""
    if len(params) <= 1:
        return {**LABELS, "sizes": f"Sizes ({params[0] if params else 'n'})"}
    return {**LABELS, **{p: p for p in params}}


def error_text(err: spec_schema.FieldError, shown: Mapping[str, str]) -> str:
    """An error as Markdown, naming the field by its label on screen, before the message and in
    its fix (:func:`in_labels`; the message says what is wrong with the value: "no sizes
    given"): ``**GPU index**: 99 is out of range … Fix: set GPU index between
    0 and 63.``; the spec's name follows the label where the label does not say it
    (:func:`_says`), for a CLI or YAML user: ``**Warm-up calls** (spec `warmup`): … Fix: set
    Warm-up calls between 0 and 100.`` ("set warmup between 0 and 100" named no control on
    screen: a fresh user's find), ``**Kernels to ignore (one a line)** (spec
    `ignore_kernels[2]`)``. A field with no label (``disk_full``) by its name alone. "Sizes (n)
    (sizes)" said the field twice (new-user trial)."""
    label = shown.get(err.field.partition("[")[0])
    if label is None:
        return f"**{esc(err.field)}**: {esc(err.message)}. Fix: {esc(err.hint)}."
    name = (f"**{esc(label)}**" if _says(label, err.field)
            else f"**{esc(label)}** (spec {code(err.field)})")
    return f"{name}: {esc(err.message)}. Fix: {esc(in_labels(err.hint, err.field, label))}."


def in_labels(text: str, field: str, label: str) -> str:
    """``text`` (a spec error's message or fix) with the spec's name of ``field`` (the whole
    name, or its last part: ``slurm.retries`` -> ``retries``; a whole word, not inside another
    name, a path, a command or a link's parameter: ``ncu --query-metrics`` and ``?kernels=``
    stay) written as ``label``."""
    base = field.partition("[")[0]
    for name in dict.fromkeys((base, base.rpartition(".")[2])):
        text = re.sub(rf"(?<![\w.\[`/?-]){re.escape(name)}(?![\w\[`/-])", lambda _: label, text)
    return text


def _says(label: str, field: str) -> bool:
    """True when ``label`` holds the spec's name ``field`` as its words, case aside, an
    underscore a space ("GPU index" says ``gpu``, "Cache control" ``cache_control``; "Warm-up
    calls" does not say ``warmup``, which a YAML user types; "Retries" says
    ``slurm.retries``); never for an item
    (``ignore_kernels[2]``: the index is the item)."""
    words = field.rpartition(".")[2].replace("_", " ").lower()  # slurm.retries: retries
    return "[" not in field and words in label.lower()


def k(field: str) -> str:
    """Widget key of a builder field (``builder-<field>``)."""
    return state.key(PAGE, field)


def form_values(first: Mapping[str, Any]) -> dict[str, Any]:
    """The builder's current values from session state, one entry per :data:`FIELDS` (a field
    whose widget is not drawn, e.g. ``sizes`` for a kernel with several parameters, has its
    value from ``first``, see :func:`form_defaults`), plus ``params`` (parameter name -> text)
    from the per-parameter fields."""
    values = {f: st.session_state.get(k(f), first.get(f)) for f in FIELDS}
    prefix = k(PARAM_PREFIX)
    values["params"] = {key[len(prefix):]: v for key, v in st.session_state.items()
                        if isinstance(key, str) and key.startswith(prefix)}
    return values


def form_defaults(backend: str, catalog: spec_form.Catalog) -> dict[str, Any]:
    """Each field's first value: the JobSpec defaults, and the form's own (matmul, its sizes for
    ``backend``, timing metrics, ``backend`` itself).

    They are given to the widgets as their own defaults, never written into session state: a
    browser that mounts a widget only after a second run of the session (a run that came before
    the widget's JavaScript had loaded, e.g. when another session's job ended) draws the
    widget's own default, so values set only through session state showed there as empty
    Kernels and backend "ncu" and a Run said "kernels: is empty" (issue 14)."""
    info = catalog["matmul"]
    configs = info.default_configs if B.on_gpu(backend) else info.cpu_configs
    form_only = {"kernels": ["matmul"], "annotations": [], "size_preset": "typed",
                 "sizes": ", ".join(str(c["n"]) for c in configs),
                 "combine": config_grid.PRODUCT, "backend": backend, "metric_preset": "timing",
                 "extra_metrics": "", "collectors": [], "ignore_kernels": ""}
    return {f: form_only.get(f, spec_schema.SPEC_DEFAULTS.get(f)) for f in FIELDS}


#: The fields a reload keeps (issue 37: a reload kept the job but not the sizes and runs typed):
#: mirrored into the URL as ``?kernels=…&sizes=…&runs=…`` (and ``?param-<name>=…`` per parameter
#: of a kernel with several) once they differ from the form's own defaults.
URL_FIELDS = ("kernels", "sizes", "runs")
#: A link's choice of backend (``?backend=cpu``): read apart from :data:`URL_FIELDS` (checked
#: against the backends that run here, :func:`backend_here`), mirrored as they are (a fresh
#: user's find: a reload put the backend picked back to the form's own).
URL_BACKEND = "backend"
#: The query parameters :func:`mirror_to_url` writes, besides each ``param-<name>``.
URL_MIRRORED = (*URL_FIELDS, URL_BACKEND)
#: Every query parameter the app reads: the form's, the shown job (``?job=``), a compare link's
#: pair and a deep dive's pinned baseline (:mod:`app.ui.state`), and Streamlit's own (embed).
#: Any other a link holds is said to be ignored (:func:`link_errors`).
URL_KNOWN = (*URL_FIELDS, URL_BACKEND, "job", "baseline", "candidate", "embed", "embed_options")
#: What found the errors of values a link gave (:func:`stale_errors_note`).
LINK = "link"
#: The field of an error about the link itself (a parameter it ignores): no label, so
#: :func:`error_text` names it as it is.
URL_FIELD = "URL"
#: The fix of a link's parameter that the app ignores.
LINK_FIX = ("remove it from the link; the form reads ?kernels=, ?backend=, ?sizes=, ?runs= and "
            "?param-<name>= (a kernel with several parameters)")


def url_values(catalog: spec_form.Catalog, kernel: str = "matmul") -> dict[str, Any]:
    """The form's values the URL holds, read once per session (a reload is a new session; the
    widgets' defaults then stay the same for the whole session): kernels of the catalog, a
    backend of :data:`~profiling_worker.bundle.schema.backends.NAMES`, the text of sizes, runs
    and each ``param-<name>`` field. What it cannot take is kept for :func:`check_url_values`
    (:func:`link_errors`); ``kernel``: the form's own first kernel."""
    if state.BUILDER_FROM_URL not in st.session_state:
        asked = link_kernels(st.query_params.get_all("kernels"))
        kernels = [kid for kid in asked if kid in catalog]
        texts = {key: value for key in st.query_params
                 if (key in URL_FIELDS[1:] or key.startswith(PARAM_PREFIX))
                 and isinstance(value := st.query_params.get(key), str)}
        backend = st.query_params.get(URL_BACKEND)
        st.session_state[state.BUILDER_FROM_URL] = {
            **({"kernels": kernels} if kernels else {}),
            **({URL_BACKEND: backend} if backend_here(backend) is None else {}), **texts}
        if (asked or texts or backend is not None or set(st.query_params) - set(URL_KNOWN)
                or any(len(st.query_params.get_all(q)) > 1 for q in URL_SINGLE)):
            info = catalog.get((kernels or [kernel])[0])  # checked on this first run, as Run
            st.session_state[state.BUILDER_URL_UNCHECKED] = link_errors(  # would (issue 37)
                [kid for kid in asked if kid not in catalog], backend,
                info.parameters if info is not None else ())
    return dict(st.session_state[state.BUILDER_FROM_URL])


def link_kernels(values: Iterable[str]) -> list[str]:
    """The kernel ids a link's ``?kernels=`` values name: each value split at commas, as the
    job selector's label lists them (``?kernels=a,b`` was read as one kernel ``a,b``), blanks
    dropped, repeats once."""
    return list(dict.fromkeys(kid.strip() for value in values for kid in str(value).split(",")
                              if kid.strip()))


#: The link's parameters read as one value (the last of several): a repeat is said, not
#: dropped without a word. ``?kernels=`` and a deep dive's ``?baseline=`` pins take several.
URL_SINGLE = (*URL_FIELDS[1:], URL_BACKEND, "job", "candidate")


def link_errors(unknown: list[str], backend: str | None,
                params: tuple[str, ...]) -> list[spec_schema.FieldError]:
    """What the form cannot take from the URL, each as a field error as Run would say it: the
    ``unknown`` kernels, a ``backend`` that is no backend or cannot run here (the worker's
    environment report: its reason and fix), a ``param-<name>`` that is no parameter of the
    first kernel (``params``; a kernel of one parameter reads ``?sizes=``, one of several
    does not), a parameter read once given several times, and any other
    parameter the app does not read (:data:`URL_KNOWN`): ignored, said."""
    errors = [spec_schema.FieldError(
        "kernels", f"?kernels= in the link names {', '.join(map(repr, unknown))}: not "
        f"{'a kernel' if len(unknown) == 1 else 'kernels'} of this dashboard's catalog",
        "choose them in the Kernels box; a link names them by id, comma-separated "
        "(?kernels=matmul,softmax)")] if unknown else []
    for key in st.query_params:
        given = st.query_params.get_all(key)
        if (key in URL_SINGLE or key.startswith(PARAM_PREFIX)) and len(given) > 1:
            errors.append(spec_schema.FieldError(
                URL_FIELD, f"?{key}= is given {len(given)} times ({', '.join(map(repr, given))}):"
                f" only the last, {given[-1]!r}, is read", f"give ?{key}= once"))
    if backend is not None and (refused := backend_here(backend)) is not None:
        errors.append(refused)
    several = params if len(params) > 1 else ()
    if several and "sizes" in st.query_params:  # the mirror of a param- on a one-size kernel
        errors.append(spec_schema.FieldError(
            URL_FIELD, "?sizes= is ignored: the first kernel has several parameters, each "
            f"typed in its own field ({', '.join(f'?{PARAM_PREFIX}{p}=' for p in several)})",
            LINK_FIX))
    for key in st.query_params:
        if key.startswith(PARAM_PREFIX) and key[len(PARAM_PREFIX):] not in several:
            errors.append(spec_schema.FieldError(
                URL_FIELD, f"?{key}= is ignored: {key[len(PARAM_PREFIX):]!r} is not a parameter "
                "of the first kernel's several" if several else f"?{key}= is ignored: the "
                "first kernel has one parameter, typed in Sizes (?sizes=)", LINK_FIX))
        elif not key.startswith(PARAM_PREFIX) and key not in URL_KNOWN:
            errors.append(spec_schema.FieldError(
                URL_FIELD, f"?{key}= is not a parameter this dashboard reads: ignored", LINK_FIX))
    return errors


def backend_here(backend: str | None) -> spec_schema.FieldError | None:
    """None when a link's ``?backend=`` can fill the form: a backend of
    :data:`~profiling_worker.bundle.schema.backends.NAMES` that the worker's environment report
    says runs here; else why not, as an error on ``backend`` (the form keeps its own)."""
    if backend not in B.NAMES:
        return spec_schema.FieldError(
            "backend", f"{backend!r} in the link is not one of this dashboard's backends "
            f"({', '.join(B.NAMES)}); the form keeps its own", "pick one in the Backend box")
    refused = spec_form.refusal(cached.env_report(), backend)
    if refused is None:
        return None
    return spec_schema.FieldError(
        "backend", f"{backend} in the link cannot run here ({refused[0]}); the form keeps its "
        "own", refused[1])


#: How the Backend box marks a backend the worker's environment report says cannot run here:
#: one mark, as the half-width box cut "cupti (cannot run here)" to "cupti (canr…"; the reason
#: is in the box's help and in the caption under it (:func:`backend_caption`).
CANNOT_RUN = "✕"


def backend_label(name: str) -> str:
    """A Backend option as the box shows it: ``ncu ✕`` where the worker's report refuses it
    (:func:`app.core.spec_form.refusal`, the link's rule), else its name."""
    return name if spec_form.refusal(cached.env_report(), name) is None else f"{name} {CANNOT_RUN}"


def backends_help() -> str:
    """The Backend box's help: what each backend measures, and why one cannot run here (the
    box's :data:`CANNOT_RUN` mark)."""
    report = cached.env_report()
    return "; ".join(f"{n}: {B.get(n).measures}" + (
        f" ({CANNOT_RUN} cannot run here: {refused[0]})"
        if (refused := spec_form.refusal(report, n)) else "") for n in B.NAMES)


def backend_caption(backend: str) -> None:
    """Under the Backend box, when the chosen ``backend`` cannot run here: why and the fix
    (Run refuses it the same way, :func:`app.core.spec_form.backend_errors`)."""
    refused = spec_form.refusal(cached.env_report(), backend)
    if refused is not None:
        st.caption(f":material/block: {esc(backend)} cannot run here: {esc(refused[0])}. "
                   f"Fix: {esc(refused[1])}.")


def check_url_values(values: Mapping[str, Any]) -> None:
    """On the run that read the URL's form values (:func:`url_values`), show what is wrong with
    them as the Run button would: the field's message, and each parameter of the link the form
    could not take (:func:`link_errors`; issue 37: ``?kernels=nonexistent&sizes=-5&runs=abc``
    filled the form silently, ``?backend=nonsense`` was ignored without a word)."""
    errors = st.session_state.pop(state.BUILDER_URL_UNCHECKED, None)
    if errors is None:
        return
    given = st.session_state.get(state.BUILDER_FROM_URL) or {}
    errors = [*errors, *(from_link(e, given) for e in check(values)[1] if e not in errors)]
    if errors:
        st.session_state[state.BUILDER_ERRORS] = errors
        st.session_state[state.BUILDER_CHECKED] = values
        st.session_state[state.BUILDER_CHECKED_BY] = LINK


def from_link(err: spec_schema.FieldError, given: Mapping[str, Any]
              ) -> spec_schema.FieldError:
    """A field's error with the link's parameter that filled the field and its text, when
    the link (``given``: :func:`url_values`) filled it: ``… is out of range (the link's
    ?runs=99999)``, so a user sees which part of the link to fix."""
    key = err.field if err.field in URL_FIELDS else PARAM_PREFIX + err.field
    if not isinstance(given.get(key), str):
        return err
    return spec_schema.FieldError(err.field, f"{err.message} (the link's ?{key}={given[key]})",
                                  err.hint)


def mirror_to_url(values: Mapping[str, Any], defaults: Mapping[str, Any],
                  params: tuple[str, ...]) -> None:
    """Write the :data:`URL_MIRRORED` fields of ``values`` that differ from the form's own
    ``defaults`` (and the fields of ``params``, the parameters of a kernel with several) into
    the URL, and drop the others. Called on every run: a page switch keeps only ``?job=``."""
    def differs(field: str) -> bool:
        value, default = values.get(field), defaults.get(field)
        if isinstance(value, list):
            return value != default
        return value not in (None, "") and str(value).strip() != str(default)

    wanted: dict[str, Any] = {f: values[f] for f in URL_MIRRORED if differs(f)}
    if "kernels" in wanted:
        wanted["kernels"] = [str(kid) for kid in wanted["kernels"]]
    typed = values.get("params") or {}
    wanted.update({PARAM_PREFIX + name: typed[name] for name in params
                   if isinstance(typed.get(name), str)})
    for key in [*URL_MIRRORED, *(q for q in st.query_params if q.startswith(PARAM_PREFIX))]:
        if key not in wanted and key in st.query_params:
            del st.query_params[key]
    for key, value in wanted.items():
        if (st.query_params.get_all(key) if isinstance(value, list)
                else st.query_params.get(key)) != value:
            st.query_params[key] = value


def check(values: Mapping[str, Any]) -> tuple[spec_schema.JobSpec | None, list[Any]]:
    """(spec, []) for form values that make a job this machine can run, else (None, the field
    errors): the spec's rules and the worker's environment report. Queues nothing."""
    spec, errors = spec_form.to_job_spec(values, cached.kernel_catalog()[0])
    if spec is not None:
        errors = spec_form.backend_errors(spec, cached.env_report())
    return (None if errors else spec), errors


def on_submit(first: Mapping[str, Any]) -> None:
    """Form callback: validate; queue the job and select it, or keep the errors (and the values
    they were found in) for display."""
    values = form_values(first)
    spec, errors = check(values)
    st.session_state[state.BUILDER_ERRORS] = errors
    st.session_state[state.BUILDER_CHECKED] = values
    st.session_state[state.BUILDER_CHECKED_BY] = BUTTONS[0]
    st.session_state.pop(state.BUILDER_NOTICE, None)
    if spec is None:
        return
    asked = st.session_state.pop(state.BUILDER_CONFIRM, None)
    est = job_size.estimate(spec, preflight_panel.done_seconds(spec))
    told = jobs.ask_before(spec, job_size.confirm_text(spec, est))
    ask = told.question
    if asked is not None and asked[0] == spec.spec_hash() and not answers(asked):
        st.session_state[state.BUILDER_CONFIRM] = asked  # a double click's second click
        return
    # the same Run again; Pre-flight's question (of its few calls) is not Run's
    confirmed = asked is not None and asked[0] == spec.spec_hash() and asked[3] == BUTTONS[0]
    with jobs.SUBMITTING:  # a double click's two runs can be handled at once
        twin = None if confirmed else jobs.recent_twin(spec)
        if twin is not None:  # a double click, or another tab's Run
            ask = " ".join(filter(None, (jobs.twin_text(twin), ask)))
            show_queued(twin)  # the job the question names, which the first click queued
        if ask is not None and not confirmed:
            st.session_state[state.BUILDER_CONFIRM] = (spec.spec_hash(), f"{ask} {ANSWERS}",
                                                       time.monotonic(), BUTTONS[0], told.note)
            return
        try:
            job_ids = run_on.submit(spec)  # this host's lanes or a cluster sweep
        except OSError as exc:  # the job folder could not be made (disk full, permissions)
            st.session_state[state.BUILDER_ERRORS] = [submit_error(exc)]
            return
        except spec_schema.SpecInvalid as exc:  # a cluster option, or no Slurm here
            st.session_state[state.BUILDER_ERRORS] = exc.errors
            return
    for job_id in job_ids:
        state.add_own_job(job_id)
    show_queued(job_ids[0])
    if told.note:  # no question, or answered: the call's time still unknown, said under it
        st.session_state[state.BUILDER_NOTICE_NOTE] = (job_ids[0], told.note)


#: Seconds after the question was drawn in which the same Run is the same double click, not an
#: answer: the
#: usual double-click time of desktop systems (Windows' default, 500 ms). A fresh user's find
#: (issue 37): a double click on Run 4 s after a first Run asked with its first click and
#: answered with its second, so a copy was queued nobody had read the question for.
DOUBLE_CLICK_S = 0.5


#: How the question is answered: the buttons under it (:func:`render_question`) or Run again.
ANSWERS = "Run anyway (or Run again) queues it; Change queues nothing."
#: How Pre-flight's question is answered (:func:`on_preflight`).
PREFLIGHT_ANSWERS = "Run anyway (or Pre-flight again) queues its pass; Change queues nothing."


def run_anyway(first: Mapping[str, Any]) -> None:
    """"Run anyway": the question standing is answered (a button of its own is never a double
    click's second Run), then the callback of the button that asked it (Run or Pre-flight)
    queues the form's job, once."""
    asked = st.session_state.get(state.BUILDER_CONFIRM)
    if asked is not None:
        st.session_state[state.BUILDER_CONFIRM] = (*asked[:2], -math.inf, *asked[3:])
    (on_preflight if asked is not None and asked[3] == BUTTONS[1] else on_submit)(first)


def change() -> None:
    """"Change": the question is dropped and nothing is queued; the form keeps its values."""
    st.session_state.pop(state.BUILDER_CONFIRM, None)
    st.session_state.pop(state.BUILDER_CONFIRM_PAGE, None)


def render_question(first: Mapping[str, Any], where: Any) -> None:
    """The question Run asked (a large job, :mod:`app.core.job_size`, or an identical one queued
    seconds ago, :mod:`app.services.repeat_guard`) with its two answers, into ``where`` (a
    container)."""
    asked = st.session_state.get(state.BUILDER_CONFIRM)
    if asked is None or left_question(asked):
        return
    # the double-click time counts from this draw, not from the Run that asked: on a busy
    # server a burst's next click ran a second after the asking click's run began and read as
    # an answer (session 26's fresh user: five clicks 0.1 s apart queued three jobs)
    drawn = time.monotonic()
    st.session_state[state.BUILDER_CONFIRM] = (*asked[:2], drawn, *asked[3:])
    st.session_state[state.BUILDER_CONFIRM_PAGE] = (drawn, _page())
    where.warning(asked[1], icon=":material/hourglass_top:")
    anyway, other = where.columns(2)
    anyway.button("Run anyway", key=k("run-anyway"), type="primary", on_click=run_anyway,
                  args=(first,))
    other.button("Change", key=k("change"), on_click=change)
    if asked[4]:  # no rate for its longest call: under the answers, which stay in sight
        where.caption(esc(asked[4]))


def left_question(asked: tuple[str, str, float, str, str | None]) -> bool:
    """Whether the user left the page on which the question ``asked`` was first drawn (page
    script hashes: the sidebar's form stands on every page): then it is dropped, as Change
    drops it, and True. A question answers a click; on another page it stood on in the
    sidebar, "queued 5 s ago" of a job a minute old (issue 37). Run again asks afresh. False
    where it stands on its page (:func:`render_question` records each draw's page and time in
    :data:`app.ui.state.BUILDER_CONFIRM_PAGE`)."""
    drawn = st.session_state.get(state.BUILDER_CONFIRM_PAGE)
    if drawn is not None and drawn[0] == asked[2] and drawn[1] != _page():
        change()
        return True
    return False


def _page() -> str:
    """The script hash of the page this run draws ("" outside a script run)."""
    ctx = get_script_run_ctx()
    return ctx.page_script_hash if ctx is not None else ""


def answers(asked: tuple[str, str, float, str, str | None]) -> bool:
    """Whether a Run now answers the question ``asked`` (spec hash, text, ``time.monotonic()``
    when it was last drawn (:func:`render_question`), the button that asked, the note under
    it): it came at least :data:`DOUBLE_CLICK_S` after the question was drawn."""
    return time.monotonic() - asked[2] >= DOUBLE_CLICK_S


def show_queued(job_id: str) -> None:
    """Select ``job_id`` and give it the job panel's note. Also for the twin a repeated Run is
    asked about (issue 37): after a double click the page went back to the job shown before,
    since the second click's request carries the selector's value from before the first was
    answered (and, on the busy 2-core machine, the second click's run sometimes did not see
    this session's record of the first job either, so the twin is selected whoever queued
    it: the question names it, and it is the job a Run of this spec would show)."""
    state.select_job(job_id)
    st.session_state[state.BUILDER_NOTICE] = job_id


def on_preflight(first: Mapping[str, Any]) -> None:
    """Pre-flight's callback: :func:`app.sidebar.preflight_panel.on_preflight` on the form's
    values; any errors are said to be Pre-flight's. A pass whose longest call is estimated
    over :data:`~app.services.call_time.ASK_ABOVE_CALL_S` is asked about first, as Run asks
    (issue 37: a pass of n=40000 on the cpu backend ran calls of about 11 h each)."""
    values = form_values(first)
    st.session_state[state.BUILDER_CHECKED_BY] = BUTTONS[1]
    if preflight_asks(values):
        return
    preflight_panel.on_preflight(values, check)


def preflight_asks(values: Mapping[str, Any]) -> bool:
    """Whether Pre-flight's :func:`~app.services.call_time.call_check` question stands for
    ``values`` (kept for :func:`render_question`; a double click's second click keeps it),
    False where it was answered (Run anyway, Pre-flight again) or none is asked."""
    spec, _ = check(values)
    asked = st.session_state.pop(state.BUILDER_CONFIRM, None)
    if spec is None:
        return False
    same = asked is not None and asked[0] == spec.spec_hash() and asked[3] == BUTTONS[1]
    if same and answers(asked):
        return False
    if same:  # a double click's second click
        st.session_state[state.BUILDER_CONFIRM] = asked
        return True
    question, _ = jobs.call_check(spec)
    if question is None:
        return False
    st.session_state[state.BUILDER_ERRORS] = []
    st.session_state[state.BUILDER_CHECKED] = values
    st.session_state[state.BUILDER_CONFIRM] = (spec.spec_hash(),
                                               f"{question} {PREFLIGHT_ANSWERS}",
                                               time.monotonic(), BUTTONS[1], None)
    return True


def submit_error(exc: OSError) -> spec_schema.FieldError:
    """The message for a job that could not be stored: ``disk_full`` with the fix on a full
    file system, else the OS error naming the results directory."""
    where = str(settings.results_dir())
    known = classify_known(exc, where)
    if known is not None:
        return spec_schema.FieldError(known.kind, str(known), known.hint)
    return spec_schema.FieldError("results_dir", f"cannot store the job in {where}: {exc}",
                                  "give a writable directory with --results")


def unrated_note() -> str | None:
    """The note Run left for the job it queued last that no finished job gives a rate for its
    longest call, so its time is unknown (:func:`app.services.call_time.call_check`: a fresh
    store's n=40000 on the cpu backend, about 11 h a call, was queued without a word), while
    that job is queued or running in this server's executors (a cluster sweep's included);
    None otherwise. There is no question to ask without a time, and a rate is not invented.

    The note is drawn with the form, not with the job panel, whose fragment reruns the app
    when a job the page named moved on (:func:`app.ui.job_status.page_behind`): the note
    names its job so (:func:`app.ui.job_status.named`), and goes on the panel's first run
    after the job ended, where it stood until the form was drawn again while the page showed
    another job and another job was queued (issue 37)."""
    said = st.session_state.get(state.BUILDER_NOTICE_NOTE)
    if said is None or said[0] != st.session_state.get(state.BUILDER_NOTICE):
        return None
    job = job_status.jobs_here().get(said[0])  # the run's snapshot, as the panel's
    if job is None or not job.active:
        return None
    job_status.named(job)
    return str(said[1])


def render_job_builder(best_backend: str) -> dict[str, Any]:
    """Draw the form (defaults: ``best_backend``, matmul, its sizes); returns :func:`form_values`.

    The kernel, backend and metric preset choices sit outside the form: changing them reruns
    the app so the size fields follow the first kernel's parameters (and the cpu backend's
    sizes), and the Options say at once what the chosen backend does not send. Pairs of short
    fields share a row so that the Run button and the job panel stay above the fold at 1400x900.
    """
    catalog, load_errors = cached.kernel_catalog()
    own = form_defaults(best_backend, catalog)
    from_url = url_values(catalog, own["kernels"][0])
    first = {**own, **{f: v for f, v in from_url.items() if f in FIELDS}}
    annotations = sorted({a for info in catalog.values() for a in info.annotations})
    kernels = st.multiselect(LABELS["kernels"], list(catalog), default=first["kernels"],
                             key=k("kernels"),
                             format_func=lambda kid: f"{kid} · {catalog[kid].title}"
                             if kid in catalog else kid)
    info = catalog.get(kernels[0]) if kernels else None
    if not kernels:  # the box's red edge alone said nothing (session 26's fresh user)
        st.caption(NO_KERNEL)
    if mixed := mixed_parameters(kernels, catalog):
        st.error(esc(mixed), icon=":material/error:")
    # outside the form too: a backend chosen reruns the app, so the size fields (a cpu
    # kernel's own sizes) and the fields a backend does not send (greyed out, the Options'
    # note: GPU options on the host, torch threads on a GPU) follow it at once, not after Run
    # or Pre-flight (a fresh user's find)
    left, right = st.columns(2)
    _select(left, LABELS["backend"], B.NAMES, "backend", first, format_func=backend_label,
            help=backends_help())
    _select(right, LABELS["metric_preset"], spec_schema.METRIC_PRESETS, "metric_preset", first,
            help="timing = duration; bound = SM vs DRAM % of peak; memory = DRAM bytes")
    backend_caption(chosen_backend(first))
    # Run's question stands above the form: under Run it began at the sidebar's bottom edge
    # and was cut there at 1000x700 (session 22's fresh user)
    question = st.container()
    with st.form("builder-form", border=False, enter_to_submit=False):  # only Run submits
        st.multiselect(LABELS["annotations"], annotations, default=first["annotations"],
                       key=k("annotations"))
        _size_fields(info, first, from_url)
        _options_box(first)
        run, pre = st.columns(2)
        run.form_submit_button(BUTTONS[0], type="primary", on_click=on_submit, args=(first,),
                               key=k("submit"))
        pre.form_submit_button(BUTTONS[1], on_click=on_preflight, args=(first,),
                               key=k("preflight"), help=preflight_panel.HELP)
    if note := unrated_note():  # under Run, in the window (the panel's notice was below
        st.caption(esc(note))  # every job card: y 1426 px at 1000x700, session 25)
    for err in load_errors:
        st.warning(f"Kernel file **{esc(err['file'])}** did not load: {esc(err['error'])}",
                   icon=":material/warning:")
    values = form_values(first)
    check_url_values(values)
    mirror_to_url(values, own, info.parameters if info is not None
                  and len(info.parameters) > 1 else ())
    _errors(values, labels(info.parameters if info is not None else ("n",)), first, question)
    preflight_panel.render_preflight()
    return values


def mixed_parameters(kernels: Sequence[str], catalog: Mapping[str, Any]) -> str | None:
    """Said at once when the chosen kernels take different parameters (one job's configs give
    every kernel the same ones, and the size fields follow the first kernel's): which kernel
    takes which, and the fix; None when they agree (session 26's fresh user: matmul with
    batched_matmul showed only n, and Run then named the batch parameter missing)."""
    takes = {kid: tuple(catalog[kid].parameters) for kid in kernels if kid in catalog}
    if len(set(takes.values())) < 2:
        return None
    each = "; ".join(f"{kid} takes {', '.join(params)}" for kid, params in takes.items())
    return (f"These kernels take different parameters ({each}): one job profiles kernels "
            "of the same parameters. Profile them in separate jobs.")


def _select(where: Any, label: str, options: Iterable[str], field: str,
            first: Mapping[str, Any], **kwargs: Any) -> None:
    """A selectbox keyed ``builder-<field>`` whose own default is ``first[field]``, greyed out
    where the chosen backend does not send it (:func:`_sent_or_greyed`)."""
    choices = list(options)
    where.selectbox(label, choices, index=choices.index(first[field]), key=k(field),
                    **_sent_or_greyed(field, first, kwargs))


def chosen_backend(first: Mapping[str, Any]) -> str:
    """The backend chosen in the form: its box sits above the form, so a choice reruns the app
    and what follows from it (sizes, greyed fields, notes) follows at once."""
    return str(st.session_state.get(k("backend"), first["backend"]))


def _sent_or_greyed(field: str, first: Mapping[str, Any], kwargs: dict[str, Any]
                    ) -> dict[str, Any]:
    """A widget's ``kwargs``, disabled with the reason opening its help where the chosen
    backend does not send ``field`` (:func:`app.core.spec_form.unsent`; the Options say which
    at their top, :func:`unsent_note`). Its value is kept for another backend."""
    backend = chosen_backend(first)
    if field not in spec_form.unsent(backend):
        return kwargs
    why = (f"Greyed out: not sent with the {backend} backend, which "
           f"{spec_form.unsent_why(backend, field)}.")
    return {**kwargs, "disabled": True, "help": " ".join(filter(None, (why, kwargs.get("help"))))}


def unsent_note(backend: str) -> str:
    """The Options' note of the fields the ``backend`` does not send, greyed out (one rule both
    ways, :func:`app.core.spec_form.unsent`), short for the sidebar, with why
    (:func:`app.core.spec_form.unsent_why`): for one reason, a lone field by its label, several
    as the greyed-out fields with those drawn above the form (:data:`ABOVE_FORM`) named, ``The
    cpu backend runs on no GPU: the greyed-out fields (and Metrics above) are not sent with its
    jobs, nor the built-in (NVML) info collectors (your own are).``; for several, each reason
    with its fields: ``The cupti backend records its duration only (Metrics above, Extra
    metrics), does not apply Clock control or Replay mode and runs on a GPU (Torch threads):
    the greyed-out fields are not sent with its jobs.``"""
    off = [f for f in spec_form.unsent(backend) if f in FIELDS]
    by_why: dict[str, list[str]] = {}
    for field in off:
        by_why.setdefault(spec_form.unsent_why(backend, field), []).append(field)
    above = [LABELS[f] for f in off if f in ABOVE_FORM]
    if len(off) == 1:
        what = f"the greyed-out {LABELS[off[0]]} is"
    elif len(by_why) == 1:
        what = f"the greyed-out fields{f' (and {B.said(tuple(above))} above)' if above else ''} are"
    else:
        what = "the greyed-out fields are"
    whys = [why if len(by_why) == 1 and why != B.NOT_APPLIED else _why_of(why, fields)
            for why, fields in by_why.items()]
    nvml = ("" if B.described(backend).collectors
            else ", nor the built-in (NVML) info collectors (your own are)")
    return f"The {esc(backend)} backend {esc(B.said(tuple(whys)))}: {esc(what)} not sent with " \
        f"its jobs{esc(nvml)}."


def _why_of(why: str, fields: list[str]) -> str:
    """One reason of :func:`unsent_note` with the fields it greys out: ``does not apply Clock
    control or Replay mode``, ``runs on a GPU (Torch threads)``."""
    named = tuple(LABELS[f] + (" above" if f in ABOVE_FORM else "") for f in fields)
    if why == B.NOT_APPLIED:
        return f"does not apply {B.said(named, 'or')}"
    return f"{why} ({', '.join(named)})"


def _whole(where: Any, label: str, field: str, first: Mapping[str, Any], **kwargs: Any) -> None:
    """A whole-number field keyed ``builder-<field>``, typed as text; empty means the default,
    which the empty field shows: :func:`spec_form.whole_number` reads it and the spec check
    names what is wrong with it."""
    value, default = first[field], spec_schema.SPEC_DEFAULTS.get(field)
    kwargs["help"] = empty_help(kwargs.get("help"), default)
    where.text_input(label, value="" if value is None else str(value), key=k(field),
                     placeholder="nsight-python's default" if default is None
                     else f"{default} (default)", **_sent_or_greyed(field, first, kwargs))


def empty_help(text: str | None, default: object) -> str:
    """A whole-number field's help, ending with what leaving it empty means (the placeholder
    drawn in the empty box says it too): a fresh user emptied Runs and got 10 runs without a
    word of it where the field is explained."""
    said = ("nsight-python's default" if default is None else f"{default}, the default")
    return (f"{text.rstrip('.')}. " if text else "") + f"Empty: {said}."


def _size_fields(info: Any, first: Mapping[str, Any], from_url: Mapping[str, Any]) -> None:
    """One text field for a kernel with one parameter (``sizes``), else one per parameter and
    the product / zip choice; each starts at the URL's text, else the first picked kernel's
    declared sizes for the chosen backend, and follows the kernels (:func:`_follow_kernels`)."""
    params = info.parameters if info is not None else ("n",)
    shown = labels(params)
    configs = cfgs.declared_defaults(info, chosen_backend(first)) if info is not None else ()
    values, mode = config_grid.split(configs, params)  # the kernel's defaults, how they combine
    keys = {p: k("sizes") if len(params) <= 1 else k(PARAM_PREFIX + p) for p in params}
    url = {p: from_url.get("sizes" if len(params) <= 1 else PARAM_PREFIX + p) for p in params}
    offer = {p: ", ".join(str(v) for v in values[p]) if values[p] else str(first["sizes"])
             for p in params}
    # no kernel picked (on the way to another): the fields stay as they are until one is
    written = _follow_kernels({keys[p]: (p, offer[p]) for p in params}) \
        if info is not None else set()
    # a default beside a value written this run makes Streamlit log that it was set twice (and
    # the written one is shown): the default is left empty then
    start = {p: "" if keys[p] in written else text if isinstance(text := url[p], str)
             else offer[p] for p in params}
    help_ = sizes_help(info.id if info is not None else None,
                       st.session_state.get(k("kernels")) or first["kernels"])
    if len(params) <= 1:
        left, right = st.columns(2)
        left.text_input(shown["sizes"], value=start[params[0]], key=keys[params[0]], help=help_)
        _whole(right, shown["runs"], "runs", first, help=spec_form.RUNS_HELP)
        return
    _whole(st, shown["runs"], "runs", first, help=spec_form.RUNS_HELP)
    for p in params:
        st.text_input(shown[p], value=start[p], key=keys[p], help=help_)
    modes = list(config_grid.COMBINE)
    if written:  # fields that took the kernel's values take its way of combining them too
        st.session_state[k("combine")] = mode
    st.radio(LABELS["combine"], modes, index=0 if written else modes.index(mode),
             key=k("combine"), horizontal=True, format_func=config_grid.COMBINE.get)


def sizes_help(kernel: str | None, picked: Iterable[str]) -> str:
    """The size fields' help: where their first values come from (the first picked kernel,
    named, when several are picked: the sizes apply to all of them), when they change, and how
    to write values."""
    whose = (f"{kernel}'s" if kernel else "the kernel's") + " declared sizes"
    several = (f" ({kernel} is the first of the kernels picked; the sizes are run for each)"
               if kernel and len(list(picked)) > 1 else "")
    return (f"Starts at {whose} for the chosen backend{several}. When the kernels or the "
            "backend change, a field still holding the offered sizes takes the new ones; sizes "
            "of yours (sent with Run or Pre-flight, or given by a link) stay while the "
            "parameter is the same. "
            + config_grid.VALUES_HINT)


def _follow_kernels(offer: Mapping[str, tuple[str, str]]) -> set[str]:
    """Put the offered text (widget key -> (parameter, text)) into each size field that still
    holds what the form offered it last, or that held another parameter's sizes: a fresh user
    picked a kernel of their own and its field kept matmul's sizes. A field the user changed
    keeps their text (the form's text reaches the app with Run or Pre-flight only). Returns the
    keys written: through session state, so the browser shows the text too (a widget's own
    default is only read when it is first drawn)."""
    before = st.session_state.get(OFFERED, {})
    written = set()
    for key, (param, text) in offer.items():
        if key not in st.session_state:
            continue  # drawn now for the first time: starts at the link's text or the offer
        last = before.get(key)
        own = last is not None and last[0] == param and st.session_state[key] != last[1]
        if not own and st.session_state[key] != text:
            st.session_state[key] = text
            written.add(key)
    st.session_state[OFFERED] = {**before, **offer}
    return written


def _options_box(first: Mapping[str, Any]) -> None:
    """The Options expander, its widgets drawn once the user has opened it in this session
    (:func:`app.ui.panels.fold`, kept drawn from then on). Until then :func:`form_values`
    gives their ``first`` values, which is what they would show."""
    if (box := panels.fold("Options", k("options"), keep=True)) is not None:
        with box:
            _options(first)


def _options(first: Mapping[str, Any]) -> None:
    backend = chosen_backend(first)
    st.caption(unsent_note(backend))
    _select(st, LABELS["size_preset"], spec_form.SIZE_PRESETS, "size_preset", first,
            format_func=spec_form.SIZE_PRESETS.get, help=spec_form.SIZE_PRESETS_HELP)
    st.text_input(LABELS["extra_metrics"], value=first["extra_metrics"],
                  key=k("extra_metrics"), placeholder="e.g. l1tex__t_bytes.sum",
                  **_sent_or_greyed("extra_metrics", first, {}))
    left, right = st.columns(2)
    _select(left, LABELS["cache_control"], spec_schema.CACHE_CONTROLS, "cache_control", first)
    _select(right, LABELS["clock_control"], spec_schema.CLOCK_CONTROLS, "clock_control", first)
    left, right = st.columns(2)
    _select(left, LABELS["replay_mode"], spec_schema.REPLAY_MODES, "replay_mode", first,
            help="kernel: each kernel replayed; range: the whole annotated region "
                 "(Nsight Compute only)")
    _select(right, LABELS["thermal_mode"], spec_schema.THERMAL_MODES, "thermal_mode", first,
            help="auto: adaptive pauses; manual: fixed limits below; off: no pauses")
    # one a row: their empty box says "nsight-python's default", cut at half the sidebar's
    # width (a fresh user's find at 1000x700, session 22)
    for field in ("thermal_wait", "thermal_cont", "thermal_timeout"):
        _whole(st, LABELS[field], field, first, help=THERMAL_HELP[field])
    user = cached.user_collectors()
    st.multiselect(LABELS["collectors"], [*spec_schema.COLLECTORS, *user],
                   default=first["collectors"], key=k("collectors"),
                   format_func=lambda name: collector_label(name, user),
                   help=collectors_help(user))
    left, right = st.columns(2)
    _whole(left, LABELS["warmup"], "warmup", first)
    _whole(right, LABELS["gpu"], "gpu", first,
           help="0-based among the GPUs visible to the worker: under an inherited "
                "CUDA_VISIBLE_DEVICES (Slurm, a container) 0 is the first GPU it lists")
    _gpu_caption(spec_form.whole_number(st.session_state.get(k("gpu"), first["gpu"])), backend)
    _whole(st, LABELS["cpu_threads"], "cpu_threads", first,
           help=spec_form.cpu_threads_help(usable_cpus()))
    st.text_area(LABELS["ignore_kernels"], value=first["ignore_kernels"],
                 key=k("ignore_kernels"), height=68, placeholder="re:distribution_elementwise",
                 help=spec_form.IGNORE_HELP)
    st.text_input(LABELS["label"], value=first["label"], key=k("label"))
    left, right = st.columns(2)
    defaults = run_target.RunTarget().to_json()
    for i, (field, key) in enumerate(spec_form.RUN_TARGET_FIELDS.items()):
        (left, right)[i % 2].text_input(
            LABELS[field], value=first[field] or "", key=k(field),
            placeholder=f"{defaults[key]:g} (default)",
            help=empty_help(AUTO_HELP, f"{defaults[key]:g}"))


def _gpu_caption(index: object, backend: str) -> None:
    """Which physical GPU the index names, from the worker's environment report (on a GPU
    backend: the host's greys the index out, :func:`unsent_note`)."""
    if not B.on_gpu(backend):
        return
    gpu = spec_form.visible_gpu(cached.env_report(), index) if isinstance(index, int) else None
    if gpu:
        st.caption(f"GPU {index}: {esc(str(gpu.get('name') or '?'))} ({esc(str(gpu.get('uuid')))})")


def usable_cpus() -> int:
    """The CPUs this process may run on (the worker's lanes run on this host): the hint of the
    torch threads field."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this OS
        return os.cpu_count() or 1


def _errors(values: Mapping[str, Any], shown: Mapping[str, str],
            first: Mapping[str, Any], question: Any) -> None:
    """The last Run's errors; once the form's values differ from those they were found in
    (e.g. the kernel was chosen), they are checked again, so a corrected field's error goes.
    Without errors, the question Run asked (:func:`render_question`; ``first``: the form's
    defaults, for its Run anyway) into the container ``question``."""
    errors = st.session_state.get(state.BUILDER_ERRORS) or []
    by = st.session_state.get(state.BUILDER_CHECKED_BY, BUTTONS[0])
    if errors and st.session_state.get(state.BUILDER_CHECKED) != values:
        # by the rules of the button that found them (issue 37: Pre-flight's, whose pilot
        # checks a CUPTI twin, were checked again as Run's under "Found at the last Pre-flight")
        errors = (preflight_panel.preflight_check(values, check)[2] if by == BUTTONS[1]
                  else check(values)[1])
        st.session_state[state.BUILDER_ERRORS] = errors
        st.session_state[state.BUILDER_CHECKED] = values
    for err in errors:
        st.error(error_text(err, shown), icon=":material/error:")
    if errors:  # fields inside the form reach the server only with Run (st.form)
        st.caption(stale_errors_note(by))
    if not errors:
        render_question(first, question)

