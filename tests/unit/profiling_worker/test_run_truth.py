"""No silently wrong number from a run (issue 11, cases 1 and 2, the CPU side): launches outside
a config's range are reported as unattributed, never merged into a config; autograd runs on the
calling thread while profiling; the CUPTI L2 flush runs before each run, outside its range."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.backends import base, ncu
from profiling_worker.backends import nsight_backend as nb
from profiling_worker.bundle.loader import read_table
from profiling_worker.catalog.registry import load_registry
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import validate_spec

SPEC = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 512}, {"n": 1024}],
        "runs": 3, "backend": "ncu"}


def _row(config: int, run: int, launch: int, kernel: str, ns: float) -> dict:
    """One row as ncu_report_reader.read_launches returns it (Config -1: no kprof range)."""
    return {C.ANNOTATION: "fp32", C.CONFIG: config, C.RUN: run, C.LAUNCH: launch,
            C.KERNEL: kernel, C.GRID: "(8, 8, 1)", C.BLOCK: "(256, 1, 1)", C.METRIC: C.GPU_TIME,
            C.VALUE: ns, C.UNIT: "ns"}


def _rows_like_nsight_11() -> list[dict]:
    """A job of 2 configs x 3 runs as nsight-python 1.1 attach mode reports it when a kernel is
    launched from another thread: its start/end annotation range covers the launch, the worker's
    push/pop ``c<config>r<run>`` range (thread-local) does not, so the reader gives Config -1
    and numbers those launches in order (Run 0, 1, 2 ...)."""
    rows = [_row(c, r, 0, "gemm", 1000.0 * (c + 1)) for c in range(2) for r in range(3)]
    rows += [_row(-1, i, 0, "dgrad_gemm", 50_000.0) for i in range(6)]
    return rows


def test_launches_outside_a_config_range_are_unattributed_never_the_last_config(
        tmp_path: Path) -> None:
    from profiling_worker.job import results

    spec = validate_spec(SPEC)
    got = ncu._collection(spec, _rows_like_nsight_11(), {"missing_metrics": []},
                          [{"report": "ncu-output-profiled-0.ncu-rep"}], [])
    assert set(got.launches[C.CONFIG]) == {0, 1} and len(got.launches) == 6
    assert "dgrad_gemm" not in set(got.launches[C.KERNEL])
    assert list(got.unattributed[C.CONFIG]) == [-1] * 6
    assert got.unattributed[C.REASON].str.contains("outside every config/run range").all()
    assert any("6 in fp32" in w and "not attributed" in w for w in got.warnings)

    registry = load_registry([])
    results.write_result_tables(tmp_path, spec, registry, {"matmul": ("fp32",)}, got.launches,
                                pd.DataFrame(), None, got.unattributed)
    agg = read_table(tmp_path, C.TABLE_AGGREGATED)
    assert list(agg[C.NUM_RUNS]) == [3, 3]  # not 3 and 3 + 6 mixed into n=1024
    assert list(agg[C.AVG]) == [1000.0, 2000.0]
    assert len(read_table(tmp_path, C.TABLE_UNATTRIBUTED)) == 6


def test_launches_frame_refuses_a_config_that_is_not_the_jobs() -> None:
    spec = validate_spec(SPEC)
    with pytest.raises(ValueError, match="Config -1, not a config of this job"):
        base.launches_frame([_row(-1, 0, 0, "k", 1.0)], spec)


def test_autograd_runs_on_the_calling_thread_while_profiling() -> None:
    import threading

    import torch

    threads = []
    x = torch.ones(4, requires_grad=True)

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            threads.append(threading.get_ident())
            return grad * 2

    with nb.autograd_on_calling_thread():
        assert not torch.autograd.is_multithreading_enabled()
        Probe.apply(x).sum().backward()
    assert torch.autograd.is_multithreading_enabled()  # restored after profiling
    assert threads == [threading.get_ident()]


def test_the_l2_flush_runs_before_each_region_outside_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each annotated region opens after a flush (also the second region of one run, which
    would otherwise read the first one's inputs from the L2); warm-up and set-up do not flush."""
    from contextlib import contextmanager, nullcontext

    from profiling_worker.backends import l2_flush
    from profiling_worker.catalog.registry import make_body

    events: list[str] = []

    @contextmanager
    def annotation(name: str):
        events.append(f"open {name}")
        yield
        events.append(f"close {name}")

    flush = object.__new__(l2_flush.L2Flush)  # no CUDA here: count instead of writing memory
    flush.count = 0
    monkeypatch.setattr(l2_flush.L2Flush, "__call__", lambda self: events.append("flush"))
    spec = validate_spec({"kernels": ["fusion"], "configs": [{"n": 16}], "runs": 2,
                          "backend": "cupti"})
    body = make_body(load_registry([]), "fusion", ("unfused", "fused"), "cpu", annotation)
    profiled = nb.profiled_function(spec, [body], base.RunCounter(spec, None),
                                     lambda _m: nullcontext(),
                                     flush.before_each(annotation))
    body(16, annotate=lambda _n: nullcontext())  # a warm-up call
    assert events == []
    profiled(16)
    profiled(16)
    assert events == ["flush", "open unfused", "close unfused",
                      "flush", "open fused", "close fused"] * 2


def test_the_flush_buffer_is_larger_than_the_l2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizes read from the device: 2 x L2, at least 256 MiB (triton do_bench's buffer)."""
    import torch

    from profiling_worker.backends import l2_flush

    class Props:
        L2_cache_size = 200 << 20

    made = []
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda _d: Props())
    monkeypatch.setattr(torch, "empty", lambda n, **k: made.append((n, k)) or torch.zeros(1))
    flush = l2_flush.L2Flush()
    flush()
    assert made == [(400 << 20, {"dtype": torch.uint8, "device": "cuda:0"})]
    assert flush.describe() | {"method": ""} == {"method": "", "bytes": 400 << 20,
                                                 "l2_bytes": 200 << 20, "flushes": 1}
    Props.L2_cache_size = 50 << 20
    assert l2_flush.L2Flush().bytes == 256 << 20
    assert "none" in l2_flush.no_flush("none")["method"]


def test_import_of_a_worker_report_leaves_launches_outside_every_range_out() -> None:
    """The same rows imported from a .ncu-rep: no re-placing by launch order, no last config."""
    from profiling_worker.importing.ncu_rep import ATTRIBUTED_KPROF, attribute_launches

    rows = pd.DataFrame(_rows_like_nsight_11())
    launches, how = attribute_launches(rows, ["n"], [{"n": 512}, {"n": 1024}], None)
    assert how.startswith(ATTRIBUTED_KPROF) and "6 launch rows outside every config/run" in how
    assert set(launches[C.CONFIG]) == {0, 1} and len(launches) == 6
    assert list(launches.groupby("n")[C.VALUE].mean()) == [1000.0, 2000.0]
