"""Words for any Nsight Compute metric name, read from its parts: a metric that
:data:`~profiling_worker.bundle.schema.metrics.WORDS` lacks read bare
(``lts__t_sectors_srcunit_tex_op_read.sum``) on every page that named the others in words
(issue 37). Nsight Compute spells a metric ``<unit>__<counter>.<rollup>[.<submetric>]`` (its
"Metrics Structure"): the unit is the hardware part, the rollup how the part's instances are
combined (``.sum`` a total, said by nothing), the submetric what the value is of the total (a
rate, a % of the peak). The raw name stays the key; the pages say it beside these words."""

from __future__ import annotations

from profiling_worker.bundle.schema import metrics as M

#: A name's unit (the part before "__") -> the hardware part as a person reads it.
UNITS = {
    "gpu": "GPU", "gpc": "GPC", "tpc": "TPC", "sm": "SM", "smsp": "SM sub-partition",
    "dram": "DRAM", "fbpa": "FB partition", "lts": "L2", "ltc": "L2", "lrc": "L2 request "
    "coalescer", "l1tex": "L1/TEX", "idc": "Indexed constant cache", "pcie": "PCIe",
    "nvlrx": "NVLink receive", "nvltx": "NVLink transmit", "launch": "Launch",
    "device": "Device", "profiler": "Profiler", "host": "Host", "events": "CUDA-event",
}
#: A counter's word -> as a person reads it ("" leaves it out: ``t`` is the tag stage of
#: ``lts__t_bytes``, ``op`` only introduces the operation, ``attribute`` a device's).
TOKENS = {
    "t": "", "op": "", "attribute": "", "inst": "instructions", "pred": "predicated",
    "srcunit": "from", "pct": "%", "avg": "average", "mem": "memory", "l1tex": "L1/TEX",
    "lts": "L2", "ipc": "IPC", "cta": "CTA", "tma": "TMA", "sass": "SASS", "shmem": "shared memory",
}
#: Words written in capitals: precisions, instruction and hardware names.
CAPITALS = frozenset({"l1", "l2", "fp8", "fp16", "fp32", "fp64", "bf16", "tf32", "ffma", "fadd",
                      "fmul", "dfma", "hfma", "hgmma", "hmma", "imma", "dram", "gpu", "sm",
                      "smsp", "tex", "pcie", "mma", "alu", "fma", "lsu", "xu", "cuda"})
#: A rollup -> its words ("" for ``.sum``: a total is what a count says with no word).
ROLLUPS = {"sum": "", "avg": "average", "max": "max", "min": "min"}
#: A submetric -> its words.
SUBMETRICS = {
    "per_second": "per second", "per_cycle_active": "per active cycle",
    "per_cycle_elapsed": "per elapsed cycle", "pct_of_peak_sustained_active": "% of peak, active",
    "pct_of_peak_sustained_elapsed": "% of peak, elapsed", "peak_sustained": "peak",
    "peak_sustained_active": "peak, active", "peak_sustained_elapsed": "peak, elapsed",
    "ratio": "ratio", "pct": "%", "max_rate": "max rate", "per_cycle_in_frame": "per cycle",
}


def _counter(text: str) -> str:
    """A counter's words: "t_sectors_srcunit_tex_op_read" -> "sectors from TEX read"."""
    said = [TOKENS.get(w, w.upper() if w in CAPITALS else w) for w in text.split("_")]
    return " ".join(w for w in said if w)


def _stall(name: str) -> str | None:
    """A warp-state metric (``smsp__average_warps_issue_stalled_<reason>_per_issue_active
    .ratio``) as its reason: "Warp stall: long scoreboard (cycles per issued instruction)";
    None for any other name."""
    if not (name.startswith(M.STALL_PREFIX) and name.endswith(M.STALL_SUFFIX)):
        return None
    reason = name[len(M.STALL_PREFIX):-len(M.STALL_SUFFIX)]
    return f"Warp stall: {_counter(reason)} (cycles per issued instruction)"


def derived_words(name: str) -> str:
    """Words for an Nsight Compute metric name from its parts: ``lts__t_sectors_srcunit_tex_op
    _read.sum`` -> "L2 sectors from TEX read", ``sm__inst_executed.avg.per_cycle_active`` ->
    "SM instructions executed (average, per active cycle)"; ``name`` itself where it is no
    such name (no ``__``: ``my_counter``, nsight-python's ``compute_tflops``)."""
    stall = _stall(name)
    if stall is not None:
        return stall
    unit, sep, rest = name.partition("__")
    if not sep or not rest or not unit:
        return name
    counter, *suffixes = rest.split(".")
    qualifiers = [ROLLUPS.get(s, SUBMETRICS.get(s, s.replace("_", " "))) for s in suffixes]
    said = " ".join(w for w in (UNITS.get(unit, unit.upper()), _counter(counter)) if w)
    shown = [q for q in qualifiers if q]
    return said + (f" ({', '.join(shown)})" if shown else "")


def metric_words(name: str) -> str:
    """What a person reads for ``name``: its :data:`M.WORDS` (``SM throughput``), else
    :func:`derived_words`."""
    return M.WORDS.get(name) or derived_words(name)
