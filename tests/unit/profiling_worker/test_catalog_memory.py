"""The memory check before a job counts at least what the worker's bodies hold at once.

How the bytes alive are measured: :class:`LiveBytes`, a TorchDispatchMode, follows every tensor
the torch ops make while it is on (the inputs ``setup`` makes, each result, each intermediate)
and counts each storage once (views share one) from the op that made it until the last tensor
on it is freed; its ``peak`` is the most alive at once. tracemalloc does not see torch's
allocator. What it cannot see: buffers a library allocates inside one op (a BLAS workspace).
Jobs run as the worker runs them: the cpu backend's ``run`` on a :class:`RunJob` whose
annotations are the runner's, bodies made by ``make_body``. Small sizes only here (a CI run
beside); n = 40000 runs on torch's ``meta`` device, which allocates nothing.
"""

from __future__ import annotations

import weakref
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.backends.channel import Channel
from profiling_worker.backends.cpu import CpuBackend
from profiling_worker.backends.run_side import BackendStatus, RunJob
from profiling_worker.bundle.schema import configs as cfgs
from profiling_worker.bundle.schema.spec import JobSpec, SpecInvalid, check_fits, validate_spec
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.catalog.registry import load_registry, make_body
from profiling_worker.job import runner

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

WITH_FP16 = [k.id for k in CATALOG.values() if "fp16" in k.annotations]
#: Jobs of several kernels (one body each, all built at once): those that share parameters;
#: user_scale3 (a user file's kernel: a bytes formula, no setup) beside a built-in.
SHARED = [("matmul", "softmax"), ("scale", "vector_add", "fusion"), ("matmul", "user_scale3")]
REGISTRY = load_registry([str(Path(__file__).resolve().parents[2] / "fixtures" / "kernel_files")])


class LiveBytes(TorchDispatchMode):
    """Bytes of the distinct storages alive among the tensors torch ops made while on."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, list[int]] = {}  # storage -> [bytes, tensors on it alive]
        self.now = self.peak = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None
                           ) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._follow(t)
        return out

    def _follow(self, t: Any) -> None:
        storage = t.untyped_storage()
        key = storage._cdata  # the StorageImpl: one per storage, meta tensors' too
        entry = self.live.setdefault(key, [storage.nbytes(), 0])
        if entry[1] == 0:
            self.now += entry[0]
            self.peak = max(self.peak, self.now)
        entry[1] += 1
        weakref.finalize(t, self._drop, key)

    def _drop(self, key: int) -> None:
        entry = self.live[key]
        entry[1] -= 1
        if entry[1] == 0:
            self.now -= entry[0]
            del self.live[key]


def _spec(kernels: tuple[str, ...], annotations: list[str] | None = None) -> JobSpec:
    """A cpu job of ``kernels`` over the first two cpu configs of the first, 2 runs."""
    raw: dict[str, Any] = {"kernels": list(kernels), "backend": "cpu", "runs": 2,
                           "configs": [dict(c) for c in CATALOG[kernels[0]].cpu_configs[:2]]}
    return validate_spec({**raw, **({"annotations": annotations} if annotations else {})},
                         REGISTRY.kernels)


def _peak_of_the_job(spec: JobSpec, tmp_path: Path) -> int:
    """Most bytes alive at once while the cpu backend runs ``spec`` as the worker does."""
    registry = REGISTRY
    job = RunJob(spec, registry, runner._annotations(spec, registry), tmp_path,
                 BackendStatus(True, "host"), Channel(tmp_path, None), None)
    with LiveBytes() as live:
        CpuBackend().run(job)
    assert live.now == 0  # every input and result freed with the bodies
    return live.peak


def _refused(spec: JobSpec, memory: float) -> list[Any]:
    try:
        check_fits(spec, REGISTRY.kernels, memory, "memory available on the host")
    except SpecInvalid as exc:
        return exc.errors
    return []


@pytest.mark.parametrize("kernels, annotations", [
    *(((kid,), None) for kid in sorted(CATALOG)),  # every annotation of every built-in
    *(((kid,), ["fp16"]) for kid in WITH_FP16),  # one annotation: only its inputs
    *((job, None) for job in SHARED)])
def test_the_check_counts_at_least_what_the_bodies_hold(kernels, annotations, tmp_path):
    """Refused below the bytes the job's bodies held at once, let through at twice them."""
    spec = _spec(kernels, annotations)
    peak = _peak_of_the_job(spec, tmp_path)
    assert peak > 0
    assert _refused(spec, peak - 1), peak  # a config counts at least the peak
    assert _refused(spec, 2 * peak) == [], peak


@pytest.mark.parametrize("kid", sorted(CATALOG))
def test_the_memory_formula_is_the_bytes_setup_makes(kid):
    """``held`` is exactly the distinct storages a body keeps for the chosen annotations."""
    k = CATALOG[kid]
    config = dict(k.cpu_configs[0])
    for chosen in (k.annotations, k.annotations[-1:]):
        body = make_body(load_registry([]), kid, chosen, "cpu", lambda _name: nullcontext())
        inputs = body.body.inputs(*config.values())
        storages = {t.untyped_storage()._cdata: t.untyped_storage().nbytes()
                    for t in tree_leaves(inputs) if isinstance(t, torch.Tensor)}
        assert k.memory(chosen, config)[0] == sum(storages.values()), chosen


def _meta_peak(n: int, kernels: tuple[str, ...] = ("matmul",)) -> int:
    """Bytes the bodies of ``kernels`` (every annotation; one after the other, as a run calls
    them) hold at once at ``n``, on torch's meta device (shapes and dtypes, no data: nothing is
    allocated)."""
    bodies = [make_body(REGISTRY, k, REGISTRY.kernels[k].annotations, "meta",
                        lambda _name: nullcontext()) for k in kernels]
    with LiveBytes() as live:
        for body in bodies:
            body(n)
        return live.peak


def test_a_40000_matmul_of_three_dtypes_is_refused_on_this_host():
    """A fresh user's find: n = 40000 fp32 + fp16 + bf16 holds about 29.8 GiB (every
    annotation's inputs at once and a result), but the check counted one annotation's 17.9 GiB
    and let it through with 21.8 GiB free."""
    spec = validate_spec({"kernels": ["matmul"], "backend": "cpu", "configs": [{"n": 40000}]},
                         CATALOG)
    held = _meta_peak(40000)
    one_call = 3 * 40000**2 * 4  # the fp32 region's bytes: what the check used to count
    for memory in (21.8 * 2**30, cfgs.device_memory("cpu", [], None)[0]):
        assert memory is not None
        errors = _refused(spec, memory)
        assert bool(errors) == (memory < held), (memory, held)
    (err,) = _refused(spec, (one_call + held) / 2)  # where the old count let it through
    assert err.field == "configs[0]" and "n=40000" in err.message
    assert cfgs.gib(held) in err.message and "fp32, fp16, bf16" in err.message
    assert "choose smaller sizes" in err.hint and "fewer annotations" in err.hint


def test_kernels_of_one_job_are_counted_together():
    """Every kernel's body keeps its inputs: matmul and softmax at n = 40000 hold more together
    than either alone, and the fix says one kernel per job fits."""
    spec = validate_spec({"kernels": ["matmul", "softmax"], "backend": "cpu",
                          "configs": [{"n": 40000}]}, CATALOG)
    alone = max(_meta_peak(40000, ("matmul",)), _meta_peak(40000, ("softmax",)))
    both = _meta_peak(40000, ("matmul", "softmax"))
    assert both > alone
    (err,) = _refused(spec, (alone + both) / 2)
    assert "kernels matmul, softmax at n=40000" in err.message and cfgs.gib(both) in err.message
    assert "one kernel per job" in err.hint
    assert _refused(spec, both) == []


def test_a_kernel_with_a_bytes_formula_only_is_counted_by_it():
    """A user kernel without a memory formula: its largest bytes formula, as before."""
    spec = validate_spec({"kernels": ["user_scale3"], "backend": "cpu",
                          "configs": [{"n": 1024}]}, REGISTRY.kernels)
    moved = REGISTRY.kernels["user_scale3"].bytes("x*3", {"n": 1024})
    (err,) = _refused(spec, moved - 1)
    assert f"kernel user_scale3 at n=1024 moves at least {cfgs.gib(moved)}" in err.message
    assert _refused(spec, moved) == []
