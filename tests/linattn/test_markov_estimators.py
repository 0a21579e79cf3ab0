"""Ideal estimators of the Markov-chain task (arXiv:2604.12151): 1-mem, 2-mem, 1-gen, 2-gen, bayes."""
import math

import numpy as np
import pytest
from helpers import (
    Row,
    assert_refused,
    name_as_escaped_word,
    name_as_word,
    name_not_within_letters,
    name_starts_too_large,
    refusals,
    sweep_tests,
)
from scipy import special, stats

from linattn import markov

POOL_NAMES = ("1-mem", "2-mem", "1-gen", "2-gen", "bayes")


def _realized(p, states):
    return np.take_along_axis(p, states[:, 1:, None], axis=-1)[..., 0]


# ----------------------------------------------------------------------------- exact identities
@pytest.mark.parametrize("first", markov.FIRST_STATES)
def test_predict_rows_sum_to_one_and_losses_are_their_logs(first):
    ch = markov.Chains(C=4, concentration=0.6, K=5, first_state=first)
    s = ch.sample(30, 25, rng=1)
    for name in POOL_NAMES:
        p = markov.predict(s.states, name, pool=s.pool, chains=ch)
        assert p.shape == (30, 24, 4) and np.all(p >= 0)
        np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
        l = markov.log_losses(s.states, name, pool=s.pool, chains=ch)
        np.testing.assert_allclose(l, -np.log(_realized(p, s.states)), atol=1e-12, rtol=0)
    fresh = markov.Chains(C=4, concentration=0.6, first_state=first)
    f = fresh.sample(10, 12, rng=2)
    p = markov.predict(f.states, "bayes", chains=fresh, n_mc=8, rng=3)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    l = markov.log_losses(f.states, "bayes", chains=fresh, n_mc=8, rng=3)
    np.testing.assert_allclose(l, -np.log(_realized(p, f.states)), atol=1e-12, rtol=0)


@pytest.mark.parametrize("first", markov.FIRST_STATES)
def test_numba_kernels_match_the_naive_numpy_route(first):
    """Linear normalized weights (numba) vs log-sum-exp over cumulative log-likelihoods (numpy): 1e-10."""
    ch = markov.Chains(C=5, concentration=0.3, K=7, first_state=first)
    s = ch.sample(40, 400, rng=4)
    fresh = markov.Chains(C=5, concentration=0.3, first_state=first).sample(40, 400, rng=5)   # out of distribution
    for x in (s.states, fresh.states):
        for name in POOL_NAMES:
            a = markov.log_losses(x, name, pool=s.pool, chains=ch)
            b = markov.log_losses_naive(x, name, pool=s.pool, chains=ch)
            np.testing.assert_allclose(a, b, atol=1e-10, rtol=0, err_msg=name)
    beta = markov.matched_pseudocount(5, 0.3)
    np.testing.assert_allclose(markov.log_losses(s.states, "1-gen", chains=ch, pseudocount=beta),
                               markov.log_losses_naive(s.states, "1-gen", chains=ch, pseudocount=beta), atol=1e-12)


def test_posterior_recovers_after_underflow():
    """Chain 2 falls > 745 nats behind (its weight underflows to 0), then the data favour it: the kernel's
    weights are recomputed from the exact log-likelihoods and agree with log-sum-exp to 1e-10."""
    pool = np.array([[[0.999, 0.001], [0.5, 0.5]], [[0.001, 0.999], [0.5, 0.5]]])
    x = np.concatenate([np.zeros(160, int), np.tile([0, 1], 300)])[None]
    for name in ("2-mem", "bayes", "1-mem"):
        a = markov.log_losses(x, name, pool=pool, chains=markov.Chains(C=2, concentration=1.0, K=2))
        b = markov.log_losses_naive(x, name, pool=pool, chains=markov.Chains(C=2, concentration=1.0, K=2))
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=0)
    late = markov.log_losses(x, "bayes", pool=pool, chains=markov.Chains(C=2, concentration=1.0, K=2))[0, -100:]
    assert np.all(late < 0.7)        # chain 2 has taken over: 0 → 1 is predicted with probability ≈ 0.999


def test_losses_is_the_mean_of_log_losses_on_the_same_sample(monkeypatch):
    """losses() draws exactly chains.sample(...) from the same generator; its numbers do not depend on the
    block size of the kernels."""
    from linattn.markov import _loss_curves as loss_curves

    ch = markov.Chains(C=3, concentration=0.8, K=4, first_state="onestep")
    r = markov.losses(ch, 50, 15, rng=7)
    s = ch.sample(50, 15, rng=7)
    for name in POOL_NAMES:
        ls = markov.log_losses(s.states, name, pool=s.pool, chains=ch)
        np.testing.assert_allclose(r.mean[name], ls.mean(0), atol=1e-12)
        np.testing.assert_allclose(r.se[name], ls.std(0, ddof=1) / np.sqrt(50), atol=1e-12)
    truth = -np.log(s.pool[s.task[:, None], s.states[:, :-1], s.states[:, 1:]])
    np.testing.assert_allclose(r.mean["true"], truth.mean(0), atol=1e-12)
    fresh = markov.losses(ch, 50, 15, rng=8, on="fresh")
    gen = np.random.default_rng(8)
    pool = ch.draw_pool(gen)
    f = markov.Chains(C=3, concentration=0.8, first_state="onestep").sample(50, 15, gen)
    np.testing.assert_allclose(fresh.mean["2-mem"], markov.log_losses(f.states, "2-mem", pool=pool).mean(0),
                               atol=1e-12)
    monkeypatch.setattr(loss_curves, "_BLOCK", 7)
    again = markov.losses(ch, 50, 15, rng=8, on="fresh")
    for name in fresh.names:
        np.testing.assert_allclose(again.mean[name], fresh.mean[name], atol=1e-12)
    assert isinstance(r.pseudocount, float) and r.names == markov.NAMES


def _log_evidence_onestep(x, C, concentration):
    """log p(x_0 … x_n) for a fresh chain with first_state='onestep', by Dirichlet moments:
    p = (1/C) Σ_i Π_r B(α + N_r + δ_{ri} e_{x_0}) / B(α·1)."""
    N = np.zeros((C, C))
    np.add.at(N, (x[:-1], x[1:]), 1)

    def log_b(a):
        return special.gammaln(a).sum(-1) - special.gammaln(a.sum(-1))

    terms = []
    for i in range(C):
        M = N + concentration
        M[i, x[0]] += 1
        terms.append(np.sum(log_b(M) - log_b(np.full(C, concentration))))
    return special.logsumexp(terms) - np.log(C)


def test_fresh_chain_bayes_onestep_is_exact():
    """K = ∞, first_state='onestep': the closed form equals the ratio of Dirichlet-moment evidences to 1e-10;
    2-gen (ignoring x_0) is rejected by the same comparison."""
    C, concentration = 3, 0.5
    ch = markov.Chains(C=C, concentration=concentration, first_state="onestep")
    s = ch.sample(20, 8, rng=9)
    bayes = markov.log_losses(s.states, "bayes", chains=ch)
    gen2 = markov.log_losses(s.states, "2-gen", chains=ch)
    exact = np.array([[_log_evidence_onestep(x[:n + 1], C, concentration) - _log_evidence_onestep(x[:n + 2], C,
                                                                                                  concentration)
                       for n in range(7)] for x in s.states])
    np.testing.assert_allclose(bayes, exact, atol=1e-10, rtol=0)
    assert np.abs(gen2 - exact).max() > 1e-3


def _quadrature_stationary(x, n_nodes=400):
    """p(x_{n+1} = 0 | x_{0:n}) for C = 2, α = 1, first_state='stationary' (π_0 = v/(u + v), u = T_01, v = T_10),
    by Gauss–Legendre quadrature on the unit square."""
    g, wg = np.polynomial.legendre.leggauss(n_nodes)
    u, v = np.meshgrid((g + 1) / 2, (g + 1) / 2, indexing="ij")
    w = np.outer(wg, wg) / 4
    pi0 = v / (u + v)
    log_row = {(0, 0): np.log1p(-u), (0, 1): np.log(u), (1, 0): np.log(v), (1, 1): np.log1p(-v)}
    out = []
    ll = np.log(pi0 if x[0] == 0 else 1 - pi0)
    for n in range(len(x) - 1):
        a = x[n]
        z = np.sum(w * np.exp(ll))
        out.append(np.sum(w * np.exp(ll + log_row[(a, 0)])) / z)
        ll = ll + log_row[(a, x[n + 1])]
    return np.array(out)


@pytest.mark.slow
def test_fresh_chain_bayes_stationary_against_quadrature():
    """K = ∞, first_state='stationary', C = 2, α = 1: the Monte Carlo Bayes predictive (24 seeds × 200 posterior
    draws) is within 4 s.e. (over seeds) + 1e-6 (quadrature, 400² nodes vs 200²: < 1e-6) of the quadrature;
    2-gen is rejected by the same criterion."""
    ch = markov.Chains(C=2, concentration=1.0, first_state="stationary")
    s = ch.sample(6, 6, rng=10)
    exact = np.array([_quadrature_stationary(x) for x in s.states])
    assert np.abs(exact - np.array([_quadrature_stationary(x, 200) for x in s.states])).max() < 1e-6
    runs = np.array([markov.predict(s.states, "bayes", chains=ch, n_mc=200, rng=k)[..., 0] for k in range(24)])
    mean, se = runs.mean(0), runs.std(0, ddof=1) / np.sqrt(24)
    assert np.all(np.abs(mean - exact) <= 4 * se + 1e-6)
    gen2 = markov.predict(s.states, "2-gen", chains=ch)[..., 0]
    assert not np.all(np.abs(gen2 - exact) <= 4 * se + 1e-6)


# ----------------------------------------------------------------------------- Monte Carlo properties
def test_bayes_beats_every_estimator_on_its_own_law_and_2mem_is_not_bayes():
    """Paired per-sequence total loss: Σ_n (ℓ_other − ℓ_bayes) has mean >= −4 s.e. for every estimator. The
    authors' 2-mem (first state's law dropped) is worse by > 4 s.e. here (C = 3, α = 0.2, K = 16, L = 4): as a
    'bayes' it would be rejected."""
    ch = markov.Chains(C=3, concentration=0.2, K=16, first_state="stationary")
    s = ch.sample(20_000, 4, rng=11)
    bayes = markov.log_losses(s.states, "bayes", pool=s.pool, chains=ch).sum(1)
    for name in ("1-mem", "2-mem", "1-gen", "2-gen"):
        d = markov.log_losses(s.states, name, pool=s.pool, chains=ch).sum(1) - bayes
        assert d.mean() >= -4 * d.std(ddof=1) / np.sqrt(d.size), name
        if name == "2-mem":
            assert d.mean() > 4 * d.std(ddof=1) / np.sqrt(d.size)


def _excess_iid(m, C, concentration):
    """Exact E[ℓ_2gen − ℓ_true] after m i.i.d. draws from a Dirichlet(α) row: N_y ~ BetaBinomial(m, α+1, (C−1)α)
    for the size-biased next symbol y."""
    k = np.arange(m + 1)
    pk = stats.betabinom.pmf(k, m, concentration + 1, (C - 1) * concentration)
    return -(pk * np.log(k + concentration)).sum() + np.log(m + C * concentration) - markov.expected_row_entropy(C,
                                                                                                                 concentration)


@pytest.mark.slow
def test_2gen_excess_loss_is_c_minus_1_over_2n():
    """Tokens whose state was left m ∈ [300, 600) times before: mean excess of 2-gen over the true chain vs the
    mean of (C − 1)/(2m), within 4 s.e. + the next-order term (the relative gap of the exact i.i.d. formula to
    (C−1)/(2m), doubled). C/(2m) is rejected by the same criterion."""
    C, concentration = 3, 1.0
    ch = markov.Chains(C=C, concentration=concentration, first_state="uniform")
    s = ch.sample(3000, 1200, rng=12)
    x = s.states
    excess = (markov.log_losses(x, "2-gen", chains=ch)
              - -np.log(s.pool[np.arange(len(x))[:, None], x[:, :-1], x[:, 1:]]))
    onehot = np.eye(C)[x[:, :-1]]
    m = np.take_along_axis(np.cumsum(onehot, 1) - onehot, x[:, :-1, None], axis=-1)[..., 0].astype(int)
    sel = (m >= 300) & (m < 600)
    ex, mm = excess[sel], m[sel]
    se = ex.std(ddof=1) / np.sqrt(ex.size)
    lead = np.mean((C - 1) / (2 * mm))
    next_order = 2 * abs(np.mean([_excess_iid(k, C, concentration) for k in (300, 450, 599)]) / np.mean(
        [(C - 1) / (2 * k) for k in (300, 450, 599)]) - 1) * lead
    assert abs(ex.mean() - lead) <= 4 * se + next_order
    assert abs(ex.mean() - np.mean(C / (2 * mm))) > 4 * se + next_order


def test_matched_pseudocount_beats_the_authors_alpha_on_fresh_chains():
    """1-gen with β* = Cα + 1 − 1/C has a lower total loss than with β = α (paired, > 4 s.e.), C = 10, α = 0.5."""
    ch = markov.Chains(C=10, concentration=0.5)
    s = ch.sample(4000, 30, rng=13)
    a = markov.log_losses(s.states, "1-gen", chains=ch).sum(1)
    b = markov.log_losses(s.states, "1-gen", chains=ch, pseudocount=markov.matched_pseudocount(10, 0.5)).sum(1)
    d = a - b
    assert d.mean() > 4 * d.std(ddof=1) / np.sqrt(d.size)


def test_default_estimators_are_the_exact_ones():
    """The Monte Carlo bayes (K = ∞, stationary first state; O(n_mc C³) per position) runs only when named; every
    other default is exact and cheap. Named, it is the same numbers as predict() from the same seed route."""
    fresh = markov.Chains(C=3, concentration=1.0, first_state="stationary")
    assert markov.losses(fresh, 4, 6, rng=0).names == ("1-gen", "2-gen", "true")
    assert "bayes" in markov.losses(fresh, 4, 6, rng=0, names=["bayes"], n_mc=4).names
    for first in ("uniform", "onestep"):
        assert markov.losses(markov.Chains(C=3, concentration=1.0, first_state=first), 4, 6, rng=0).names == (
            "1-gen", "2-gen", "bayes", "true")
    assert markov.losses(markov.Chains(C=3, concentration=1.0, K=3), 4, 6, rng=0).names == markov.NAMES


def test_paired_differences_are_the_differences_on_the_same_sequences():
    """``LossCurves.diff`` is the mean of ``ℓ^a − ℓ^b`` on the sequences of ``losses`` (one pool: exactly
    ``chains.sample(n_seq, length, rng)``) with the s.e. of the per-sequence differences, to roundoff; near a tie
    (2-mem against bayes of the pool) its s.e. is far below either estimator's own."""
    from linattn._numerics.stats import mean_se

    ch = markov.Chains(C=3, concentration=1.0, K=4)
    r = markov.losses(ch, 300, 12, rng=5)
    s = ch.sample(300, 12, rng=5)
    ll = {nm: markov.log_losses(s.states, nm, pool=s.pool, chains=ch) for nm in POOL_NAMES}
    for a, b in [("2-mem", "bayes"), ("1-gen", "2-gen"), ("bayes", "1-mem")]:
        m, se = mean_se(ll[a] - ll[b], 0)
        d, d_se = r.difference(a, b)
        np.testing.assert_allclose(d, m, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(d_se, se, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(d, r.mean[a] - r.mean[b], rtol=1e-9, atol=1e-12)
    d, d_se = r.difference("2-mem", "bayes")
    assert np.all(d_se[1:] < 0.5 * np.minimum(r.se["2-mem"], r.se["bayes"])[1:])
    assert d[0] == 0.0 and d_se[0] == 0.0            # at n = 0 both weigh the pool by π_k(x_0): the same predictor
    pools = markov.losses(ch, 50, 6, rng=5, n_pools=3, names=["2-gen", "bayes"])     # s.e. over pools
    assert set(pools.diff) == {("2-gen", "bayes")} and np.all(np.isfinite(pools.diff_se[("2-gen", "bayes")]))
    with pytest.raises(ValueError, match="b must be a name other than"):
        r.difference("bayes", "bayes")
    with pytest.raises(ValueError, match="a must be one of"):
        pools.difference("1-mem", "bayes")


def test_repeated_names_are_refused():
    """``names=['true', 'bayes', 'true']`` added the sums of ``true`` twice (a negative log-loss was returned): a
    repeated name is refused, naming it."""
    for chains in (markov.Chains(C=3, concentration=1.0), markov.Chains(C=3, concentration=1.0, K=2)):
        with pytest.raises(ValueError, match=r"names must be distinct entries \('true' is repeated"):
            markov.losses(chains, 10, 5, rng=0, names=["true", "bayes", "true"])


def test_memorising_names_at_k_infinity_say_why():
    """At ``K = None`` the memorising estimators were refused with a bare "names must be one of (…)"."""
    with pytest.raises(ValueError, match=r"'2-mem' is a memorising estimator, which retrieves the sequence's chain "
                                         r"from a finite pool, and with K=None .* there is no pool"):
        markov.losses(markov.Chains(C=3, concentration=1.0), 10, 5, rng=0, names=["1-gen", "2-mem"])


def test_the_monte_carlo_work_guard_counts_the_real_cost(monkeypatch):
    """The guard counted ``n_mc (C³ + C²)`` per position for the Monte Carlo bayes, ~1/30 of its measured cost
    (``C`` stationary laws of ``C × C`` and ``C²`` Gamma variates per draw): under a work limit of 1e9 ns (1 s), 10⁶
    draws at 18 positions (counted 6.5e8, accepted; about 20 s of numba) are refused naming n_mc."""
    monkeypatch.setenv("LINATTN_WORK_LIMIT", "1e9")
    fresh = markov.Chains(C=3, concentration=1.0)
    with pytest.raises(ValueError, match=r"^linattn\.markov\.losses: n_mc too large"):
        markov.losses(fresh, 2, 10, rng=0, names=["bayes"], n_mc=10**6)
    states = fresh.sample(2, 10, rng=0).states
    with pytest.raises(ValueError, match=r"^linattn\.markov\.log_losses: n_mc too large"):
        markov.log_losses(states, "bayes", chains=fresh, n_mc=10**6)


# ----------------------------------------------------------------------------- bad input
_CH = markov.Chains(C=3, concentration=1.0, K=2)
_S = _CH.sample(3, 5, rng=0)
ROWS = [
    Row("Chains", markov.Chains, dict(C=3, concentration=0.5, K=2, first_state="uniform"),
        dict(C="posint", concentration="positive", K="posint", first_state="choice")),
    Row("Chains.sample", _CH.sample, dict(n_seq=2, length=3, rng=0), dict(n_seq="posint", length="posint", rng="rng")),
    Row("Chains.draw_pool", _CH.draw_pool, dict(rng=0), dict(rng="rng")),
    Row("Chains.draw_chains", _CH.draw_chains, dict(n=2, rng=0), dict(n="posint", rng="rng")),
    Row("stationary", markov.stationary, dict(T=_S.pool), dict(T="array")),
    Row("first_law", markov.first_law, dict(T=_S.pool, first_state="onestep"), dict(T="array", first_state="choice")),
    Row("expected_row_entropy", markov.expected_row_entropy, dict(C=3, concentration=0.5), dict(C="posint",
                                                                                                concentration="positive")),
    Row("matched_pseudocount", markov.matched_pseudocount, dict(C=3, concentration=0.5), dict(C="posint",
                                                                                              concentration="positive")),
    Row("log_losses", markov.log_losses, dict(states=_S.states, name="bayes", pool=_S.pool, chains=_CH),
        dict(states="array_shape", name="choice", pool="array_shape")),
    Row("log_losses_naive", markov.log_losses_naive, dict(states=_S.states, name="2-mem", pool=_S.pool),
        dict(states="array_shape", name="choice", pool="array_shape")),
    Row("predict", markov.predict, dict(states=_S.states, name="1-gen", chains=_CH, pseudocount=2.0),
        dict(states="array_shape", name="choice", pseudocount="positive")),
    Row("losses", markov.losses, dict(chains=_CH, length=4, n_seq=3, rng=0, n_pools=2, on="fresh", names=["2-gen"]),
        dict(length="posint", n_seq="posint", rng="rng", n_pools="posint", on="choice", names="strlist")),
]
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, markov, {"Sample", "LossCurves", "NAMES", "FIRST_STATES", "bottleneck"})


def test_special_bad_inputs():
    with pytest.raises(ValueError, match="states"):
        markov.log_losses(_S.states + 3, "2-gen", chains=_CH)                   # state out of range
    with pytest.raises(ValueError, match="states"):
        markov.log_losses(_S.states[:, :1], "2-gen", chains=_CH)                # no next token
    with pytest.raises(ValueError, match="pool"):
        markov.log_losses(_S.states, "1-mem")                                   # memorizing needs the pool
    with pytest.raises(ValueError, match="chains"):
        markov.log_losses(_S.states, "2-gen")                                   # α unknown
    with pytest.raises(ValueError, match="n_seq"):
        markov.losses(_CH, 1, 4, rng=0)                                          # s.e. over one sequence
    with pytest.raises(ValueError, match="n_pools"):
        markov.losses(markov.Chains(C=3, concentration=1.0), 3, 4, rng=0, n_pools=2)    # K = ∞ has no pools
    with pytest.raises(ValueError, match="names"):
        markov.losses(markov.Chains(C=3, concentration=1.0), 3, 4, rng=0, names=["1-mem"])
    with pytest.raises(ValueError, match="probability 0"):                      # infinite loss is not hidden
        markov.log_losses([[0, 1]], "2-mem", pool=[[[1.0, 0.0], [0.5, 0.5]]])


# ----------------------------------------------------------------------------- refusals and extreme arguments
CH = markov.Chains(C=3, concentration=1.0)
SMALL = CH.sample(6, 10, 0)
ZERO_POOL = np.array([[[0.0, 1.0], [1.0, 0.0]]])        # the transition 0 -> 0 has probability 0


REFUSED = refusals(name_as_escaped_word, [
    # C·concentration beyond float64 gave inf
    ("matched-pseudocount", lambda: markov.matched_pseudocount(10, 1e308), "concentration"),
    # zero-probability transitions gave inf / nan (log_losses raises)
    ("naive-1-mem-zero", lambda: markov.log_losses_naive(np.array([[0, 0, 1]]), "1-mem", pool=ZERO_POOL), "pool"),
    ("naive-2-mem-zero", lambda: markov.log_losses_naive(np.array([[0, 0, 1]]), "2-mem", pool=ZERO_POOL), "pool"),
    ("log-losses-pool-reducible", lambda: markov.log_losses(SMALL.states, "1-mem", pool=np.eye(3)[None]), "pool"),
    ("naive-pool-reducible", lambda: markov.log_losses_naive(SMALL.states, "1-mem", pool=np.eye(3)[None]), "pool"),
], limit=2**31) + refusals(name_as_word, [
    ("bayes-n-mc", lambda: markov.log_losses(SMALL.states, "bayes", chains=markov.Chains(C=3, concentration=1.0),
                                             n_mc=10**13), "n_mc"),
    ("losses-n-seq", lambda: markov.losses(markov.Chains(C=3, concentration=1.0, K=4), 10**9, 10, 0), "n_seq"),
    ("losses-length", lambda: markov.losses(markov.Chains(C=3, concentration=1.0, K=4), 10, 10**9, 0), "length"),
    ("losses-pools", lambda: markov.losses(markov.Chains(C=3, concentration=1.0, K=4), 10, 10, 0, n_pools=10**10),
     "n_pools"),
    ("losses-concentration", lambda: markov.losses(markov.Chains(C=3, concentration=1e-300), 10, 10, 0),
     "concentration"),
    ("losses-pools-loop", lambda: markov.losses(markov.Chains(C=3, concentration=1.0, K=4), 1, 2, 0, n_pools=10**8,
                                                names=["1-gen"]), "n_pools"),
]) + refusals(name_not_within_letters, [
    ("log-losses-unused-pool", lambda: markov.log_losses(SMALL.states, "1-gen", pool=np.full((2, 3, 3), np.nan),
                                                         chains=CH), "pool"),
    ("predict-unused-rng", lambda: markov.predict(SMALL.states, "2-gen", chains=CH, rng="x"), "rng"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


TOO_LARGE = refusals(name_starts_too_large, [
    # memory guards missing or underestimated
    ("naive-2-gen-C", lambda: markov.log_losses_naive(np.zeros((1, 2), int), "2-gen",
                                                      chains=markov.Chains(C=10**4, concentration=1.0)), "chains.C"),
    ("log-losses-C", lambda: markov.log_losses(np.zeros((1, 3), int), "1-gen",
                                               chains=markov.Chains(C=10**5, concentration=1.0)), "chains.C"),
    ("predict-broadcast", lambda: markov.predict(np.broadcast_to(np.zeros(1, int), (10**6, 10**6)), "1-gen",
                                                 chains=CH), "states"),
    ("losses-C", lambda: markov.losses(markov.Chains(C=10**5, concentration=1, K=4), 4, 5, 0), "chains.C"),
    ("losses-K", lambda: markov.losses(markov.Chains(C=3, concentration=1, K=10**12), 4, 5, 0), "chains.K"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", TOO_LARGE)
def test_too_large_names_the_dominant_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_losses_n_seq_memory_names_n_seq():
    """The n_seq term of the memory plan blamed length."""
    chains = markov.Chains(C=3, concentration=1.0, K=4)
    with pytest.raises(ValueError, match=r"^linattn\.markov\.losses: n_seq too large"):
        markov.losses(chains, n_seq=10**13, length=20, rng=0)


@pytest.mark.usefixtures("two_gib_memory_limit")
def test_naive_estimators_without_the_identity():
    """np.eye(C²) (60 GiB at C = 300) was built for two states; np.eye(C) (80 GB at C = 10⁵) for 1-gen."""
    chains = markov.Chains(C=300, concentration=1.0)
    states = np.array([[0, 0, 1]])
    np.testing.assert_allclose(markov.log_losses_naive(states, "2-gen", chains=chains),
                               markov.log_losses(states, "2-gen", chains=chains), rtol=1e-12)
    C = 10**5                              # 1-gen, β = α = 1: (N_y + 1)/(n + 1 + C)
    np.testing.assert_allclose(markov.log_losses_naive(states, "1-gen", chains=markov.Chains(C=C, concentration=1.0)),
                               [[-math.log(2 / (1 + C)), -math.log(1 / (2 + C))]], rtol=1e-12)


@pytest.mark.usefixtures("two_gib_memory_limit")
def test_estimators_at_huge_concentration_are_uniform():
    """C·α (and C·β) overflowed in the kernels: 1-gen and 2-gen gave inf losses, NaN s.e."""
    ch = markov.Chains(C=3, concentration=1e308)
    states = ch.sample(3, 6, 0).states
    for name in ("1-gen", "2-gen", "bayes"):
        np.testing.assert_allclose(markov.log_losses(states, name, chains=ch, rng=0, n_mc=4), math.log(3), rtol=1e-12)
    for name in ("1-gen", "2-gen"):
        np.testing.assert_allclose(markov.log_losses_naive(states, name, chains=ch), math.log(3), rtol=1e-12)
    np.testing.assert_allclose(markov.log_losses(states, "1-gen", chains=CH, pseudocount=1e308), math.log(3),
                               rtol=1e-12)
    r = markov.losses(markov.Chains(C=3, concentration=1e308, K=2), 4, 5, 0)
    for name in r.names:
        np.testing.assert_allclose(r.mean[name], math.log(3), rtol=1e-12)
        assert np.all(np.isfinite(r.se[name]))


def test_losses_progress_bar_shows_on_long_calls_only(monkeypatch, capsys):
    from linattn.markov import _loss_curves

    ch = markov.Chains(C=3, concentration=1.0, K=4)
    quiet = markov.losses(ch, 50, 15, rng=7)
    assert "markov losses" not in capsys.readouterr().err            # short: silent
    monkeypatch.setattr(_loss_curves, "PROGRESS_DELAY", 0.0)           # every call counts as long
    shown = markov.losses(ch, 50, 15, rng=7)
    assert "markov losses" in capsys.readouterr().err
    silent = markov.losses(ch, 50, 15, rng=7, progress=False)
    assert capsys.readouterr().err == ""
    for r in (shown, silent):                                          # the bar changes no number
        for name in quiet.names:
            np.testing.assert_array_equal(r.mean[name], quiet.mean[name])
            np.testing.assert_array_equal(r.se[name], quiet.se[name])
    with pytest.raises(ValueError, match="progress"):
        markov.losses(ch, 50, 15, rng=7, progress="yes")
