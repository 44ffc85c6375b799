"""Every built-in catalog entry: its FLOP and byte formulas against counts made here from the
kernel's definition, the bytes its body really moves (torch ops traced on the cpu), and its
declared default configs validating. A new built-in fails here until it is added to EXPECTED."""

import pytest

from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.catalog.registry import load_registry, make_body
from profiling_worker.bundle.schema.spec import validate_spec

FP32, HALF = 4, 2  # bytes per element
ELEMENT = {"fp32": FP32, "fp16": HALF, "bf16": HALF}


def _matmul(a, c):  # n x n @ n x n: n^2 dot products of length n (n mul + n add); 2 in, 1 out
    n = c["n"]
    return n * n * (2 * n), (n * n + n * n + n * n) * ELEMENT[a]


def _batched(a, c):  # batch independent n x n matmuls
    flops, moved = _matmul(a, {"n": c["n"]})
    return c["batch"] * flops, c["batch"] * moved


EXPECTED = {  # kernel id -> (annotation, config) -> (FLOPs, minimum DRAM bytes)
    "matmul": _matmul,
    "batched_matmul": _batched,
    "scale": lambda a, c: (c["n"], (c["n"] + c["n"]) * FP32),  # 1 mul; read x, write y
    "vector_add": lambda a, c: (c["n"], (2 * c["n"] + c["n"]) * FP32),  # read a, b; write
    # max, subtract, exp, sum, divide per element; read the matrix, write the result
    "softmax": lambda a, c: (5 * c["n"] ** 2, 2 * c["n"] ** 2 * FP32),
    "softmax_rows": lambda a, c: (5 * c["rows"] * c["cols"], 2 * c["rows"] * c["cols"] * FP32),
    # a + b*c: a multiply and an add per element, fused or not; read a, b, c, write the result
    "fusion": lambda a, c: (2 * c["n"], (3 * c["n"] + c["n"]) * FP32),
}


def test_every_entry_has_expected_counts():
    assert sorted(EXPECTED) == sorted(CATALOG)


@pytest.mark.parametrize("kid", sorted(CATALOG))
def test_formulas_match_the_definition(kid):
    k = CATALOG[kid]
    for config in (*k.default_configs, *k.cpu_configs):
        for a in k.annotations:
            flops, moved = EXPECTED[kid](a, config)
            assert k.flops(a, config) == pytest.approx(flops), (a, config)
            assert k.bytes(a, config) == pytest.approx(moved), (a, config)


@pytest.mark.parametrize("kid", sorted(CATALOG))
def test_declared_defaults_validate(kid):
    k = CATALOG[kid]
    assert k.default_configs and set(k.parameters) == set(k.default_configs[0])
    for backend, configs in (("ncu", k.default_configs), ("cpu", k.cpu_configs)):
        spec = validate_spec({"kernels": [kid], "backend": backend}, CATALOG)
        assert [dict(c) for c in spec.configs] == [dict(c) for c in configs or k.default_configs]


def _traced_bytes(kid, annotation, config):
    """Bytes the annotated region's torch ops (inputs made by ``setup``, outside it) read from tensors made outside the region plus
    the bytes of the region's results no later op consumed (the analytic minimum)."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode

    outside, produced, consumed = {}, {}, set()

    class Trace(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in args:
                if isinstance(t, torch.Tensor):
                    key = id(t)
                    consumed.add(key)
                    if key not in produced:
                        outside[key] = t.numel() * t.element_size()
            for t in out if isinstance(out, tuple) else (out,):
                produced[id(t)] = (t, t.numel() * t.element_size())
            return out

    class Region:
        def __enter__(self):
            self.mode = Trace().__enter__()

        def __exit__(self, *exc):
            self.mode.__exit__(*exc)

    registry = load_registry([])
    body = make_body(registry, kid, [annotation], "cpu", lambda name: Region())
    body(*config.values())
    written = sum(size for key, (_, size) in produced.items() if key not in consumed)
    return sum(outside.values()) + written


@pytest.mark.parametrize("kid", sorted(CATALOG))
def test_bodies_move_the_formula_bytes(kid):
    k = CATALOG[kid]
    config = dict(k.cpu_configs[0])
    for a in k.annotations:
        assert _traced_bytes(kid, a, config) == pytest.approx(k.bytes(a, config)), a


def test_matmul_flops_as_torch_counts_them():
    pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    registry = load_registry([])
    for kid, config in (("matmul", {"n": 64}), ("batched_matmul", {"batch": 3, "n": 32})):
        counter = FlopCounterMode(display=False)
        make_body(registry, kid, ["fp32"], "cpu", lambda name: counter)(*config.values())
        assert counter.get_total_flops() == CATALOG[kid].flops("fp32", config), kid
