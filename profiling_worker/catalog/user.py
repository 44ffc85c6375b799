"""User kernel files: any ``.py`` file in a folder named at start-up declares kernels with
:func:`kernel` (:mod:`.declare`), the same decorator the built-in catalog uses (parameters and
their kinds, annotations, default configs, FLOP and byte formulas, fusion pairs, setup).

A kernel is a function ``run(*config_values, annotate, device)`` that allocates its inputs
outside any annotation and runs each region inside ``with annotate("<name>"):``. The worker
calls it once per run (and ``warmup`` times before, with a no-op ``annotate``). Example::

    from profiling_worker.catalog.user import kernel

    @kernel(id="my_scale", parameters=("n",), annotations=("scale",),
            default_configs=[{"n": 1 << 20}, {"n": 1 << 24}],
            flops=lambda annotation, c: c["n"], bytes=lambda annotation, c: 8 * c["n"])
    def my_scale(n, *, annotate, device):
        import torch
        x = torch.randn(n, device=device)
        with annotate("scale"):
            x * 2

The same files may define info collectors (:mod:`profiling_worker.catalog.user_collectors`: ONCE and
RUN scopes, tagged with ``nsight.experimental.collect`` or its ``collect``).

Files are imported only by the worker (never by the dashboard's process): a file that fails to
import is reported with its error and the others still load.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from profiling_worker.catalog.user_collectors import UserCollector, found_in
from profiling_worker.catalog.declare import Kernel, declared, kernel

__all__ = ["kernel", "load_kernel_dirs", "kernel_dirs_from_env"]


#: A file's path -> its bytes and what their import declared: a warm worker runs job after job
#: in one process, and executing every unchanged file again per job cost each job's
#: ``prepare`` its imports (and a Triton kernel's module its compiled kernel). Keyed by the
#: bytes, not a stamp: a file rewritten within a coarse clock's tick is still seen.
_IMPORTED: dict[Path, tuple[bytes, list[Kernel], list[UserCollector]]] = {}


def _import_once(path: Path) -> tuple[list[Kernel], list[UserCollector]]:
    """:func:`_import_file`, or what it declared last time while the file's bytes are unchanged
    (a file that failed is imported again next time; an edited file too)."""
    source = path.read_bytes()
    known = _IMPORTED.get(path)  # a deleted file's entry stays: a few KB per file ever seen
    if known is not None and known[0] == source:
        return known[1], known[2]
    found, tagged = _import_file(path)
    _IMPORTED[path] = (source, found, tagged)
    return found, tagged


def _import_file(path: Path) -> tuple[list[Kernel], list[UserCollector]]:
    name = f"kprof_user_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path.name} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:  # a file that fails half-way leaves no declarations behind
        found = declared(name, path.name)
    return found, found_in(module, path.name)


@contextlib.contextmanager
def _prints_to_stderr() -> Iterator[None]:
    """fd 1 and ``sys.stdout`` point at stderr meanwhile: what a user file prints at import
    never lands in a channel read by a program (``env``/``kernels`` output, a warm worker's
    control line)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def load_kernel_dirs(dirs: Iterable[str | os.PathLike[str]]
                     ) -> tuple[dict[str, Kernel], dict[str, UserCollector], list[dict[str, str]]]:
    """Import every ``*.py`` of each folder (not recursive, sorted); a file whose bytes are
    unchanged since this process imported it is not executed again.

    Returns:
        ``(kernels, collectors, errors)``: kernel id -> :class:`Kernel`, collector name ->
        :class:`~profiling_worker.catalog.user_collectors.UserCollector`, and one
        ``{"file", "error"}`` per file that failed to import or declared a duplicate id or
        collector name.
    """
    kernels: dict[str, Kernel] = {}
    collectors: dict[str, UserCollector] = {}
    errors: list[dict[str, str]] = []
    for folder in dirs:
        for path in sorted(Path(folder).glob("*.py")):
            try:
                with _prints_to_stderr():
                    found, tagged = _import_once(path.resolve())
            except BaseException as exc:  # a user file may raise anything, SystemExit included
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                errors.append({"file": path.name, "error": last})
                continue
            errors += _add_new(collectors, [(c.name, c) for c in tagged], path.name,
                               "collector {!r} already defined in {}")
            errors += _add_new(kernels, [(k.id, k) for k in found], path.name,
                               "kernel id {!r} already declared in {}")
    return kernels, collectors, errors


def _add_new(known: dict[str, Any], new: list[tuple[str, Any]], file: str,
             clash: str) -> list[dict[str, str]]:
    """Add ``new`` entries to ``known`` (each with a ``source``); an entry already known keeps
    the first file's and gives an error naming both (``clash`` formatted with name, source)."""
    errors = []
    for name, entry in new:
        if name in known:
            errors.append({"file": file, "error": clash.format(name, known[name].source)})
        else:
            known[name] = entry
    return errors


def kernel_dirs_from_env() -> list[str]:
    """Folders named in ``KPROF_KERNEL_DIRS`` (separated by ``os.pathsep``)."""
    return [d for d in os.environ.get("KPROF_KERNEL_DIRS", "").split(os.pathsep) if d]
