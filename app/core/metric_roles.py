"""Labels for imported metrics that are not measurements: nsight-python's derived metrics
(``derive_metric``, 0.9.5's ``Transformed``) and normalised values (``normalize_against``), as
the importer recorded them in ``manifest.json`` (``metric_roles``)."""

from __future__ import annotations

from typing import Any

from profiling_worker.schema.manifest import METRIC_ROLES_KEY


def roles(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{metric: {"role", "label", ...}} of a bundle's manifest ({} for measured-only bundles)."""
    found = manifest.get(METRIC_ROLES_KEY)
    return {str(k): v for k, v in found.items() if isinstance(v, dict)} \
        if isinstance(found, dict) else {}


def label(manifest: dict[str, Any], metric: str) -> str:
    """``metric`` with its role when it has one: ``compute_tflops (derived)``."""
    role = roles(manifest).get(metric)
    return f"{metric} ({role.get('role', 'derived')})" if role else metric


def describe(manifest: dict[str, Any]) -> list[str]:
    """One sentence per labelled metric, for a caption under a chart or a selector."""
    return [f"`{m}`: {r.get('role', '')}, {r.get('label', '')}" for m, r in roles(manifest).items()]
