"""The figures of docs/energy-h200.md from the device run's benchmarks/h200 files: the energy
counter's update period and step (benchmarks/energy_counter.py) and the energy table of the
CUPTI job recorded with the 'energy' collector (app/core/views/energy.py). A test recomputes
them and checks the page holds them.

    python benchmarks/energy_doc.py RUN_DIR     (prints the Markdown tables)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def counter_table(figures: dict) -> str:
    """The update period and step of the counter, idle and busy, as a Markdown table."""
    rows = ["| GPU state | reads | read cost (µs) | changes | update period (ms): median, min, max "
            "| step (mJ): median | mean power (W) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for state in ("idle", "busy"):
        f = figures[state]
        period = ", ".join(f"{f[k]:.1f}" if f[k] is not None else "n/a" for k in
                           ("update_period_ms_median", "update_period_ms_min",
                            "update_period_ms_max"))
        step = f"{f['step_mj_median']:.0f}" if f["step_mj_median"] is not None else "n/a"
        rows.append(f"| {state} | {f['reads']:,} | {f['read_cost_us']:.1f} | {f['changes']} | "
                    f"{period} | {step} | {f['mean_power_w']:.0f} |")
    return "\n".join(rows)


def energy_table(bundle: Path) -> str:
    """The energy view of the recorded job, as a Markdown table."""
    from profiling_worker.bundle.loader import load_bundle
    from app.core.views import energy as E
    from profiling_worker.bundle.schema import columns as C

    frame = E.energy_frame(load_bundle(bundle))
    cols = [C.ANNOTATION, "n", C.AVG, E.WINDOW_S, E.POWER_W, E.BUSY_PCT, E.ENERGY_J,
            E.J_PER_TFLOP, E.TFLOPS_PER_W, E.CAPPED, E.HOLDS]
    rows = ["| region | n | mean time (ns) | window (s) | mean power (W) | busy (%) | J per run "
            "| J/TFLOP | TFLOP/s per W | power-capped runs | holds |", "|" + " --- |" * len(cols)]
    for r in frame[cols].to_dict("records"):
        rows.append(f"| {r[C.ANNOTATION]} | {r['n']} | {r[C.AVG]:,.0f} | {r[E.WINDOW_S]:.3f} | "
                    f"{r[E.POWER_W]:.0f} | {r[E.BUSY_PCT]:.0f} | {r[E.ENERGY_J]:.4f} | "
                    f"{r[E.J_PER_TFLOP]:.2f} | {r[E.TFLOPS_PER_W]:.3f} | {r[E.CAPPED]} | "
                    f"{r[E.HOLDS]} |")
    return "\n".join(rows)


def main(run_dir: Path) -> None:
    figures = json.loads((run_dir / "energy_counter.json").read_text(encoding="utf-8"))
    print(counter_table(figures))
    print()
    print(energy_table(run_dir / "h200-cupti-collectors-energy"))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
