r"""Kernel learner vs feature learner on nonlinear single-index tasks (Gu, Xu & Zdeborová).

Both are one-layer attention models trained on ``P`` prompts of a :class:`linattn.Problem` with a
nonlinear link ``f`` (labels ``y = f(w·x/√D) + σε``, a fresh task per prompt, so the task diversity
is ``P``). They differ in where the nonlinearity sits:

* **Kernel learner** — a *fixed* nonlinear feature map, then linear attention. Here the degree-2
  Hermite map ``φ(x) = [x, (x_a² − 1)/√2, x_a x_b (a < b)] ∈ R^F``, ``F = D + D(D+1)/2`` (orthonormal
  under ``N(0, I)``), embedded tokens ``[φ(x_i); y_i]`` and the query ``[φ(x_q); 0]``:
  ``ŷ = s_φᵀ Γ φ(x_q)`` with ``s_φ = (1/N) Σ_i y_i φ(x_i)`` and ``Γ ∈ R^{F×F}``. It is linear in ``Γ``:
  trained to its ridge solution (the long-time limit of gradient flow, ``β = ∞``) through the
  library's features (:meth:`linattn.Prompts.features` on ``(s_φ, φ(x_q), y_q)``). The isotropy that
  gives the linear model its closed-form test error is lost (``φ`` mixes degrees), so the test
  error is a Monte-Carlo average over fresh token-built prompts. With ``φ(x) = x`` it is the
  library's reduced model (``features="linear"``), whose test error is exact.
* **Feature learner** — attention on the raw input, then a *learned* nonlinear readout:
  ``t = sᵀ Γ x_q`` (the reduced linear attention) and the piecewise-linear readout
  ``ŷ = g(t) = a_0 + a_1 t + Σ_j a_{j+2} max(0, t − b_j)`` (a one-hidden-layer ReLU network with
  knots ``b_j``, ``linattn/_readout.py``; a polynomial readout was tried first and rejected: it extrapolates like
  ``t^K`` and gave test errors of 10³–10⁶ at small ``P``), trained on ``(1/2P) Σ_μ (y_μ − ŷ_μ)² + (λ/2)(‖Γ‖_F² +
  |a|²)``. Training has two stages. (1) ``Γ`` with a linear readout ``a_0 + a_1 t`` (``Γ = 0``, ``a = (0, 1)`` at the
  start) by full-batch gradient descent (numba kernel; the step size is adapted: ×1.2 after a step that lowers the
  loss, ×½ and the step undone otherwise) — the balanced ridge of the linear attention. (2) Knots at the quantiles
  ``(j + ½)/J`` of the training values of ``t`` (their scale is not known before stage 1), then
  ``second_stage="readout"`` (the default): the readout alone, on the frozen ``Γ`` — a ridge in ``a``, solved exactly
  (:func:`linattn._readout.fit_readout`); or ``second_stage="joint"``: ``Γ`` and ``a`` together by gradient descent
  from the stage-1 solution (hinge coefficients started at 0: the same function). The default is the class whose
  theory is derived (``replica/_feature_theory.py``, ``readout="trained"``: the readout's fit on the *training*
  values of ``t``, which interpolate the training labels in the memorisation regime, is part of it); the joint
  stage lowers the training loss further on a non-convex landscape that the theory does not model
  (``docs/feature_learner.md`` measures both). ``knots="labels"`` is the earliest rule (knots evenly spaced on ±2
  s.d. of the *labels*, one joint stage from ``Γ = 0``; with ``second_stage="joint"`` only): ``t`` has an s.d. of
  about 0.3 there, so only one or two hinges fell in its bulk and the trained readout lost up to 9.5 % (tanh; relu
  2.6–3.3 %) against the optimal readout of its own ``Γ`` (``docs/learners.md``).

Neither ships code in the paper; the replica theory of the feature learner is not implemented
(a stretch goal). References: H. Gu, Y. Xu, L. Zdeborová (abstract);
M. Letey et al. for the equivalence the kernel learner's linear block obeys.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit

import linattn
from linattn import _check as check
from linattn import _sampling as sampling
from linattn import _validate as validate
from linattn._kernel_errors import FEATURES, context_features, feature_map, hermite_features  # noqa: F401 (re-exported)
from linattn._numerics.stats import mean_se
from linattn._readout import fit_readout, quantile_knots, readout  # noqa: F401  (the readout's class; re-exported)
from linattn._results import short_repr

#: the knot rules of the feature learner's readout (:func:`feature_learner`)
KNOT_RULES = ("quantile", "labels")
#: what the feature learner's second stage trains (:func:`feature_learner`)
SECOND_STAGES = ("readout", "joint")


@dataclass(frozen=True)
class LearnerRun:
    """One trained learner on one training set.

    Attributes
    ----------
    learner : str
        ``"kernel"`` or ``"feature"``.
    train : float
        Training loss (with the weight-decay term).
    test : float
        Test error ``½ E(y_q − ŷ)²`` on fresh prompts (exact for the linear kernel learner, otherwise
        Monte Carlo).
    test_se : float
        Its standard error (0 when exact; ``nan`` from one Monte Carlo test prompt: no spread to estimate it from).
    relative_test : float
        ``test / (V/2)``: the test error in units of ``E_g(ŷ = 0)``.
    params : dict
        ``Gamma`` (and ``readout``, ``knots`` for the feature learner; ``pool`` with a task pool).
    converged : bool
        The feature learner's gradient descent met its tolerance (always ``True`` for the ridge).
    test_idg, test_idg_se : float or None
        With a task pool (``pb.tasks = K``): the in-distribution error (task drawn from the training pool) and its
        standard error; ``None`` without a pool.
    problem : linattn.Problem or None
        The problem the learner was trained on (:func:`feature_test_error` refuses another one).
    train_fit : float or None
        The data term of ``train``, ``(1/2P) Σ_μ (y_μ − ŷ_μ)²`` (the memorisation error), without the weight decay.
    """

    __repr__ = short_repr

    learner: str
    train: float
    test: float
    test_se: float
    relative_test: float
    params: dict
    converged: bool
    test_idg: float | None = None
    test_idg_se: float | None = None
    problem: linattn.Problem | None = None
    train_fit: float | None = None


def _training_tasks(pb, P, gen):
    """The pool and the tasks of the ``P`` training prompts (``None, None`` for fresh tasks)."""
    if pb.tasks is None:
        return None, None
    pool, task = sampling.draw_pool(pb, P, gen)
    return pool, pool[task]


def _kernel_prompts(pb, P, rng, features, batch=512, tasks=None):
    """``(s_φ, φ(x_q), y_q)`` of ``P`` token-built prompts (tasks: one row per prompt, or fresh), in batches."""
    parts = []
    for start in range(0, P, batch):
        n = min(batch, P - start)
        tok = sampling.sample_tokens(pb, n, rng, None if tasks is None else tasks[start:start + n])
        parts.append((context_features(tok.X, tok.y, features), feature_map(tok.xq, features), tok.yq))
    return linattn.Prompts(s=np.concatenate([p[0] for p in parts]), xq=np.concatenate([p[1] for p in parts]),
                           yq=np.concatenate([p[2] for p in parts]))


def _common(pb, P, lam, rng, n_test_prompts):
    """Checks of the feature learner's arguments; returns ``(P, lam, generator, n_test_prompts)``."""
    validate.problem(pb)
    P, lam, gen = check.positive_int("P", P), check.positive("lam", lam), check.rng(rng)
    return P, lam, gen, _n_test(pb, n_test_prompts)


def _n_test(pb, n_test_prompts, N=None):
    """``n_test_prompts >= 2``, with the memory of its prompts checked (named ``n_test_prompts``): their statistics,
    and with a pool (the in-distribution error, :func:`_feature_error`) their tokens, drawn at once."""
    n_test_prompts = check.positive_int("n_test_prompts", n_test_prompts, minimum=2)
    N = pb.N if N is None else N
    tokens = 2 * N * pb.D + N if pb.tasks is not None else 0
    check.memory(8.0 * n_test_prompts * (tokens + 4 * pb.D + 2), f"{n_test_prompts} test prompts", "n_test_prompts")
    return n_test_prompts


def _test_problem(pb, N_test):
    """``pb`` at the test context length ``N_test`` (checked: ``None`` gives ``pb``), with the memory of a batch of its
    prompts (a nonlinear link's contexts, :func:`linattn.Problem.sample`) checked naming ``N_test``."""
    N_test = check.n_test(N_test)
    if N_test is None:
        return pb, None
    if not pb.link.is_linear:
        width = max(pb.D, 2 * N_test)
        batch = max(64, (1 << 17) // width)
        check.memory(8.0 * 4 * batch * width,
                     f"a batch of {batch} test prompts of a nonlinear link (N_test = {N_test})", "N_test")
    return dataclasses.replace(pb, N=N_test, tasks=None), N_test


def kernel_learner(pb, P, lam, rng=None, features="hermite2", N_test=None) -> LearnerRun:
    """Train the kernel learner (module docstring) to its ridge solution; its test errors are exact
    (:func:`linattn.kernel_learner.kernel_test_error`: fresh tasks, and the pool's tasks when ``pb.tasks`` is set).

    Parameters
    ----------
    pb : linattn.Problem
    P : int
        Training prompts.
    lam : float
        Weight decay ``λ > 0``.
    rng : None, int or numpy.random.Generator
    features : {"hermite2", "linear"}
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).

    Returns
    -------
    LearnerRun
        ``test_se = 0`` (exact).
    """
    from linattn._kernel_errors import kernel_test_error

    validate.problem(pb)
    P, lam, gen = check.positive_int("P", P), check.positive("lam", lam), check.rng(rng)
    check.choice("features", features, FEATURES)
    F = pb.D if features == "linear" else pb.D + pb.D * (pb.D + 1) // 2
    check.memory(8.0 * (P * F * F + 3 * F**4), f"the kernel learner's features (P = {P}, F = {F})", "P or D")
    pool, tasks = _training_tasks(pb, P, gen)
    data = _kernel_prompts(pb, P, gen, features, tasks=tasks)
    H = data.features()
    A = H.T @ H / P + lam * np.eye(F * F)
    theta = np.linalg.solve(A, H.T @ data.yq / P)
    G = theta.reshape(F, F)
    fit = 0.5 * float(np.mean((data.yq - H @ theta) ** 2))
    train = fit + 0.5 * lam * float(theta @ theta)
    test = kernel_test_error(pb, G, features, N_test=N_test)
    idg = None if pool is None else kernel_test_error(pb, G, features, pool=pool, N_test=N_test)
    params = {"Gamma": G} if pool is None else {"Gamma": G, "pool": pool}
    return LearnerRun("kernel", train, test, 0.0, test / (0.5 * pb.label_variance), params, True,
                      test_idg=idg, test_idg_se=None if idg is None else 0.0, problem=pb, train_fit=fit)


@njit(cache=True)
def _loss_grad(H, y, knots, gamma, a, lam, g_gamma, g_a):
    """Loss of the feature learner and its gradient (written into ``g_gamma``, ``g_a``); readout
    ``g(t) = a_0 + a_1 t + Σ_j a_{j+2} max(0, t − knots_j)``."""
    P, M = H.shape
    J = knots.size
    g_gamma[:] = 0.0
    g_a[:] = 0.0
    loss = 0.0
    for mu in range(P):
        t = 0.0
        for j in range(M):
            t += H[mu, j] * gamma[j]
        yhat = a[0] + a[1] * t
        slope = a[1]
        for j in range(J):
            if t > knots[j]:
                yhat += a[j + 2] * (t - knots[j])
                slope += a[j + 2]
        r = yhat - y[mu]
        loss += 0.5 * r * r
        g_a[0] += r
        g_a[1] += r * t
        for j in range(J):
            if t > knots[j]:
                g_a[j + 2] += r * (t - knots[j])
        c = r * slope
        for j in range(M):
            g_gamma[j] += c * H[mu, j]
    loss /= P
    for j in range(M):
        g_gamma[j] = g_gamma[j] / P + lam * gamma[j]
        loss += 0.5 * lam * gamma[j] * gamma[j]
    for k in range(a.size):
        g_a[k] = g_a[k] / P + lam * a[k]
        loss += 0.5 * lam * a[k] * a[k]
    return loss


@njit(cache=True, inline="always")
def _axpy(x, c, g):
    """``x += c g`` in place (``c g`` rounded first, as ``x -= lr * g`` in numpy)."""
    for j in range(x.size):
        x[j] += c * g[j]


@njit(cache=True, inline="always")
def _copy(x, src):
    """``x[:] = src``."""
    for j in range(x.size):
        x[j] = src[j]


@njit(cache=True)
def _descend(H, y, knots, gamma, a, lam, max_steps, lr, tol):
    """Full-batch gradient descent with the adaptive step of the module docstring (in place).
    Returns (final loss, steps taken, converged)."""
    g_gamma = np.empty_like(gamma)
    g_a = np.empty_like(a)
    ng = np.empty_like(gamma)
    na = np.empty_like(a)
    loss = _loss_grad(H, y, knots, gamma, a, lam, g_gamma, g_a)
    # element by element throughout: array expressions and slice assignments compile numba's shape-mismatch message
    # (its string formatting, ~8 s per process that compiles this kernel)
    for step in range(max_steps):
        old_g, old_a = gamma.copy(), a.copy()
        _axpy(gamma, -lr, g_gamma)
        _axpy(a, -lr, g_a)
        new = _loss_grad(H, y, knots, gamma, a, lam, ng, na)
        if new < loss:
            improvement = loss - new
            loss = new
            _copy(g_gamma, ng)
            _copy(g_a, na)
            lr *= 1.2
            if improvement <= tol * abs(loss):
                return loss, step + 1, True
        else:
            _copy(gamma, old_g)
            _copy(a, old_a)
            lr *= 0.5
            if lr < 1e-14:
                return loss, step + 1, True      # no descent direction left at double precision
    return loss, max_steps, False


def feature_learner(pb, P, lam, rng=None, n_knots=5, max_steps=20_000, tol=1e-10, n_test_prompts=100_000,
                    N_test=None, knots="quantile", second_stage="readout") -> LearnerRun:
    """Train the feature learner (module docstring) in two stages and measure its test error.

    Parameters
    ----------
    pb : linattn.Problem
    P : int
        Training prompts.
    lam : float
        Weight decay ``λ > 0`` on ``Γ`` and the readout.
    rng : None, int or numpy.random.Generator
    n_knots : int
        Knots ``b_j`` of the piecewise-linear readout (``0``: linear attention with a learned scale and
        offset).
    max_steps : int
        Gradient steps at most (per stage); ``max_steps`` times the work of a step on ``P`` prompts must stay within
        the work limit (:func:`linattn._check.work`, ``ValueError`` naming ``max_steps``).
    tol : float
        Stop when a step lowers the loss by less than ``tol`` (relative).
    n_test_prompts : int
        Fresh prompts of the Monte-Carlo test errors (fresh tasks; with a pool also ``n_test_prompts`` from the pool).
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).
    knots : {"quantile", "labels"}
        ``"quantile"``: two stages, knots at the quantiles ``(j + ½)/J`` of the training ``t`` after a
        linear-readout stage (module docstring); ``"labels"``: one joint stage, knots evenly spaced on ``[−2, 2]``
        times the s.d. of the training labels (the earliest rule, kept for comparison; needs
        ``second_stage="joint"``).
    second_stage : {"readout", "joint"}
        After the linear-readout stage: fit the readout alone on the frozen ``Γ`` (a ridge, exact; the class of
        :func:`replica.feature_learner_theory`'s ``readout="trained"``) or descend ``Γ`` and the readout jointly.

    Returns
    -------
    LearnerRun
        ``converged`` holds when every gradient stage met its tolerance; ``train`` is the training loss with the
        weight decay, ``train_fit`` its data term ``(1/2P) Σ_μ (y_μ − ŷ_μ)²``.
    """
    P, lam, gen, n_test_prompts = _common(pb, P, lam, rng, n_test_prompts)
    check.choice("knots", knots, KNOT_RULES)
    check.choice("second_stage", second_stage, SECOND_STAGES)
    if knots == "labels" and second_stage != "joint":
        check.fail("second_stage", second_stage, '"joint" with knots="labels" (one joint stage from Γ = 0)')
    pbt, N_test = _test_problem(pb, N_test)
    n_knots = check.nonneg_int("n_knots", n_knots, maximum=64)
    max_steps = check.positive_int("max_steps", max_steps)
    tol = check.tolerance("tol", tol)
    D = pb.D
    stages = 1 if knots == "labels" or n_knots == 0 else 2
    # per step: one loss and gradient over the P prompts (D² + n_knots + 2 per prompt, twice), and the step's copies
    check.work(float(stages) * max_steps * (4.0 * P * (D * D + n_knots + 2) + check.PYTHON_TRIP),
               f"{stages} stage(s) of at most {max_steps} gradient steps on {P} prompts", "max_steps or P")
    pool, tasks = _training_tasks(pb, P, gen)
    data = pb.sample(P, gen) if pool is None else sampling.sample_tokens(pb, P, gen, tasks).prompts()
    H = data.features()
    gamma = np.zeros(D * D)
    y = np.array(data.yq, dtype=float)      # writable: one compiled signature (read-only labels compiled another)
    if knots == "labels" or n_knots == 0:
        knots = np.linspace(-2.0, 2.0, n_knots) * float(np.std(data.yq)) if n_knots else np.zeros(0)
        a = np.zeros(n_knots + 2)
        a[1] = 1.0
        loss, _, converged = _descend(H, y, knots, gamma, a, lam, max_steps, 0.1, tol)
    else:
        a = np.array([0.0, 1.0])
        _, _, first = _descend(H, y, np.zeros(0), gamma, a, lam, max_steps, 0.1, tol)
        knots = quantile_knots(H @ gamma, n_knots)
        if second_stage == "readout":
            a = fit_readout(H @ gamma, data.yq, knots, lam)
            second = True
        else:
            a = np.concatenate([a, np.zeros(n_knots)])
            _, _, second = _descend(H, y, knots, gamma, a, lam, max_steps, 0.1, tol)
        converged = first and second
    fit = 0.5 * float(np.mean((data.yq - readout(H @ gamma, a, knots)) ** 2))
    loss = fit + 0.5 * lam * (float(gamma @ gamma) + float(a @ a))
    G = gamma.reshape(D, D)
    params = {"Gamma": G, "readout": a, "knots": knots} | ({} if pool is None else {"pool": pool})
    test, se = _feature_error(pbt, params, n_test_prompts, gen)
    idg, idg_se = (None, None) if pool is None else _feature_error(pbt, params, n_test_prompts, gen, pool)
    return LearnerRun("feature", float(loss), test, se, test / (0.5 * pb.label_variance), params,
                      bool(converged), test_idg=idg, test_idg_se=idg_se, problem=pb, train_fit=fit)


def _feature_error(pbt, params, n_test_prompts, gen, pool=None):
    """Monte-Carlo ``½ E(y_q − g(t))²`` on ``n_test_prompts`` prompts of ``pbt`` (fresh tasks, or tasks drawn from
    ``pool``)."""
    if pool is None:
        prompts = dataclasses.replace(pbt, tasks=None).sample(n_test_prompts, gen)
    else:
        task = gen.integers(0, pool.shape[0], n_test_prompts)
        prompts = sampling.sample_tokens(pbt, n_test_prompts, gen, pool[task]).prompts()
    t = prompts.predict(params["Gamma"])
    return mean_se(0.5 * (prompts.yq - readout(t, params["readout"], params["knots"])) ** 2)


def feature_test_error(pb, run, N_test=None, n_test_prompts=100_000, rng=None, in_distribution=False):
    """Monte-Carlo test error ``½ E(y_q − g(sᵀΓx_q))²`` of a trained feature learner at any context length
    (no retraining: one trained run evaluated at several ``N_test``).

    Parameters
    ----------
    pb : linattn.Problem
        The problem the run was trained on.
    run : LearnerRun
        A result of :func:`feature_learner`.
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).
    n_test_prompts : int
        Test prompts (``>= 2``).
    rng : None, int or numpy.random.Generator
    in_distribution : bool
        Draw the test tasks from the run's training pool (the IDG error; the run must have one).

    Returns
    -------
    (float, float)
        The error and its standard error.
    """
    pb = validate.problem(pb)
    if not isinstance(run, LearnerRun) or run.learner != "feature":
        check.fail("run", run, "a LearnerRun of feature_learner")
    if run.problem is not None and pb != run.problem:       # the labels (link, noise) and prompts the readout fits
        check.fail("pb", pb, f"the problem the run was trained on ({run.problem}; use N_test for another test "
                             "context length)")
    pbt, N_test = _test_problem(pb, N_test)
    n_test_prompts = _n_test(pb, n_test_prompts, N_test)
    in_distribution = check.boolean("in_distribution", in_distribution)
    gen = check.rng(rng)
    pool = run.params.get("pool")
    if in_distribution and pool is None:
        check.fail("in_distribution", True, "False for a run trained without a task pool")
    return _feature_error(pbt, run.params, n_test_prompts, gen, pool if in_distribution else None)


# --------------------------------------------------------------------------- Monte-Carlo check of a given Γ
# (the feature learner's optimal readout of a fixed Γ, no Gaussian assumption: the check of replica.feature_theory)
@dataclass(frozen=True)
class BinnedError:
    """Monte-Carlo error of the optimal readout of a fixed ``Γ`` (:func:`binned_readout_error`).

    Attributes
    ----------
    test, test_se : float
        ``½ E(y − g(t))²`` with ``g`` the bin means, and its standard error.
    bias_bound : float
        Estimate of the binning bias (:func:`binned_readout_error`).
    """

    __repr__ = short_repr

    test: float
    test_se: float
    bias_bound: float


def _prompt_floats(pb, tasks):
    """Floats per prompt that :func:`_prompts` holds at its peak: the prompts' statistics (``s``, ``x_q`` and labels),
    and with given tasks the raw tokens they are built from."""
    per = 3 * pb.D + 2
    return per if tasks is None else per + 2 * pb.N * pb.D + pb.N + 3 * pb.D


def _prompts(pb, n, gen, tasks):
    if tasks is None:
        return dataclasses.replace(pb, tasks=None).sample(n, gen)
    return sampling.sample_tokens(dataclasses.replace(pb, tasks=None), n, gen,
                                  tasks[gen.integers(0, tasks.shape[0], n)]).prompts()


def binned_readout_error(pb, Gamma, n=1_000_000, bins=500, rng=0, N_test=None, pool=None,
                         fit_pool="test") -> BinnedError:
    r"""Monte-Carlo test error of the optimal readout of a fixed ``Γ`` (no Gaussian assumption): the check of the
    feature learner's theory given ``Γ`` (:func:`replica._feature_overlaps.readout_error`,
    :func:`replica._feature_mixture.mixture_readout_power`).

    Draws ``n`` exact test prompts (fresh tasks, or tasks drawn uniformly from the rows of ``pool``), sorts them by
    ``t = sᵀΓx_q`` into ``bins`` equal-count bins and estimates ``½ E Var(y | t)`` by the within-bin variances
    (``m/(m − 1)`` corrected, ``m`` the bin size). Binning replaces ``E[y|t]`` by the bin mean: it adds
    ``½ E Var(E[y|t] | bin)`` (positive), estimated by ``1/12`` of the mean squared jump between the means of
    neighbouring bins (``bias_bound``; conservative: the jumps also carry the bin means' sampling noise).
    With ``fit_pool`` another distribution (``None``: fresh tasks; an array: a pool), the readout ``g`` is the bin
    means of ``n`` prompts of that distribution at the training length ``pb.N`` (bin edges at its quantiles), and the
    error is ``½ mean (y − g(t))²`` on the test prompts (the feature learner's ICL error with a pool-trained readout).

    Parameters
    ----------
    pb : linattn.Problem
    Gamma : array_like (D, D)
    n : int
        Test prompts (``>= 10 bins``; their arrays, ``~8 (3D + 10)`` bytes each with fresh tasks, must fit in the memory
        limit, :func:`linattn._check.memory`).
    bins : int
    rng : int or numpy.random.Generator
    N_test : int, optional
    pool : None or array_like (K, D)
        Tasks of the test prompts (``None``: fresh).
    fit_pool : "test", None or array_like (K', D)
        Distribution the readout is fitted on (``"test"``: the test prompts themselves).

    Returns
    -------
    BinnedError
    """
    validate.problem(pb)
    if pb.covariance is not None:
        check.fail("pb", pb, "a problem with isotropic inputs for binned_readout_error")
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    n = check.positive_int("n", n, minimum=20)
    bins = check.positive_int("bins", bins, minimum=2, maximum=n // 10)        # at least 10 test prompts per bin
    if pool is not None:
        pool = check.finite_array("pool", pool, shape=(None, pb.D))
    separate = not (isinstance(fit_pool, str) and fit_pool == "test")
    if isinstance(fit_pool, str) and not separate:
        pass
    elif fit_pool is not None:
        fit_pool = check.finite_array("fit_pool", fit_pool, shape=(None, pb.D))
    N_test = check.n_test(N_test)
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)
    if pbt is not pb and not pb.link.is_linear:      # the labels of a batch of 64 test contexts (the sampler's block)
        check.memory(8.0 * 4 * 64 * N_test, f"a batch of 64 test prompts of a nonlinear link (N_test = {N_test})",
                     "N_test")
    check.memory(8.0 * n * (_prompt_floats(pbt, pool) + (_prompt_floats(pb, fit_pool) if separate else 0) + 8),
                 f"{n} test prompts" + (" and as many fitting prompts" if separate else "")
                 + " with their attention outputs, labels and order", "n")
    gen = check.rng(rng)
    data = _prompts(pbt, n, gen, pool)
    t = data.predict(G)
    y = np.asarray(data.yq)
    m = n // bins
    if separate:
        fit = _prompts(pb, n, gen, fit_pool)
        tf, yf = fit.predict(G), np.asarray(fit.yq)
        order = np.argsort(tf, kind="stable")
        ybf = yf[order[: m * bins]].reshape(bins, m)
        means = ybf.mean(axis=1)
        edges = tf[order[m * np.arange(1, bins)]]
        resid2 = (y - means[np.searchsorted(edges, t)]) ** 2
        mean, se = mean_se(resid2)
        return BinnedError(test=0.5 * mean, test_se=0.5 * se,
                           bias_bound=float(np.mean(np.diff(means) ** 2)) / 12.0)
    order = np.argsort(t, kind="stable")
    yb = y[order[: m * bins]].reshape(bins, m)
    means = yb.mean(axis=1)
    resid2 = ((yb - means[:, None]) ** 2) * (m / (m - 1.0))
    test = 0.5 * float(resid2.mean(axis=1).mean())
    # s.e.: the bins are independent given the order statistics; use the per-prompt spread
    se = 0.5 * mean_se(resid2)[1]
    bias = float(np.mean(np.diff(means) ** 2)) / 12.0
    return BinnedError(test=test, test_se=se, bias_bound=bias)
