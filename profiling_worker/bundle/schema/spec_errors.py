"""Errors of a job spec: one :class:`FieldError` per problem, raised together as
:class:`SpecInvalid`. Stdlib only (the worker imports it in a bare GPU environment); importable
from :mod:`profiling_worker.bundle.schema.spec` as before."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One problem with one spec field: ``field`` names it, ``hint`` says how to fix it."""

    field: str
    message: str
    hint: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message} ({self.hint})"


class SpecInvalid(ValueError):
    """Raised by :func:`validate_spec`; ``errors`` lists every :class:`FieldError` found."""

    def __init__(self, errors: list[FieldError]):
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))
