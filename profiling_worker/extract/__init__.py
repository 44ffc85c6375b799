"""Turning measurements into tables: per-launch -> per-run -> aggregated (pure pandas)."""

from profiling_worker.extract.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.extract.combine_rules import combine_rule
from profiling_worker.extract.kernel_counts import (configs_with_varying_kernels, kernel_counts,
                                                    kernels_per_config)

__all__ = ["aggregate_runs", "combine_rule", "configs_with_varying_kernels", "kernel_counts",
           "kernels_per_config", "launches_to_runs"]
