"""What a bundle's durations depend on besides the kernel under test, and where two bundles
differ in it: backend, the run options in force (cache and clock control, replay mode, thermal
control: ``schema.backends.OPTIONS``; as recorded, not as the spec asked: the L2 flush as the
backend did it, ``schema.plausibility.l2_state``, and an option the backend ignores is not held
against the pair), GPU model
and maximum clocks, driver, a cpu job's host CPU (its model and architecture, manifest
``environment.cpu``; a bundle recorded before the worker wrote the model is compared by the
architecture its ``environment.platform`` names: :func:`cpu_architecture`) and torch threads (as
the worker recorded them: 1 thread
and 2 time a small matmul microseconds vs milliseconds apart on a busy host), the versions of
the profiling tools its backend uses
(``Backend.tools``, bundle/schema/tools.py: nsight-python; ncu for ``ncu``, cupti-python for
``cupti``) and, under Nsight Compute, the metric set. Two bundles
that differ in any of these are **not comparable**: a changed duration could come from the
measurement, not from the kernel (e.g. ncu's serialised replay vs CUPTI's activity records
measure the same matmul up to several % apart). A bundle not ``done``, one its import marked
``partial`` (a report cut short), or a cpu job timed on a contended CPU (its threads waited for
a CPU past the backend's threshold: its host wall-clock times hold that wait) is never
comparable.

**Metric set** (rule of issue 21): Nsight Compute splits the requested metrics (and a
``section_set``) into replay passes, one kernel execution each, with caches flushed and memory
restored between them; another list regroups the counters, changes the number of passes (9 vs
13 for the bundled h200-ncu-matmul-sweep vs h200-ncu-roofline, 6 vs 17 metrics) and so what
the GPU did just before the pass that timed the kernel, and SASS metrics patch the kernel in
their pass. The two bundled jobs differ by up to 3 % on the same matmuls, which these bundles
cannot split between the metric set and the day. So under ncu a different metric set is not
comparable; CUPTI and the cpu backend record durations only, so their metric list never counts.

The kernel's own software (torch, Triton, the kernel file) is deliberately not compared: that is
what a CI candidate changes. Nor is the host of a GPU job: its durations are the GPU's (a
different host with the same GPU model, clocks and driver is comparable).
"""

from __future__ import annotations

import enum
from collections.abc import Collection
import re
from dataclasses import dataclass
from typing import Any

from profiling_worker.bundle.schema import backends as B, tools as T
from profiling_worker.bundle.schema.bundle_spec import PartialSpec, backend_of, manifest_spec
from profiling_worker.bundle.schema.manifest import JobStatus, job_gpu
from profiling_worker.bundle.schema.plausibility import L2_FLUSHED, l2_state
from profiling_worker.bundle.schema.spec import JobSpec

#: The key under which :func:`context_differences` reports a different metric set (ncu).
METRIC_SET = "metrics"
#: The manifest key an import sets when the bundle holds only part of the job
#: (profiling_worker/importing/assemble.py's PARTIAL_KEY; not imported: the gate stays light).
PARTIAL = "partial"

#: The context field of a cpu job's host CPU model: compared only where both bundles record it
#: (older bundles do not: their architecture, from the platform string, still is).
CPU_MODEL = "cpu_model"
#: Context field -> what it is, in words (the reason names it); the tool versions are those of
#: :mod:`~profiling_worker.bundle.schema.tools`, keyed as in the manifest's ``environment``.
FIELDS: dict[str, str] = {
    "status": "job status",
    "backend": "backend",
    "cache_control": "cache control",
    "clock_control": "clock control",
    "replay_mode": "replay mode",
    "thermal_mode": "thermal control",
    "gpu": "GPU model",
    "max_sm_clock_mhz": "max SM clock (MHz)",
    "max_mem_clock_mhz": "max memory clock (MHz)",
    "driver": "driver",
    CPU_MODEL: "host CPU model (cpu backend)",
    "cpu_architecture": "host CPU architecture (cpu backend)",
    B.CPU_THREADS: "torch threads (cpu backend)",
    **{tool.key: f"{tool.words} version" for tool in T.ALL},
}


def measurement_context(manifest: dict[str, Any]) -> dict[str, str | None]:
    """The fields of :data:`FIELDS` for one bundle, as strings (None: the bundle does not say).

    Args:
        manifest: the bundle's ``manifest.json`` (its ``spec``, ``backend``, ``environment``).
    """
    spec = manifest_spec(manifest)
    env = manifest.get("environment") or {}
    backend = backend_of(manifest, spec)
    gpu = job_gpu(manifest) if B.on_gpu(backend) else {}
    gpu_name = (manifest.get("gpu") or {}).get("name") or gpu.get("name")
    used = B.tools(backend)
    options = {k: _option(spec, k) for k in B.OPTIONS}  # each spec holds all (defaults)
    options.update({k: v for k, v in IGNORED_IN_FORCE.items()
                    if k in _not_in_force(manifest) and options[k] is not None})
    if options["cache_control"] is not None and B.on_gpu(backend):
        options["cache_control"] = _cache_in_force(manifest, options["cache_control"])
    raw = {
        "status": manifest.get("status"),
        "backend": backend,
        **options,
        "gpu": gpu_name if B.on_gpu(backend) else "host CPU",
        "max_sm_clock_mhz": gpu.get("max_sm_clock_mhz"),
        "max_mem_clock_mhz": gpu.get("max_mem_clock_mhz"),
        "driver": gpu.get("driver"),
        **({CPU_MODEL: None, "cpu_architecture": None} if B.on_gpu(backend) else {
            CPU_MODEL: _host_cpu(env).get("model"), "cpu_architecture": cpu_architecture(env)}),
        B.CPU_THREADS: _cpu_threads(manifest, backend),
        **{tool.key: tool.version(env) if tool in used else None for tool in T.ALL},
    }
    return {k: None if v in (None, "") else str(v) for k, v in raw.items()}


def _host_cpu(env: dict[str, Any]) -> dict[str, Any]:
    """The environment's ``cpu`` entry (:func:`profiling_worker.probes.environment.probe_cpu`;
    empty in a bundle recorded before the worker wrote it)."""
    cpu = env.get("cpu")
    return cpu if isinstance(cpu, dict) else {}


#: Architecture names as Python's ``platform.machine()`` gives them, each with the name it is
#: compared under (one architecture, two spellings: arm64 on macOS is Linux's aarch64).
ARCHITECTURES = {"x86_64": "x86_64", "amd64": "x86_64", "i386": "i386", "i686": "i686",
                 "aarch64": "aarch64", "arm64": "aarch64", "armv7l": "armv7l",
                 "ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64"}


def cpu_architecture(env: dict[str, Any]) -> str | None:
    """The host CPU's architecture of a manifest's ``environment``: ``cpu.machine``, else the
    machine part of ``platform`` (``"Linux-5.4-aarch64"`` -> ``"aarch64"``,
    ``"macOS-14.2-arm64-arm-64bit"`` -> ``"aarch64"``), named as in :data:`ARCHITECTURES`;
    None where neither says."""
    said = [str(_host_cpu(env).get("machine") or ""),
            *re.split(r"[-\s]", str(env.get("platform") or "").split("-with-")[0])]
    return next((ARCHITECTURES[w.lower()] for w in said if w.lower() in ARCHITECTURES), None)


def _cpu_threads(manifest: dict[str, Any], backend: str | None) -> Any:
    """The torch threads a cpu job was timed with, as the worker recorded them
    (``backend.cpu_threads``); None for a GPU backend, and for a cpu job recorded before the
    worker set them (torch's default then), which the gate does not assume to match."""
    if B.on_gpu(backend):
        return None
    recorded = manifest.get("backend")
    return recorded.get(B.CPU_THREADS) if isinstance(recorded, dict) else None


def _option(spec: JobSpec | PartialSpec | None, key: str) -> Any:
    """A run option (a name in ``B.OPTIONS``) as compared: thermal control with its thresholds
    when any is set; None when the spec does not say."""
    if spec is None:
        return None
    value = getattr(spec, key)
    if key != "thermal_mode":
        return value
    limits = [f"{name} {limit}" for name, limit in (("wait", spec.thermal_wait),
              ("cont", spec.thermal_cont), ("timeout", spec.thermal_timeout)) if limit is not None]
    return f"{value} ({', '.join(limits)})" if value and limits else value


def _cache_in_force(manifest: dict[str, Any], asked: str) -> str:
    """The spec's cache control, with what was recorded where that differs
    (:func:`~profiling_worker.bundle.schema.plausibility.l2_state`): ``all`` from a CUPTI bundle
    recorded before the worker flushed the L2 reads ``"all (not in force: CUPTI backend,
    recorded without the L2 flush)"``, unlike a flushed ``all``."""
    state, why = l2_state(manifest)
    return f"{asked} (not in force: {why})" if asked == "all" and state != L2_FLUSHED else asked


def metric_set_difference(base: dict[str, Any], candidate: dict[str, Any]) -> str | None:
    """``"metric set (Nsight Compute replay passes): 6 vs 17 metrics, the candidate adds ..."``
    when two ncu bundles asked for different metrics or section sets, else None."""
    specs = [manifest_spec(m) for m in (base, candidate)]
    if not all(backend_of(m, s) == B.NCU for m, s in zip((base, candidate), specs)):
        return None
    sets = [set(s.metrics if s is not None else ()) for s in specs]
    section = [s.section_set if s is not None else None for s in specs]
    if sets[0] == sets[1] and section[0] == section[1]:
        return None
    said = [f"{len(sets[0])} vs {len(sets[1])} metrics"] if sets[0] != sets[1] else []
    for side, extra in (("candidate adds", sets[1] - sets[0]),
                        ("baseline adds", sets[0] - sets[1])):
        if extra:
            names = sorted(extra)
            said.append(f"the {side} {', '.join(names[:3])}"
                        + (f" and {len(names) - 3} more" if len(names) > 3 else ""))
    if section[0] != section[1]:
        said.append(f"section set {section[0] or 'none'} vs {section[1] or 'none'}")
    return "metric set (changes Nsight Compute's replay passes): " + "; ".join(said)


class DifferenceKind(enum.StrEnum):
    """Why a pair is not comparable, by kind: a recorded measurement condition differs (a field
    of :data:`FIELDS`, the metric set, the config parameters), a side's host was contended (its
    cpu times hold waiting for a CPU, even where both sides were measured alike), or a side's
    results are incomplete (not done, partial). :func:`headline` says each kind; a kind is
    one of these three, never a new string."""

    MEASURED = "measured"
    CONTENDED = "contended"
    INCOMPLETE = "incomplete"


MEASURED, CONTENDED, INCOMPLETE = (DifferenceKind.MEASURED, DifferenceKind.CONTENDED,
                                   DifferenceKind.INCOMPLETE)


@dataclass(frozen=True)
class Difference:
    """One reason two bundles cannot be judged against each other.

    Attributes:
        kind: a :class:`DifferenceKind`.
        text: the evidence: the recorded field and both sides' values, baseline first, e.g.
            ``"backend: ncu vs cupti"``.
        sides: the sides it is about (``("baseline", "candidate")`` for a field that differs).
    """

    kind: DifferenceKind
    text: str
    sides: tuple[str, ...] = ("baseline", "candidate")


def differences(base: dict[str, Any], candidate: dict[str, Any],
                ignore: Collection[str] = ()) -> list[Difference]:
    """Why two bundles' durations cannot be judged against each other (empty: they can).

    A field both bundles leave unsaid is not held against them; one side saying and the other
    not is a difference (a CI gate cannot assume the unsaid value), except a cpu job's host CPU
    model, which bundles recorded before the worker wrote it lack: there its architecture
    (:func:`cpu_architecture`, from the platform string) is what is compared. A bundle not
    ``done`` holds incomplete tables and is never comparable; nor is a cpu job timed on a
    contended CPU (:func:`contention_difference`).

    Args:
        base, candidate: the two bundles' manifests.
        ignore: keys of :data:`FIELDS` (and :data:`METRIC_SET`) left out (the backends page
            compares two backends on purpose, so it ignores ``backend``, the tools only one
            of them uses and the metric set).
    """
    ctx_b, ctx_c = measurement_context(base), measurement_context(candidate)
    ignored = {*ignore, *(k for k in {*_not_in_force(base), *_not_in_force(candidate)}
                          if k not in IGNORED_IN_FORCE),
               *((CPU_MODEL,) if ctx_b[CPU_MODEL] is None or ctx_c[CPU_MODEL] is None else ())}
    out = [_field_difference(k, ctx_b, ctx_c) for k in FIELDS
           if k not in ignored and ctx_b[k] != ctx_c[k]]
    metrics = None if METRIC_SET in ignore else metric_set_difference(base, candidate)
    out += [Difference(MEASURED, metrics)] if metrics else []
    for name, ctx, manifest in (("baseline", ctx_b, base), ("candidate", ctx_c, candidate)):
        if ctx["status"] != JobStatus.DONE.value and ctx_b["status"] == ctx_c["status"]:
            status = ctx["status"] or "of unknown status"
            out.append(Difference(INCOMPLETE, f"{name} job is {status}, not done", (name,)))
        if manifest.get(PARTIAL):
            out.append(Difference(INCOMPLETE, f"{name} bundle is partial "
                                              f"({'; '.join(map(str, manifest[PARTIAL]))})",
                                  (name,)))
    contended = contention_difference(base, candidate)
    return out + ([contended] if contended else [])


def _field_difference(key: str, ctx_b: dict[str, str | None], ctx_c: dict[str, str | None]
                      ) -> Difference:
    """The difference of one :data:`FIELDS` field, both values named (baseline first). A status
    that differs is an unfinished side, not a way of measuring: :data:`INCOMPLETE`, of the
    side not ``done`` (a done job against a cancelled one read "the two jobs were measured
    differently")."""
    text = f"{FIELDS[key]}: {ctx_b[key] or 'not recorded'} vs {ctx_c[key] or 'not recorded'}"
    if key != "status":
        return Difference(MEASURED, text)
    sides = tuple(name for name, ctx in (("baseline", ctx_b), ("candidate", ctx_c))
                  if ctx["status"] != JobStatus.DONE.value)
    return Difference(INCOMPLETE, text, sides or ("baseline", "candidate"))


def context_differences(base: dict[str, Any], candidate: dict[str, Any],
                        ignore: Collection[str] = ()) -> list[str]:
    """The evidence of :func:`differences`, one sentence each, e.g. ``"backend: ncu vs cupti"``
    (baseline first)."""
    return [d.text for d in differences(base, candidate, ignore)]


def headline(found: list[Difference]) -> str:
    """What makes the pair not comparable, in words, by the kinds of ``found`` (empty: "").

    Host contention is said as such, never as "measured differently": two cpu jobs of one spec
    on a busy host were measured alike, but each side's times hold waiting for a CPU."""
    said = []
    if any(d.kind == MEASURED for d in found):
        said.append("the two jobs were measured differently, so a difference may come from the "
                    "measurement, not the kernel")
    contended = {s for d in found if d.kind == CONTENDED for s in d.sides}
    if contended:
        who = "both jobs were" if len(contended) == 2 else f"the {contended.pop()} was"
        said.append(f"{who} timed on a contended CPU, so the host times include waiting for a "
                    "CPU, not only the kernel")
    incomplete = sorted({s for d in found if d.kind == INCOMPLETE for s in d.sides})
    if incomplete:
        said.append(f"the {' and the '.join(incomplete)} results are incomplete")
    return "; ".join(said)


def contention_difference(base: dict[str, Any], candidate: dict[str, Any]) -> Difference | None:
    """A :data:`CONTENDED` difference when either side is a cpu job whose backend warned of host
    contention (manifest ``backend.host_contention``, profiling_worker/backends/cpu.py), naming
    the recorded field with both sides' values, else None."""
    figures = [_contention(m) for m in (base, candidate)]
    sides = tuple(name for name, f in zip(("baseline", "candidate"), figures)
                  if f is not None and f.get("warning"))
    if not sides:
        return None
    values = [_waited(f) for f in figures]
    limits = sorted({float(x) for f in figures if f is not None
                     and isinstance(x := f.get("threshold"), (int, float))})
    threshold = f" ({', '.join(f'{x:g}' for x in limits)})" if limits else ""
    said = ("both sides" if len(sides) == 2 else f"the {sides[0]} only")
    return Difference(CONTENDED, f"host contention, {_FRACTION}: {values[0]} vs {values[1]}, "
                                 f"over the backend's threshold{threshold} on {said}", sides)


#: The recorded field a contention difference names, and its unit.
_FRACTION = ("backend.host_contention.waiting_fraction (time waited for a CPU as a multiple "
             "of the timing loop's elapsed time, summed over threads, so above 1 when several "
             "wait at once)")


def _contention(manifest: dict[str, Any]) -> dict[str, Any] | None:
    backend = manifest.get("backend")
    figures = backend.get("host_contention") if isinstance(backend, dict) else None
    return figures if isinstance(figures, dict) else None


def _waited(figures: dict[str, Any] | None) -> str:
    """One side's waiting fraction as shown (2 decimals, as :func:`B.waited_for_cpu`)."""
    if figures is None:
        return "not recorded"
    fraction = figures.get("waiting_fraction")
    if isinstance(fraction, (int, float)):
        return f"{fraction:,.2f}"
    return "not read (the host's load exceeded its CPUs)" if figures.get("warning") else (
        "not read")


#: What is in force for an option the backend ignores, where that is known: nothing locks the
#: clock (the GPU's own boost, as ncu's ``none``). A replay mode a backend ignores has no such
#: value (CUPTI does not replay): the backend, itself a context field, says it.
IGNORED_IN_FORCE = {"clock_control": "none"}


def _not_in_force(manifest: dict[str, Any]) -> list[str]:
    """The run options (``B.OPTIONS``) the bundle's backend does not apply (CUPTI takes no
    clock_control or replay_mode: "no meaning for CUPTI", nsight-python 1.1's
    nsight/analyze.py), so its spec's value is no measurement condition: a spec's ``base``
    locked nothing. The backend itself is a context field, so a pair on two backends still
    differs."""
    known = B.find(backend_of(manifest, manifest_spec(manifest)))
    return [] if known is None else [k for k in B.OPTIONS if k not in known.options]
