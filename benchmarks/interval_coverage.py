"""Coverage of the product's intervals (issue 34; the replication verdict's 90 % one, issue
36): how often each interval (:mod:`profiling_worker.bundle.schema.intervals`) holds the true
value, by seeded simulation.

The intervals, each computed by the product's own function:

- **mean** CI95 (:func:`~profiling_worker.bundle.schema.intervals.ci95_bounds`, Student t);
- **difference** of two means (:func:`~profiling_worker.bundle.schema.intervals.welch_ci95_half_width`,
  Welch);
- **ratio** of two means (:func:`~profiling_worker.bundle.schema.intervals.ratio_ci95_bounds`,
  Fieller), which minus 1 is the regression gate's relative difference. An unbounded interval
  (Fieller's g >= 1) holds every ratio and counts as covering; its share is reported. Beside it,
  ``before``: the method used until issue 34 (Welch's interval of ``m_c - m_b`` over ``m_b``);
- **ratio90**: Fieller's 90 % interval of the same ratio
  (:func:`~profiling_worker.bundle.schema.intervals.fieller_ci95` at ``level=0.90``, uncut), the
  one the replication verdict shows beside its TOST at 5 % a side
  (:mod:`profiling_worker.bundle.gate.replication`); its nominal coverage is 90 %.

**Normal data** (:func:`normal_grid`): ratios 0.05-20, 3-100 runs a side, unequal variances
(coefficients of variation 0.5-20 %). Each replicate draws a side's sufficient statistics
directly: the mean from ``N(mu, sigma^2/n)`` and ``s^2`` from ``sigma^2 chi2(n-1)/(n-1)``
(independent for normal data: Cochran's theorem), which is exactly the distribution of the
statistics of ``n`` normal runs and lets every cell run vectorised.

**Recorded H200 timings** (:func:`h200_coverage`): the per-run durations of every region x config
with at least :data:`MIN_POPULATION` runs in the recorded bundles (``tests/fixtures/bundles``,
frozen copies of ``app/bundled``), each taken as a population (true mean: the mean of its runs).
A replicate draws ``n`` runs with replacement per side (bootstrap); pairs are every ordered pair
of distinct populations, so ratios span the recorded sizes. These timings are skewed and some
are bimodal (a clock or power mode), which is where small ``n`` falls short.

Usage::

    python benchmarks/interval_coverage.py [--bundles DIR] [--write docs/statistics.md]

prints the Markdown tables; ``--write`` puts them into the page between the markers
:data:`BEGIN` and :data:`END` and writes the recorded-timings figures the product says beside
its intervals to :data:`FIGURES` (``tests/unit/profiling_worker/test_interval_coverage.py`` runs
this and checks the page and the figures match).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from profiling_worker.bundle.schema import columns as C, intervals  # noqa: E402

Floats = npt.NDArray[np.float64]
SEED = 34
#: The normal grid (issue 34): true ratios, runs a side, (baseline, candidate) CVs.
RATIOS = (0.05, 0.2, 1.0, 5.0, 20.0)
RUNS = (3, 5, 10, 30, 100)
CVS = ((0.005, 0.05), (0.05, 0.005), (0.02, 0.02), (0.2, 0.05))
NORMAL_REPS = 2000
#: Recorded populations: at least this many runs; drawn at these sizes; replicates per pair.
MIN_POPULATION = 20
H200_RUNS = (3, 5, 10, 20)
H200_REPS = 1000
#: The intervals simulated, as :func:`covered` names them, in the tables' order; those the
#: product says beside an interval (:data:`FIGURES`; ``before`` is no longer shown anywhere).
INTERVALS = ("mean", "difference", "ratio", "before", "ratio90")
SAID = ("mean", "difference", "ratio", "ratio90")
BEGIN, END = "<!-- interval-coverage:begin -->", "<!-- interval-coverage:end -->"
DOC = REPO / "docs" / "statistics.md"
BUNDLES = REPO / "tests" / "fixtures" / "bundles"
#: The figures the product says beside its intervals (:func:`figures`), written with the page.
FIGURES = REPO / "profiling_worker" / "bundle" / "schema" / "interval_coverage.json"


def normal_stats(rng: np.random.Generator, mu: float, sigma: float, n: int,
                 reps: int) -> tuple[Floats, Floats]:
    """(means, sample std devs) of ``reps`` samples of ``n`` normal runs (module docstring)."""
    means = rng.normal(mu, sigma / np.sqrt(n), reps)
    stds = sigma * np.sqrt(rng.chisquare(n - 1, reps) / (n - 1))
    return means, stds


def resampled_stats(rng: np.random.Generator, values: Floats, n: int,
                    reps: int) -> tuple[Floats, Floats]:
    """(means, sample std devs) of ``reps`` draws of ``n`` of ``values`` with replacement."""
    draw = values[rng.integers(0, len(values), size=(reps, n))]
    return draw.mean(axis=1), draw.std(axis=1, ddof=1)


def covered(mb: Floats, sb: Floats, nb: float, mc: Floats, sc: Floats, nc: float, mu_b: float,
            mu_c: float, minimum: float) -> dict[str, Floats]:
    """Per replicate, whether each interval holds its true value (bool arrays) and whether the
    ratio's is unbounded. ``minimum``: 0 for non-negative quantities (the cut), else -inf."""
    lo, hi = intervals.ci95_bounds(mc, sc, nc, np.full_like(mc, minimum))
    half, _ = intervals.welch_ci95_half_width(sb, nb, sc, nc)
    rlo, rhi = intervals.ratio_ci95_bounds(mb, sb, nb, mc, sc, nc)
    r90 = intervals.fieller_ci95(mb, sb, nb, mc, sc, nc, level=0.90)
    truth = mu_c / mu_b
    before = ((mc - half) / mb <= truth) & (truth <= (mc + half) / mb)
    return {"mean": (lo <= mu_c) & (mu_c <= hi),
            "difference": np.abs(mc - mb - (mu_c - mu_b)) <= half,
            "ratio": (rlo <= truth) & (truth <= rhi), "before": before,
            "ratio90": (r90.lower <= truth) & (truth <= r90.upper),
            "unbounded": intervals.unbounded(rhi)}


def normal_grid(seed: int = SEED, reps: int = NORMAL_REPS) -> pd.DataFrame:
    """Coverage (%) per cell of the normal grid: Ratio, RunsBaseline, RunsCandidate, CvBaseline,
    CvCandidate, then mean, difference, ratio, before, ratio90 (%), unbounded (% of
    replicates)."""
    rng = np.random.default_rng(seed)
    rows = []
    for ratio in RATIOS:
        for nb in RUNS:
            for nc in RUNS:
                for cv_b, cv_c in CVS:
                    mb, sb = normal_stats(rng, 1.0, cv_b, nb, reps)
                    mc, sc = normal_stats(rng, ratio, cv_c * ratio, nc, reps)
                    hit = covered(mb, sb, nb, mc, sc, nc, 1.0, ratio, -np.inf)
                    rows.append({"Ratio": ratio, "RunsBaseline": nb, "RunsCandidate": nc,
                                 "CvBaseline": cv_b, "CvCandidate": cv_c,
                                 **{k: 100.0 * float(v.mean()) for k, v in hit.items()}})
    return pd.DataFrame(rows)


def h200_populations(bundles: Path = BUNDLES) -> dict[str, Floats]:
    """``{"<job> <annotation> <config>": per-run durations}`` of every region x config with at
    least :data:`MIN_POPULATION` runs of the job's duration metric."""
    out: dict[str, Floats] = {}
    for runs_file in sorted(bundles.glob("*/tables/runs.parquet")):
        runs = pd.read_parquet(runs_file)
        metric = next((m for m in runs[C.METRIC].unique() if str(m).endswith("duration.sum")),
                      None)
        rows = runs[runs[C.METRIC] == metric]
        for (annotation, config), group in rows.groupby([C.ANNOTATION, C.CONFIG], sort=True):
            if len(group) >= MIN_POPULATION:
                name = f"{runs_file.parent.parent.name} {annotation} c{config}"
                out[name] = group[C.VALUE].to_numpy(dtype="float64")
    return out


def h200_coverage(populations: dict[str, Floats], seed: int = SEED,
                  reps: int = H200_REPS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Coverage (%) on the recorded populations per runs a side (both sides alike).

    Returns:
        (per runs a side: Runs, Pairs, then per interval the coverage over all pairs and the
        lowest pair's, unbounded (%); per population: Population, Runs, RsdPct, Skewness,
        MaxOverMedian, then the mean CI95's coverage at each of :data:`H200_RUNS`).
    """
    from scipy.stats import skew

    rng = np.random.default_rng(seed)
    names = list(populations)
    truth = {k: float(v.mean()) for k, v in populations.items()}
    pops = pd.DataFrame({"Population": names,
                         "Runs": [len(populations[k]) for k in names],
                         "RsdPct": [100 * populations[k].std(ddof=1) / truth[k] for k in names],
                         "Skewness": [float(skew(populations[k])) for k in names],
                         "MaxOverMedian": [populations[k].max() / np.median(populations[k])
                                           for k in names]})
    rows = []
    for n in H200_RUNS:
        # two independent draws per population: one for its baseline role, one as candidate
        draws = [{k: resampled_stats(rng, v, n, reps) for k, v in populations.items()}
                 for _ in range(2)]
        per_pair = []
        for b in names:
            for c in names:
                if b != c:
                    hit = covered(*draws[0][b], n, *draws[1][c], n, truth[b], truth[c], 0.0)
                    per_pair.append({k: 100.0 * float(v.mean()) for k, v in hit.items()})
        pairs = pd.DataFrame(per_pair)
        row: dict[str, float] = {"Runs": n, "Pairs": len(pairs)}
        for k in INTERVALS:
            row[k], row[k + "_lowest"] = float(pairs[k].mean()), float(pairs[k].min())
        row["unbounded"] = float(pairs["unbounded"].mean())
        rows.append(row)
        own = [intervals.ci95_bounds(*draws[1][k], n, np.zeros(reps)) for k in names]
        pops[f"mean@{n}"] = [100.0 * float(((lo <= truth[k]) & (truth[k] <= hi)).mean())
                             for k, (lo, hi) in zip(names, own)]
    return pd.DataFrame(rows), pops


def summary(normal: pd.DataFrame) -> pd.DataFrame:
    """The normal grid per true ratio: cells, then each interval's mean, lowest and highest cell
    coverage (%)."""
    out = []
    for ratio, g in normal.groupby("Ratio"):
        row: dict[str, float] = {"Ratio": float(ratio), "Cells": len(g)}
        for k in INTERVALS:
            row[k], row[k + "_lowest"], row[k + "_highest"] = (
                float(g[k].mean()), float(g[k].min()), float(g[k].max()))
        row["unbounded"] = float(g["unbounded"].max())
        out.append(row)
    return pd.DataFrame(out)


def markdown(normal: pd.DataFrame, h200: tuple[pd.DataFrame, pd.DataFrame],
             populations: dict[str, Floats]) -> str:
    """The block the page holds between :data:`BEGIN` and :data:`END`."""
    def span(r: pd.Series, k: str) -> str:
        return f"{r[k]:.1f} ({r[k + '_lowest']:.1f}-{r[k + '_highest']:.1f})"

    lines = [BEGIN, "",
             f"Normal data, seed {SEED}, {NORMAL_REPS:,} replicates per cell; cells: runs a side "
             f"{', '.join(map(str, RUNS))} (every pair), baseline / candidate CV "
             f"{', '.join(f'{a:g}/{b:g}' for a, b in CVS)}. Coverage in %: mean over the cells "
             "(lowest-highest cell).", "",
             "| true ratio | cells | mean CI95 | difference | ratio (Fieller) | ratio, before "
             "issue 34 | ratio, 90 % (replication) | unbounded, most in a cell |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for _, r in summary(normal).iterrows():
        lines.append(f"| {r['Ratio']:g} | {int(r['Cells'])} | {span(r, 'mean')} | "
                     f"{span(r, 'difference')} | {span(r, 'ratio')} | {span(r, 'before')} | "
                     f"{span(r, 'ratio90')} | {r['unbounded']:.1f} % |")
    lines += ["", f"Recorded H200 timings, seed {SEED}, {H200_REPS:,} replicates per pair: "
              f"{len(populations)} region x config populations of at least {MIN_POPULATION} "
              f"runs ({', '.join(sorted({k.split()[0] for k in populations}))}), every ordered "
              "pair. Coverage in %: over all pairs (lowest pair).", "",
              "| runs a side | pairs | mean CI95 | difference | ratio (Fieller) | ratio, before "
              "issue 34 | ratio, 90 % (replication) | unbounded |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    by_runs, pops = h200
    for _, r in by_runs.iterrows():
        lines.append(f"| {int(r['Runs'])} | {int(r['Pairs'])} | "
                     + " | ".join(f"{r[k]:.1f} ({r[k + '_lowest']:.1f})"
                                  for k in INTERVALS)
                     + f" | {r['unbounded']:.1f} % |")
    lines += ["", "The populations (mean CI95 coverage in % at each runs a side):", "",
              "| population | runs | RSD % | skewness | slowest / median | "
              + " | ".join(f"{n} runs" for n in H200_RUNS) + " |",
              "| --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in H200_RUNS)
              + " |"]
    for _, r in pops.iterrows():
        lines.append(f"| {r['Population']} | {int(r['Runs'])} | {r['RsdPct']:.2f} | "
                     f"{r['Skewness']:.1f} | {r['MaxOverMedian']:.3f} | "
                     + " | ".join(f"{r[f'mean@{n}']:.1f}" for n in H200_RUNS) + " |")
    return "\n".join(lines + ["", END])


def compute(bundles: Path = BUNDLES) -> tuple[pd.DataFrame, tuple[pd.DataFrame, pd.DataFrame],
                                              dict[str, Floats]]:
    """A fresh simulation (seeded: the same every time): :func:`normal_grid`,
    :func:`h200_coverage` and the populations it drew from."""
    populations = h200_populations(bundles)
    return normal_grid(), h200_coverage(populations), populations


def figures(by_runs: pd.DataFrame, populations: dict[str, Floats]) -> dict[str, object]:
    """The recorded-timings figures the pages, reports and the gate say beside an interval
    (:data:`FIGURES`, read by :mod:`profiling_worker.bundle.schema.interval_words`): the runs a
    side drawn, the populations and ordered pairs, and per interval (mean, difference, ratio,
    ratio90: the replication verdict's 90 % one) its coverage (%, one decimal) averaged over
    the pairs at the runs a side where it is lowest and highest, and its lowest pair (for the
    mean CI95: its lowest population) with the runs a side there. ``by_runs``: :func:`h200_coverage`'s first frame."""
    methods: dict[str, dict[str, float]] = {}
    for k in SAID:
        at = int(by_runs[k + "_lowest"].idxmin())
        methods[k] = {"low_pct": round(float(by_runs[k].min()), 1),
                      "high_pct": round(float(by_runs[k].max()), 1),
                      "lowest_pct": round(float(by_runs[k + "_lowest"].min()), 1),
                      "lowest_runs": int(by_runs.loc[at, "Runs"])}
    return {"source": "benchmarks/interval_coverage.py, docs/statistics.md", "seed": SEED,
            "runs_a_side": [min(H200_RUNS), max(H200_RUNS)], "populations": len(populations),
            "pairs": int(by_runs["Pairs"].iloc[0]), "methods": methods}


def figures_text(by_runs: pd.DataFrame, populations: dict[str, Floats]) -> str:
    """:func:`figures` as the JSON text of :data:`FIGURES` (sorted keys, indented, a final
    newline)."""
    return json.dumps(figures(by_runs, populations), indent=2, sort_keys=True) + "\n"


def replace_block(page: str, block: str) -> str:
    """``page`` with the text from :data:`BEGIN` to :data:`END` replaced by ``block``.

    Raises:
        ValueError: the page lacks the markers.
    """
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {BEGIN} ... {END} block to replace")
    return page[:start] + block + page[end + len(END):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bundles", type=Path, default=BUNDLES)
    parser.add_argument("--write", type=Path, help="the page to update (docs/statistics.md)")
    args = parser.parse_args(argv)
    normal, h200, populations = compute(args.bundles)
    block = markdown(normal, h200, populations)
    print(block)
    if args.write:
        args.write.write_text(replace_block(args.write.read_text(), block))
        FIGURES.write_text(figures_text(h200[0], populations))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
