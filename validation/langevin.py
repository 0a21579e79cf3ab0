r"""Langevin simulation of training: Euler–Maruyama on the training energy.

.. math:: θ ← θ − γ\,dt\,∇E_t(θ) + \sqrt{2γ\,dt/β}\;ξ,\qquad ∇E_t = Aθ − b,

(THEORY §2), whose continuous-time stationary law is the Gibbs measure ``∝ exp(−βE_t)``.
The chain is run in the eigenbasis of ``A`` (``θ = V η``): since ``Vᵀξ`` is again a vector of
independent standard normals, this is the *same* Markov chain as in the parameter basis, at
``O(M)`` instead of ``O(M²)`` per step; ``basis="parameter"`` runs the dense-gradient version
(used to check the equivalence). Chains run in parallel (numba ``prange``), each with its own
explicit random-number state seeded by ``(seed, chain)``.

Exact properties of the discrete chain (for the choice of ``dt`` and for tests). Mode ``k`` is an
AR(1) process with ``φ_k = 1 − γ dt a_k`` (``a_k`` eigenvalues of ``A``) and stationary variance
``v_k = 1/(β a_k (1 − γ dt a_k/2))`` instead of the Gibbs value ``1/(β a_k)``. Hence the
stationary means carry the exact ``O(dt)`` bias

.. math:: ⟨E_t⟩_{dt} − ⟨E_t⟩ = ½ Σ_k a_k v_k − \frac{M}{2β},\qquad
          ⟨E_g⟩_{dt} − ⟨E_g⟩ = ½ Σ_k W_{kk} (v_k − 1/(β a_k))

(``W = Vᵀ C V``), the autocovariances are sums of ``φ^{lag}`` terms, and the standard error of a
protocol's sample mean is known exactly. ``dt=None`` picks the largest step (halving from
``γ dt λ_max = 1``) whose bias is below a quarter of that standard error for both errors.
Stability requires ``γ dt λ_max(A) < 2``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import dynamics
import linattn
import replica
from linattn import _validate as check
from spectra import hessian_dense

from . import _kernels
from .stats import mean_and_se

BIAS_FRACTION = 0.25


@dataclass(frozen=True, eq=False)
class Chain:
    """The exact description of the discrete Langevin chain of one dataset (module docstring)."""

    a: np.ndarray          # eigenvalues of A
    V: np.ndarray          # eigenvectors of A (columns)
    b: np.ndarray          # Vᵀ b
    u: np.ndarray          # Vᵀ u
    W: np.ndarray          # Vᵀ C V
    train_star: float      # E_t(θ*)
    test_star: float       # E_g(θ*)
    gibbs_train: float     # ⟨E_t⟩ of the Gibbs measure (continuous time)
    gibbs_test: float      # ⟨E_g⟩
    beta: float
    gamma: float
    M: int

    @property
    def lambda_max(self):
        return float(self.a[-1])

    def variances(self, dt):
        h = self.gamma * dt * self.a
        return 1.0 / (self.beta * self.a * (1.0 - 0.5 * h))

    def bias(self, dt):
        """Exact stationary bias ``(⟨E_t⟩_dt − ⟨E_t⟩, ⟨E_g⟩_dt − ⟨E_g⟩)``."""
        v = self.variances(dt)
        g = 1.0 / (self.beta * self.a)
        return 0.5 * float(self.a @ (v - g)), 0.5 * float(np.diag(self.W) @ (v - g))

    def means(self, dt):
        """Exact stationary means of the discrete chain."""
        v = self.variances(dt)
        return (self.train_star + 0.5 * float(self.a @ v), self.test_star + 0.5 * float(np.diag(self.W) @ v))

    def autocovariance(self, dt, lags):
        """Exact autocovariances of ``E_t`` and ``E_g`` at the given lags (in steps)."""
        v = self.variances(dt)
        phi = 1.0 - self.gamma * dt * self.a
        lags = np.asarray(lags, dtype=float)
        pw = phi[None, :] ** lags[:, None]                       # (L, M)
        ct = 0.5 * (pw**2) @ (self.a**2 * v**2)
        lin = self.W @ (self.b / self.a) - self.u                # gradient of E_g at θ*, eigen coords
        cg = pw @ (lin**2 * v)
        W2v = (self.W**2) * np.outer(v, v)
        cg = cg + 0.5 * np.einsum("lk,kj,lj->l", pw, W2v, pw)
        return ct, cg

    def standard_errors(self, dt, n_samples, stride, n_chains=1):
        """Exact s.e. of the mean of ``n_samples`` stationary samples ``stride`` steps apart, per
        chain, averaged over ``n_chains`` independent chains."""
        d = np.arange(n_samples)
        ct, cg = self.autocovariance(dt, d * stride)
        wts = np.where(d == 0, n_samples, 2.0 * (n_samples - d))
        var_t = float(wts @ ct) / (n_samples**2 * n_chains)
        var_g = float(wts @ cg) / (n_samples**2 * n_chains)
        return np.sqrt(var_t), np.sqrt(var_g)

    def equilibration_bias(self, dt, n_steps, eta0):
        """``E[E_t](n) − ⟨E_t⟩_dt`` after ``n`` steps from the deterministic start ``η0``."""
        v = self.variances(dt)
        phi2n = (1.0 - self.gamma * dt * self.a) ** (2 * n_steps)
        dev = eta0 - self.b / self.a
        return 0.5 * float(self.a @ (phi2n * (dev**2 - v)))


def chain(data, pb, beta, lam, gamma=1.0, model="reduced") -> Chain:
    """Eigendecomposition of ``A`` and the exact data of the Langevin chain for one dataset."""
    es = dynamics.eigensystem(data, pb, model)
    if es.k == es.M:       # dense path: the eigensystem already holds the full basis (A = H + λI)
        a, V = es.g + lam, es.basis
    else:                  # Gram path: the null space of H is needed too
        H = hessian_dense(data, model)
        a, V = np.linalg.eigh(H + lam * np.eye(H.shape[0]))
    M = a.size
    bvec = data.features(model).T @ data.yq / data.P
    uvec = np.zeros(M)
    uvec[: pb.D**2] = np.eye(pb.D).ravel() / pb.D
    Cdiag = np.full(M, pb.feature_variance)
    Cdiag[pb.D**2:] = pb.feature_variance_v
    W = V.T @ (Cdiag[:, None] * V)
    g = replica.gibbs(es, pb, beta, lam, model)
    return Chain(a=a, V=V, b=V.T @ bvec, u=V.T @ uvec, W=W, train_star=float(g.train_ridge),
                 test_star=float(g.test_ridge), gibbs_train=float(g.train), gibbs_test=float(g.test),
                 beta=beta, gamma=gamma, M=M)


def choose_dt(ch: Chain, n_samples, stride, n_chains=1) -> float:
    """Largest ``dt = 2^{-j}/(γ λ_max)`` with exact |bias| <= ¼ of the exact s.e. (both errors)."""
    dt = 1.0 / (ch.gamma * ch.lambda_max)
    for _ in range(60):
        bt, bg = ch.bias(dt)
        st, sg = ch.standard_errors(dt, n_samples, stride, n_chains)
        if abs(bt) <= BIAS_FRACTION * st and abs(bg) <= BIAS_FRACTION * sg:
            return dt
        dt *= 0.5
    raise linattn.ConvergenceError("choose_dt: no step found with discretisation bias below the sampling error")


@dataclass(frozen=True, eq=False)
class LangevinResult:
    """Samples of ``E_t`` and ``E_g`` (shape (n_chains, n_samples)) and the exact reference values.

    ``exact_train``/``exact_test``: continuous-time Gibbs averages (:func:`replica.gibbs`);
    ``bias_*``: exact discretisation bias of the chain's stationary means; ``se_*_exact``: exact
    s.e. of the overall sample mean for this protocol; ``equilibration_bias``: exact residual
    bias of ``E_t`` at the first sample. ``mean_*`` / ``se_*``: the sample estimates, the s.e.
    from the integrated autocorrelation time (:mod:`validation.stats`).
    """

    train: np.ndarray
    test: np.ndarray
    dt: float
    gamma: float
    beta: float
    lam: float
    model: str
    basis: str
    n_equilibrate: int
    stride: int
    exact_train: float
    exact_test: float
    bias_train: float
    bias_test: float
    se_train_exact: float
    se_test_exact: float
    equilibration_bias: float

    @property
    def mean_train(self):
        return mean_and_se(self.train)[0]

    @property
    def mean_test(self):
        return mean_and_se(self.test)[0]

    @property
    def se_train(self):
        return mean_and_se(self.train)[1]

    @property
    def se_test(self):
        return mean_and_se(self.test)[1]


def langevin(data, pb, beta, lam, gamma=1.0, dt=None, n_equilibrate=100_000, n_samples=20, stride=5000,
             n_chains=1, seed=0, model="reduced", basis="eigen", init=None, progress=False) -> LangevinResult:
    """Simulate Langevin training and sample the train and test errors (module docstring).

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    beta : float
        Inverse temperature ``β > 0`` (finite).
    lam : float
        Weight decay ``λ >= 0`` (``λ > 0`` needed when ``P < M``).
    gamma : float
        Mobility ``γ > 0``.
    dt : float, optional
        Time step; ``None`` chooses one (bias below the sampling error). Must satisfy
        ``γ dt λ_max(A) < 2``.
    n_equilibrate, n_samples, stride : int
        Protocol: equilibrate, then take ``n_samples`` samples ``stride`` steps apart
        (defaults: the seed's 10⁵, 20, 5000).
    n_chains : int
        Independent chains (run in parallel).
    seed : int
    model : {"reduced", "full"}
    basis : {"eigen", "parameter"}
        Coordinates of the (identical) chain; ``"parameter"`` is ``O(M²)`` per step.
    init : array_like, optional
        Initial parameters ``θ0`` (zeros by default).
    progress : bool
        Progress bar over groups of chains.
    """
    if not isinstance(data, linattn.Prompts):
        raise ValueError(f"data must be a linattn.Prompts; got {type(data).__name__}")
    if not isinstance(pb, linattn.Problem):
        raise ValueError(f"pb must be a linattn.Problem; got {type(pb).__name__}")
    beta = check.positive("beta", beta)
    lam = check.nonnegative("lam", lam)
    gamma = check.positive("gamma", gamma)
    n_equilibrate = check.nonneg_int("n_equilibrate", n_equilibrate)
    n_samples = check.positive_int("n_samples", n_samples)
    stride = check.positive_int("stride", stride)
    n_chains = check.positive_int("n_chains", n_chains)
    seed = check.seed_int("seed", seed)
    check.model(model)
    check.choice("basis", basis, ("eigen", "parameter"))
    data.require(model)
    M = pb.n_params(model)
    if lam == 0 and data.P < M:
        raise ValueError(f"lam must be > 0 when P < M (P={data.P}, M={M}): the Gibbs measure is not "
                         "normalisable and Langevin dynamics does not equilibrate; got lam = 0")
    ch = chain(data, pb, beta, lam, gamma, model)
    if dt is None:
        dt = choose_dt(ch, n_samples, stride)
    else:
        dt = check.positive("dt", dt)
        bound = 2.0 / (gamma * ch.lambda_max)
        if dt >= bound:
            raise ValueError(f"dt must be < 2/(gamma*lambda_max(A)) = {bound:.6g} for a stable Euler-Maruyama "
                             f"step; got {dt!r}")
    theta0 = np.zeros(M) if init is None else check.finite_array("init", init, shape=(M,))
    eta0 = ch.V.T @ theta0
    noise = np.sqrt(2.0 * gamma * dt / beta)
    samples = np.empty((n_chains, n_samples, M))
    group = 8  # chains per kernel call (progress granularity); results do not depend on it
    bar = tqdm(total=n_chains, desc="langevin chains", disable=not progress, leave=False)
    for start in range(0, n_chains, group):
        stop = min(n_chains, start + group)
        out = np.empty((stop - start, n_samples, M))
        if basis == "eigen":
            _kernels.langevin_eigen(1.0 - gamma * dt * ch.a, gamma * dt * ch.b, noise,
                                    np.tile(eta0, (stop - start, 1)), n_equilibrate, n_samples, stride,
                                    seed, np.arange(start, stop), out, _kernels.ZIG_X, _kernels.ZIG_F)
            samples[start:stop] = out
        else:
            Afull = ch.V @ (ch.a[:, None] * ch.V.T)
            bfull = ch.V @ ch.b
            _kernels.langevin_dense(Afull, bfull, gamma * dt, noise, np.tile(theta0, (stop - start, 1)),
                                    n_equilibrate, n_samples, stride, seed, np.arange(start, stop), out,
                                    _kernels.ZIG_X, _kernels.ZIG_F)
            samples[start:stop] = out @ ch.V        # to eigen coordinates
        bar.update(stop - start)
    bar.close()
    dev = samples - (ch.b / ch.a)
    train = ch.train_star + 0.5 * np.einsum("csk,k->cs", dev**2, ch.a)
    kappa = 1.0 + pb.noise**2
    test = 0.5 * (kappa - 2 * samples @ ch.u + np.einsum("csk,kl,csl->cs", samples, ch.W, samples))
    bt, bg = ch.bias(dt)
    st, sg = ch.standard_errors(dt, n_samples, stride, n_chains)
    return LangevinResult(train=train, test=test, dt=float(dt), gamma=gamma, beta=beta, lam=lam, model=model,
                          basis=basis, n_equilibrate=n_equilibrate, stride=stride, exact_train=ch.gibbs_train,
                          exact_test=ch.gibbs_test, bias_train=bt, bias_test=bg, se_train_exact=st,
                          se_test_exact=sg, equilibration_bias=ch.equilibration_bias(dt, n_equilibrate, eta0))

