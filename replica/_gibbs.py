r"""Exact data-dependent free energy and Gibbs averages (conventions §2).

The Gibbs measure ``p(θ) ∝ exp(−β E_t(θ))`` of the quadratic training energy is Gaussian with
mean ``θ*`` (the ridge solution) and covariance ``A⁻¹/β``, ``A = H + λI``. Hence, exactly,

.. math::
   F(β, λ) = E_t(θ^*) − \frac{M}{2β}\log\frac{2π}{β} + \frac{1}{2β}\log\det A,\qquad
   ⟨E_t⟩ = ∂_β(βF) = E_t(θ^*) + \frac{M}{2β},

   ⟨E_g⟩ = E_g(θ^*) + \frac{1}{2β}\operatorname{tr}(C A^{-1}),\qquad
   ∂_λ F = ½⟨|θ|²⟩ = ½|θ^*|² + \frac{1}{2β}\operatorname{tr} A^{-1},

with ``C = diag(c, c_v)`` the test-error metric. Everything is evaluated from one
eigendecomposition per dataset (:class:`spectra.Eigensystem`), for any number of ``(β, λ)``.

Any error over a set of tasks is such a quadratic form ``½[k₀ − 2ℓ·θ + θᵀCθ]`` (:mod:`linattn.pools`), so its Gibbs
average is ``E(θ*) + tr(C A⁻¹)/(2β)`` with its own ``C``: the pool's in-distribution error (``test_idg``) and, with
structured tasks (``Problem(task_covariance=S)``), ``test`` on fresh tasks from ``N(0, S)`` (``C = Σ̃ ⊗ I_D`` of that
law) and ``test_odg`` on fresh tasks from the isotropic law of the same power ``(tr S/D) I``
(:mod:`spectra._task_metric`).

Test prompts of another context length ``N_test`` (the model trained at ``N``): the Gibbs measure is unchanged and
only the metric moves, ``C_t = diag(c(N_test) I_{D²}, c_v(N_test) I_D)`` (``u`` and ``V`` do not depend on the
context length). In the coordinates of the modes (``θ' = V a``, ``v' = v/√s``),

.. math::
   ⟨E_g⟩_{N_test} = ½[V − 2u·θ^* + c_t(|a|² − |v'^*|²) + s c_{v,t}|v'^*|²]
                 + \frac{1}{2β}\big[c_t(\operatorname{tr}A'^{-1} − \operatorname{tr}P_vA'^{-1})
                 + s c_{v,t}\operatorname{tr}P_vA'^{-1}\big],

with the traces of ``∂F/∂λ`` (:meth:`linattn.Problem.test_error_from_moments` for the first bracket); the
in-distribution error uses the pool's metric at ``N_test``.

Per-block weight decay (full model). With ``Λ = diag(λ_Γ I_{D²}, λ_v I_D)``, ``A = H + Λ`` and every formula
above holds with ``log det A``, ``tr(C A⁻¹)``. It is evaluated exactly through the rescaling
``θ = S θ'``, ``S = diag(I, √s I)``, ``s = λ_Γ/λ_v`` (``v' = v √(λ_v/λ_Γ)``): ``E_t(Sθ') = E'_t(θ')`` is the
training energy of the rescaled problem (``v`` features ``√s · y2 x_q``) with the common decay ``λ_Γ``, whose
Hessian is ``A' = S A S = H' + λ_Γ I`` and whose test metric is ``C' = S C S = diag(c, s c_v)``
(:func:`spectra.eigensystem` with ``v_scale=s``, Gram path included). Then ``⟨E_t⟩``, ``⟨E_g⟩ = E_g(θ*) +
tr(C'A'⁻¹)/(2β)`` and ``θ* = S θ'*`` are those of the rescaled problem, and the free energy carries the
log-Jacobian of ``dθ = det S dθ' = s^{D/2} dθ'``:

.. math::
   F = −\frac1β \log\!\int e^{−βE_t(θ)}dθ = −\frac1β\Big[\log\!\int e^{−βE'_t(θ')}dθ' + \frac D2 \log s\Big]
     = F' − \frac{D}{2β}\log\frac{λ_Γ}{λ_v},

equivalently ``log det A = log det A' − D log s``. Derivatives: ``∂F/∂λ_Γ = ½⟨‖Γ‖_F²⟩`` and
``∂F/∂λ_v = ½⟨|v|²⟩`` (``∂E_t/∂λ_Γ = ½‖Γ‖²``), reported as ``dF_dlam_gamma``, ``dF_dlam_v``, with
``⟨|v|²⟩ = s⟨|v'|²⟩``, ``⟨|v'|²⟩ = |v'*|² + tr(P_v A'⁻¹)/β``; ``dF_dlam = ½⟨|θ|²⟩`` is their sum, the derivative
along a common shift ``(λ_Γ + ε, λ_v + ε)`` (``∂F/∂λ`` for one common ``λ``).
An eigensystem of ``A = H + Λ`` itself (:func:`spectra.eigensystem` with ``lam=(λ_Γ, λ_v)``, as the Langevin
simulator builds it) is accepted too, and used directly (no rescaling, no Jacobian).

Limits: ``β = ∞`` (zero temperature) gives the ridge (``λ > 0``) or min-norm (``λ = 0``)
solution with no thermal terms; ``λ = 0`` at finite ``β`` requires ``P >= M`` (otherwise
``H`` has a null space and the Gibbs measure is not normalisable).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from linattn import _check as check
from linattn._arguments import integer, public, seed
from linattn._check import PROGRESS_DELAY
from linattn._numerics.stats import mean_se
from linattn._results import ToXarray, python_scalars, short_repr
from linattn._validate import PROBLEM
from spectra import Eigensystem
from spectra._eigensystem import V_SCALE, _as_eigensystem


@dataclass(frozen=True, eq=False)
class GibbsAverages:
    """Exact Gibbs quantities of one dataset (arrays broadcast over the given ``beta``, ``lam``).

    Attributes
    ----------
    beta : ndarray
    lam, lam_v : ndarray
        ``λ_Γ`` and ``λ_v`` (both the common ``λ`` for one number).
    train, test : ndarray
        ``⟨E_t⟩`` and ``⟨E_g⟩``.
    free_energy : ndarray
        ``F(β, λ)`` (``E_t(θ*)`` at ``β = ∞``).
    train_ridge, test_ridge : ndarray
        ``E_t(θ*)`` and ``E_g(θ*)`` (the zero-temperature values).
    dF_dbeta, dF_dlam : ndarray
        ``∂F/∂β = (⟨E_t⟩ − F)/β`` and ``½⟨|θ|²⟩`` (``∂F/∂λ`` of a common ``λ``; with a pair, the derivative
        along ``(λ_Γ + ε, λ_v + ε)``).
    dF_dlam_gamma, dF_dlam_v : ndarray
        ``∂F/∂λ_Γ = ½⟨‖Γ‖_F²⟩`` and ``∂F/∂λ_v = ½⟨|v|²⟩`` (0 for the reduced model).
    mean_norm2 : ndarray
        ``⟨|θ|²⟩``.
    test_idg, test_idg_ridge : ndarray or None
        With a task pool (``data.pool``): the in-distribution error ``⟨E_IDG⟩ = E_IDG(θ*) +
        tr(C_W A⁻¹)/(2β)`` (:mod:`linattn.pools`) and its zero-temperature part; ``None`` otherwise.
    test_odg, test_odg_ridge : ndarray or None
        Structured tasks (``pb.task_covariance = S``; ``test`` is then the error on fresh tasks from ``N(0, S)``): the
        error on fresh tasks from the isotropic law of the same power ``(tr S/D) I``, ``E_odg(θ*) + tr(C_odg A⁻¹)/(2β)``
        (:func:`linattn.pools.task_error`), and its zero-temperature part; ``None`` for isotropic tasks.
    N_test : int or None
        The context length of the test prompts of ``test*`` (``None``: the training length ``N``).
    """

    __repr__ = short_repr

    beta: np.ndarray
    lam: np.ndarray
    train: np.ndarray
    test: np.ndarray
    free_energy: np.ndarray
    train_ridge: np.ndarray
    test_ridge: np.ndarray
    dF_dbeta: np.ndarray
    dF_dlam: np.ndarray
    mean_norm2: np.ndarray
    lam_v: np.ndarray
    dF_dlam_gamma: np.ndarray
    dF_dlam_v: np.ndarray
    test_idg: np.ndarray | None = None
    test_idg_ridge: np.ndarray | None = None
    N_test: int | None = None
    test_odg: np.ndarray | None = None
    test_odg_ridge: np.ndarray | None = None

    def __post_init__(self):
        python_scalars(self)      # scalar β and λ give floats, not 0-d arrays


def decay_pair(lam, model):
    """``(λ_Γ, λ_v)`` if ``lam`` is a per-block pair with ``λ_Γ != λ_v``, else ``None``.

    A Python ``tuple`` is a per-block pair and nothing else: it must hold two numbers (:func:`linattn._check.
    block_lambdas`: full model, both ``> 0`` or both 0); a pair of equal entries is the common decay.
    Lists and arrays are values of one common ``λ`` to broadcast (:func:`gibbs`).

    Parameters
    ----------
    lam : float, tuple, list or ndarray
    model : {"reduced", "full"}

    Returns
    -------
    tuple of float or None
    """
    if not isinstance(lam, tuple):
        return None
    pair = "a tuple (lam_Gamma, lam_v) of two numbers"
    if len(lam) != 2 or any(check.asarray("lam", x, pair).ndim != 0 for x in lam):
        check.fail("lam", lam, "a tuple (lam_Gamma, lam_v) of two numbers (a tuple is a per-block pair; pass a list "
                   "or an array to evaluate several values of one common lam)")
    lg, lv = check.block_lambdas(lam, model)
    return None if lg == lv else (lg, lv)


def _v_scale(pair):
    """The rescaling ``s = λ_Γ/λ_v`` of the v block for a per-block ``pair``, in the range the eigensystem takes
    (:data:`spectra._eigensystem.V_SCALE`; beyond it ``s`` or ``1/s`` leaves float64's resolution of the two
    blocks), else ``ValueError`` naming the user's ``lam``."""
    with np.errstate(over="ignore", under="ignore"):
        ratio = pair[0] / pair[1]
    low, high = 1e-100, 1e100
    if not low <= ratio <= high:
        check.fail("lam", pair, f"a pair (lam_Gamma, lam_v) with lam_Gamma / lam_v in [{low:g}, {high:g}] (the exact "
                   f"Gibbs averages rescale the v block by that ratio; got a ratio of {ratio:.3g})")
    return V_SCALE("v_scale", ratio)


def _shape(name, value):
    """``np.shape(value)`` without converting an array (ragged nested lists: a ValueError naming ``name``)."""
    if isinstance(value, np.ndarray):
        return value.shape
    try:
        return np.shape(value)
    except ValueError:          # numpy: "inhomogeneous shape"
        check.fail(name, f"<{type(value).__name__} of uneven shape>", "a real number or an array of them")


def _grid_size(beta, lam):
    """Number of ``(β, λ)`` values, the size of the broadcast shape of ``beta`` and ``lam`` (``lam=None``: a
    per-block pair, one per call), and the arguments that set it (for a guard's message); shapes that do not
    broadcast are refused naming lam."""
    b_shape = _shape("beta", beta)
    if lam is None:
        return int(np.prod(b_shape, dtype=float)), "beta"
    l_shape = _shape("lam", lam)
    try:
        shape = np.broadcast_shapes(b_shape, l_shape)
    except ValueError:          # numpy's "shape mismatch": say which argument and which shapes
        check.fail("lam", f"<values of shape {l_shape}>", f"a number or an array that broadcasts against beta's "
                   f"shape {b_shape}")
    n_b, n_l = (int(np.prod(x, dtype=float)) for x in (b_shape, l_shape))
    return int(np.prod(shape, dtype=float)), ("beta" if n_l <= 1 else "lam" if n_b <= 1 else "beta and lam")


@public(pb=PROBLEM, beta=None)       # beta and lam: arrays, checked with their grid in the body
def gibbs(data, pb, beta, lam, model="reduced", N_test=None) -> GibbsAverages:
    """Exact free energy and Gibbs averages of one dataset (module docstring).

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
        An eigensystem is reused as is (one decomposition for every ``β``, ``λ``). With a per-block pair it
        must be the rescaled one (``spectra.eigensystem(..., v_scale=λ_Γ/λ_v)``) or that of ``H + Λ``
        (``lam=(λ_Γ, λ_v)``); an eigensystem of another scale is refused.
    pb : linattn.Problem
    beta : float or array_like
        Inverse temperature ``β > 0`` (``inf`` allowed: zero temperature).
    lam : float, array_like, or tuple
        Weight decay ``λ >= 0`` (a number, or a list or array of values broadcast against ``beta``), or a Python
        ``tuple`` ``(λ_Γ, λ_v)``: the per-block decay of the full model (both ``> 0``, or both 0), one pair per
        call (``beta`` may still be an array). Any other tuple is refused.
    model : {"reduced", "full"}
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length ``N``): ``test``,
        ``test_ridge`` and ``test_idg*`` are the exact Gibbs averages of the error at ``N_test`` (module docstring);
        the training quantities and the free energy do not depend on it.

    Returns
    -------
    GibbsAverages
        Arrays of the broadcast shape of ``beta`` and ``lam``.

    Raises
    ------
    ValueError
        Bad input (the argument is named): ``beta`` and ``lam`` of shapes that do not broadcast, or so many values
        that the result's arrays (~200 bytes per value) would exceed the memory limit (:func:`linattn._check.memory`).

    Examples
    --------
    Lu et al.'s ridge ``λ_L`` is the pair ``(λ_L/D, λ_L)``; at zero temperature the Gibbs mean is the ridge
    solution:

    >>> import numpy as np, linattn, replica
    >>> pb = linattn.Problem(6, 12, 0.1)
    >>> data = pb.sample(80, rng=0)
    >>> lam = (0.1 / 6, 0.1)
    >>> g = replica.gibbs(data, pb, [1e3, np.inf], lam, model="full")
    >>> r = replica.ridge(data, pb, lam, "full")             # CG: certified to its test_bound
    >>> bool(abs(g.test[1] - r.test) <= r.test_bound)
    True
    """
    pair = decay_pair(lam, model)
    n_values, sizing = _grid_size(beta, None if pair is not None else (lam[0] if isinstance(lam, tuple) else lam))
    # the ~20 arrays of the result and its work (and the checked copies of beta): before any of them is made
    check.memory(8.0 * 24 * n_values, f"the Gibbs averages at {n_values} values of (beta, lam)", sizing)
    check.work(check.PYTHON_TRIP * n_values, f"the Gibbs averages at {n_values} values of (beta, lam), one Python "
               "trip each", sizing)
    b_arr = check.real_array("beta", beta, low=0.0, low_open=True, allow_inf=True)
    l_arr = None if pair is not None else check.real_array("lam", lam[0] if isinstance(lam, tuple) else lam, low=0.0)
    return _gibbs(data, pb, b_arr, l_arr, pair, model, N_test)


def _gibbs(data, pb, b_arr, l_arr, pair, model, N_test):
    """:func:`gibbs` of a checked problem, model and ``N_test``, the values of ``β`` (``b_arr``) and of a common ``λ``
    (``l_arr``) as float arrays, or the per-block ``pair`` (``l_arr = None``); ``data`` is checked against them here."""
    jacobian = 0.0
    if pair is None:
        es = _as_eigensystem(data, pb, model)
        B, L = np.broadcast_arrays(b_arr, l_arr)
        Lv, shift = L, L
    else:
        if isinstance(data, Eigensystem) and data.block_decay is not None:
            es = _as_eigensystem(data, pb, model, pair=pair)          # g are the eigenvalues of H + Λ
            shift = np.zeros(b_arr.shape)
        else:
            es = _as_eigensystem(data, pb, model, _v_scale(pair))
            shift = np.full(b_arr.shape, pair[0])
            jacobian = 0.5 * es.problem.D * np.log(es.v_scale)    # log det S, dθ = s^{D/2} dθ'
        B = b_arr
        L, Lv = np.full(B.shape, pair[0]), np.full(B.shape, pair[1])
    null = es.null_dim
    if null and np.any((shift == 0) & np.isfinite(B)):
        raise ValueError(f"lam must be > 0 at finite beta when P < M (P={es.P}, M={es.M}): H has a "
                         f"{null}-dimensional null space and the Gibbs measure is not normalisable; got lam = 0")
    keys = ("train", "test", "F", "tr_r", "te_r", "dFb", "dFl", "n2", "nv", "idg", "idg_r", "odg", "odg_r")
    out = {k: np.empty(B.shape) for k in keys}
    es_t = es if N_test is None else es._at_length(N_test)     # the test prompts' metric (module docstring)
    idg, odg = es_t.idg, es_t.odg      # a pool's in-distribution error; structured tasks: the isotropic law's
    Wd = np.diag(es_t.W)
    trW = Wd.sum()
    G2d = np.diag(es.G2) if es.G2 is not None else np.zeros(es.k)
    Dv = es.M - es.problem.D ** 2              # parameters in the v block (0 for the reduced model)
    for idx in np.ndindex(B.shape):
        beta_i, lam_i = float(B[idx]), float(shift[idx])
        gl = es.g + lam_i
        a = es._ridge_coefficients(lam_i)
        et = es._train_at_ridge(lam_i)
        norm2 = float(a @ a)                   # |θ'*|²
        nv = float(es._v_norm2(a))              # |v'*|²
        eg = float(es_t._test_error(a))
        idg_r = float(idg.error(a)) if idg is not None else np.nan
        idg_i = idg_r
        odg_r = float(odg.error(a)) if odg is not None else np.nan
        odg_i = odg_r
        if np.isinf(beta_i):
            train, test, F, dFb, n2 = et, eg, et, 0.0, norm2
        else:
            with np.errstate(divide="ignore"):
                logdet = float(np.sum(np.log(gl))) + (null * np.log(lam_i) if null else 0.0)
                tr_inv = float(np.sum(1.0 / gl)) + (null / lam_i if null else 0.0)
                tr_Cinv = float(np.sum(Wd / gl)) + ((es_t.trC - trW) / lam_i if null else 0.0)
                tr_v = float(np.sum(G2d / gl)) + ((Dv - G2d.sum()) / lam_i if null and Dv else 0.0)
            M = es.M
            with np.errstate(over="ignore", invalid="ignore"):
                F = et - M / (2 * beta_i) * np.log(2 * np.pi / beta_i) + (logdet - 2 * jacobian) / (2 * beta_i)
                train = et + M / (2 * beta_i)
                test = eg + tr_Cinv / (2 * beta_i)
                dFb = (train - F) / beta_i
                n2 = norm2 + tr_inv / beta_i
                nv = nv + tr_v / beta_i
                if idg is not None:
                    idg_i = (idg_r
                             + float(idg.thermal_trace(1.0 / gl, 1.0 / lam_i if null else 0.0, null)) / (2 * beta_i))
                if odg is not None:
                    odg_i = (odg_r
                             + float(odg.thermal_trace(1.0 / gl, 1.0 / lam_i if null else 0.0, null)) / (2 * beta_i))
            if not np.all(np.isfinite([F, train, test, dFb, n2, nv])):
                check.fail("beta", beta_i, f"large enough for finite thermal terms M/(2 beta) (M = {M}, lam = {lam_i})")
        for key, val in zip(keys, (train, test, F, et, eg, dFb, None, n2, nv, idg_i, idg_r, odg_i, odg_r)):
            if val is not None:
                out[key][idx] = val
    nG = out["n2"] - out["nv"]                 # ⟨‖Γ‖²⟩ (Γ is not rescaled)
    nv = es.v_scale * out["nv"]                # ⟨|v|²⟩ = s ⟨|v'|²⟩
    n2 = out["n2"] if es.v_scale == 1.0 else nG + nv
    return GibbsAverages(beta=B, lam=L, lam_v=Lv, train=out["train"], test=out["test"], free_energy=out["F"],
                         train_ridge=out["tr_r"], test_ridge=out["te_r"], dF_dbeta=out["dFb"],
                         dF_dlam=0.5 * n2, dF_dlam_gamma=0.5 * nG, dF_dlam_v=0.5 * nv, mean_norm2=n2,
                         test_idg=out["idg"] if idg is not None else None,
                         test_idg_ridge=out["idg_r"] if idg is not None else None, N_test=N_test,
                         test_odg=out["odg"] if odg is not None else None,
                         test_odg_ridge=out["odg_r"] if odg is not None else None)


#: the most datasets one average draws (each is sampled and eigendecomposed: far beyond any use)
MAX_DATASETS = 10**6


@public(pb=PROBLEM, n_datasets=integer(minimum=2, maximum=MAX_DATASETS), rng=seed())
def dataset_average(pb, P, beta, lam, n_datasets=100, model="reduced", rng=0, N_test=None,
                    progress=True) -> "DatasetAverage":
    """``⟨E_t⟩`` and ``⟨E_g⟩`` of ``n_datasets`` independent training sets, with means and s.e.

    Cost: one dataset sampled and its Hessian eigendecomposed (``O(P M² + M³)``, ``M`` parameters) per dataset,
    linear in ``n_datasets``; about 12 ms a dataset at ``D = 12``, ``N = 30``, ``P = 150``, ``model="full"``
    (the 100 datasets of the default, 1.2 s on a shared 2-core machine).

    Parameters
    ----------
    pb : linattn.Problem
    P : int
        Prompts per dataset.
    beta : float
        ``β > 0`` (``inf``: zero temperature).
    lam : float or (float, float)
        ``λ >= 0``, or the per-block pair ``(λ_Γ, λ_v)`` of the full model (:func:`gibbs`).
    n_datasets : int
        Datasets averaged (``>= 2``); dataset ``i`` is sampled with ``rng=(seed, P, i)``.
    model : {"reduced", "full"}
    rng : int or numpy.random.Generator
        The ``seed`` of the datasets (a Generator gives one draw of it).
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: ``N``), as in :func:`gibbs`.
    progress : bool
        Show a progress bar (over the datasets) when the call lasts more than two seconds.

    Returns
    -------
    DatasetAverage
        ``train_mean``, ``train_se``, ``test_mean``, ``test_se`` (and ``test_idg_*`` with a task pool), the
        per-dataset values in ``train``, ``test``.

    Examples
    --------
    The exact side of a theory-vs-exact comparison at your own ``(D, N)``:

    >>> import linattn, replica
    >>> pb = linattn.Problem(8, 16, 0.1)
    >>> avg = replica.dataset_average(pb, P=100, beta=1e3, lam=0.01, n_datasets=10, model="full")
    >>> th = replica.stationary(pb, 100, 1e3, 0.01, model="full")
    >>> abs(th.test / avg.test_mean - 1) < 0.05
    True
    """
    lam_gamma, lam_v = check.block_lambdas(lam, model)
    pair = None if lam_gamma == lam_v else (lam_gamma, lam_v)
    b_arr, l_arr = np.asarray(beta), None if pair is not None else np.asarray(lam_gamma)
    tr, te = np.empty(n_datasets), np.empty(n_datasets)
    idg = np.empty(n_datasets) if pb.tasks is not None else None
    odg = np.empty(n_datasets) if pb.task_covariance is not None else None
    for i in tqdm(range(n_datasets), desc=f"dataset average {model}, P = {P}", disable=not progress, leave=False,
                  delay=PROGRESS_DELAY):
        g = _gibbs(pb.sample(P, rng=(rng, P, i)), pb, b_arr, l_arr, pair, model, N_test)
        tr[i], te[i] = float(g.train), float(g.test)
        if idg is not None:
            idg[i] = float(g.test_idg)
        if odg is not None:
            odg[i] = float(g.test_odg)
    return DatasetAverage(train=tr, test=te, test_idg=idg, N_test=N_test, test_odg=odg)


@dataclass(frozen=True, eq=False)
class DatasetAverage(ToXarray, xarray_dims={"train": ("dataset",), "test": ("dataset",),
                                              "test_idg": ("dataset",)}):
    """Exact Gibbs averages of independent datasets (``train``, ``test``: one value per dataset; ``test_idg``
    with a task pool, ``test_odg`` with structured tasks, else ``None``), their means and standard errors; ``N_test``:
    the context length of the test prompts (``None``: the training length).

    Attributes
    ----------
    train, test : ndarray (n_datasets,)
        Exact Gibbs averages ``⟨E_t⟩``, ``⟨E_g⟩`` of each dataset (properties ``*_mean``, ``*_se``: their mean and
        standard error).
    test_idg : ndarray or None
        In-distribution errors with a task pool, else ``None``.
    N_test : int or None
        Context length of the test prompts (``None``: the training length).
    test_odg : ndarray or None
        Structured tasks: the errors on fresh tasks from the isotropic law of the same power (:func:`gibbs`), else
        ``None``.
    """

    __repr__ = short_repr

    train: np.ndarray
    test: np.ndarray
    test_idg: np.ndarray | None = None
    N_test: int | None = None
    test_odg: np.ndarray | None = None

    @property
    def test_odg_mean(self) -> float | None:
        return None if self.test_odg is None else float(self.test_odg.mean())

    @property
    def test_odg_se(self) -> float | None:
        return None if self.test_odg is None else mean_se(self.test_odg, single=np.nan)[1]

    @property
    def test_idg_mean(self) -> float | None:
        return None if self.test_idg is None else float(self.test_idg.mean())

    @property
    def test_idg_se(self) -> float | None:
        return None if self.test_idg is None else mean_se(self.test_idg, single=np.nan)[1]

    @property
    def train_mean(self) -> float:
        return float(self.train.mean())

    @property
    def test_mean(self) -> float:
        return float(self.test.mean())

    @property
    def train_se(self) -> float:
        return mean_se(self.train, single=np.nan)[1]

    @property
    def test_se(self) -> float:
        return mean_se(self.test, single=np.nan)[1]
