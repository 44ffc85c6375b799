"""Runs and configs of one region's launches when nothing recorded them (a plain ``ncu -o``
report, an ncu CSV export): issue 20's rules.

* **Runs.** A run of a region is one *stretch* of its launches: launches of the region with no
  launch of another region between them (:func:`stretches`). When a stretch launches the same
  kernel more than once, the file cannot tell runs from launches (one pass launching a GEMM twice
  reads like two runs of one launch). Then the stretch is the run when some stretches repeat
  (the same launches again: the region was run several times), else every launch (or every
  group of different kernels) is a run; either way a note names both readings with their mean
  duration (:func:`read_runs`).
* **Configs.** Runs with the same launches (kernel, grid, block of each) are one config, in the
  order first seen. Runs of one config whose *work* differs are split into configs
  (:func:`split_by_work`): instruction / operation counts or L1 / L2 bytes more than
  :data:`COUNTER_GAP` apart where the file holds them (counters equal for equal work), else
  durations more than :data:`DURATION_GAP` apart (far beyond the run-to-run spread of a few %;
  the 3 ``torch.randn`` sizes of one grid-stride kernel in case 11 are 2.3x and 3.2x apart).
  DRAM bytes are not used: they change with what the L2 cache holds.
* **Outliers** (:func:`outliers`): a run of a config whose duration lies more than
  :data:`DURATION_GAP` from every other run while more than half of the config's runs (at
  least :data:`SPREAD_RUNS`) lie together is an outlier of that config (a launch after an L2
  thrash, a clock dip), kept in it and named in a note, never a config of its own: durations
  alone split runs only into groups of two runs or more, or where no group holds most runs.
* **Launches of different grids are never one run**: a stretch that launches one kernel with
  different launch parameters is read as one run per launch (:func:`read_runs`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from profiling_worker.bundle.number_text import counted, fitting_time_unit, fmt
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import metrics as M

#: Counters that scale with a launch's work (per launch, summed over a run's launches).
WORK_COUNTERS = (M.FFMA, M.FADD, M.FMUL, M.DFMA, M.HFMA, M.TENSOR_FP16, M.TENSOR_BF16,
                 M.TENSOR_TF32, M.TENSOR_FP8, M.L1_BYTES, M.L2_BYTES,
                 M.SMSP_INST_EXECUTED, M.SM_INST_EXECUTED)
#: Runs of one config whose counters are more than this ratio apart did different work.
COUNTER_GAP = 1.05
#: Without counters: runs whose durations are more than this ratio apart did different work.
DURATION_GAP = 1.25
#: Runs a group needs before a duration outside it is called an outlier rather than a size.
SPREAD_RUNS = 3

#: Durations a note lists at most.
SHOWN = 12

Signature = tuple[Hashable, ...]


@dataclass
class Reading:
    """One region read: ``runs`` (the launches' positions in launch order, one list per run,
    in order), ``configs`` (the config of each run), ``notes`` (for the pages), ``outliers``
    (runs kept in their config though their duration lies outside its spread)."""

    runs: list[list[int]]
    configs: list[int]
    notes: list[str]
    outliers: int = 0


def stretches(regions: Sequence[Hashable]) -> list[tuple[Hashable, list[int]]]:
    """(region, positions) of every stretch of launches in launch order: consecutive launches
    of one region, cut where a launch of another region comes between."""
    out: list[tuple[Hashable, list[int]]] = []
    for i, region in enumerate(regions):
        if out and out[-1][0] == region:
            out[-1][1].append(i)
        else:
            out.append((region, [i]))
    return out


def _repeats_a_kernel(run: list[int], kernels: Sequence[Hashable]) -> bool:
    return len({kernels[i] for i in run}) < len(run)


def _units(stretch: list[int], kernels: Sequence[Hashable]) -> list[list[int]]:
    """A stretch cut into runs that launch each kernel at most once (the shorter reading)."""
    out: list[list[int]] = []
    for i in stretch:
        if not out or kernels[i] in {kernels[j] for j in out[-1]}:
            out.append([i])
        else:
            out[-1].append(i)
    return out


def _grid(sig: Hashable) -> str:
    """The grid of a (kernel, grid, block) signature ('' for another signature)."""
    return str(sig[1]) if isinstance(sig, tuple) and len(sig) > 1 else ""


def _other_parameters(stretch: list[int], i: int, kernels: Sequence[Hashable],
                      sigs: Sequence[Hashable]) -> bool:
    """True when the stretch launches ``i``'s kernel again with other launch parameters."""
    return any(kernels[j] == kernels[i] and sigs[j] != sigs[i] for j in stretch)


def _mean_run(runs: list[list[int]], durations: Sequence[float]) -> float:
    return float(np.mean([sum(durations[i] for i in run) for run in runs]))


def read_runs(region: str, own: list[list[int]], kernels: Sequence[Hashable],
              sigs: Sequence[Hashable], durations: Sequence[float]) -> tuple[list[list[int]], str]:
    """The runs of one region from its stretches ``own`` (module doc) and a note naming both
    readings when the file cannot tell runs from launches ('' when it can).

    Args:
        kernels, sigs, durations: per launch position: kernel name, (kernel, grid, block),
            gpu__time_duration.sum in ns (NaN when the file lacks it).
    """
    if not any(_repeats_a_kernel(s, kernels) for s in own):
        return own, ""
    short = [u for s in own for u in _units(s, kernels)]
    mixed = [i for s in own for i in s if _other_parameters(s, i, kernels, sigs)]
    if mixed:
        grids = sorted({g for i in mixed if (g := _grid(sigs[i]))})
        return short, (f"{region}: its stretches launch one kernel with different "
                       "launch parameters" + (f" (grids {', '.join(grids)})" if grids else "")
                       + f": read as {counted(len(short), 'run')} of one launch each, a config per "
                       "launch parameters; launches of different grids are never summed "
                       "into one run")
    counts = {tuple(sigs[i] for i in s) for s in own}
    stretch_is_run = len(counts) < len(own)  # some stretch repeats: the region ran again
    runs, other = (own, short) if stretch_is_run else (short, own)
    # the two readings' means in one time unit, the one that fits them (not "1,453,630 ns")
    means = {id(rs): _mean_run(rs, durations) if stretch_is_run else float("nan")  # else: mix
             for rs in (runs, other)}
    unit, size = fitting_time_unit(means.values())

    def described(rs: list[list[int]]) -> str:
        sizes = sorted({len(r) for r in rs})
        each = "one launch" if sizes == [1] else "/".join(map(str, sizes)) + " launches"
        mean = means[id(rs)]
        return (f"{len(rs)} run{'s' * (len(rs) != 1)} of {each}" +
                (f" (mean {fmt(mean / size)} {unit} a run)" if np.isfinite(mean) else ""))

    why = ("its launches come in stretches (no launch of another region between them) that "
           "launch the same kernel more than once, so the file cannot tell runs from launches")
    note = (f"{region}: {why}: read as {described(runs)}, "
            + ("a run being one stretch, as the stretches repeat" if stretch_is_run else
               "as no stretch repeats (each would be a config of one run)")
            + f"; the other reading is {described(other)}")
    return runs, note


def _clusters(values: np.ndarray, gap: float) -> np.ndarray | None:
    """Cluster id of each value: sorted values split where one is more than ``gap`` times the
    one before; None when all fall in one cluster or a value is missing."""
    if len(values) < 2 or not np.isfinite(values).all() or (values <= 0).any():
        return None
    order = np.argsort(values, kind="stable")
    cuts = np.r_[0, np.cumsum(values[order][1:] / values[order][:-1] > gap)]
    if cuts[-1] == 0:
        return None
    out = np.empty(len(values), dtype=np.int64)
    out[order] = cuts
    return out


def _main_group(found: np.ndarray) -> int | None:
    """The cluster holding more than half the runs and at least :data:`SPREAD_RUNS`, or None."""
    counts = np.bincount(found)
    main = int(np.argmax(counts))
    return main if counts[main] * 2 > len(found) and counts[main] >= SPREAD_RUNS else None


def _duration_groups(durations: np.ndarray) -> np.ndarray | None:
    """Work group of each run from durations alone (None: one work): clusters more than
    :data:`DURATION_GAP` apart, except lone runs beside a group holding most runs (outliers
    of that group, module doc)."""
    found = _clusters(durations, DURATION_GAP)
    if found is None:
        return None
    main = _main_group(found)
    if main is not None:
        found = np.where(np.bincount(found)[found] == 1, main, found)
    found = np.unique(found, return_inverse=True)[1].reshape(-1)
    return found if found.max() > 0 else None


def outliers(durations: Sequence[float] | np.ndarray) -> list[int]:
    """Positions of the runs of one config whose duration lies outside the spread of a group
    holding most of its runs (module doc); [] when no such group or a duration is missing.

    Args:
        durations: per run, gpu__time_duration.sum in ns.
    """
    found = _clusters(np.asarray(durations, dtype=float), DURATION_GAP)
    main = _main_group(found) if found is not None else None
    return [] if found is None or main is None else [i for i, c in enumerate(found) if c != main]


def split_by_work(run_work: dict[str, np.ndarray]) -> tuple[np.ndarray | None, str]:
    """Work cluster of each run of one config (None: one work) and which metric told them apart.

    Args:
        run_work: {metric: per-run sums over the run's launches}; counters of
            :data:`WORK_COUNTERS` and/or gpu__time_duration.sum (ns).
    """
    counters = _counters(run_work)
    if counters:  # counters hold the work; durations then vary with clocks only
        keys = [c for m, v in counters.items() if (c := _clusters(v, COUNTER_GAP)) is not None]
        if not keys:
            return None, ""
        told = [m for m, v in counters.items() if _clusters(v, COUNTER_GAP) is not None]
        joint = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1]
        return joint.reshape(-1), ", ".join(told) + f" more than {COUNTER_GAP - 1:.0%} apart"
    durations = run_work.get(C.GPU_TIME)
    found = _duration_groups(durations) if durations is not None else None
    if found is None:
        return None, ""
    return found, (f"{C.GPU_TIME} more than {DURATION_GAP - 1:.0%} apart, in groups of "
                   f"{SPREAD_RUNS - 1} runs or more or with no group holding most runs")


def _counters(run_work: Mapping[str, Sequence[float] | np.ndarray]) -> dict[str, np.ndarray]:
    """The work counters of :data:`WORK_COUNTERS` that hold a value."""
    return {m: np.asarray(v, dtype=float) for m, v in run_work.items()
            if m in WORK_COUNTERS and np.nansum(np.asarray(v, dtype=float)) > 0}


def evidence(work: Mapping[str, Sequence[float] | np.ndarray], shapes: bool = True) -> list[str]:
    """The columns that decide configs, in the order used: launch parameters (the kernel's
    name alone where the file gives no grid or block size: ``shapes=False``), then the work
    counters the file holds, else gpu__time_duration.sum (ns) with the spread test."""
    counters = sorted(_counters(work))
    return ["kernel, grid, block" if shapes else "kernel name (no grid or block in the file)",
            *(counters or ([C.GPU_TIME] if C.GPU_TIME in work else []))]


def _times(times: np.ndarray, unit: str | None = None, size: float = 1.0) -> str:
    """Durations (ns) read side by side, the first :data:`SHOWN`, in ``unit`` (of ``size`` ns;
    default: the one that fits them, :func:`fitting_time_unit`), 4 significant digits."""
    if unit is None:
        unit, size = fitting_time_unit(times)
    return (" / ".join(fmt(t / size) for t in times[:SHOWN])
            + (f" ... ({len(times)} runs)" if len(times) > SHOWN else "") + f" {unit}")


def _outlier_note(region: str, config: int, times: np.ndarray, out: list[int],
                  work: str) -> str:
    """The note on a config's outlier runs: their durations and the other runs' spread, in the
    one time unit that fits them all (:func:`fitting_time_unit`): "(1,454 µs) ... (19.87 -
    21.10 µs)" where it read "(1,453,630 ns) ... (19,872 - 21,104 ns)"."""
    inside = np.delete(times, out)
    unit, size = fitting_time_unit(times)
    return (f"{region}: {len(out)} of {counted(len(times), 'run')} of config {config} "
            f"({_times(times[out], unit, size)}) lie outside the other runs' spread "
            f"({fmt(inside.min() / size)} - {fmt(inside.max() / size)} {unit}) with the same "
            f"launch parameters and {work}: kept as outlier(s) of that config (in its mean), "
            "not a config of their own")


def configs_of(region: str, runs: list[list[int]], sigs: Sequence[Hashable],
               work: Mapping[str, Sequence[float] | np.ndarray]
               ) -> tuple[list[int], list[str], int]:
    """Config of each run (first seen first): the same launches, then split by work; outliers
    of each config named.

    Args:
        work: {metric: per launch position value}, the work metrics the file holds.
    Returns:
        (config per run, notes naming each config split by work and each outlier, the number
        of outlier runs).
    """
    keys: list[Signature] = [tuple(sigs[i] for i in run) for run in runs]
    group_of = {k: g for g, k in enumerate(dict.fromkeys(keys))}
    sub = [0] * len(runs)
    notes: list[str] = []
    per_run = {m: np.array([sum(float(v[i]) for i in run) for run in runs])
               for m, v in work.items()}
    for key, g in group_of.items():
        members = [r for r, k in enumerate(keys) if k == key]
        found, told = split_by_work({m: v[members] for m, v in per_run.items()})
        if found is None:
            continue
        for r, c in zip(members, found):
            sub[r] = int(c)
        times = per_run.get(C.GPU_TIME)
        shown = ("; durations " + _times(times[members])
                 if times is not None and np.isfinite(times[members]).all() else "")
        notes.append(f"{region}: {counted(len(members), 'run')} with the same launch parameters "
                     f"(kernel, grid, block) did different work ({told}, beyond the runs' "
                     f"spread){shown}: taken as {counted(int(found.max()) + 1, 'config')}, not "
                     "pooled; the file does not record the sizes, so config_index only numbers "
                     "them")
    final = {k: c for c, k in enumerate(dict.fromkeys(zip([group_of[k] for k in keys], sub)))}
    configs = [final[(group_of[k], s)] for k, s in zip(keys, sub)]
    counters = sorted(_counters(work))
    same = (f"equal work ({', '.join(counters)} within {COUNTER_GAP - 1:.0%})" if counters else
            "no work counter in the file to tell a size apart")
    count = 0
    if C.GPU_TIME in per_run:
        for c in sorted(set(configs)):
            members = [r for r, x in enumerate(configs) if x == c]
            out = outliers(per_run[C.GPU_TIME][members])
            if out:
                count += len(out)
                notes.append(_outlier_note(region, c, per_run[C.GPU_TIME][members], out, same))
    return configs, notes, count


def read_region(region: str, own: list[list[int]], kernels: Sequence[Hashable],
                sigs: Sequence[Hashable], work: Mapping[str, Sequence[float]]) -> Reading:
    """Runs and configs of one region from its stretches (module doc)."""
    durations = work.get(C.GPU_TIME, [float("nan")] * len(sigs))
    runs, note = read_runs(region, own, kernels, sigs, durations)
    configs, notes, count = configs_of(region, runs, sigs, work)
    return Reading(runs, configs, [note, *notes] if note else notes, count)


__all__ = ["WORK_COUNTERS", "COUNTER_GAP", "DURATION_GAP", "SPREAD_RUNS", "Reading", "stretches",
           "read_runs", "outliers", "split_by_work", "evidence", "configs_of", "read_region"]
