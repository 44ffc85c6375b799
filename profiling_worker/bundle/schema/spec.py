"""The job spec: what the sidebar (or a user's JSON file) asks the worker to do.

A spec is a plain JSON object. :func:`validate_spec` turns it into a frozen :class:`JobSpec`
or raises :class:`SpecInvalid` listing every problem, each naming its field and the fix.
Stdlib only, so the worker can import it in a bare GPU environment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema import catalog_checks, columns, configs as cfgs, kernel_filter
from profiling_worker.bundle.schema import run_target as rt
from profiling_worker.bundle.schema.spec_errors import FieldError, SpecInvalid
from profiling_worker.bundle.schema.spec_file import read_spec_json
from profiling_worker.bundle.schema.thermal_limits import thermal_order
# Re-exported (the "as" form says so to mypy): declared with each view's metric set.
from profiling_worker.bundle.schema.view_metrics import METRIC_PRESETS as METRIC_PRESETS

Backend = B.Name  # the registry (bundle/schema/backends.py) owns the names
CacheControl = Literal["all", "none"]
ClockControl = Literal["none", "base"]
ReplayMode = Literal["kernel", "range"]
ThermalMode = Literal["auto", "manual", "off"]
BACKENDS: tuple[str, ...] = B.NAMES
#: manifest backend name of an imported job whose files do not tell which backend measured it
#: (e.g. nsight-python 1.1 CSVs holding only gpu__time_duration.sum: ncu or CUPTI).
BACKEND_UNKNOWN = B.UNKNOWN
CACHE_CONTROLS: tuple[str, ...] = get_args(CacheControl)
CLOCK_CONTROLS: tuple[str, ...] = get_args(ClockControl)
REPLAY_MODES: tuple[str, ...] = get_args(ReplayMode)
THERMAL_MODES: tuple[str, ...] = get_args(ThermalMode)
COLLECTORS = ("sm_clock", "mem_clock", "temperature", "power", "throttle_reasons", "energy")

# Nsight Compute names look like "<unit>__<counter>[.<rollup>[.<submetric>...]]".
_METRIC_RE = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")
_SET_RE = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")  # ncu set identifiers: basic, detailed, full ...
_MAX_CONFIGS = 4096
_MAX_RUNS = 10_000
#: The most torch intra-op threads a cpu job may ask for (``cpu_threads``).
MAX_CPU_THREADS = 256


@dataclass(frozen=True)
class JobSpec:
    """A validated job. Field names are the JSON keys of ``spec.json``."""

    kernels: tuple[str, ...]
    """Catalog kernel ids (``matmul``, ``vector_add`` ...) or user kernel ids."""
    configs: tuple[Mapping[str, Any], ...]
    """One mapping per config: parameter name -> int, float or str (a size is an int > 0)."""
    runs: int = 10
    """Repetitions per config (nsight-python ``runs``), >= 1; with ``run_target`` (spec
    ``"runs": "auto"``) the most a config may get (``run_target.max_runs``)."""
    metrics: tuple[str, ...] = (columns.GPU_TIME,)
    """Nsight Compute metric names. The cpu backend records only host wall-clock time."""
    backend: Backend = B.DEFAULT
    """``ncu`` (Nsight Compute), ``cupti`` (durations only) or ``cpu`` (host timer, no GPU)."""
    annotations: tuple[str, ...] | None = None
    """Subset of the kernels' annotations (regions) to run; None = all."""
    cache_control: CacheControl = "all"
    """nsight-python ``cache_control``: ``all`` flushes the caches before every profiled kernel
    (cold L2; the CUPTI backend flushes the L2 before each region), ``none`` leaves them warm."""
    clock_control: ClockControl = "none"
    """nsight-python ``clock_control``: ``none`` leaves the GPU clocks as they are, ``base``
    locks them to base clock during profiling (needs the right to change clocks)."""
    replay_mode: ReplayMode = "kernel"
    """nsight-python ``replay_mode``: ``kernel`` replays each kernel, ``range`` the annotated
    region as a whole."""
    thermal_mode: ThermalMode = "auto"
    """nsight-python 1.1 thermal control before each run: ``auto`` adaptive pauses, ``manual``
    the fixed limits below, ``off`` no pauses."""
    thermal_wait: int | None = None
    """Pause when the GPU is this many °C or less from its thermal limit (1-100);
    None = nsight-python's default (10)."""
    thermal_cont: int | None = None
    """Resume when the headroom is back to this many °C (1-100, above thermal_wait);
    None = nsight-python's default (20)."""
    thermal_timeout: int | None = None
    """Longest pause in s (1-3600): manual mode fails after it, auto lowers the resume point;
    None = nsight-python's default (180)."""
    collectors: tuple[str, ...] = ()
    """Info collectors: the built-in NVML ones (:data:`COLLECTORS`, sampled before each run by
    nsight-python >= 1.1) and user collectors by name (user_collectors.py, any backend)."""
    warmup: int = 1
    """Calls of each config's body before profiling, outside any annotation."""
    gpu: int = 0
    """Index among the GPUs visible to the worker (an inherited CUDA_VISIBLE_DEVICES counts;
    gpu_select.py resolves it to a UUID)."""
    nvml_interval_ms: int = 50
    """Period of the worker's NVML sampler, in ms."""
    label: str = ""
    """Free text shown with the job (at most 200 characters); not part of the spec hash."""
    ignore_kernels: tuple[str, ...] = ()
    """Kernels left out of every value: exact names or ``re:<pattern>``
    (bundle/schema/kernel_filter.py)."""
    section_set: str | None = None
    """Nsight Compute section set added to the metrics (``ncu --set NAME``, e.g. ``full`` for a
    deep dive; ``ncu --list-sets`` names them); None = the metrics only. ncu backend only."""

    cpu_threads: int = 1
    """torch intra-op threads the cpu backend times with (``torch.set_num_threads`` in the
    worker for the timing loop, restored after), 1 to :data:`MAX_CPU_THREADS`. 1 by default: on
    a shared host, threads that meet at a barrier spin while a sibling waits for a CPU, and a
    64x64 matmul took milliseconds instead of microseconds (profiling_worker/backends/cpu.py).
    Other backends ignore it."""

    run_target: rt.RunTarget | None = None
    """``runs: "auto"``: the precision that stops a config's runs (bundle/schema/run_target.py)."""

    def to_json(self) -> dict[str, Any]:
        """The spec as a JSON-able dict that :func:`validate_spec` accepts back unchanged."""
        data = dataclasses.asdict(self)
        data["configs"] = [dict(c) for c in self.configs]
        if self.run_target is not None:
            data["runs"] = rt.AUTO
        return data

    def spec_hash(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of the spec, label excluded."""
        data = self.to_json()
        data.pop("label")
        for optional in (kernel_filter.FIELD, "section_set", rt.FIELD):
            if not data[optional]:
                data.pop(optional)  # older jobs keep their hash
        if self.backend != B.CPU:  # GPU jobs keep theirs; a cpu job's threads change its times
            data.pop("cpu_threads")
        blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The config parameter names, in the order of the first config."""
        return tuple(self.configs[0].keys())


#: Each field's default, from the JobSpec declaration (the one place a default is written).
SPEC_DEFAULTS: Mapping[str, Any] = {f.name: f.default for f in dataclasses.fields(JobSpec)
                                    if f.default is not dataclasses.MISSING}
_CHOICES = {"backend": BACKENDS, "cache_control": CACHE_CONTROLS,
            "clock_control": CLOCK_CONTROLS, "replay_mode": REPLAY_MODES,
            "thermal_mode": THERMAL_MODES}


def _choice(raw: Mapping[str, Any], name: str, errors: list[FieldError]) -> Any:
    """The value of the ``Literal`` field ``name``, or its default after recording the error."""
    options, default = _CHOICES[name], SPEC_DEFAULTS[name]
    value = raw.get(name, default)
    if value not in options:
        errors.append(FieldError(name, f"{value!r} is not one of {', '.join(options)}",
                                 f"set {name} to one of: {', '.join(options)}"))
        return default
    return str(value)


def typed_instead(value: Any, lo: int, hi: int) -> str:
    """``: type 1000`` for a value that is a whole number from ``lo`` to ``hi`` written another
    way (``'1e3'``, ``1000.0``, ``'2.0'``), so its error says what to type; "" otherwise (no
    number, a fraction, out of range: the error's range says it)."""
    if isinstance(value, bool) or not isinstance(value, (str, float)):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not (number.is_integer() and lo <= number <= hi):  # NaN and inf are not integers
        return ""
    return f": type {int(number)}"


def whole_number_error(value: Any, lo: int, hi: int, also: str = "") -> str | None:
    """Why ``value`` is not a whole number from ``lo`` to ``hi`` (None when it is one), in the
    one wording every range check uses: ``0 is out of range: give a whole number from 1 to
    256`` for a whole number too small or too large, ``'2.5' is not a whole number from 1 to
    256`` for anything else (with what to type where it is one written another way:
    :func:`typed_instead`). ``also``: another value the field takes (``, or "auto"``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{value!r} is not a whole number from {lo:,} to {hi:,}{also}" + typed_instead(
            value, lo, hi)
    if not lo <= value <= hi:  # the value as typed; the bounds with thousands separators
        return f"{value} is out of range: give a whole number from {lo:,} to {hi:,}{also}"
    return None


def _int(raw: Mapping[str, Any], name: str, lo: int, hi: int,
         errors: list[FieldError], auto: bool = False) -> int | None:
    """The whole-number field ``name`` from ``lo`` to ``hi``, or its default after recording
    the error; ``auto``: ``"auto"`` is allowed too (runs), and its error says so."""
    default: int | None = SPEC_DEFAULTS[name]
    value = raw.get(name)
    if value is None:  # absent or null (an empty form field): the declared default
        return default
    also = f', or "{rt.AUTO}"' if auto else ""
    wrong = whole_number_error(value, lo, hi, also)
    if wrong is None:
        return int(value)
    # the fix of a number written another way, or of one out of range, says the bounds
    how = ("set {} between" if isinstance(value, int) and not isinstance(value, bool)
           else "give {} as an integer between").format(name)
    errors.append(FieldError(name, wrong, f"{how} {lo:,} and {hi:,}{also}"))
    return default


def _gpu(raw: Mapping[str, Any], backend: str, errors: list[FieldError]) -> int:
    """The GPU index (0..63); a non-zero one on a backend that runs on no GPU is refused rather
    than silently not used (the cpu backend times the kernel on the host)."""
    gpu = _int(raw, "gpu", 0, 63, errors) or 0
    if gpu and backend in B.NAMES and not B.on_gpu(backend):
        errors.append(FieldError("gpu", f"the {backend} backend runs on no GPU, so GPU index "
                                 f"{gpu} would not be used", "leave the GPU index at 0, or "
                                 f"choose {' or '.join(B.GPU_NAMES)} to profile on GPU {gpu}"))
    return gpu


#: The fix of a wrong ``cpu_threads``: what the check allows, in its words.
CPU_THREADS_FIX = (f"give cpu_threads as the number of torch threads the cpu backend times "
                   f"with, from 1 (the default) to {MAX_CPU_THREADS}; more than the host's CPUs "
                   "are allowed, but the worker warns that threads waiting for a CPU inflate "
                   "the times")


def _cpu_threads(raw: Mapping[str, Any], errors: list[FieldError]) -> int:
    """The cpu backend's torch thread count: a whole number from 1 to :data:`MAX_CPU_THREADS`
    (absent or null: the default, 1)."""
    default: int = SPEC_DEFAULTS["cpu_threads"]
    value = raw.get("cpu_threads")
    if value is None:
        return default
    wrong = whole_number_error(value, 1, MAX_CPU_THREADS)
    if wrong is not None:
        # the bound is MAX_CPU_THREADS, not the host's CPUs: a spec may run on another host
        # (a Slurm node), and the worker warns of more threads than its host's CPUs
        errors.append(FieldError("cpu_threads", wrong, CPU_THREADS_FIX))
        return default
    return int(value)


def _str_list(raw: Mapping[str, Any], name: str, errors: list[FieldError],
              required: bool) -> tuple[str, ...]:
    value = raw.get(name, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        errors.append(FieldError(name, "must be a list of strings", f"give {name} as a list"))
        return ()
    cleaned = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
    if required and not cleaned:
        noun = name.removesuffix("s")  # the required lists: kernels, annotations
        errors.append(FieldError(name, f"no {noun} chosen", f"choose at least one {noun}"))
    return cleaned


def _configs(raw: Mapping[str, Any], errors: list[FieldError],
             defaults: tuple[dict[str, Any], ...] = (),
             kernels_known: bool = True) -> tuple[dict[str, Any], ...]:
    """The configs, or ``defaults`` (the kernels' declared ones) when the spec gives none.
    ``kernels_known`` False (no kernel chosen, or one the catalog lacks: that error is said):
    no or empty configs are not refused as well, a knock-on (the sizes, their presets and
    defaults all follow the kernels)."""
    value = raw.get("configs")
    if value is None and defaults:
        return defaults
    if not value and not kernels_known:
        return ()
    if not isinstance(value, (list, tuple)) or not value:
        errors.append(FieldError("configs", "no configs (sizes) given",
                                 "give at least one size, e.g. 1024, 2048"))
        return ()
    if len(value) > _MAX_CONFIGS:
        errors.append(FieldError("configs", f"{len(value):,} configs is more than {_MAX_CONFIGS:,}",
                                 "split the sweep into several jobs"))
        return ()
    out: list[dict[str, Any]] = []
    for i, cfg in enumerate(value):
        if not isinstance(cfg, Mapping) or not cfg:
            errors.append(FieldError(f"configs[{i}]", "is not a mapping of parameter -> value",
                                     'write each config as {"n": 1024}'))
            continue
        for key, v in cfg.items():
            if not isinstance(key, str) or not key.isidentifier() or key in columns.RESERVED:
                errors.append(FieldError(f"configs[{i}]", f"parameter name {key!r} is not allowed",
                                         "use a Python identifier that is not a column name"))
            elif not cfgs.value_ok(v):
                errors.append(FieldError(f"configs[{i}].{key}", *cfgs.value_problem(v)))
        out.append(dict(cfg))
    if out and any(list(c) != list(out[0]) for c in out):
        errors.append(FieldError("configs", "configs name different parameters",
                                 f"give every config the parameters {list(out[0])}"))
    for i, first in cfgs.duplicates(out):
        same = f" (the same values as {out[i]})" if repr(out[i]) != repr(out[first]) else ""
        errors.append(FieldError(f"configs[{i}]", f"repeats configs[{first}] {out[first]}{same}",
                                 "give each config once (runs sets the repetitions); "
                                 f"remove configs[{i}]"))
    return tuple(out)


#: What tells metric names apart (the form's Extra metrics; a spec's list, one a string)
METRIC_SEPARATOR = "names are separated by commas"


def separator_note(bad: Sequence[str]) -> str:
    """`` (names are separated by commas, not ';')`` where an unknown metric name holds a
    character no metric name has (``a.sum;`` of "a.sum; b", read as one name, issue 37); ""
    otherwise."""
    odd = sorted({ch for name in bad for ch in name if not (ch.isalnum() or ch in "_.")})
    return f" ({METRIC_SEPARATOR}, not {' or '.join(repr(ch) for ch in odd)})" if odd else ""


def _metrics(raw: Mapping[str, Any], backend: str, errors: list[FieldError]) -> tuple[str, ...]:
    metrics = _str_list(raw, "metrics", errors, required=False) or (columns.GPU_TIME,)
    bad = [m for m in metrics if not _METRIC_RE.match(m) and m not in columns.DURATION_METRICS]
    if bad:
        errors.append(FieldError("metrics", f"unknown metric name(s): {', '.join(bad)}"
                                 f"{separator_note(bad)}",
                                 "use Nsight Compute names such as gpu__time_duration.sum "
                                 "(list them with `ncu --query-metrics`)"))
    caps = B.get(backend) if backend in B.NAMES else None  # else: _choice's error
    if caps is None or caps.any_metric:
        return metrics
    if not caps.on_gpu:
        # The host timer measures wall-clock time and nothing else; say so rather than pretend.
        return (caps.duration_metric,)
    # A GPU backend that times and counts nothing else: the kernel duration asked for (the
    # default) is its own duration metric (the events backend's region time has its own name).
    if set(metrics) <= {caps.duration_metric, columns.GPU_TIME}:
        return (caps.duration_metric,)
    errors.append(FieldError("metrics", f"the {caps.name.upper()} backend measures durations "
                             f"only ({caps.measures})",
                             f"use only {caps.duration_metric}, or the ncu backend"))
    return metrics


def validate_spec(raw: Mapping[str, Any], known_kernels: Mapping[str, Any] | None = None,
                  memory_bytes: float | None = None, memory_of: str = "the device",
                  known_collectors: Collection[str] | None = None) -> JobSpec:
    """Check a raw spec and return a :class:`JobSpec`.

    Args:
        raw: the JSON object (dict) from the sidebar or ``spec.json``.
        known_kernels: kernel id -> object with ``parameters`` (tuple of names),
            ``annotations`` (tuple of names) and optionally ``parameter_kinds``, declared
            default configs, a ``bytes(annotation, config)`` and a ``memory(annotations,
            config)`` formula; None skips the catalog checks. A spec without ``configs`` takes
            the kernels' declared defaults.
        memory_bytes: memory of the GPU (or of the host for the cpu backend), in bytes; a config
            whose kernels need more at once (the chosen annotations' inputs, by their
            ``memory`` formulas, else their ``bytes``: :mod:`.memory_need`) is refused. None
            skips that check.
        memory_of: what ``memory_bytes`` is, for the message (``NVIDIA H200``, ``the host``).
        known_collectors: the names of the user info collectors (user files); None accepts any
            name that can be a Python function's (the worker checks it against its files).

    Returns:
        The validated, frozen spec. A backend that measures only its duration gets that one
        metric: ``(host__time_duration.sum,)`` for ``cpu``, ``(events__time_duration.sum,)``
        for ``events`` (a request of ``gpu__time_duration.sum`` included).

    Raises:
        SpecInvalid: with one :class:`FieldError` per problem (field name, message, fix).
    """
    if not isinstance(raw, Mapping):
        raise SpecInvalid([FieldError("spec", "is not a JSON object", "pass a mapping")])
    errors: list[FieldError] = []
    backend = _choice(raw, "backend", errors)
    kernels = _str_list(raw, "kernels", errors, required=True)
    defaults = (catalog_checks.defaults(kernels, known_kernels, backend, errors)
                if raw.get("configs") is None else ())
    configs = _configs(raw, errors, defaults, kernels_known=bool(kernels) and (
        known_kernels is None or all(k in known_kernels for k in kernels)))
    annotations = raw.get("annotations")
    if annotations is not None:
        annotations = _str_list(raw, "annotations", errors, required=True)
    if known_kernels is not None:
        catalog_checks.check_catalog(kernels, configs, annotations, known_kernels, errors)
        catalog_checks.check_sizes(tuple(k for k in kernels if k in known_kernels), configs,
                                   known_kernels, errors)
        if memory_bytes and not errors:
            catalog_checks.check_memory(kernels, configs, known_kernels, memory_bytes, memory_of,
                                        errors, annotations)
    target = rt.parse(raw, backend, errors)
    spec = JobSpec(
        kernels=kernels,
        configs=configs,
        runs=(target.max_runs if target else 1 if raw.get("runs") == rt.AUTO  # said by parse
              else _int(raw, "runs", 1, _MAX_RUNS, errors, auto=backend in B.AUTO_NAMES) or 1),
        metrics=_metrics(raw, backend, errors),
        backend=backend,
        annotations=annotations,
        cache_control=_choice(raw, "cache_control", errors),
        clock_control=_choice(raw, "clock_control", errors),
        replay_mode=_choice(raw, "replay_mode", errors),
        thermal_mode=_choice(raw, "thermal_mode", errors),
        thermal_wait=_int(raw, "thermal_wait", 1, 100, errors),
        thermal_cont=_int(raw, "thermal_cont", 1, 100, errors),
        thermal_timeout=_int(raw, "thermal_timeout", 1, 3600, errors),
        collectors=_collectors(raw, errors, known_collectors),
        warmup=_int(raw, "warmup", 0, 100, errors) or 0,
        gpu=_gpu(raw, backend, errors),
        nvml_interval_ms=_int(raw, "nvml_interval_ms", 5, 10_000, errors)
        or SPEC_DEFAULTS["nvml_interval_ms"],
        label=str(raw.get("label", ""))[:200],
        ignore_kernels=_ignore_kernels(raw, errors),
        section_set=_section_set(raw, backend, errors),
        cpu_threads=_cpu_threads(raw, errors),
        run_target=target,
    )
    errors += thermal_order(spec.thermal_wait, spec.thermal_cont)
    unknown = set(raw) - {f.name for f in dataclasses.fields(JobSpec)}
    if unknown:
        errors.append(FieldError(", ".join(sorted(unknown)), "unknown field(s)",
                                 "remove them; see the JobSpec fields"))
    if errors:
        raise SpecInvalid(errors)
    return spec


def _collectors(raw: Mapping[str, Any], errors: list[FieldError],
                known: Collection[str] | None) -> tuple[str, ...]:
    """Built-in collector names and user collectors' (``known``; None: any identifier)."""
    collectors = _str_list(raw, "collectors", errors, required=False)

    def ok(name: str) -> bool:
        return name in COLLECTORS or (name.isidentifier() if known is None else name in known)

    bad = [c for c in collectors if not ok(c)]
    if bad:
        user = f"; user collectors: {', '.join(sorted(known))}" if known else ""
        errors.append(FieldError("collectors", f"unknown collector(s): {', '.join(bad)}",
                                 f"choose from {', '.join(COLLECTORS)}{user}"))
    return tuple(c for c in collectors if ok(c))


def _ignore_kernels(raw: Mapping[str, Any], errors: list[FieldError]) -> tuple[str, ...]:
    entries = _str_list(raw, kernel_filter.FIELD, errors, required=False)
    for i, entry in enumerate(entries):
        if problem := kernel_filter.entry_problem(entry):
            errors.append(FieldError(f"{kernel_filter.FIELD}[{i}]", problem, kernel_filter.HINT))
    return entries


def _section_set(raw: Mapping[str, Any], backend: str, errors: list[FieldError]) -> str | None:
    value = raw.get("section_set")
    if value is None:
        return None
    if not isinstance(value, str) or not _SET_RE.match(value):
        errors.append(FieldError("section_set", f"{value!r} is not a section set name",
                                 "give a name `ncu --list-sets` prints, e.g. full"))
        return None
    if backend in B.NAMES and not B.get(backend).section_sets:
        errors.append(FieldError("section_set", "sections are Nsight Compute's",
                                 "use the ncu backend, or leave section_set out"))
        return None
    return value


def check_fits(spec: JobSpec, known_kernels: Mapping[str, Any], memory_bytes: float | None,
               memory_of: str) -> None:
    """The memory check of :func:`validate_spec` on a spec already validated, once the device
    (``memory_bytes`` of ``memory_of``) is known: no second validation of the whole spec.

    Raises:
        SpecInvalid: a config whose kernels need more than ``memory_bytes`` at once for the
            spec's annotations (:mod:`.memory_need`), or whose formula fails (one
            :class:`FieldError` on ``configs[i]`` each). None or 0 skips the check.
    """
    errors: list[FieldError] = []
    if memory_bytes:
        catalog_checks.check_memory(spec.kernels, spec.configs, known_kernels, memory_bytes,
                                    memory_of, errors, spec.annotations)
    if errors:
        raise SpecInvalid(errors)


def load_spec(path: str, known_kernels: Mapping[str, Any] | None = None) -> JobSpec:
    """Read (:func:`read_spec_json`) and validate a ``spec.json`` file.

    Raises:
        SpecInvalid: the file is not JSON or the spec is invalid.
    """
    return validate_spec(read_spec_json(path), known_kernels)


__all__ = ["JobSpec", "FieldError", "SpecInvalid", "validate_spec", "check_fits", "load_spec",
           "METRIC_PRESETS", "SPEC_DEFAULTS", "BACKENDS", "BACKEND_UNKNOWN", "COLLECTORS"]
