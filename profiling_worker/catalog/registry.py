"""All kernels a job may name: the built-in catalog plus user kernel files.

The worker (and ``python -m profiling_worker kernels``) builds one :class:`Registry`; the
dashboard gets its JSON description and never imports kernel files itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from profiling_worker.bundle.schema import partial
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.catalog.user_collectors import UserCollector, drop_builtin_names
from profiling_worker.catalog.declare import Kernel
from profiling_worker.catalog.user import kernel_dirs_from_env, load_kernel_dirs
from profiling_worker.bundle.errors import (OUT_OF_MEMORY_HINT, KernelFailed, WorkerError,
                                            is_out_of_memory)


@dataclass
class Registry:
    """Kernel id -> declaration, user info collectors by name, and the user files that failed
    to load."""

    kernels: dict[str, Kernel]
    errors: list[dict[str, str]] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    collectors: dict[str, UserCollector] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """JSON-able description: kernels (id, title, parameters, annotations, default
        configs, builtin, source), user collectors (name, scope, unit, timeout_s, source) and
        load errors."""
        return {"kernels": [_describe(k) for k in self.kernels.values()],
                "collectors": [c.describe() for c in self.collectors.values()],
                "errors": self.errors, "dirs": self.dirs}

    def user_collectors(self, names: Sequence[str]) -> list[UserCollector]:
        """The user collectors among ``names`` (a spec's ``collectors``), in that order."""
        return [self.collectors[n] for n in names if n in self.collectors]


def _describe(k: Kernel) -> dict[str, Any]:
    configs = list(k.default_configs)
    return {"id": k.id, "title": k.title, "description": k.description,
            "parameters": list(k.parameters), "annotations": list(k.annotations),
            "default_configs": configs, "cpu_configs": list(k.cpu_configs) or configs[:2],
            "builtin": k.builtin, "source": k.source,
            "parameter_kinds": dict(k.parameter_kinds),
            "fusion_pairs": [list(p) for p in k.fusion_pairs]}


def load_registry(dirs: Iterable[str] | None = None) -> Registry:
    """Built-in catalog plus the kernels of ``dirs`` (default: ``KPROF_KERNEL_DIRS``).
    A user kernel may not reuse a built-in id, nor a user collector a built-in collector's
    name (reported as errors)."""
    dirs = list(dirs) if dirs is not None else kernel_dirs_from_env()
    user, collectors, errors = load_kernel_dirs(dirs) if dirs else ({}, {}, [])
    errors += drop_builtin_names(collectors)
    kernels: dict[str, Kernel] = dict(CATALOG)
    for kid, k in user.items():
        if kid in kernels:
            errors.append({"file": k.source, "error": f"kernel id {kid!r} is a built-in kernel"})
        else:
            kernels[kid] = k
    return Registry(kernels, errors, dirs, collectors)


class KernelBody:
    """``body(*config, annotate=None)`` for a declared kernel. Annotations not chosen in the
    spec still run but are not annotated (so not profiled); a kernel with a ``setup`` gets its
    inputs (made for the chosen annotations) once per config, kept until the config changes."""

    def __init__(self, k: Kernel, annotations: Sequence[str], device: str,
                 annotate: Callable[[str], Any]):
        self.kernel, self.annotations = k, tuple(annotations)
        self.device, self.annotate = device, annotate
        self._key: tuple[Any, ...] | None = None
        self._inputs: Any = None

    def inputs(self, *config: Any) -> Any:
        """The cached inputs of ``config`` (made on first use, outside any annotation)."""
        if self._key != config and self.kernel.setup is not None:
            self._inputs = None  # free the previous config's tensors before allocating
            self._inputs = self.kernel.setup(*config, device=self.device,
                                             annotations=self.annotations)
            self._key = config
        return self._inputs

    def __call__(self, *config: Any, annotate: Callable[[str], Any] | None = None) -> None:
        outer = annotate or self.annotate

        def region(name: str) -> Any:
            return outer(name) if name in self.annotations else nullcontext()

        extra = {"inputs": self.inputs(*config)} if self.kernel.setup is not None else {}
        self.kernel.run(*config, annotate=region, device=self.device, **extra)


class GuardedBody:
    """Wraps a body so that an exception inside kernel code becomes a KernelFailed naming the
    kernel and the config (CUDA out of memory named as such)."""

    def __init__(self, kernel_id: str, body: Callable[..., None],
                 parameters: Sequence[str] = ()):
        self.kernel_id, self.body, self.parameters = kernel_id, body, tuple(parameters)

    def __call__(self, *config: Any, annotate: Callable[[str], Any] | None = None) -> None:
        try:
            self.body(*config, annotate=annotate)
        except WorkerError:  # cancellation (SIGTERM) and other classified errors pass through
            raise
        except Exception as exc:
            raise kernel_error(self.kernel_id, config, exc, self.parameters) from exc


def kernel_error(kernel_id: str, config: Sequence[Any], exc: BaseException,
                 parameters: Sequence[str] = ()) -> KernelFailed:
    """The KernelFailed for an exception raised by a kernel body at the values ``config`` of
    its ``parameters``: the config named as the pages label it (``n=4096``; a Python tuple,
    ``(4096,)``, read as code to a fresh user), as a tuple where the names are not known."""
    text = f"{type(exc).__name__}: {exc}".strip()
    where = (partial.config_label(dict(zip(parameters, config)))
             if len(parameters) == len(config) and parameters else str(tuple(config)))
    if is_out_of_memory(exc):
        return KernelFailed(f"kernel {kernel_id} at config {where} ran out of memory: "
                            f"{text[:300]}", OUT_OF_MEMORY_HINT)
    return KernelFailed(f"kernel {kernel_id} at config {where} raised {text[:500]}",
                        "fix the kernel code (traceback in worker.log) and run again")


def make_body(registry: Registry, kernel_id: str, annotations: Sequence[str], device: str,
              annotate: Callable[[str], Any]) -> Callable[..., None]:
    """A callable body for any kernel of the registry (built-in or user code); exceptions from
    kernel code surface as :class:`KernelFailed`."""
    body = KernelBody(registry.kernels[kernel_id], annotations, device, annotate)
    return GuardedBody(kernel_id, body, registry.kernels[kernel_id].parameters)
