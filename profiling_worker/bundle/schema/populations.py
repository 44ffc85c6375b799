"""Whether one config's runs are one population: two modes (a mixture) or a step (a shift or a
drift in run order) make their mean no single figure, so neither its interval nor a verdict on
it means what it says (issue 34: ``h200-cupti-timeline`` n = 8192 holds 61 of 100 runs in a slow
mode).

Two tests, both on the durations of one annotation x config in run order (ns):

- **Two modes**: a two-component Gaussian mixture fitted by EM against one normal, kept when the
  Bayesian information criterion prefers it (G. Schwarz, Ann. Statist. 6 (1978) 461-464) *and*
  its components are apart by Ashman's D > 2 (K. M. Ashman, C. M. Bird, S. E. Zepf, Astron. J.
  108 (1994) 2348-2361: ``D = |mu_1 - mu_2| / sqrt((s_1^2 + s_2^2) / 2)``; below 2 the mixture
  is no clean split of a skewed sample). The smaller component must hold at least
  :data:`MIN_SHARE` of the runs and :data:`MIN_RUNS_MODE` runs (a lone slow first run is an
  outlier, not a mode).
- **Step**: Pettitt's rank test for one change point (A. N. Pettitt, Appl. Statist. 28 (1979)
  126-135): ``U_t = sum_{i<=t<j} sign(x_j - x_i)``, ``K = max |U_t|``, approximate
  ``p = 2 exp(-6 K^2 / (n^3 + n^2))``; a step when ``p <`` :data:`STEP_P`.

Either counts only when the two groups' medians differ by at least :data:`MIN_SHIFT_PCT` of the
median (timer quanta, e.g. CUPTI's 32 ns steps on a 6 µs kernel, form "modes" that change
nothing a verdict judges). Fewer than :data:`MIN_RUNS` runs: not checked (said so). The seeded
false-alarm rates on one-population data are tests/unit/test_populations.py's.

Two screens skip the mixture's EM fit (four starts, numpy on a few values: most of a warm job's
run audit) only where its outcome is known without it (issue 40):

- the runs span less than :data:`MIN_SHIFT_PCT` of their median, or nothing (every run one
  value, a median of 0 included): no split of them can have medians that far apart, so the
  answer is one population whatever either test finds (Pettitt's p of identical runs is 1);
- :func:`_mixture_gain_bound`: an upper bound of the log-likelihood a two-component mixture can
  gain over one normal under the conditions above is within the BIC margin, so no fit passes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from profiling_worker.bundle.number_text import counted, literal, ns_text, with_durations

#: Fewer runs than this: the tests do not run (a mode needs MIN_RUNS_MODE runs of its own).
MIN_RUNS = 10
MIN_SHARE, MIN_RUNS_MODE = 0.10, 3
#: Ashman's D above which two components are a clean split (Ashman et al. 1994).
ASHMAN_D = 2.0
#: BIC(one normal) - BIC(mixture) above which the mixture is kept: "very strong" evidence
#: (R. E. Kass, A. E. Raftery, J. Am. Stat. Assoc. 90 (1995) 773-795, section 3.2).
BIC_MARGIN = 10.0
STEP_P = 0.01
#: Two groups whose medians differ by less than this (% of the median) are one population.
MIN_SHIFT_PCT = 1.0
#: Each component's std dev is at least this share of the median (timer quanta make exact ties,
#: on which an unfloored EM fits a zero-width component of infinite likelihood).
_SD_FLOOR = 1e-3
_EM_STEPS = 100
#: The EM's starts: the means at these quantiles of the runs (the best fit of the four is kept).
_STARTS = ((0.25, 0.75), (0.1, 0.9), (0.05, 0.5), (0.5, 0.95))


@dataclass(frozen=True)
class Populations:
    """What :func:`check` found in one config's runs.

    Attributes:
        runs: the runs tested.
        checked: False below :data:`MIN_RUNS` runs (nothing else is set then).
        two_modes: a mixture passed every condition (module docstring).
        step_at: the first run after a step (its index in run order), None without one.
        slow: per run (run order), True for a run in the slower mode, or after (or before) the
            step on its slower side; all False when one population.
        fast_median, slow_median: the two groups' medians (ns; NaN when one population).
        ashman_d, step_p: the figures (NaN where not computed).
    """

    runs: int
    checked: bool
    two_modes: bool = False
    step_at: int | None = None
    slow: tuple[bool, ...] = ()
    fast_median: float = math.nan
    slow_median: float = math.nan
    ashman_d: float = math.nan
    step_p: float = math.nan

    @property
    def one(self) -> bool:
        """True when the runs are one population (or could not be checked)."""
        return not (self.two_modes or self.step_at is not None)

    def describe(self) -> str:
        """``"two modes (Ashman's D 6.1): 61 of 100 runs at 1.080x the others' median
        (1,140,196 vs 1,055,000 ns)"``, ``"a step at run 40 ..."``, ``"one population"`` or
        why it was not checked: :meth:`template` with the medians in ns."""
        if not self.checked:
            # "(s)" kept: the recorded bundles' run_audit tables hold this text (see run_audit)
            return f"not checked: {self.runs} run(s), at least {MIN_RUNS} needed"
        template = self.template()
        if template is None:
            return "one population"
        return with_durations(template, ns_text(self.slow_median), ns_text(self.fast_median),
                              "ns")

    def template(self) -> str | None:
        """:meth:`describe`'s text of two groups with their medians as data: ``{value}`` the
        slower group's, ``{reference}`` the others', ``{unit}`` their unit
        (:func:`~profiling_worker.bundle.number_text.with_durations`); None when it states no
        duration (one population, not checked)."""
        if not self.checked or self.one:
            return None
        n_slow = sum(self.slow)
        what = literal(f"two modes (Ashman's D {self.ashman_d:.1f})" if self.two_modes else
                       f"a step at run {self.step_at} (Pettitt p = {self.step_p:.1g})")
        medians = "{value} vs {reference} {unit}"
        if self.fast_median <= 0:  # a metric, not a duration: no ratio to a zero median
            return f"{what}: {n_slow} of {counted(self.runs, 'run')} at a median of {medians}"
        ratio = self.slow_median / self.fast_median
        return (f"{what}: {n_slow} of {counted(self.runs, 'run')} at {ratio:.3f}x the others' "
                f"median ({medians})")


def check(values: np.ndarray | list[float]) -> Populations:
    """Both tests of the module docstring on one config's durations in run order.

    Args:
        values: durations (any unit; ns in the messages), in run order; NaN dropped.
    """
    return check_each([values])[0]


def check_each(samples: Sequence[np.ndarray | list[float]]) -> list[Populations]:
    """:func:`check` of each sample (one config's durations in run order each), the mixture
    fits of all the samples that need one made together: each EM step is one numpy operation
    for every start of every such sample of the same run count (issue 40: numpy's per-call cost
    on a few runs was most of a warm job's run audit, once per config). Each fit equals the
    sample's fit alone, to the bit (tests/unit/profiling_worker/test_populations.py)."""
    xs = [np.asarray(v, dtype=float) for v in samples]
    xs = [x[np.isfinite(x)] for x in xs]
    screened = [len(x) >= MIN_RUNS and not _too_close_to_split(x) for x in xs]
    prefits = [_prefit(x) if ok else None for x, ok in zip(xs, screened)]
    fits = _fits([x for x, pre in zip(xs, prefits) if pre is not None],
                 [pre[0] for pre in prefits if pre is not None])
    out = []
    for x, ok, pre in zip(xs, screened, prefits):
        mixture = _two_modes(x, pre[1], next(fits)) if pre is not None else None
        out.append(_finding(x, mixture) if ok else
                   Populations(len(x), False) if len(x) < MIN_RUNS else
                   Populations(len(x), True, slow=(False,) * len(x), step_p=_pettitt(x)[1]))
    return out


def _finding(x: np.ndarray, mixture: tuple[np.ndarray, float] | None) -> Populations:
    """The finding on runs ``x`` (at least :data:`MIN_RUNS`, not too close to split) given
    :func:`_two_modes`' verdict on them: the mixture, else Pettitt's step, else one."""
    n = len(x)
    if mixture is not None:
        slow, d = mixture
        return _split(x, slow, two_modes=True, ashman_d=d)
    at, p = _pettitt(x)
    if p < STEP_P:
        after = np.arange(n) >= at
        later_slower = np.median(x[after]) > np.median(x[~after])
        found = _split(x, after if later_slower else ~after, step_at=at, step_p=p)
        if not found.one:
            return found
    return Populations(n, True, slow=(False,) * n, step_p=p)


def _too_close_to_split(x: np.ndarray) -> bool:
    """True when the runs span less than :data:`MIN_SHIFT_PCT` of their median, or span nothing
    (all one value, 0 included, where the mixture's likelihood has no spread to divide by):
    :func:`_split` then finds one population for any split (each group's median lies within
    the span)."""
    span = float(np.max(x) - np.min(x))
    return span == 0 or span < MIN_SHIFT_PCT / 100 * float(np.median(x))


def _split(x: np.ndarray, slow: np.ndarray, **figures: float | int | bool) -> Populations:
    """The result for a split of ``x`` into ``slow`` and the rest; one population when the
    medians differ by less than :data:`MIN_SHIFT_PCT`."""
    fast_med, slow_med = float(np.median(x[~slow])), float(np.median(x[slow]))
    if abs(slow_med - fast_med) < MIN_SHIFT_PCT / 100 * float(np.median(x)):
        return Populations(len(x), True, slow=(False,) * len(x))
    return Populations(len(x), True, slow=tuple(bool(s) for s in slow), fast_median=fast_med,
                       slow_median=slow_med, **figures)  # type: ignore[arg-type]


def _prefit(x: np.ndarray) -> tuple[float, float] | None:
    """(the std dev floor, one normal's log-likelihood) of runs ``x`` when a mixture must be
    fitted to know whether it passes; None when :func:`_mixture_gain_bound` rules every
    mixture out."""
    # a median of 0 (most runs read 0) floors at the mean's scale: a 0 floor divides by 0
    floor = _SD_FLOOR * (float(np.median(np.abs(x))) or float(np.mean(np.abs(x))))
    sd1 = max(float(np.std(x)), floor)
    loglik1 = float(np.sum(_log_normal(x, float(np.mean(x)), sd1)))
    if _mixture_gain_bound(x, floor) - loglik1 < _bic_gain_needed(len(x)) - _BOUND_SLACK:
        return None
    return floor, loglik1


_Fit = tuple[float, np.ndarray, np.ndarray, np.ndarray]  # log-likelihood, weights, means, sds


def _fits(xs: list[np.ndarray], floors: list[float]) -> Iterator[list[_Fit | None]]:
    """The fits from the four starts (:data:`_STARTS`' quantiles) of each of ``xs``, in order:
    those of the same run count stepped together (:func:`_em_starts`)."""
    by_n: dict[int, list[int]] = {}
    for i, x in enumerate(xs):
        by_n.setdefault(len(x), []).append(i)
    out: list[list[_Fit | None]] = [[] for _ in xs]
    k = len(_STARTS)
    for group in by_n.values():
        # every start's quantiles in one call: the same values as a call per start
        starts = [s for i in group for s in np.quantile(xs[i], _STARTS)]
        found = _em_starts(np.repeat(np.stack([xs[i] for i in group]), k, axis=0), starts,
                           np.repeat([floors[i] for i in group], k))
        for j, i in enumerate(group):
            out[i] = found[j * k:(j + 1) * k]
    return iter(out)


def _two_modes(x: np.ndarray, loglik1: float, fits: list[_Fit | None]
               ) -> tuple[np.ndarray, float] | None:
    """(per run: in the slower component, Ashman's D) when the best of the mixture ``fits``
    of runs ``x`` passes every condition of the module docstring against one normal of
    log-likelihood ``loglik1`` (:func:`_prefit`), else None."""
    n = len(x)
    best: _Fit | None = None
    for fit in fits:
        if fit is not None and (best is None or fit[0] > best[0]):
            best = fit
    if best is None:
        return None
    loglik2, weight, mean, sd = best
    # BIC = k ln n - 2 ln L: one normal has 2 parameters, the mixture 5
    if (2 * math.log(n) - 2 * loglik1) - (5 * math.log(n) - 2 * loglik2) <= BIC_MARGIN:
        return None
    d = abs(mean[1] - mean[0]) / math.sqrt((sd[0] ** 2 + sd[1] ** 2) / 2)
    slow_k = int(np.argmax(mean))
    resp = _responsibilities(x, weight, mean, sd)
    slow = resp[:, slow_k] > 0.5
    small = min(int(slow.sum()), n - int(slow.sum()))
    if d <= ASHMAN_D or min(weight) < MIN_SHARE or small < MIN_RUNS_MODE:
        return None
    return slow, float(d)


def _bic_gain_needed(n: int) -> float:
    """The log-likelihood gain over one normal above which the mixture's BIC wins by
    :data:`BIC_MARGIN` (BIC = k ln n - 2 ln L: one normal has 2 parameters, the mixture 5)."""
    return (BIC_MARGIN + 3 * math.log(n)) / 2


#: Partitions are enumerated up to this many runs (2^(n-1) of them); above, the fit always runs.
_BOUND_MAX_RUNS = 14
#: Kept below the BIC margin for the bound's own rounding (its sums differ from the fit's).
_BOUND_SLACK = 1e-3
_PARTITIONS: dict[int, np.ndarray] = {}


def _partitions(n: int) -> np.ndarray:
    """(k, n) 0/1 rows: every split of n runs into two groups of at least :data:`MIN_RUNS_MODE`
    (each split once: the last run is never in the row's group)."""
    if n not in _PARTITIONS:
        rows = (np.arange(2 ** (n - 1))[:, None] >> np.arange(n)[None, :]) & 1
        size = rows.sum(axis=1)
        _PARTITIONS[n] = rows[(size >= MIN_RUNS_MODE) & (n - size >= MIN_RUNS_MODE)].astype(float)
    return _PARTITIONS[n]


def _mixture_gain_bound(x: np.ndarray, floor: float) -> float:
    """An upper bound of the log-likelihood of any two-normal mixture (std devs at least
    ``floor``) whose runs in the slower component (responsibility above 0.5) and the others
    number at least :data:`MIN_RUNS_MODE` each, as :func:`_two_modes` requires; +inf where
    not computed (more than :data:`_BOUND_MAX_RUNS` runs, a floor of 0).

    Why it bounds (the classification likelihood, e.g. G. Celeux, G. Govaert, Comput. Stat. Data
    Anal. 14 (1992) 315-332): ``ln(w1 f1 + w2 f2) <= ln 2 + max_k ln(w_k f_k)`` per run, and the
    max picks the component that run's responsibility favours, so the mixture's log-likelihood
    is at most ``n ln 2`` plus, for that split of the runs into groups of ``n_k``, the sum over
    groups of ``n_k ln w_k`` (at most ``n_k ln(n_k / n)``, Gibbs' inequality) and of each
    group's normal log-likelihood (at most that of its own mean and its std dev, or ``floor``
    when smaller). The largest over every allowed split bounds the fit's.
    """
    n = len(x)
    if n > _BOUND_MAX_RUNS or not floor > 0:
        return math.inf
    z = x - float(np.mean(x))  # centred: the sums of squares below lose no digits
    rows = _partitions(n)
    sums = rows @ np.stack([z, z * z], axis=1)
    size = rows.sum(axis=1)
    parts = ((size, sums[:, 0], sums[:, 1]),
             (n - size, float(np.sum(z)) - sums[:, 0], float(np.sum(z * z)) - sums[:, 1]))
    total = np.full(len(rows), n * math.log(2))
    for count, s1, s2 in parts:
        var = np.maximum(s2 / count - (s1 / count) ** 2, 0.0)
        sd = np.maximum(np.sqrt(var), floor)
        total += (count * np.log(count / n) - count * np.log(sd) - count * var / (2 * sd * sd)
                  - count / 2 * math.log(2 * math.pi))
    return float(np.max(total))


def _log_normal(x: np.ndarray, mean: float | np.ndarray, sd: float | np.ndarray) -> np.ndarray:
    return -0.5 * ((x - mean) / sd) ** 2 - np.log(sd) - 0.5 * math.log(2 * math.pi)


def _responsibilities(x: np.ndarray, weight: np.ndarray, mean: np.ndarray,
                      sd: np.ndarray) -> np.ndarray:
    """Each run's responsibility of each component: (runs, 2) for one fit's weights, means and
    std devs of shape (2,); (starts, runs, 2) for those of (starts, 2), ``x`` the runs or one
    row of runs per start."""
    if weight.ndim == 2:
        weight, mean, sd = weight[:, None, :], mean[:, None, :], sd[:, None, :]
    logp = np.log(weight) + _log_normal(x[..., None], mean, sd)
    logp -= logp.max(axis=-1, keepdims=True)
    p: np.ndarray = np.exp(logp)
    out: np.ndarray = p / p.sum(axis=-1, keepdims=True)
    return out


def _em(x: np.ndarray, start: np.ndarray, floor: float) -> _Fit | None:
    """EM for two normal components from means ``start`` (A. P. Dempster, N. M. Laird,
    D. B. Rubin, J. R. Stat. Soc. B 39 (1977) 1-38); (log-likelihood, weights, means, std devs),
    None when a component empties."""
    return _em_starts(x, [start], floor)[0]


def _em_starts(x: np.ndarray, starts: list[np.ndarray], floor: float | np.ndarray
               ) -> list[_Fit | None]:
    """:func:`_em` from each of ``starts`` (pairs of means), the starts stepped together: each
    step is one numpy operation for all starts still moving (numpy's per-call cost on a few runs
    was most of a warm job's run audit, issue 40). ``x``: the runs, or one row of runs per start
    (samples of one run count, :func:`check_each`), ``floor`` one or per start. Each start's
    arithmetic is that of a fit of its own, in the same order (elementwise, or summed over the
    runs in run order), and stops at its own step, so each result equals a fit from that start
    alone, to the bit (tests/unit/profiling_worker/test_populations.py)."""
    mean = np.array(starts, dtype=float).reshape(len(starts), 2)
    runs = np.broadcast_to(x, (len(starts), x.shape[-1])) if x.ndim == 1 else x
    # each sample's figures from its own row, as a fit of it alone computes them
    spread = np.array([float(np.std(row)) for row in (runs if x.ndim > 1 else [x])])
    floors = np.broadcast_to(np.asarray(floor, dtype=float), (len(starts),))
    spread = np.broadcast_to(spread, (len(starts),))
    sd = np.repeat(np.maximum(spread / 2, floors)[:, None], 2, axis=1)
    weight = np.full(mean.shape, 0.5)
    tol = np.maximum(spread, floors)  # means settle to 1e-3 of the spread
    alive = mean[:, 0] != mean[:, 1]  # a start whose two means coincide is no fit
    moving = np.flatnonzero(alive)
    for _ in range(_EM_STEPS):
        if not len(moving):
            break
        column = runs[moving][:, :, None]
        resp = _responsibilities(runs[moving], weight[moving], mean[moving], sd[moving])
        mass = resp.sum(axis=1)
        emptied = (mass < 1e-9).any(axis=1)
        alive[moving[emptied]] = False
        moving, resp, mass = moving[~emptied], resp[~emptied], mass[~emptied]
        column = column[~emptied]
        new_mean = (resp * column).sum(axis=1) / mass
        sd[moving] = np.maximum(np.sqrt((resp * (column - new_mean[:, None, :]) ** 2).sum(axis=1)
                                        / mass), floors[moving][:, None])
        weight[moving] = mass / runs.shape[1]
        done = np.max(np.abs(new_mean - mean[moving]), axis=1) <= 1e-3 * tol[moving]
        mean[moving] = new_mean
        moving = moving[~done]
    out: list[_Fit | None] = []
    for k in range(len(starts)):
        if not alive[k]:
            out.append(None)
            continue
        dens = np.log(weight[k]) + _log_normal(runs[k][:, None], mean[k][None, :],
                                               sd[k][None, :])
        top = dens.max(axis=1)
        loglik = float(np.sum(top + np.log(np.exp(dens - top[:, None]).sum(axis=1))))
        out.append((loglik, weight[k].copy(), mean[k].copy(), sd[k].copy()))
    return out


def _pettitt(x: np.ndarray) -> tuple[int, float]:
    """(the first run after the most likely change point, Pettitt's approximate p)."""
    n = len(x)
    # U_t = U_{t-1} + sum_j sign(x_j - x_t) (the sign matrix is antisymmetric), t = 0 .. n-2
    u = np.cumsum(np.sign(x[None, :] - x[:, None]).sum(axis=1))[:-1]
    t = int(np.argmax(np.abs(u)))
    k = float(abs(u[t]))
    p = min(1.0, 2.0 * math.exp(-6.0 * k**2 / (n**3 + n**2)))
    return t + 1, p
