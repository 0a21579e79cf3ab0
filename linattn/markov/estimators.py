r"""Ideal estimators of the Markov-chain task: 1-mem, 2-mem, 1-gen, 2-gen and the Bayes predictor.

Gibson, Cui & Reddy, arXiv:2604.12151, compare a trained transformer with four ideal next-token predictors
(their code: ``transformer/base/estimators/markov_model_ar.py`` of GitHub
``cole-gibson/context-adaptive-transformer``). At position ``n`` (context ``x_0 … x_n``) a predictor gives
``p̂(· | x_{0:n})`` and pays the log-loss ``ℓ_n = −log p̂(x_{n+1} | x_{0:n})`` (nats), ``n = 0 … L−2``.
With the pool ``T_1 … T_K``, its stationary laws ``π_k`` and the first-state laws ``φ_k = p(x_0 | T_k)``:

* **1-mem** (retrieval from unigram statistics):
  ``w_k ∝ Π_{i≤n} π_k(x_i)``, ``p̂(y) = Σ_k w_k T_k(x_n, y)`` (the authors' definition: unigram likelihood
  of the whole context, including ``x_n``, uniform prior, prediction with the transition rows).
* **2-mem** (retrieval from bigram statistics, the authors' version): at ``n = 0`` as 1-mem
  (``w_k ∝ π_k(x_0)``); for ``n ≥ 1`` ``w_k ∝ Π_{i<n} T_k(x_i, x_{i+1})`` — the first state's law is
  *dropped*, so 2-mem is not the Bayes predictor of the pool (see **bayes**).
* **1-gen** (unigram counts): ``p̂(y) = (N_y + β)/(n + 1 + Cβ)``, ``N_y = #{i ≤ n : x_i = y}``; the authors use
  ``β = α`` (and doubt it). A Markov path is not i.i.d., so no pseudocount makes 1-gen Bayes; for i.i.d.
  draws from a ``Dirichlet(β·1)`` law matched in variance to the stationary law of a random chain,
  ``β* ≈ Cα + 1 − 1/C`` (:func:`matched_pseudocount`; docs/markov.md derives it and measures both).
* **2-gen** (bigram counts): ``p̂(y) = (N_{x_n→y} + α)/(N_{x_n} + Cα)``, the Dirichlet posterior predictive of
  the row ``x_n`` from the transitions ``x_i → x_{i+1}``, ``i < n`` (at ``n = 0``: uniform).
* **bayes**: the exact posterior predictive of the law :class:`~linattn.markov.Chains`. Finite ``K``:
  ``w_k ∝ φ_k(x_0) Π_{i<n} T_k(x_i, x_{i+1})``, ``p̂(y) = Σ_k w_k T_k(x_n, y)``. ``K = ∞`` (fresh chains): with
  ``first_state="uniform"`` ``x_0`` carries no information and bayes = 2-gen exactly; with ``"onestep"``
  (``φ_T(j) = (1/C) Σ_i T_ij``, linear in ``T``) the Dirichlet size-bias identity
  ``E_D[T_{ay} h(T)] = E_D[T_{ay}] E_{D + e_{ay}}[h(T)]`` gives the exact closed form
  ``p̂(y) = p̂_{2-gen}(y) g(N + e_{x_n y})/g(N)``, ``g(N) = Σ_i (α + N_{i→x_0})/(N_i + Cα)``; with
  ``"stationary"`` ``g(N) = E_{D(N)}[π_T(x_0)]`` has no closed form and is estimated by ``n_mc`` draws from the
  Dirichlet posterior ``D(N)`` (a ratio estimate: bias ``O(1/n_mc)`` in ``ℓ_n``). In every case the total gain
  over 2-gen telescopes: ``Σ_{n<L−1} (ℓ^{2gen}_n − ℓ^{bayes}_n) = log(C g(N_{L−1}))`` per sequence, whose mean
  tends to ``log C − E[H(π_T)]`` (``"stationary"``) as ``L → ∞``.

Also **true**: ``−log T(x_n, x_{n+1})`` with the sequence's own chain (the oracle; :func:`losses` only).

Kernels: numba, one pass per sequence, no ``(n_seq, L, C)`` array for :func:`losses`. Posterior weights
over the pool are kept normalized in linear space (``w_k ← w_k f_k / Σ_j w_j f_j``; for the bigram
likelihoods that sum is the next-token probability itself), beside the exact running log-likelihoods ``ll_k``
and the log normalizer ``z`` (``w_k = exp(ll_k − z)``). Weights below ``1e-300`` are set to 0; if a weight is
below ``1e-280`` while ``ll_k − z > −600`` (it underflowed and the data now favour its chain again), and every
64 positions, the weights are recomputed from ``ll`` by log-sum-exp. The posterior is therefore as accurate
as log-sum-exp over any number of positions (checked against it to 1e-10), at ``O(K)`` cost per position
without an ``exp`` per chain and position.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from .. import check
from ..numerics.stats import mean_se
from ..random_kernels import next_uniform, seed_state
from ..results import python_scalars, short_repr
from .chains import (
    Chains,
    blame_concentration,
    draw_chains_kernel,
    first_law,
    guard_memory,
    guard_work,
    log_gamma_variate,
    named_first_law,
    named_stationary,
    paths_kernel,
    transition_matrices,
)

NAMES = ("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true")
_KIND = {"1-mem": 0, "2-mem": 1, "1-gen": 2, "2-gen": 3, "bayes": 4, "true": 5}
_FIRST = {"stationary": 0, "uniform": 1, "onestep": 2}
_TINY = 1e-280  # a weight below this ...
_GAP = 600.0    # ... while ll_k − z exceeds −_GAP (an underflowed weight that recovered): recompute all
_BLOCK = 4096   # sequences per block in losses() (results do not depend on it)


# ----------------------------------------------------------------------------- numba kernels
@numba.njit(cache=True)
def _resync(ll, w):
    """``w = softmax(ll)`` by log-sum-exp (weights below ``e^−690`` of the best set to 0: no subnormal numbers);
    returns the log normalizer ``z = log Σ_k exp(ll_k)``, so that ``w_k = exp(ll_k − z)``."""
    top = -np.inf
    for k in range(ll.shape[0]):
        if ll[k] > top:
            top = ll[k]
    s = 0.0
    for k in range(ll.shape[0]):
        w[k] = np.exp(ll[k] - top) if ll[k] - top > -690.0 else 0.0
        s += w[k]
    for k in range(ll.shape[0]):
        w[k] /= s
    return top + np.log(s)


@numba.njit(cache=True, inline="always")
def _update(ll, w, f, lf, i, j, inv, z):
    """Posterior step ``ll_k += lf[i, j, k]``, ``w_k ← w_k f[i, j, k] · inv`` with ``inv = 1/Σ_k w_k f[i, j, k]``;
    ``z`` is the log normalizer after the step (``w_k = exp(ll_k − z)``). Weights below ``1e-300`` are set to 0
    (below the roundoff of the sum; subnormal numbers are slow). Returns True if a weight is below ``1e-280``
    while ``ll_k − z > −600`` (it underflowed earlier and has recovered): the caller then recomputes all
    weights from ``ll`` (:func:`_resync`). Indices rather than slices: no reference counting per position."""
    thr = z - _GAP
    bad = False
    for k in range(ll.shape[0]):
        ll[k] += lf[i, j, k]
        v = w[k] * f[i, j, k] * inv
        w[k] = v if v >= 1e-300 else 0.0
        bad |= (v < _TINY) & (ll[k] > thr)
    return bad


@numba.njit(cache=True, inline="always")
def _mix(w, f, i, j):
    """``Σ_k w_k f[i, j, k]`` with four partial sums (independent additions pipeline: ~20 % faster at K = 16)."""
    K = w.shape[0]
    p0, p1, p2, p3 = 0.0, 0.0, 0.0, 0.0
    k = 0
    while k + 4 <= K:
        p0 += w[k] * f[i, j, k]
        p1 += w[k + 1] * f[i, j, k + 1]
        p2 += w[k + 2] * f[i, j, k + 2]
        p3 += w[k + 3] * f[i, j, k + 3]
        k += 4
    while k < K:
        p0 += w[k] * f[i, j, k]
        k += 1
    return (p0 + p1) + (p2 + p3)


@numba.njit(cache=True)
def _g_onestep(cnt2, rowc, x0, concentration, C):
    """``g(N) = Σ_i (α + N_{i→x0})/(N_i + Cα)`` (module docstring)."""
    g = 0.0
    for i in range(C):
        g += (concentration + cnt2[i, x0]) / (rowc[i] + C * concentration)
    return g


@numba.njit(cache=True)
def _stationary_small(T, A, pi):
    """Stationary law of one irreducible chain (Grassmann–Taksar–Heyman), into ``pi``; ``A`` is scratch."""
    C = T.shape[0]
    for i in range(C):
        for j in range(C):
            A[i, j] = T[i, j]
    for n in range(C - 1, 0, -1):
        s = 0.0
        for j in range(n):
            s += A[n, j]
        if not s > 0.0:
            return False
        for i in range(n):
            A[i, n] /= s
        for i in range(n):
            for j in range(n):
                A[i, j] += A[i, n] * A[n, j]
    pi[0] = 1.0
    tot = 1.0
    for j in range(1, C):
        v = 0.0
        for i in range(j):
            v += pi[i] * A[i, j]
        pi[j] = v
        tot += v
    for j in range(C):
        pi[j] /= tot
    return True


@numba.njit(cache=True)
def _stationary_mc(cnt2, a, x0, concentration, n_mc, state, G, T, A, pi, gy):
    """``gy[y] = (1/n_mc) Σ_m π_{T^{(m,y)}}(x_0)``: Monte Carlo of ``g(N + e_{a y}) = E_{D(N + e_{ay})}[π_T(x_0)]``
    for every ``y`` with common random numbers: a draw ``G_{ij} ~ Gamma(α + N_{ij})`` and ``E ~ Exp(1)`` gives
    ``T^{(m,y)}`` with rows ``G_{i·}/Σ_j G_{ij}``, except row ``a`` built from ``G_{a·} + E e_y`` (a Gamma
    variate plus an independent ``Exp(1)`` is ``Gamma(shape + 1)``). Returns ``False`` if a draw is reducible."""
    C = cnt2.shape[0]
    for y in range(C):
        gy[y] = 0.0
    for m in range(n_mc):
        for i in range(C):
            for j in range(C):
                G[i, j] = np.exp(log_gamma_variate(concentration + cnt2[i, j], state))
        e = -np.log(1.0 - next_uniform(state))
        for i in range(C):
            if i == a:
                continue
            s = 0.0
            for j in range(C):
                s += G[i, j]
            for j in range(C):
                T[i, j] = G[i, j] / s
        sa = 0.0
        for j in range(C):
            sa += G[a, j]
        for y in range(C):
            for j in range(C):
                T[a, j] = (G[a, j] + (e if j == y else 0.0)) / (sa + e)
            if not _stationary_small(T, A, pi):
                return False
            gy[y] += pi[x0]
    for y in range(C):
        gy[y] /= n_mc
    return True


@numba.njit(cache=True)
def _mem_seq(x, kind, Tp, logTp, pip, logpip, logfp, w, ll, loss, probs, want):
    """1-mem (``kind`` 0), 2-mem (1) and bayes over the pool (4) for one sequence (see :func:`_seq`): posterior
    weights ``w`` (normalized, linear), log-likelihoods ``ll`` and log normalizer ``z`` (module docstring).
    A function of its own: small enough for the compiler to keep the loop over the pool tight."""
    L = x.shape[0]
    K = Tp.shape[2]
    C = Tp.shape[1]
    x0 = x[0]
    for k in range(K):
        ll[k] = logfp[x0, k] if kind == 4 else logpip[0, x0, k]
    z = _resync(ll, w)
    for n in range(L - 1):
        a = x[n]
        b = x[n + 1]
        p = _mix(w, Tp, a, b)  # p(y) = Σ_k w_k T_k(a, y) at the realized y = b
        if want:
            for y in range(C):
                probs[n, y] = _mix(w, Tp, a, y)
        if p <= 0.0:
            loss[n] = np.inf
            return n
        lp = np.log(p)
        loss[n] = -lp
        if kind == 0:  # 1-mem: the weights follow the unigram likelihood, not the predicted token
            s = _mix(w, pip, 0, b)
            z += np.log(s)
            bad = _update(ll, w, pip, logpip, 0, b, 1.0 / s, z)
        elif kind == 1 and n == 0:  # the authors' 2-mem drops π_k(x_0) from n = 1 on
            for k in range(K):
                ll[k] = logTp[a, b, k]
            bad = True
        else:  # bigram likelihood: the normalizer of the update is p itself
            z += lp
            bad = _update(ll, w, Tp, logTp, a, b, 1.0 / p, z)
        if bad or n % 64 == 63:  # and bound the roundoff drift of the linear weights (K exps per 64 steps)
            z = _resync(ll, w)
    return -1


@numba.njit(cache=True)
def _seq(x, kind, C, concentration, pseudo, first, n_mc, Tp, logTp, pip, logpip, logfp, Ttrue,
         cnt, cnt2, rowc, w, ll, state, G, T, A, pi, gy, loss, probs, want):
    """Log-losses ``loss[n] = −log p̂(x_{n+1} | x_{0:n})`` of one sequence for one estimator (and the full
    predictive rows into ``probs`` if ``want``). Pool arrays are laid out state-major, chain-minor:
    ``Tp[a, y, k] = T_k(a, y)``, ``pip[0, y, k] = π_k(y)``, ``logfp[y, k] = log φ_k(y)``. ``kind``: 0 1-mem,
    1 2-mem, 2 1-gen, 3 2-gen, 4 bayes (pool if ``K > 0``, fresh chains if ``K == 0``), 5 true.
    Returns −1, or the position where the pool gave the observed token probability 0 (−2: a reducible
    Monte Carlo draw)."""
    L = x.shape[0]
    K = Tp.shape[2]
    fresh_bayes = kind == 4 and K == 0
    if kind == 2 or kind == 3 or fresh_bayes:
        for c in range(C):
            cnt[c] = 0.0
            rowc[c] = 0.0
            for d in range(C):
                cnt2[c, d] = 0.0
    x0 = x[0]
    if kind == 0 or kind == 1 or kind == 4 and K > 0:
        return _mem_seq(x, kind, Tp, logTp, pip, logpip, logfp, w, ll, loss, probs, want)
    for n in range(L - 1):
        a = x[n]
        b = x[n + 1]
        if kind == 5:
            loss[n] = -np.log(Ttrue[a, b])
            continue
        if kind == 2:  # 1-gen
            cnt[a] += 1.0
            den = n + 1.0 + C * pseudo
            loss[n] = -np.log((cnt[b] + pseudo) / den)
            if want:
                for y in range(C):
                    probs[n, y] = (cnt[y] + pseudo) / den
            continue
        if kind == 3 or fresh_bayes:  # 2-gen, and Bayes of fresh chains
            den = rowc[a] + C * concentration
            if kind == 3 or first == 1:
                loss[n] = -np.log((cnt2[a, b] + concentration) / den)
                if want:
                    for y in range(C):
                        probs[n, y] = (cnt2[a, y] + concentration) / den
            else:
                if first == 2:  # onestep: exact g(N + e_ay)
                    g = _g_onestep(cnt2, rowc, x0, concentration, C)
                    old = (concentration + cnt2[a, x0]) / den
                    for y in range(C):
                        gy[y] = g - old + (concentration + cnt2[a, x0] + (1.0 if y == x0 else 0.0)) / (den + 1.0)
                elif not _stationary_mc(cnt2, a, x0, concentration, n_mc, state, G, T, A, pi, gy):
                    return -2
                norm = 0.0
                for y in range(C):
                    norm += (cnt2[a, y] + concentration) * gy[y]
                loss[n] = -np.log((cnt2[a, b] + concentration) * gy[b] / norm)
                if want:
                    for y in range(C):
                        probs[n, y] = (cnt2[a, y] + concentration) * gy[y] / norm
            cnt2[a, b] += 1.0
            rowc[a] += 1.0
            continue
    return -1


@numba.njit(cache=True)
def _run(states, kind, C, concentration, pseudo, first, n_mc, seed, stream0, Tp, logTp, pip, logpip, logfp, Ttrue, task,
         loss, probs, want, total, total_sq, accumulate):
    """Every sequence of ``states``: write its losses into ``loss[s]`` (and ``probs[s]`` if ``want``), or,
    if ``accumulate``, add ``ℓ_n − log C`` and its square into ``total`` and ``total_sq``. The Monte Carlo of sequence
    ``s`` (bayes, fresh chains, stationary first state) uses the stream ``(seed, stream0 + s)``.
    Returns −1, or ``(s, code)`` information as ``s * 4 + (0 if zero probability else 1)``."""
    n_seq, L = states.shape
    K = max(Tp.shape[2], 1)
    cnt = np.zeros(C)
    cnt2 = np.zeros((C, C))
    rowc = np.zeros(C)
    w = np.zeros(K)
    ll = np.zeros(K)
    state = np.zeros(4, np.uint64)
    G = np.zeros((C, C))
    T = np.zeros((C, C))
    A = np.zeros((C, C))
    pi = np.zeros(C)
    gy = np.zeros(C)
    for s in range(n_seq):
        if kind == 4 and first == 0:
            seed_state(seed, stream0 + s, state)
        row = 0 if accumulate else s
        bad = _seq(states[s], kind, C, concentration, pseudo, first, n_mc, Tp, logTp, pip, logpip, logfp,
                   Ttrue[task[s]],
                   cnt, cnt2, rowc, w, ll, state, G, T, A, pi, gy, loss[row], probs[s if want else 0], want)
        if bad != -1:
            return s * 4 + (1 if bad == -2 else 0)
        if accumulate:  # shifted by log C (the uniform predictor's loss) against cancellation in the variance
            for n in range(L - 1):
                d = loss[0, n] - np.log(C)
                total[n] += d
                total_sq[n] += d * d
    return -1


# ----------------------------------------------------------------------------- public functions
def matched_pseudocount(C, concentration):
    r"""Pseudocount ``β* = Cα + 1 − 1/C`` of 1-gen: the symmetric Dirichlet whose variance matches the
    stationary law of a random chain to leading order (docs/markov.md).

    The stationary law of ``T`` with i.i.d. ``Dirichlet(α·1_C)`` rows is, to leading order in the fluctuations,
    the column mean ``π_j ≈ (1/C) Σ_i T_ij``: ``Var π_j ≈ (1/C)(1 − 1/C)/(C(Cα + 1))``; a ``Dirichlet(β·1_C)``
    law has ``Var = (1/C)(1 − 1/C)/(Cβ + 1)``, equal for ``β = Cα + 1 − 1/C``. For i.i.d. draws from that
    law the Bayes predictive is ``(N_y + β)/(n + 1 + Cβ)``. The authors of arXiv:2604.12151 use ``β = α``.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration of the rows, ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``C·α`` exceeds float64 (``concentration`` above ``1.8e308/C``).
    """
    C = check.positive_int("C", C, minimum=2)
    concentration = check.positive("concentration", concentration)
    if not math.isfinite(C * concentration):
        check.fail("concentration", concentration,
                   f"a real number in (0, {np.finfo(float).max / C:.4g}] (C * concentration finite in float64; "
                                   f"C = {C})")
    return C * concentration + 1.0 - 1.0 / C


def _names(names, K, first_state):
    allowed = NAMES if K is not None else ("1-gen", "2-gen", "bayes", "true")
    if names is None:
        # bayes is Monte Carlo only for fresh chains with stationary first states (module docstring): named only
        return tuple(nm for nm in allowed if not (nm == "bayes" and K is None and first_state == "stationary"))
    if isinstance(names, str):
        names = (names,)
    if not isinstance(names, (list, tuple)) or not names:
        check.fail("names", names, f"a non-empty sequence of names from {allowed}")
    names = tuple(names)
    for nm in names:
        check.choice("names", nm, allowed)
    return names


def _pool_layout(pool, first_state, C):
    """State-major pool arrays for the kernels (``K = 0`` arrays if ``pool`` is None)."""
    if pool is None:
        z = np.zeros((C, C, 0))
        return z, z, np.zeros((1, C, 0)), np.zeros((1, C, 0)), np.zeros((C, 0))
    with np.errstate(divide="ignore"):
        Tp = np.ascontiguousarray(pool.transpose(1, 2, 0))
        pi = np.ascontiguousarray(named_stationary("pool", pool).T)[None]
        phi = np.ascontiguousarray(named_first_law("pool", pool, first_state).T)
        return Tp, np.log(Tp), pi, np.log(pi), np.log(phi)


def _states(states, C, plan=None):
    """``states`` as a contiguous int64 array (n_seq, L) of states in ``0 … C−1``. ``plan(n_seq, L)``: the memory
    terms of the caller's work (:func:`~linattn.markov.chains.guard_memory`), checked with the copies made here before
    any of them (a broadcast view of a few bytes may stand for gigabytes)."""
    try:
        shape = np.shape(states)
    except (ValueError, TypeError):     # ragged: refused below, naming states
        shape = ()
    if plan is not None and len(shape) == 2:
        n = float(shape[0]) * shape[1]
        terms, what = plan(shape[0], shape[1])
        # the float64 copy, its rounding and the int64 result (check.finite_array, then here)
        guard_memory([(40.0, [("states", n)])] + terms, what)
    x = check.finite_array("states", states, ndim=2)
    if x.shape[1] < 2 or x.shape[0] < 1:
        check.fail("states", f"<array with shape {x.shape}>", "an array of shape (n_seq >= 1, length >= 2)")
    if np.any(x != np.round(x)) or np.any(x < 0) or np.any(x > C - 1):
        check.fail("states", f"<array with values in [{x.min():g}, {x.max():g}]>", f"integers in 0 … {C - 1}")
    return np.ascontiguousarray(x, dtype=np.int64)


def _fail_kernel(code, name, chains, offset=0):
    s, kind = divmod(code, 4)
    if kind == 1:
        raise ValueError(f"bayes: a Monte Carlo draw from the Dirichlet posterior was a reducible chain (entries "
                         f"underflowed to 0) for sequence {s + offset}; concentration = {chains.concentration} is "
                         "too small for first_state='stationary' with K=None")
    raise ValueError(f"{name}: the pool gives probability 0 to a transition observed in sequence {s + offset} "
                     "(transition-matrix entries that underflowed to 0, concentration too small): the log-loss is "
                     "infinite")


def _concentration(a, C):
    """A Dirichlet concentration (``α`` or 1-gen's ``β``) as the estimator kernels use it: ``a`` itself, or where
    ``C·a`` overflows float64 (``a > 1.8e308/C``, the counts negligible: every predictive is ``1/C``) the
    largest value that keeps ``C·a`` finite, with the same predictive ``1/C`` to roundoff."""
    return a if math.isfinite(C * a) else float(np.finfo(float).max) / (4.0 * C)


def _setup(name, pool, chains, pseudocount, n_mc):
    if chains is not None and not isinstance(chains, Chains):
        raise ValueError(f"chains must be a linattn.markov.Chains or None; got {type(chains).__name__}")
    check.choice("name", name, NAMES[:5])
    if name in ("1-gen", "2-gen", "bayes") and chains is None:
        raise ValueError(f"chains must be a linattn.markov.Chains for name={name!r} (it sets concentration and the "
                         "first-state law); got None")
    needs_pool = name in ("1-mem", "2-mem") or name == "bayes" and chains.K is not None
    if needs_pool:
        if pool is None:
            raise ValueError(f"pool must be an array of shape (K, C, C) for name={name!r}; got None")
        try:
            shape = np.shape(pool)
        except (ValueError, TypeError):  # ragged: refused below, naming pool
            shape = ()
        if len(shape) == 3:              # its copies and state-major layout, before the first copy
            guard_memory([(48.0, [("pool", float(shape[0]) * shape[1] * shape[2])])],
                         f"the pool of {shape[0]} chains of {shape[1]} x {shape[2]} and its layout")
        pool = transition_matrices("pool", pool, min_ndim=3)
        if pool.ndim != 3 or chains is not None and pool.shape[1] != chains.C:
            want = "(K, C, C)" if chains is None else f"(K, {chains.C}, {chains.C})"
            check.fail("pool", f"<array with shape {pool.shape}>", f"an array of shape {want}")
        if name == "bayes" and pool.shape[0] != chains.K:
            check.fail("pool", f"<array with shape {pool.shape}>", f"the pool of chains.K = {chains.K} chains")
    else:                                # not used by this estimator; a pool given anyway must still be a pool
        if pool is not None:
            transition_matrices("pool", pool, min_ndim=3)
        pool = None
    C = chains.C if chains is not None else pool.shape[1]
    concentration = chains.concentration if chains is not None else 1.0
    first = chains.first_state if chains is not None else "stationary"
    pseudo = concentration if pseudocount is None else check.positive("pseudocount", pseudocount)
    n_mc = check.positive_int("n_mc", n_mc)
    return pool, C, _concentration(concentration, C), first, _concentration(pseudo, C), n_mc


def log_losses(states, name, pool=None, chains=None, pseudocount=None, n_mc=64, rng=None):
    r"""Per-token log-losses ``ℓ_n = −log p̂(x_{n+1} | x_{0:n})`` of one estimator (module docstring).

    Parameters
    ----------
    states : array_like of int, shape (n_seq, length)
        Sequences (``length >= 2``), states in ``0 … C−1``.
    name : {"1-mem", "2-mem", "1-gen", "2-gen", "bayes"}
    pool : array_like, shape (K, C, C), optional
        The pool: required by 1-mem, 2-mem, and by bayes when ``chains.K`` is finite.
    chains : Chains, optional
        The task law (``α``, first-state law); required by 1-gen, 2-gen and bayes.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``, the authors'; :func:`matched_pseudocount`).
    n_mc : int
        Posterior draws per position of bayes with ``K = None`` and ``first_state="stationary"``.
    rng : None, int, tuple of ints or numpy.random.Generator
        Seeds that Monte Carlo only.

    Returns
    -------
    ndarray, shape (n_seq, length − 1)
    """
    return _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want=False)[0]


def predict(states, name, pool=None, chains=None, pseudocount=None, n_mc=64, rng=None):
    r"""Predictive probabilities ``p̂(y | x_{0:n})`` of one estimator for ``n = 0 … L−2`` (module docstring),
    e.g. for the KL divergence of a trained transformer to each estimator (arXiv:2604.12151).

    Parameters are those of :func:`log_losses`.

    Returns
    -------
    ndarray, shape (n_seq, length − 1, C)
        Rows sum to 1; ``−log`` of the entry at ``x_{n+1}`` is :func:`log_losses`.

    Examples
    --------
    >>> import numpy as np
    >>> from linattn import markov
    >>> ch = markov.Chains(C=3, concentration=1.0)
    >>> s = ch.sample(2, 5, rng=0)
    >>> p = markov.predict(s.states, "2-gen", chains=ch)
    >>> p.shape, bool(np.allclose(p.sum(-1), 1.0))
    ((2, 4, 3), True)
    """
    return _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want=True)[1]


def _cost(name, positions, C, K, first, n_mc, c_name, k_name):
    """Operations of one estimator over ``positions`` positions (a list of ``(argument, factor)``): ``O(KC + C²)``
    each, ``O(n_mc C³)`` for the Monte Carlo bayes (fresh chains, stationary first state); as monomials for
    :func:`~linattn.markov.chains.guard_work`, ``C`` named ``c_name`` and ``K`` named ``k_name``."""
    if name == "bayes" and K == 0 and first == "stationary":
        return [(1.0, positions + [("n_mc", n_mc), (c_name, C**3 + C * C)])]
    return [(1.0, positions + [(k_name, K), (c_name, C)]), (1.0, positions + [(c_name, C * C)])]


def _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want):
    pool, C, concentration, first, pseudo, n_mc = _setup(name, pool, chains, pseudocount, n_mc)
    c_name = "pool" if chains is None else "chains.C"

    def plan(n_seq, L):
        pos = [("states", n_seq * (L - 1.0))]
        scratch = (40.0, [(c_name, C * C)])     # the kernel's four C x C work arrays and the placeholder chain
        return ([(8.0, pos), scratch] + ([(8.0, pos + [(c_name, C)])] if want else []),
                f"predictions of {n_seq} sequences")
    x = _states(states, C, plan)
    n_seq, L = x.shape
    guard_work(_cost(name, [("states", n_seq * (L - 1.0))], C, 0 if pool is None else pool.shape[0], first, n_mc,
                     c_name, "pool"), f"{name} on {n_seq} sequences of {L} states")
    gen = check.rng(rng)                 # checked whether or not this estimator draws from it
    seed = check.seed_int("rng", gen) if name == "bayes" and first == "stationary" else 0
    Tp, logTp, pip, logpip, logfp = _pool_layout(pool, first, C)
    loss = np.empty((n_seq, L - 1))
    probs = np.empty((n_seq, L - 1, C) if want else (1, L - 1, C))
    dummy = np.ones((1, C, C))
    code = _run(x, _KIND[name], C, concentration, pseudo, _FIRST[first], n_mc, seed, 0, Tp, logTp, pip, logpip, logfp,
                dummy, np.zeros(n_seq, np.int64), loss, probs, want, np.zeros(1), np.zeros(1), False)
    if code != -1:
        _fail_kernel(code, name, chains)
    return loss, probs


def log_losses_naive(states, name, pool=None, chains=None, pseudocount=None):
    r"""The same log-losses as :func:`log_losses`, by the straightforward vectorized numpy route (cumulative
    one-hot counts and per-chain log-likelihoods over all positions at once, posteriors by log-sum-exp, as in
    the authors' ``markov_model_ar.py``): ``O(n_seq L (C² + K))`` memory. For tests and the benchmark; bayes of
    fresh chains only for ``first_state="uniform"`` (= 2-gen).

    Parameters are those of :func:`log_losses`.

    Returns
    -------
    ndarray, shape (n_seq, length − 1)
    """
    pool, C, concentration, first, pseudo, _ = _setup(name, pool, chains, pseudocount, 1)
    if name == "bayes" and pool is None and first != "uniform":
        raise ValueError(f"log_losses_naive covers bayes of fresh chains for first_state='uniform' only; got "
                         f"{first!r}")
    c_name = "pool" if chains is None else "chains.C"

    def plan(n_seq, L):
        pos = [("states", n_seq * (L - 1.0))]
        if name == "1-gen":         # one-hot states and their running counts
            terms = [(16.0, pos + [(c_name, C)])]
        elif pool is None:          # one-hot bigrams, running counts, counts before n; the rows N_{x_n → ·}
            terms = [(24.0, pos + [(c_name, C * C)]), (8.0, pos + [(c_name, C)])]
        else:                       # (n_seq, L − 1, K) log-likelihoods, weights and their products; the pool's logs
            terms = [(48.0, pos + [("pool", pool.shape[0])]), (32.0, [("pool", pool.shape[0] * C * C)])]
        return terms, f"the one-hot counts of {n_seq} sequences of {L} states"
    x = _states(states, C, plan)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _naive(x, name, pool, C, concentration, first, pseudo)
    bad = ~np.isfinite(out)
    if bad.any():                   # the ValueError of log_losses: the pool gives probability 0 to a transition
        _fail_kernel(int(np.argmax(bad.any(axis=1))) * 4, name, chains)
    return out


def _one_hot(index, size):
    """``np.eye(size)[index]`` without the ``size × size`` identity."""
    out = np.zeros(index.shape + (size,))
    np.put_along_axis(out, index[..., None], 1.0, axis=-1)
    return out


def _naive(x, name, pool, C, concentration, first, pseudo):
    """The vectorized log-losses of :func:`log_losses_naive` (``inf``/NaN where the pool gives a transition
    probability 0)."""
    n_seq, L = x.shape
    a, b = x[:, :-1], x[:, 1:]
    if name == "1-gen":
        counts = np.cumsum(_one_hot(a, C), axis=1)  # N_y over x_0 … x_n
        num = np.take_along_axis(counts, b[..., None], axis=-1)[..., 0] + pseudo
        return -np.log(num / (np.arange(1, L) + C * pseudo))
    if pool is None:  # 2-gen (and bayes of fresh chains with a uniform first state)
        onehot = _one_hot(a * C + b, C * C)
        before = (np.cumsum(onehot, axis=1) - onehot).reshape(n_seq, L - 1, C, C)  # transitions before n
        rows = np.take_along_axis(before, a[..., None, None], axis=2)[:, :, 0, :]  # N_{x_n → ·}
        num = np.take_along_axis(rows, b[..., None], axis=-1)[..., 0] + concentration
        return -np.log(num / (rows.sum(-1) + C * concentration))
    logT = np.log(pool)
    logpi = np.log(named_stationary("pool", pool))
    logphi = np.log(named_first_law("pool", pool, first))
    step = np.moveaxis(logT[:, a, b], 0, -1)  # (n_seq, L−1, K): log T_k(x_n, x_{n+1})
    if name == "1-mem":
        ll = np.cumsum(np.moveaxis(logpi[:, x[:, :-1]], 0, -1), axis=1)
    else:
        ll = np.concatenate([np.zeros_like(step[:, :1]), np.cumsum(step[:, :-1], axis=1)], axis=1)
        if name == "2-mem":
            ll[:, 0] = logpi[:, x[:, 0]].T
        else:
            ll += logphi[:, x[:, 0]].T[:, None, :]
    top = ll.max(-1, keepdims=True)
    w = np.exp(ll - top)
    w /= w.sum(-1, keepdims=True)
    return -np.log(np.sum(w * np.exp(step), axis=-1))


@dataclass(frozen=True)
class LossCurves:
    r"""Mean log-loss of the estimators at each position (:func:`losses`).

    Attributes
    ----------
    mean, se : dict of str -> ndarray (length − 1,)
        ``E ℓ_n`` (nats) for ``n = 0 … L−2`` and its standard error (over pools if ``n_pools > 1``, else over
        sequences), per estimator name.
    names : tuple of str
    chains : Chains
    n_seq, length, n_pools : int
        Sequences per pool, states per sequence, pools.
    on : str
        ``"pool"`` or ``"fresh"`` (the chains the sequences come from).
    pseudocount : float
        1-gen's ``β``.
    n_mc : int
    """

    __repr__ = short_repr

    mean: dict = field(repr=False)
    se: dict = field(repr=False)
    names: tuple
    chains: Chains
    n_seq: int
    length: int
    n_pools: int
    on: str
    pseudocount: float
    n_mc: int

    def __post_init__(self):
        python_scalars(self)


def losses(chains, n_seq, length, rng, n_pools=1, on="pool", names=None, pseudocount=None, n_mc=64):
    r"""Mean log-loss vs position of the ideal estimators on sequences of the Markov-chain task (module
    docstring; arXiv:2604.12151, their Fig. of estimator losses).

    Finite ``K``: each of ``n_pools`` pools is drawn fresh; ``on="pool"``: ``n_seq`` sequences from the pool's
    chains (exactly ``chains.sample(n_seq, length, rng)`` for one pool); ``on="fresh"``: from fresh chains
    (the pool drawn first, then ``Chains(C, α, None, first_state).sample`` from the same generator), the
    memorizing estimators and bayes still using the pool (bayes is then the Bayes predictor of the
    *training* law, evaluated out of distribution). ``K = None``: fresh chains, ``n_pools = 1``.
    The sums run in numba over blocks of sequences; the numbers do not depend on the block size.

    Parameters
    ----------
    chains : Chains
    n_seq : int
        Sequences per pool (``>= 2`` if ``n_pools == 1``).
    length : int
        States per sequence, ``L >= 2``.
    rng : None, int, tuple of ints or numpy.random.Generator
    n_pools : int
        Pools (finite ``K``); the s.e. is over pools if ``>= 2``.
    on : {"pool", "fresh"}
    names : sequence of str, optional
        Default: every estimator that is exact, at ``O(K)`` (pool) or ``O(C)`` (fresh chains) work per position:
        all of ``("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true")`` (finite ``K``), or
        ``("1-gen", "2-gen", "bayes", "true")`` (``K = None``) — but without ``"bayes"`` for ``K = None`` with
        ``first_state="stationary"``, where it is a Monte Carlo over ``n_mc`` posterior draws of a ``C × C`` chain
        and its stationary law per position (``O(n_mc C³)``; measured: ``C = 10``, ``L = 102``, 2000 sequences,
        ``n_mc = 64``: 89 s on one core, against 0.1 s for the default estimators): name it to get it.
        "true" is the oracle ``−log T(x_n, x_{n+1})``.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``).
    n_mc : int
        Posterior draws per position of bayes for ``K = None``, ``first_state="stationary"``.

    Returns
    -------
    LossCurves

    Examples
    --------
    >>> from linattn import markov
    >>> r = markov.losses(markov.Chains(C=3, concentration=1.0, K=4), n_seq=200, length=20, rng=0)
    >>> r.mean["bayes"].shape
    (19,)
    """
    if not isinstance(chains, Chains):
        raise ValueError(f"chains must be a linattn.markov.Chains; got {type(chains).__name__}")
    length = check.positive_int("length", length, minimum=2)
    n_pools = check.positive_int("n_pools", n_pools, maximum=None if chains.K is not None else 1)
    n_seq = check.positive_int("n_seq", n_seq, minimum=2 if n_pools == 1 else 1)
    check.choice("on", on, ("pool", "fresh"))
    names = _names(names, chains.K, chains.first_state)
    pseudo = chains.concentration if pseudocount is None else check.positive("pseudocount", pseudocount)
    n_mc = check.positive_int("n_mc", n_mc)
    C, concentration, first = chains.C, chains.concentration, chains.first_state
    block = max(1, min(_BLOCK, (1 << 23) // length))
    K = chains.K or 0
    # a block of paths with its chains (fresh: five (block, C, C) arrays with the copies of first_law); the pool
    # with its state-major layout and logs
    guard_memory([(8.0 * block, [("length", length)]), (40.0 * block, [("chains.C", C * C)]),
                  (48.0, [("chains.K", K), ("chains.C", C * C)])],
                 f"blocks of {block} sequences and the pool of {K} chains of {C} x {C}")
    guard_memory([(16.0 * len(names), [("n_pools", n_pools), ("length", length - 1)])],
                 f"the loss sums of {n_pools} pools at {length - 1} positions")
    if chains.K is not None and on == "pool":
        check.memory(24.0 * n_seq, f"the task index of each of {n_seq} sequences", "n_seq")
    positions = [("n_pools", n_pools), ("n_seq", n_seq), ("length", length - 1)]
    trips = check.PYTHON_TRIP * len(names)
    guard_work([t for nm in names for t in _cost(nm, positions, C, K, first, n_mc, "chains.C", "chains.K")]
               + [(1.0, [("n_pools", n_pools), ("n_seq", n_seq), ("length", length), ("chains.C", C)]),
                  (trips, [("n_pools", n_pools)]), (trips, [("n_pools", n_pools), ("n_seq", n_seq // _BLOCK)])],
               f"{len(names)} estimators on {n_pools} x {n_seq} sequences of {length} states")
    gen = check.rng(rng)
    alpha_run, beta_run = _concentration(concentration, C), _concentration(pseudo, C)
    sums = {nm: np.zeros((n_pools, length - 1)) for nm in names}
    sq = {nm: np.zeros((n_pools, length - 1)) for nm in names}
    for p in range(n_pools):
        fresh = chains.K is None or on == "fresh"
        if chains.K is not None:
            pool = chains.draw_pool(gen)
            with blame_concentration(concentration):
                layout = _pool_layout(pool, first, C)
        else:
            pool, layout = None, _pool_layout(None, first, C)
        if fresh:
            seed_chain = check.seed_int("rng", gen)
        else:
            task = gen.integers(chains.K, size=n_seq).astype(np.int64)
            pool_cum, first_cum = np.cumsum(pool, axis=-1), np.cumsum(first_law(pool, first), axis=-1)
        seed_path = check.seed_int("rng", gen)
        seed_mc = check.seed_int("rng", gen)
        for start in range(0, n_seq, block):
            stop = min(n_seq, start + block)
            x = np.empty((stop - start, length), dtype=np.int64)
            if fresh:
                own = np.empty((stop - start, C, C))
                draw_chains_kernel(concentration, seed_chain, start, own)
                own_task = np.arange(stop - start, dtype=np.int64)
                with blame_concentration(concentration):
                    first_own = first_law(own, first)
                paths_kernel(np.cumsum(own, axis=-1), np.cumsum(first_own, axis=-1), own_task, seed_path, start, x)
            else:
                own, own_task = pool, task[start:stop]
                paths_kernel(pool_cum, first_cum, own_task, seed_path, start, x)
            buf = np.empty((1, length - 1))
            dummy = np.empty((1, 1, C))
            for nm in names:
                code = _run(x, _KIND[nm], C, alpha_run, beta_run, _FIRST[first], n_mc, seed_mc, start, *layout, own,
                            own_task, buf, dummy, False, sums[nm][p], sq[nm][p], True)
                if code != -1:
                    _fail_kernel(code, nm, chains, offset=start)
    mean, se = {}, {}
    for nm in names:
        m = sums[nm] / n_seq                                   # mean of ℓ_n − log C, per pool
        if n_pools == 1:
            var = (sq[nm][0] - n_seq * m[0] ** 2) / (n_seq - 1)
            mean[nm], se[nm] = np.log(C) + m[0], np.sqrt(np.maximum(var, 0.0) / n_seq)
        else:
            m_mean, se[nm] = mean_se(m, 0)
            mean[nm] = np.log(C) + m_mean
    return LossCurves(mean=mean, se=se, names=names, chains=chains, length=length, n_seq=n_seq, n_pools=n_pools,
                      on=on, pseudocount=pseudo, n_mc=n_mc)
