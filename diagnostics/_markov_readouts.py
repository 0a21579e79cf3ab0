r"""The read-outs of a transformer trained on pools of random Markov chains, against the ideal estimators (numpy;
the training, under the optional extra ``[torch]``, is ``validation/simulators/_markov_training.py``).

Gibson, Cui & Reddy, *Distinct mechanisms underlying in-context learning in transformers*, arXiv:2604.12151
(code: GitHub ``cole-gibson/context-adaptive-transformer``, ``transformer/base/simple_gpt.py``,
``transformer/base/trainer.py``, ``transformer/pd/divergence.py``, ``transformer/pd/order_params.py``), rebuilt at
CPU scale. Data: :class:`linattn.markov.Chains` — sequences ``x_0 … x_{L−1}`` over ``C`` states, each a path of a
chain with ``Dirichlet(α·1_C)`` rows drawn from a pool of ``K`` chains (or a fresh chain per sequence, ``K = ∞``).

**Model and training**: ``validation/simulators/_markov_training.py`` (the authors' two-block pre-LayerNorm
architecture, smaller).

**Read-outs** (on fixed evaluation sequences: ``n_eval`` from the pool, ``n_eval`` from fresh chains):

* per-position losses ``ℓ_t = −E ln p_model(x_{t+1} | x_{≤t})`` beside those of the estimators
  ``1-mem, 2-mem, 1-gen, 2-gen`` and the Bayes predictor (:func:`linattn.markov.predict`);
* ``KL_t(e ‖ model) = E Σ_c p_e(c | x_{≤t}) \ln[p_e(c | x_{≤t}) / p_model(c | x_{≤t})]`` per estimator ``e``
  (``transformer/pd/divergence.py`` uses this direction), and the **phase**: the estimator of the four with the
  smallest position average ``(1/(L−1)) Σ_t KL_t`` (:func:`phase`);
* order parameters (``transformer/pd/order_params.py``): layer-1 previous-token attention
  ``PTA = (1/(L−2)) Σ_{i ≥ 1} E A^{(1)}_{i,i−1}`` and layer-2 induction attention on the matching keys
  ``M_{ij} = 1[j ≥ 1, x_{j−1} = x_i]`` (``j ≤ i``): ``IHA = E Σ_{ij} M_{ij} A^{(2)}_{ij} / E Σ_{ij} M_{ij}`` (mean
  weight per match) and ``IHA_tot = (1/(L−1)) E Σ_{ij} M_{ij} A^{(2)}_{ij}`` (weight on all matches per query,
  ≈ 1 for an induction head); positions ``i = 0 … L−2`` are the model's inputs.

These read-outs need no torch: they measure the probabilities and attention weights of any model.
"""
from __future__ import annotations

import numpy as np

from linattn import _check as check
from linattn._arguments import array, public

#: the estimators a phase is chosen from (arXiv:2604.12151: memorize / generalize × 1-point / 2-point statistics)
PHASES = ("1-mem", "2-mem", "1-gen", "2-gen")
#: the estimators whose losses are reported beside the model's (the four and the Bayes predictor)
ESTIMATORS = PHASES + ("bayes",)


# ----------------------------------------------------------------------------- read-outs (numpy, no torch)
@public
def kl_per_position(p, q):
    r"""``KL_t(p ‖ q) = (1/n) Σ_s Σ_c p_{s,t,c} \ln(p_{s,t,c}/q_{s,t,c})``: mean over sequences, per position.

    The divergence of arXiv:2604.12151 (``transformer/pd/divergence.py``) with ``p`` an estimator's and ``q``
    the model's predictive probabilities. Terms with ``p = 0`` are 0; ``q`` must be ``> 0`` where ``p > 0``.

    Parameters
    ----------
    p, q : array_like, shape (n_seq, T, C)
        Probabilities (each row sums to 1 within 1e-6).

    Returns
    -------
    ndarray, shape (T,)

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[0.5, 0.5]]]); q = np.array([[[0.25, 0.75]]])
    >>> round(float(kl_per_position(p, q)[0]), 6)  # ½ ln(0.5/0.25) + ½ ln(0.5/0.75)
    0.143841
    >>> float(kl_per_position(p, p)[0])
    0.0
    """
    p = _probabilities("p", p)
    q = _probabilities("q", q)
    if p.shape != q.shape:
        check.fail("q", f"<array with shape {q.shape}>", f"an array of the shape of p, {p.shape}")
    if np.any((q <= 0) & (p > 0)):
        check.fail("q", "<array with q = 0 where p > 0>", "probabilities > 0 wherever p > 0 (else KL = ∞)")
    safe_q = np.where(p > 0, q, 1.0)
    terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - np.log(safe_q)), 0.0)
    return terms.sum(-1).mean(0)


def _probabilities(name, p):
    p = check.finite_array(name, p, ndim=3)
    if np.any(p < 0) or np.max(np.abs(p.sum(-1) - 1.0)) > 1e-6:
        check.fail(name, f"<array with shape {p.shape}>", "probabilities: entries >= 0, rows summing to 1 (1e-6)")
    return p


@public
def phase(kl, candidates=PHASES):
    r"""The phase: the estimator with the smallest position-averaged ``KL(estimator ‖ model)``.

    ``argmin_e (1/T) Σ_t KL_t(e ‖ model)`` over ``e`` in ``candidates`` (arXiv:2604.12151: the four phases 1-mem,
    2-mem, 1-gen, 2-gen; ``transformer/pd/divergence.py``). Estimators missing from ``kl`` (the memorizing ones
    at ``K = ∞``) are skipped.

    Parameters
    ----------
    kl : dict of str to array_like
        Per-position (or already averaged) ``KL(e ‖ model)`` of each estimator ``e``, all finite and ``>= 0``.
    candidates : tuple of str
        Names eligible as phases (default :data:`PHASES`).

    Returns
    -------
    str

    Examples
    --------
    >>> phase({"1-gen": [0.3, 0.2], "2-gen": [0.4, 0.01], "bayes": [0.0, 0.0]})  # means 0.25, 0.205
    '2-gen'
    """
    if not isinstance(kl, dict):
        check.fail("kl", kl, "a dict estimator name -> per-position KL")
    if not isinstance(candidates, (tuple, list, np.ndarray)) or not all(isinstance(n, str) for n in candidates):
        check.fail("candidates", candidates, "a tuple of estimator names (str)")
    check.distinct("candidates", candidates)
    names = [n for n in candidates if n in kl]
    if not names:
        check.fail("kl", f"<dict with keys {sorted(kl)}>", f"a dict with at least one of {list(candidates)}")
    means = []
    for n in names:
        v = check.finite_array(f"kl[{n!r}]", kl[n])
        if v.size == 0 or np.any(v < -1e-12):
            check.fail(f"kl[{n!r}]", "<array>", "a non-empty array of divergences >= 0")
        means.append(float(v.mean()))
    return names[int(np.argmin(means))]


@public(first=array(ndim=3), second=array(ndim=3))
def attention_order_parameters(first, second, states):
    r"""Previous-token attention of layer 1 and induction attention of layer 2 (module docstring).

    ``PTA = mean_{s, i ≥ 1} A^{(1)}_{s,i,i−1}``; with the match mask ``M_{s,i,j} = 1[1 ≤ j ≤ i, x_{s,j−1} = x_{s,i}]``,
    ``IHA = Σ M A^{(2)} / Σ M`` and ``IHA_tot = Σ M A^{(2)} / (n T)`` (``transformer/pd/order_params.py``,
    arXiv:2604.12151). A pure previous-token head has ``PTA = 1``; an induction head that spreads its weight
    evenly over the matches has ``IHA_tot = 1`` at every query with a match.

    Parameters
    ----------
    first, second : array_like, shape (n, T, T)
        Attention weights (rows ``i`` over keys ``j ≤ i``) of the two layers.
    states : array_like of int, shape (n, T)
        The input states ``x_0 … x_{T−1}``.

    Returns
    -------
    (float, float, float)
        ``(PTA, IHA, IHA_tot)``; ``IHA`` is ``nan`` only if no query has a match (then there is none to attend).
    """
    A1, A2 = first, second
    x = check.asarray("states", states, "a 2-d integer array (n, T)")
    if x.ndim != 2 or x.dtype.kind not in "iu":
        check.fail("states", f"<array {x.shape} {x.dtype}>", "a 2-d integer array (n, T)")
    n, T = x.shape
    if T < 2:
        check.fail("states", f"<array {x.shape}>", "sequences of >= 2 states")
    for name, A in (("first", A1), ("second", A2)):
        if A.shape != (n, T, T):
            check.fail(name, f"<array with shape {A.shape}>", f"attention weights of shape {(n, T, T)}")
    pta = float(np.diagonal(A1, offset=-1, axis1=1, axis2=2).mean())
    M = _match_mask(x)
    hits = float(M.sum())
    weight = float((M * A2).sum())
    return pta, (weight / hits if hits > 0 else float("nan")), weight / (n * T)


def _match_mask(x):
    """``M[s, i, j] = 1`` if ``1 <= j <= i`` and ``x[s, j−1] == x[s, i]`` (the keys an induction head reads)."""
    n, T = x.shape
    M = np.zeros((n, T, T))
    M[:, :, 1:] = x[:, :, None] == x[:, None, :-1]
    return M * np.tril(np.ones((T, T)))
