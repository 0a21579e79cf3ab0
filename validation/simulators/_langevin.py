r"""Langevin simulation of training: Euler–Maruyama on the training energy.

.. math:: θ ← θ − γ\,dt\,∇E_t(θ) + \sqrt{2γ\,dt/β}\;ξ,\qquad ∇E_t = Aθ − b,

(conventions §2), whose continuous-time stationary law is the Gibbs measure ``∝ exp(−βE_t)``.
The chain is run in the eigenbasis of ``A`` (``θ = V η``, the complete basis of the dataset's
:func:`spectra.eigensystem` with ``null_space=True``): since ``Vᵀξ`` is again a vector of
independent standard normals, this is the *same* Markov chain as in the parameter basis, at
``O(M)`` instead of ``O(M²)`` per step; ``basis="parameter"`` runs the dense-gradient version
(used to check the equivalence). Chains run in parallel (numba ``prange``), each with its own
explicit random-number state seeded by ``(seed, chain)``.

Exact properties of the discrete chain (:class:`Chain`). Mode ``k`` is an AR(1) process with
``φ_k = 1 − γ dt a_k`` (``a_k`` eigenvalues of ``A``) and stationary variance
``v_k = 1/(β a_k (1 − γ dt a_k/2))`` instead of the Gibbs value ``1/(β a_k)``. Hence

* the stationary means carry the exact ``O(dt)`` bias
  ``⟨E_t⟩_{dt} − ⟨E_t⟩ = ½ Σ_k a_k (v_k − 1/(βa_k))``, ``⟨E_g⟩_{dt} − ⟨E_g⟩ = ½ Σ_k W_{kk} (v_k − 1/(βa_k))``
  (``W = Vᵀ C V``);
* after ``n`` steps from ``η_0`` the mean is ``m_n = η* + φ^n(η_0 − η*)`` and the variance
  ``v_k(1 − φ_k^{2n})``: the exact transient bias of both errors at the first sample;
* the autocovariances are sums of ``φ^{lag}`` terms, so the standard error of a protocol's sample
  mean over ``n_chains`` chains is known exactly.

Protocol checks (nothing silent): ``dt=None`` picks the largest step ``2^{-j}/(γ λ_max)`` whose
discretisation bias is below a quarter of the exact standard error of the *reported* mean (all
chains); a protocol whose transient bias at the first sample exceeds a quarter of that standard
error has not equilibrated: :func:`langevin` refuses it (``ValueError`` naming ``n_equilibrate``
and the number of steps it would need) or, with ``on_unequilibrated="warn"``, warns and marks the
result ``equilibrated=False``. Stability requires ``γ dt λ_max(A) < 2``.

Per-block weight decay ``lam=(λ_Γ, λ_v)`` (full model): the drift is ``∇E_t = (H + Λ)θ − b`` with
``Λ = diag(λ_Γ I_{D²}, λ_v I_D)``, and the chain runs in the eigenbasis of ``A = H + Λ`` itself
(:func:`spectra.eigensystem` with ``lam=(λ_Γ, λ_v)``; dense, all ``M`` modes, ``a_k`` its eigenvalues). Every
exact property above holds with these ``a_k``; the stability bound is ``γ dt λ_max(H + Λ) < 2`` and the
reference values ``exact_train``, ``exact_test`` are :func:`replica.gibbs` with the same pair. (A rescaling of
``v`` would sample the same Gibbs law but not the same chain.)

Other task laws: with a task pool the samples also give the in-distribution error ``test_idg``, and with structured
tasks (``Problem(task_covariance=S)``: ``test`` is on fresh tasks from ``N(0, S)``) the out-of-distribution error
``test_odg`` on fresh tasks from the isotropic law of the same power; each is exact per sample in the eigen
coordinates (:attr:`spectra.Eigensystem.idg`, :attr:`~spectra.Eigensystem.odg`), beside its continuous-time Gibbs
average (``exact_test_idg``, ``exact_test_odg``).

Numerics: the stationary moments are evaluated through ``a_k v_k = 1/(β(1 − γ dt a_k/2))`` and
``v_k − 1/(βa_k) = γ dt/(2β(1 − γ dt a_k/2))``, which stay finite for any ``a_k`` (``λ = 1e300`` included).
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
import replica
from linattn import _check as check
from linattn import _validate as validate
from linattn._results import python_scalars, short_repr
from spectra import Eigensystem, eigensystem
from spectra._device import device_memory, torch_device

from . import _langevin_kernels as _kernels
from ._stats import MeanEstimate, mean_and_se

#: the discretisation and transient biases are kept below this fraction of the exact s.e.
BIAS_FRACTION = 0.25
#: chains per kernel call (progress granularity); results do not depend on it
CHAIN_GROUP = 8


@dataclass(frozen=True, eq=False)
class Chain:
    """The exact description of the discrete Langevin chain of one dataset (module docstring).

    Attributes
    ----------
    es : spectra.Eigensystem
        Complete eigensystem (null space held), so that ``a = g + λ`` are all eigenvalues of ``A``; for a
        per-block pair, the eigensystem of ``A = H + Λ`` itself (``a = g``).
    lam : float or (float, float)
        The common weight decay, or the per-block pair ``(λ_Γ, λ_v)``.
    beta, gamma : float
    gibbs_train, gibbs_test : float
        ``⟨E_t⟩``, ``⟨E_g⟩`` of the Gibbs measure (continuous time, :func:`replica.gibbs`).
    train_star, test_star : float
        ``E_t(θ*)``, ``E_g(θ*)``.
    gibbs_test_idg, gibbs_test_odg : float or None
        The Gibbs averages of the in-distribution error (a task pool) and of the out-of-distribution error (structured
        tasks), else ``None``.
    """

    __repr__ = short_repr

    es: Eigensystem
    lam: float | tuple
    beta: float
    gamma: float
    gibbs_train: float
    gibbs_test: float
    train_star: float
    test_star: float
    gibbs_test_idg: float | None = None
    gibbs_test_odg: float | None = None

    @property
    def a(self) -> np.ndarray:
        """Eigenvalues of ``A = H + λI`` (or ``H + Λ``; ascending)."""
        return self.es.g + (0.0 if self.es.block_decay is not None else self.lam)

    @property
    def V(self) -> np.ndarray:
        """Eigenvectors of ``A`` (columns, ``M × M``)."""
        return self.es.basis

    @property
    def eta_star(self) -> np.ndarray:
        """Ridge solution in eigen coordinates, ``b_k/a_k``."""
        return self.es.b / self.a

    @property
    def lambda_max(self) -> float:
        """Largest eigenvalue of ``A``."""
        return float(self.a[-1])

    @property
    def M(self) -> int:
        """Number of parameters."""
        return self.es.M

    def checked_dt(self, dt):
        """``dt`` as a float if it lies in the stable range ``(0, 2/(γ λ_max))`` of the Euler–Maruyama step (every
        method that takes ``dt`` checks it so; beyond it the chain has no stationary law).

        Parameters
        ----------
        dt : float

        Returns
        -------
        float

        Raises
        ------
        ValueError
            Naming ``dt``, outside ``(0, 2/(gamma*lambda_max(A)))``.
        """
        bound = 2.0 / (self.gamma * self.lambda_max)
        if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, numbers.Real) or not 0 < dt < bound:   # NaN too
            check.fail("dt", dt, f"a real number in the stable range (0, 2/(gamma*lambda_max(A))) = (0, {bound:.6g}) "
                       "of the Euler-Maruyama step")
        return float(dt)

    def _eta(self, name, eta):
        """A start ``η`` (M,) in eigen coordinates, checked."""
        return check.finite_array(name, eta, shape=(self.M,))

    def variances(self, dt):
        """Stationary variances ``v_k = 1/(β a_k (1 − γ dt a_k/2))`` of the discrete chain.

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).

        Returns
        -------
        ndarray (M,)
        """
        return self._variances(self.checked_dt(dt))

    def _variances(self, dt):
        h = self.gamma * dt * self.a
        return 1.0 / (self.beta * self.a * (1.0 - 0.5 * h))

    def _scaled_variances(self, dt):
        """``a_k v_k = 1/(β(1 − γ dt a_k/2))`` and the excess ``v_k − 1/(βa_k) = γ dt/(2β(1 − γ dt a_k/2))``."""
        h = self.gamma * dt * self.a
        return 1.0 / (self.beta * (1.0 - 0.5 * h)), self.gamma * dt / (2.0 * self.beta * (1.0 - 0.5 * h))

    def bias(self, dt):
        """Exact stationary bias ``(⟨E_t⟩_dt − ⟨E_t⟩, ⟨E_g⟩_dt − ⟨E_g⟩)``.

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).

        Returns
        -------
        (float, float)
        """
        return self._bias(self.checked_dt(dt))

    def _bias(self, dt):
        av, excess = self._scaled_variances(dt)
        return 0.5 * float(np.sum(av - 1.0 / self.beta)), 0.5 * float(np.diag(self.es.W) @ excess)

    def means(self, dt):
        """Exact stationary means ``(⟨E_t⟩_dt, ⟨E_g⟩_dt)`` of the discrete chain.

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).

        Returns
        -------
        (float, float)
        """
        bt, bg = self._bias(self.checked_dt(dt))
        return self.gibbs_train + bt, self.gibbs_test + bg

    def errors(self, eta):
        """``E_t`` and ``E_g`` of parameter vectors given in eigen coordinates (``(..., M)``).

        Parameters
        ----------
        eta : ndarray (..., M)

        Returns
        -------
        train, test : ndarray (...)

        Raises
        ------
        ValueError
            Naming ``eta``: not a finite array with last axis ``M``, or so large that an error overflows float64.
        """
        eta = check.finite_array("eta", eta)
        if eta.ndim < 1 or eta.shape[-1] != self.M:
            check.fail("eta", f"<array with shape {eta.shape}>", f"an array of shape (..., {self.M})")
        return self._errors(eta)

    def _errors(self, eta):
        dev = eta - self.eta_star
        with np.errstate(over="ignore", invalid="ignore"):
            train = self.train_star + 0.5 * np.einsum("...k,k->...", dev**2, self.a)
        check.finite_result(train, {"eta": eta}, "the training error")
        try:
            test = self.es.test_error(eta)
        except ValueError:          # its overflow refusal names the eigensystem's argument: the culprit is eta
            check.fail("eta", f"<values up to {float(np.max(np.abs(eta))):.3g}>",
                       "small enough that the test error is finite in float64")
        return train, test

    def autocovariance(self, dt, lags):
        """Exact stationary autocovariances of ``E_t`` and ``E_g`` at the given lags (in steps).

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).
        lags : array_like of int
            Lags ``>= 0`` (at most ``2**53``).

        Returns
        -------
        train, test : ndarray (len(lags),)
        """
        dt = self.checked_dt(dt)
        lags = check.counts("lags", lags)
        check.memory(8.0 * 3 * lags.size * self.M, f"autocovariances at {lags.size} lags of {self.M} modes", "lags")
        return self._autocovariance(dt, lags)

    def _autocovariance(self, dt, lags):
        v = self._variances(dt)
        av, _ = self._scaled_variances(dt)
        phi = 1.0 - self.gamma * dt * self.a
        lags = np.asarray(lags, dtype=float)
        pw = phi[None, :] ** lags[:, None]                       # (L, M)
        ct = 0.5 * (pw**2) @ av**2
        lin = self.es.W @ self.eta_star - self.es.u              # gradient of E_g at θ*, eigen coords
        cg = pw @ (lin**2 * v)
        W2v = (self.es.W**2) * np.outer(v, v)
        cg = cg + 0.5 * np.einsum("lk,kj,lj->l", pw, W2v, pw)
        return ct, cg

    def standard_errors(self, dt, n_samples, stride, n_chains=1):
        """Exact s.e. of the mean of ``n_samples`` stationary samples ``stride`` steps apart, per
        chain, averaged over ``n_chains`` independent chains: ``(train_se, test_se)``.

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).
        n_samples, stride, n_chains : int
            ``>= 1`` each, with ``(n_samples − 1) × stride <= 2**53``.

        Returns
        -------
        (float, float)
        """
        dt = self.checked_dt(dt)
        return self._standard_errors(dt, *_checked_protocol(self.M, n_samples, stride, n_chains))

    def _standard_errors(self, dt, n_samples, stride, n_chains):
        """:meth:`standard_errors` of checked arguments."""
        d = np.arange(n_samples)
        ct, cg = self._autocovariance(dt, d * stride)
        wts = np.where(d == 0, n_samples, 2.0 * (n_samples - d))
        var_t = float(wts @ ct) / (n_samples**2 * n_chains)
        var_g = float(wts @ cg) / (n_samples**2 * n_chains)
        return np.sqrt(var_t), np.sqrt(var_g)

    def transient(self, dt, n_steps, eta0):
        """Exact ``(E[E_t] − ⟨E_t⟩_dt, E[E_g] − ⟨E_g⟩_dt)`` after ``n_steps`` from ``η_0``.

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).
        n_steps : int
            ``>= 0`` (at most ``2**53``).
        eta0 : ndarray (M,)
            Start in eigen coordinates.

        Returns
        -------
        (float, float)

        Raises
        ------
        ValueError
            Naming ``dt``, ``n_steps`` or ``eta0`` (of shape ``(M,)``; one so large that a bias overflows float64).
        """
        eta0 = self._eta("eta0", eta0)
        bt, bg = self._transient(self.checked_dt(dt), check.nonneg_int("n_steps", n_steps), eta0)
        check.finite_result([bt, bg], {"eta0": eta0}, "each transient bias")
        return bt, bg

    def _transient(self, dt, n_steps, eta0):
        v = self._variances(dt)
        av, _ = self._scaled_variances(dt)
        phi_n = (1.0 - self.gamma * dt * self.a) ** n_steps
        delta = phi_n * (eta0 - self.eta_star)                  # mean offset
        dvar = -(phi_n**2) * v                                   # variance deficit
        W = self.es.W
        with np.errstate(over="ignore", invalid="ignore"):     # a start beyond float64: an infinite bias
            bt = 0.5 * float(self.a @ delta**2 - (phi_n**2) @ av)
            bg = float((W @ self.eta_star - self.es.u) @ delta) + 0.5 * float(delta @ W @ delta + np.diag(W) @ dvar)
        return bt if np.isfinite(bt) else np.inf, bg if np.isfinite(bg) else np.inf

    def steps_to_equilibrate(self, dt, eta0, target_train, target_test, start=1):
        """Smallest power-of-two multiple of ``start`` steps after which both transient biases are
        below their targets (at most ``2^60``).

        Parameters
        ----------
        dt : float
            In the stable range ``(0, 2/(γ λ_max))`` (:meth:`checked_dt`).
        eta0 : ndarray (M,)
        target_train, target_test : float
            Largest acceptable transient biases (``>= 0``; ``inf`` allowed).
        start : int
            First number of steps tried (``>= 1``).

        Returns
        -------
        int
        """
        dt, eta0 = self.checked_dt(dt), self._eta("eta0", eta0)
        target_train = check.nonnegative("target_train", target_train, allow_inf=True)
        target_test = check.nonnegative("target_test", target_test, allow_inf=True)
        n = check.positive_int("start", start)
        for _ in range(60):
            bt, bg = self._transient(dt, n, eta0)
            if abs(bt) <= target_train and abs(bg) <= target_test:
                return n
            n *= 2
        return n


def chain(data, pb, beta, lam, gamma=1.0, model="reduced", device=None) -> Chain:
    """The exact description of the Langevin chain of one dataset.

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    beta : float
        Finite inverse temperature ``β > 0``.
    lam : float or (float, float)
        ``λ > 0`` (``λ = 0`` only when ``P >= M``, where ``A = H`` is positive definite), or the per-block pair
        ``(λ_Γ, λ_v)`` of the full model (both ``> 0``; module docstring).
    gamma : float
        Mobility ``γ > 0``.
    model : {"reduced", "full"}
    device : None, str or torch.device
        Where the eigensystem is computed (:func:`spectra.eigensystem`; ``None``: numpy).

    Returns
    -------
    Chain
    """
    return _chain(data, pb, *_chain_arguments(data, pb, beta, lam, gamma, model), model, device)


def _chain_arguments(data, pb, beta, lam, gamma, model):
    """``(β, λ_Γ, λ_v, γ)`` of :func:`chain`, checked (with the prompts against the problem and the model)."""
    validate.problem_data(data, pb, model)
    beta = check.positive("beta", beta)
    lam_gamma, lam_v = check.block_lambdas(lam, model)
    gamma = check.positive("gamma", gamma)
    M = pb.n_params(model)
    if lam_gamma == 0 and data.P < M:
        raise ValueError(f"lam must be > 0 when P < M (P={data.P}, M={M}): the Gibbs measure is not "
                         "normalisable and Langevin dynamics does not equilibrate; got lam = 0")
    return beta, lam_gamma, lam_v, gamma


def _chain(data, pb, beta, lam_gamma, lam_v, gamma, model, device):
    """:func:`chain` of checked arguments (:func:`_chain_arguments`)."""
    if lam_gamma != lam_v:             # per-block decay: the eigenbasis of H + Λ itself (numpy)
        lam = (lam_gamma, lam_v)
        es = eigensystem(data, pb, model, lam=lam)
    else:
        lam = lam_gamma
        es = eigensystem(data, pb, model, null_space=True, device=device)
    if lam == 0 and np.any(es.g <= 0):
        raise ValueError("lam must be > 0 for this dataset: H is singular (P >= M but rank-deficient); got lam = 0")
    g = replica.gibbs(es, pb, beta, lam, model)
    return Chain(es=es, lam=lam, beta=beta, gamma=gamma, gibbs_train=float(g.train), gibbs_test=float(g.test),
                 train_star=float(g.train_ridge), test_star=float(g.test_ridge),
                 gibbs_test_idg=None if g.test_idg is None else float(g.test_idg),
                 gibbs_test_odg=None if g.test_odg is None else float(g.test_odg))


def choose_dt(ch: Chain, n_samples, stride, n_chains=1) -> float:
    """Largest ``dt = 2^{-j}/(γ λ_max)`` whose exact discretisation bias is at most ¼ of the exact
    s.e. of the mean over all ``n_chains`` chains, for both errors.

    Parameters
    ----------
    ch : Chain
    n_samples, stride, n_chains : int
        The sampling protocol.

    Returns
    -------
    float

    Raises
    ------
    linattn.ConvergenceError
        If no step in 60 halvings qualifies.
    """
    if not isinstance(ch, Chain):
        raise ValueError(f"ch must be a validation.Chain (see validation.chain); got {type(ch).__name__}")
    return _choose_dt(ch, *_checked_protocol(ch.M, n_samples, stride, n_chains))


def _checked_protocol(M, n_samples, stride, n_chains):
    """``(n_samples, stride, n_chains)`` of a sampling protocol, checked (the autocovariances of ``M`` modes at
    ``n_samples`` lags fit in memory; the lags fit the kernels' step counter)."""
    n_samples = check.positive_int("n_samples", n_samples)
    stride = check.positive_int("stride", stride)
    n_chains = check.positive_int("n_chains", n_chains)
    check.memory(8.0 * 4 * n_samples * M, f"autocovariances at {n_samples} lags of {M} modes", "n_samples")
    if (n_samples - 1) * stride > check.MAX_INT:
        check.fail("stride", stride, f"such that (n_samples - 1) * stride <= 2**53 (n_samples = {n_samples})")
    return n_samples, stride, n_chains


def _choose_dt(ch, n_samples, stride, n_chains):
    """:func:`choose_dt` of checked arguments."""
    dt = 1.0 / (ch.gamma * ch.lambda_max)
    for _ in range(60):
        bt, bg = ch._bias(dt)
        st, sg = ch._standard_errors(dt, n_samples, stride, n_chains)
        if abs(bt) <= BIAS_FRACTION * st and abs(bg) <= BIAS_FRACTION * sg:
            return dt
        dt *= 0.5
    raise linattn.ConvergenceError(
        f"choose_dt: no step found with discretisation bias below the sampling error after 60 halvings (dt = "
        f"{dt:.3g}; lam = {ch.lam}, eigenvalues of A from {float(ch.a.min()):.3g} to {ch.lambda_max:.3g}): a chain "
        "this ill-conditioned needs more steps than a run can take; raise lam, or pass dt to langevin")


@dataclass(frozen=True, eq=False)
class LangevinResult:
    """Samples of ``E_t`` and ``E_g`` (shape (n_chains, n_samples)) and the exact reference values.

    Attributes
    ----------
    train, test : ndarray (n_chains, n_samples)
    exact_train, exact_test : float
        Continuous-time Gibbs averages (:func:`replica.gibbs`).
    bias_train, bias_test : float
        Exact discretisation bias of the chain's stationary means.
    train_se_exact, test_se_exact : float
        Exact s.e. of the overall sample mean for this protocol (all chains).
    transient_train, transient_test : float
        Exact residual (transient) bias at the first sample.
    equilibrated : bool
        Both transient biases are below ``BIAS_FRACTION`` times the exact s.e.
    test_idg, test_odg : ndarray (n_chains, n_samples) or None
        Samples of the in-distribution error (a task pool) and of the out-of-distribution error (structured tasks:
        fresh tasks from the isotropic law of the same power), else ``None``.
    exact_test_idg, exact_test_odg : float or None
        Their continuous-time Gibbs averages (:func:`replica.gibbs`).
    """

    __repr__ = short_repr

    train: np.ndarray
    test: np.ndarray
    dt: float
    gamma: float
    beta: float
    lam: float | tuple
    model: str
    basis: str
    n_equilibrate: int
    stride: int
    exact_train: float
    exact_test: float
    bias_train: float
    bias_test: float
    train_se_exact: float
    test_se_exact: float
    transient_train: float
    transient_test: float
    equilibrated: bool
    test_idg: np.ndarray | None = None
    test_odg: np.ndarray | None = None
    exact_test_idg: float | None = None
    exact_test_odg: float | None = None

    def __post_init__(self):
        python_scalars(self)

    @property
    def train_estimate(self) -> MeanEstimate:
        """Sample mean of ``E_t`` with its s.e. from the integrated autocorrelation time."""
        return mean_and_se(self.train)

    @property
    def test_estimate(self) -> MeanEstimate:
        """Sample mean of ``E_g`` with its s.e. from the integrated autocorrelation time."""
        return mean_and_se(self.test)

    @property
    def train_mean(self) -> float:
        return float(self.train.mean())

    @property
    def test_mean(self) -> float:
        return float(self.test.mean())

    @property
    def train_se(self) -> float:
        """Estimated (IAT) s.e. of the mean of ``E_t``; see ``train_estimate.reliable``."""
        return self.train_estimate.se

    @property
    def test_se(self) -> float:
        """Estimated (IAT) s.e. of the mean of ``E_g``; see ``test_estimate.reliable``."""
        return self.test_estimate.se


def _protocol_step(ch, dt, n_samples, stride, n_chains):
    """``dt`` checked against the stability bound, or chosen (``None``)."""
    if dt is None:
        return _choose_dt(ch, n_samples, stride, n_chains)
    return ch.checked_dt(dt)


def _check_equilibration(ch, dt, n_equilibrate, eta0, se, on_unequilibrated):
    """Exact transient biases at the first sample, and the refusal/warning when they are too large."""
    bt, bg = ch._transient(dt, n_equilibrate, eta0)
    target = BIAS_FRACTION * np.asarray(se)
    ok = abs(bt) <= target[0] and abs(bg) <= target[1]
    if not ok:
        need = ch.steps_to_equilibrate(dt, eta0, target[0], target[1], start=max(n_equilibrate, 1))
        bt_need, bg_need = ch._transient(dt, need, eta0)
        advice = (f"about {need} steps would do" if abs(bt_need) <= target[0] and abs(bg_need) <= target[1]
                  else f"more than {need} steps would be needed (a larger dt)")
        with np.errstate(over="ignore", divide="ignore"):     # a subnormal step: the slowest mode never relaxes
            slowest = 1.0 / (ch.gamma * dt * ch.a[0])
        msg = (f"n_equilibrate = {n_equilibrate} steps do not equilibrate this chain: the exact transient bias at "
               f"the first sample is {bt:.3g} (train) and {bg:.3g} (test), more than {BIAS_FRACTION} x the exact "
               f"s.e. of the mean ({se[0]:.3g}, {se[1]:.3g}) at beta = {ch.beta:.3g}; the slowest mode relaxes in "
               f"{slowest:.3g} steps (dt = {dt:.3g}, smallest eigenvalue of A = {ch.a[0]:.3g}); {advice}")
        if on_unequilibrated == "raise":
            raise ValueError(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    return bt, bg, ok


def _run_chains(ch, dt, eta0, n_equilibrate, n_samples, stride, n_chains, seed, basis, progress):
    """Samples in eigen coordinates, shape (n_chains, n_samples, M)."""
    gamma = ch.gamma
    noise = np.sqrt(2.0 * gamma * dt / ch.beta)
    samples = np.empty((n_chains, n_samples, ch.M))
    bar = tqdm(total=n_chains, desc="langevin chains", disable=not progress, leave=False)
    for start in range(0, n_chains, CHAIN_GROUP):
        stop = min(n_chains, start + CHAIN_GROUP)
        out = np.empty((stop - start, n_samples, ch.M))
        ids = np.arange(start, stop)
        if basis == "eigen":
            _kernels.langevin_eigen(1.0 - gamma * dt * ch.a, gamma * dt * ch.es.b, noise,
                                    np.tile(eta0, (stop - start, 1)), n_equilibrate, n_samples, stride,
                                    seed, ids, out, _kernels.ZIG_X, _kernels.ZIG_F)
            samples[start:stop] = out
        else:
            A = ch.V @ (ch.a[:, None] * ch.V.T)
            _kernels.langevin_dense(A, ch.V @ ch.es.b, gamma * dt, noise, np.tile(ch.V @ eta0, (stop - start, 1)),
                                    n_equilibrate, n_samples, stride, seed, ids, out, _kernels.ZIG_X, _kernels.ZIG_F)
            samples[start:stop] = out @ ch.V        # to eigen coordinates
        bar.update(stop - start)
    bar.close()
    return samples


def _run_chains_torch(ch, dt, eta0, n_equilibrate, n_samples, stride, n_chains, seed, dev, progress):
    """The eigen-basis chain of :func:`_run_chains` for all chains at once as torch tensors on ``dev``: the same
    update ``η ← (1 − γ dt a) η + γ dt b + √(2γ dt/β) ξ`` and sampling times; ``ξ`` from torch's generator seeded
    by ``seed`` (the same law as the numba chains, another stream)."""
    import torch

    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    decay = torch.tensor(1.0 - ch.gamma * dt * ch.a, device=dev)
    drift = torch.tensor(ch.gamma * dt * ch.es.b, device=dev)
    noise = float(np.sqrt(2.0 * ch.gamma * dt / ch.beta))
    eta = torch.tensor(np.tile(eta0, (n_chains, 1)), device=dev)
    xi = torch.empty_like(eta)
    samples = np.empty((n_chains, n_samples, ch.M))
    bar = tqdm(total=n_samples, desc="langevin samples", disable=not progress, leave=False)
    for j in range(n_samples):
        for _ in range(n_equilibrate if j == 0 else stride):
            torch.randn(eta.shape, generator=gen, out=xi)
            eta.mul_(decay).add_(drift).add_(xi, alpha=noise)
        samples[:, j] = eta.cpu().numpy()
        bar.update(1)
    bar.close()
    return samples


def langevin(data, pb, beta, lam, gamma=1.0, dt=None, n_equilibrate=100_000, n_samples=20, stride=5000,
             n_chains=1, rng=0, model="reduced", basis="eigen", init=None, progress=False,
             on_unequilibrated="raise", device=None) -> LangevinResult:
    """Simulate Langevin training and sample the train and test errors (module docstring).

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    beta : float
        Inverse temperature ``β > 0`` (finite).
    lam : float or (float, float)
        Weight decay ``λ >= 0`` (``λ > 0`` needed when ``P < M``), or the per-block pair ``(λ_Γ, λ_v)`` of the
        full model (both ``> 0``): the drift ``(H + Λ)θ − b``, run in the eigenbasis of ``H + Λ`` (module
        docstring).
    gamma : float
        Mobility ``γ > 0``.
    dt : float, optional
        Time step; ``None`` chooses one (bias below a quarter of the s.e. of the reported mean).
        Must satisfy ``γ dt λ_max(A) < 2``.
    n_equilibrate, n_samples, stride : int
        Protocol: equilibrate, then take ``n_samples`` samples ``stride`` steps apart
        (defaults: the seed's 10⁵, 20, 5000).
    n_chains : int
        Independent chains (run in parallel); ``n_chains × n_samples >= 2``.
    rng : int
    model : {"reduced", "full"}
    basis : {"eigen", "parameter"}
        Coordinates of the (identical) chain; ``"parameter"`` is ``O(M²)`` per step.
    init : array_like, optional
        Initial parameters ``θ0`` (zeros by default). A start so far out that the sampled errors overflow
        float64 is refused (``ValueError`` naming ``init``).
    progress : bool
        Progress bar over groups of chains.
    on_unequilibrated : {"raise", "warn"}
        What to do when the exact transient bias at the first sample exceeds a quarter of the
        exact s.e. (module docstring): refuse with ``ValueError``, or warn and return a result
        marked ``equilibrated=False``.
    device : None, str or torch.device
        ``None``: the numba chains (one core per chain group). ``"cuda"``, ``"cuda:N"`` or ``"cpu"``: all chains in
        one batch of torch tensors on that device (the ``[torch]`` extra; ``basis="eigen"``), and the eigensystem
        there too: the same chain law, with torch's random stream (``rng`` seeds it) — for ``10⁴`` chains on a GPU.

    Returns
    -------
    LangevinResult

    Examples
    --------
    >>> import linattn, validation
    >>> pb = linattn.Problem(4, 8, 0.1)
    >>> run = validation.langevin(pb.sample(40, rng=0), pb, 1e3, 0.01, n_equilibrate=2000, n_samples=5, stride=200)
    >>> run.train.shape, run.equilibrated           # (chains, samples); exact Gibbs averages beside them
    ((1, 5), True)
    >>> bool(abs(run.train.mean() - run.exact_train) < 5 * run.train_se_exact)
    True
    """
    beta, lam_gamma, lam_v, gamma = _chain_arguments(data, pb, beta, lam, gamma, model)
    n_equilibrate = check.nonneg_int("n_equilibrate", n_equilibrate)
    n_samples = check.positive_int("n_samples", n_samples)
    stride = check.positive_int("stride", stride)
    n_chains = check.positive_int("n_chains", n_chains)
    if n_samples * n_chains < 2:
        check.fail("n_samples", n_samples, "such that n_samples * n_chains >= 2 (a standard error needs two samples)")
    if n_equilibrate + (n_samples - 1) * stride > check.MAX_INT:    # the kernels count steps in int64
        check.fail("stride", stride, f"such that n_equilibrate + (n_samples - 1) * stride <= 2**53 "
                   f"(n_equilibrate = {n_equilibrate}, n_samples = {n_samples})")
    rng = check.seed_int("rng", rng)
    check.choice("basis", basis, ("eigen", "parameter"))
    check.choice("on_unequilibrated", on_unequilibrated, ("raise", "warn"))
    progress = check.boolean("progress", progress)
    M = pb.n_params(model)
    check.memory(8.0 * (3 * n_chains * n_samples * M + 4 * M * M), f"{n_chains} chains x {n_samples} samples x "
                 f"{M} parameters", "n_chains or n_samples")
    dev = None
    if device is not None:
        if basis != "eigen":
            check.fail("device", device, "None with basis='parameter' (the batched chains run in the eigenbasis)")
        dev = torch_device(device)
        device_memory(dev, 8.0 * 3 * n_chains * M, f"{n_chains} chains of {M} parameters", "n_chains")
    check.work(float(n_chains) * (n_equilibrate + (n_samples - 1) * stride) * M * (M if basis == "parameter" else 1),
               f"{n_chains} chains x {n_equilibrate + (n_samples - 1) * stride} steps of {M} parameters",
               "n_equilibrate, n_samples, stride or n_chains")
    check.memory(8.0 * 4 * n_samples * M, f"autocovariances at {n_samples} lags of {M} modes", "n_samples")
    ch = _chain(data, pb, beta, lam_gamma, lam_v, gamma, model, device)
    dt = _protocol_step(ch, dt, n_samples, stride, n_chains)
    theta0 = np.zeros(M) if init is None else check.finite_array("init", init, shape=(M,))
    eta0 = ch.V.T @ theta0
    st, sg = ch._standard_errors(dt, n_samples, stride, n_chains)
    tr_bias, te_bias, ok = _check_equilibration(ch, dt, n_equilibrate, eta0, (st, sg), on_unequilibrated)
    if dev is None:
        samples = _run_chains(ch, dt, eta0, n_equilibrate, n_samples, stride, n_chains, rng, basis, progress)
    else:
        samples = _run_chains_torch(ch, dt, eta0, n_equilibrate, n_samples, stride, n_chains, rng, dev, progress)
    with np.errstate(over="ignore", invalid="ignore"):    # ½ Σ a (η − η*)² and ηᵀWη must not overflow
        big = max(float(np.max(np.abs(samples - ch.eta_star) * np.sqrt(ch.a))),
                  float(np.max(np.abs(samples))) * np.sqrt(float(np.max(np.diag(ch.es.W)))))
    if not np.isfinite(big) or big > 1e150:
        check.fail("init", f"<values up to {float(np.max(np.abs(theta0))):.3g}>", "close enough to the Gibbs "
                   f"measure that the sampled errors are finite in float64 after n_equilibrate = {n_equilibrate} "
                   "steps (or a larger n_equilibrate)")
    train, test = ch._errors(samples)
    idg, odg = (None if m is None else m.error(samples) for m in (ch.es.idg, ch.es.odg))
    bt, bg = ch._bias(dt)
    return LangevinResult(train=train, test=test, dt=float(dt), gamma=ch.gamma, beta=ch.beta, lam=ch.lam, model=model,
                          basis=basis, n_equilibrate=n_equilibrate, stride=stride, exact_train=ch.gibbs_train,
                          exact_test=ch.gibbs_test, bias_train=bt, bias_test=bg, train_se_exact=st,
                          test_se_exact=sg, transient_train=tr_bias, transient_test=te_bias, equilibrated=ok,
                          test_idg=idg, test_odg=odg, exact_test_idg=ch.gibbs_test_idg,
                          exact_test_odg=ch.gibbs_test_odg)
