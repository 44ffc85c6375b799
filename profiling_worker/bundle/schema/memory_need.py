"""The memory a config of a job needs at once, for the check before a job (issue 11, case 7).

Where the count comes from: the worker builds every kernel's body of a job at once
(:func:`~profiling_worker.catalog.registry.make_body`, the same on the cpu and GPU backends),
and a body with a ``setup`` keeps the inputs it made for the job's chosen annotations, all of
them together, until the config changes (:class:`~profiling_worker.catalog.registry.KernelBody`);
the calls then run one at a time. So a config needs the inputs every kernel holds plus the most
one call holds on top: ``sum(held) + max(working)``, from each kernel's ``memory`` formula
(the built-ins': :class:`~profiling_worker.catalog.builtin.Operands`, the very shapes their
``setup`` makes). A kernel without one counts its largest ``bytes`` formula (the data one call
reads and writes) as working bytes: a lower bound. A kernel that still holds the previous
config's inputs while another makes this config's holds no more than at the largest config when
sizes grow with the config, so the largest config's count bounds the job. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def chosen_annotations(declared: Sequence[str], chosen: Sequence[str] | None
                       ) -> tuple[str, ...]:
    """The annotations of a kernel (``declared``, in its order) a job runs: those the spec's
    ``annotations`` (``chosen``) names, all of them when it is None or empty."""
    wanted = set(chosen or ())
    return tuple(a for a in declared if not wanted or a in wanted)


@dataclass(frozen=True)
class Need:
    """One kernel's bytes at one config: ``held`` between calls, ``working`` on top during
    one call; ``declared``: from its ``memory`` formula (else its ``bytes``, a lower bound)."""

    kernel: str
    held: float
    working: float
    declared: bool


def kernel_need(kernel_id: str, entry: Any, config: Mapping[str, Any],
                chosen: Sequence[str] | None) -> Need | None:
    """The :class:`Need` of kernel ``entry`` at ``config`` for the spec's ``chosen``
    annotations; None when it declares neither a ``memory`` nor a ``bytes`` formula.

    Raises:
        ArithmeticError, ValueError, TypeError...: whatever the kernel's formula raises.
    """
    memory = getattr(entry, "memory", None)
    if callable(memory):
        held, working = memory(chosen_annotations(entry.annotations, chosen), config)
        return Need(kernel_id, float(held), float(working), True)
    formula = getattr(entry, "bytes", None)
    if not callable(formula):
        return None
    # every declared annotation: a body without setup runs those not chosen too, unannotated
    return Need(kernel_id, 0.0, max(float(formula(a, config)) for a in entry.annotations), False)


def together(needs: Sequence[Need]) -> float:
    """Bytes the kernels of one config hold at once: all inputs, one call's working bytes."""
    return sum(n.held for n in needs) + max((n.working for n in needs), default=0.0)


def fewest(kernel_id: str, entry: Any, config: Mapping[str, Any],
           chosen: Sequence[str] | None) -> Need | None:
    """The smallest :class:`Need` of the kernel with one of its chosen annotations alone (for
    the fix "fewer annotations"); its whole need where it has no ``memory`` formula.

    Raises:
        ArithmeticError, ValueError, TypeError...: whatever the kernel's formula raises.
    """
    names = chosen_annotations(entry.annotations, chosen)
    if not callable(getattr(entry, "memory", None)) or len(names) < 2:
        return kernel_need(kernel_id, entry, config, chosen)
    alone = [kernel_need(kernel_id, entry, config, [a]) for a in names]
    return min((n for n in alone if n is not None), key=lambda n: n.held + n.working)
