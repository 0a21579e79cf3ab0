r"""Factorized parametrizations of the same linear-attention predictor, and their quadratic objectives.

Every parametrization below produces the merged matrix ``Γ(θ)`` of the reduced model, so that
``ŷ = sᵀ Γ(θ) x_q`` and every loss is the *quadratic* objective of :class:`Objective` composed with a
polynomial map ``θ ↦ Γ``. What the product changes is the geometry of learning (plateaus, staged and
saddle-to-saddle drops, implicit low-rank bias), never the set of predictors.

========================  ==============================================  ===================================
kind                      ``Γ(θ)``                                        conserved by gradient flow
========================  ==============================================  ===================================
``"merged"``              ``Γ``  (the library's model)                    —
``"value_kq"``            ``p₂ q₁``: scalar value ``p₂`` (label row of      ``p₂² − ‖q₁‖_F²``
                          ``W_V``), key-query block ``q₁`` (D × D);
                          null blocks of Mainali & Teixeira [1]_ held at 0
``"value_kq_modes"``      ``P Q`` (D × D each): a value that acts on every  ``PᵀP − QQᵀ`` (per mode
                          input mode, the per-mode model of [1]_           ``p_α² − q_α²``)
                          (``a_α = p_α q_α``)
``"separate_kq"``         ``Σ_h v_h K_h Q_hᵀ``; ``K_h, Q_h`` of shape       ``K_hᵀK_h − Q_hᵀQ_h`` and
                          (D, R): ``H`` heads of rank ``R`` (``ATTN_S`` of   ``v_h² − ‖K_h‖_F²`` per head
                          Zhang, Singh, Latham & Saxe [2]_)
``"merged_heads"``        ``Σ_h v_h Γ_h`` (``ATTN_M`` of [2]_)               ``v_h² − ‖Γ_h‖_F²`` per head
========================  ==============================================  ===================================

The conservation laws follow from homogeneity: if ``Γ`` is linear in each factor, ``θ_a·∂Γ/∂θ_a``
is the same for every factor, so ``d|θ_a|²/dt`` is the same for every factor under
``dθ/dt = −∇L(Γ(θ))`` (the matrix versions from ``dP/dt = −G Qᵀ``, ``dQ/dt = −Pᵀ G`` with
``G = ∂L/∂Γ``). Parameters are one flat vector ``θ``; :meth:`Parametrization.split` names the blocks.

References
----------
.. [1] N. Mainali and L. Teixeira, arXiv:2504.12916 (2025).
.. [2] Y. Zhang, A. K. Singh, P. E. Latham and A. Saxe, "Training dynamics of in-context learning in
   linear attention", ICML 2025, arXiv:2501.16265.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check as check
from . import _validate as validate
from ._arguments import positive, public, public_class
from ._prompts import Prompts
from ._results import short_repr
from ._validate import PROBLEM, PROMPTS

KINDS = ("merged", "value_kq", "value_kq_modes", "separate_kq", "merged_heads")
#: integer codes of the kinds, shared with the numba kernels of validation
CODES = {k: i for i, k in enumerate(KINDS)}


@public_class
@dataclass(frozen=True)
class Parametrization:
    """A map ``θ ↦ Γ(θ)`` (module docstring for the kinds).

    Parameters
    ----------
    kind : str
        One of ``"merged"``, ``"value_kq"``, ``"value_kq_modes"``, ``"separate_kq"``, ``"merged_heads"``.
    D : int
        Token dimension.
    heads : int
        ``H`` (``separate_kq`` and ``merged_heads``; must be 1 otherwise).
    rank : int
        ``R`` of each key/query (``separate_kq``; must be 1 otherwise).
    """

    __repr__ = short_repr

    kind: str
    D: int
    heads: int = 1
    rank: int = 1

    def __post_init__(self):
        check.choice("kind", self.kind, KINDS)
        object.__setattr__(self, "D", check.positive_int("D", self.D))
        object.__setattr__(self, "heads", check.positive_int("heads", self.heads))
        object.__setattr__(self, "rank", check.positive_int("rank", self.rank, maximum=self.D))
        if self.heads != 1 and self.kind not in ("separate_kq", "merged_heads"):
            check.fail("heads", self.heads, f"1 for kind {self.kind!r}")
        if self.rank != 1 and self.kind != "separate_kq":
            check.fail("rank", self.rank, f"1 for kind {self.kind!r}")
        # θ, its gradient and the flows' copies (a few vectors of n_params numbers) and Γ (D × D)
        check.memory(8.0 * (4 * self.n_params + 2 * self.D * self.D),
                     f"the parameter vectors of {self.n_params} numbers", f"D={self.D}, heads={self.heads}, "
                     f"rank={self.rank}")

    @classmethod
    @public(D=None)
    def checked(cls, value, D):
        """``value`` if it is a :class:`Parametrization` of dimension ``D`` (else ``ValueError`` naming
        ``parametrization``, or ``D`` when it is not an integer >= 1)."""
        D = check.positive_int("D", D)
        if not isinstance(value, cls) or value.D != D:
            check.fail("parametrization", value, f"a linattn.factorized.Parametrization with D = {D}")
        return value

    @property
    def code(self) -> int:
        return CODES[self.kind]

    @property
    def shapes(self) -> dict:
        """Names and shapes of the parameter blocks, in the order of ``θ``."""
        D, H, R = self.D, self.heads, self.rank
        return {"merged": {"Gamma": (D, D)},
                "value_kq": {"p": (), "Q": (D, D)},
                "value_kq_modes": {"P": (D, D), "Q": (D, D)},
                "separate_kq": {"v": (H,), "K": (H, D, R), "Q": (H, D, R)},
                "merged_heads": {"v": (H,), "Gamma": (H, D, D)}}[self.kind]

    @property
    def n_params(self) -> int:
        return int(sum(np.prod(s, dtype=int) for s in self.shapes.values()))

    def _theta(self, theta, name="theta"):
        theta = check.finite_array(name, theta)
        if theta.shape[-1:] != (self.n_params,):
            check.fail(name, f"<array with shape {theta.shape}>", f"an array of shape (..., {self.n_params})")
        return theta

    @public
    def split(self, theta) -> dict:
        """The named blocks of ``θ`` (views; leading batch axes allowed)."""
        return self._blocks(self._theta(theta))

    def _blocks(self, theta):
        out, i = {}, 0
        for name, shape in self.shapes.items():
            n = int(np.prod(shape, dtype=int))
            out[name] = theta[..., i:i + n].reshape(theta.shape[:-1] + shape)
            i += n
        return out

    @public
    def join(self, **blocks) -> np.ndarray:
        """Flat ``θ`` from named blocks (the inverse of :meth:`split`): exactly the blocks of :attr:`shapes`, each of
        its shape (a missing or unknown block is refused, naming ``blocks``)."""
        parts = []
        if set(blocks) != set(self.shapes):
            check.fail("blocks", sorted(blocks), f"exactly the blocks {list(self.shapes)}")
        for name, shape in self.shapes.items():
            parts.append(check.finite_array(name, blocks[name], shape=shape).ravel())
        return np.concatenate(parts)

    @public
    def gamma(self, theta) -> np.ndarray:
        """``Γ(θ)`` (shape (..., D, D)); ``ValueError`` naming ``theta`` when the product overflows float64."""
        theta = self._theta(theta)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._gamma_blocks(self._blocks(theta))
        return check.finite_result(out, {"theta": theta}, "Γ(θ)")

    def _gamma_blocks(self, b):
        k = self.kind
        if k == "merged":
            return b["Gamma"].copy()
        if k == "value_kq":
            return b["p"][..., None, None] * b["Q"]
        if k == "value_kq_modes":
            return b["P"] @ b["Q"]
        if k == "separate_kq":
            return np.einsum("...h,...hir,...hjr->...ij", b["v"], b["K"], b["Q"])
        return np.einsum("...h,...hij->...ij", b["v"], b["Gamma"])

    @public
    def pullback(self, theta, G) -> np.ndarray:
        """``∂L/∂θ`` from ``G = ∂L/∂Γ`` (chain rule through :meth:`gamma`; one ``θ``: shape ``(n_params,)``, a batch is
        refused naming ``theta``)."""
        theta = check.finite_array("theta", theta, shape=(self.n_params,))
        G = check.finite_array("G", G, shape=(self.D, self.D))
        b = self._blocks(theta)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._pullback(b, G)
        return check.finite_result(out, {"theta": theta, "G": G}, "∂L/∂θ")

    def _flow_gradient(self, theta, dL):
        """``∂L/∂θ`` at one checked ``θ`` with ``dL: Γ ↦ ∂L/∂Γ``, without argument checks (the inner loop of the
        flows of ``dynamics/_staged.py``, which check the result once)."""
        b = self._blocks(theta)
        return self._pullback(b, dL(self._gamma_blocks(b)))

    def _pullback(self, b, G):
        k = self.kind
        if k == "merged":
            return G.ravel().copy()
        if k == "value_kq":
            return np.concatenate([[np.sum(G * b["Q"])], (b["p"] * G).ravel()])
        if k == "value_kq_modes":
            return np.concatenate([(G @ b["Q"].T).ravel(), (b["P"].T @ G).ravel()])
        if k == "separate_kq":
            v, K, Q = b["v"], b["K"], b["Q"]
            dv = np.einsum("ij,hir,hjr->h", G, K, Q)
            dK = v[:, None, None] * np.einsum("ij,hjr->hir", G, Q)
            dQ = v[:, None, None] * np.einsum("ij,hir->hjr", G, K)
            return np.concatenate([dv, dK.ravel(), dQ.ravel()])
        v, Gh = b["v"], b["Gamma"]
        return np.concatenate([np.einsum("ij,hij->h", G, Gh), (v[:, None, None] * G[None]).ravel()])

    @public
    def conserved(self, theta) -> np.ndarray:
        """The quantities gradient flow conserves (module docstring), flattened (empty for ``merged``).

        ``value_kq``: ``[p₂² − ‖q₁‖²]``; ``value_kq_modes``: ``vec(PᵀP − QQᵀ)``; ``separate_kq``: per head
        ``v_h² − ‖K_h‖²`` then ``vec(K_hᵀK_h − Q_hᵀQ_h)``; ``merged_heads``: ``v_h² − ‖Γ_h‖²``.
        Weight decay breaks them (they then decay as ``e^{−2λt}``).
        """
        theta = self._theta(theta)
        b = self._blocks(theta)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._conserved(b, theta.shape)
        return check.finite_result(out, {"theta": theta}, "every conserved quantity")

    def _conserved(self, b, shape):
        k = self.kind
        if k == "merged":
            return np.zeros(shape[:-1] + (0,))
        if k == "value_kq":
            return (b["p"] ** 2 - np.sum(b["Q"] ** 2, axis=(-2, -1)))[..., None]
        if k == "value_kq_modes":
            P, Q = b["P"], b["Q"]
            d = np.swapaxes(P, -1, -2) @ P - Q @ np.swapaxes(Q, -1, -2)
            return d.reshape(d.shape[:-2] + (d.shape[-2] * d.shape[-1],))   # not -1: an empty batch
        if k == "separate_kq":
            v, K, Q = b["v"], b["K"], b["Q"]
            scal = v**2 - np.sum(K**2, axis=(-2, -1))
            mat = np.swapaxes(K, -1, -2) @ K - np.swapaxes(Q, -1, -2) @ Q
            return np.concatenate([scal, mat.reshape(mat.shape[:-3] + (int(np.prod(mat.shape[-3:])),))], axis=-1)
        return b["v"] ** 2 - np.sum(b["Gamma"] ** 2, axis=(-2, -1))

    @public(scale=positive())
    def init(self, scale, rng=None) -> np.ndarray:
        """A small random start: every entry ``N(0, scale²/n)`` with ``n`` the block's fan-in.

        Parameters
        ----------
        scale : float
            Overall size (``> 0``); ``Γ(θ0)`` is of order ``scale^{order}`` with ``order`` the degree of
            the product (1 merged, 2 value-key-query, 3 separate heads).
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray (n_params,)
        """
        parts = []
        for name, shape in self.shapes.items():
            fan = shape[-2] if len(shape) >= 2 else 1
            parts.append(scale / np.sqrt(fan) * rng.standard_normal(shape).ravel())
        theta = np.concatenate(parts)
        with np.errstate(over="ignore", invalid="ignore"):
            check.finite_result(self._gamma_blocks(self._blocks(theta)), {"scale": scale}, "Γ(θ0)")
        return theta

    @public
    def aligned(self, modes, basis=None) -> np.ndarray:
        """A balanced start aligned with an eigenbasis ``U`` with ``Γ(θ) = U diag(modes) Uᵀ``.

        ``value_kq_modes``: ``P = Q = U diag(√a) Uᵀ`` (``p_α = q_α = √a_α``, the balanced start of the
        per-mode logistic law; ``modes > 0``). ``merged``: ``Γ`` itself. Other kinds: ``ValueError``
        (their balanced aligned starts are not unique).

        Parameters
        ----------
        modes : array_like (D,)
            Mode amplitudes ``a_α >= 0``.
        basis : array_like (D, D), optional
            The orthogonal eigenbasis ``U`` (columns; ``UᵀU = I`` to ``1e-8``); default the identity.

        Returns
        -------
        ndarray (n_params,)
        """
        modes = check.real_array("modes", modes, low=0.0)
        if modes.shape != (self.D,):
            check.fail("modes", f"<array with shape {modes.shape}>", f"an array of shape ({self.D},)")
        U = np.eye(self.D) if basis is None else check.finite_array("basis", basis, shape=(self.D, self.D))
        with np.errstate(over="ignore", invalid="ignore"):
            off = float(np.max(np.abs(U.T @ U - np.eye(self.D))))
        if not off <= 1e-8:
            check.fail("basis", f"<array with max |UᵀU − I| = {off:.3g}>", "an orthogonal matrix (UᵀU = I to 1e-8)")
        if self.kind == "merged":
            return ((U * modes) @ U.T).ravel()
        if self.kind != "value_kq_modes":
            check.fail("kind", self.kind, "'merged' or 'value_kq_modes' for an aligned balanced start")
        R = (U * np.sqrt(modes)) @ U.T
        return np.concatenate([R.ravel(), R.ravel()])


@dataclass(frozen=True, eq=False)
class Objective:
    r"""A loss quadratic in ``Γ``: ``L(Γ) = ½ [y² − 2⟨B, Γ⟩ + ⟨Γ, 𝓗(Γ)⟩]`` (reduced model).

    Population (:func:`population_objective`): ``B = a²Σ²/D``, ``𝓗(Γ) = S₂ Γ Σ``, ``y² = V`` — the exact
    test error (``linattn/_covariance.py``). Dataset (:func:`dataset_objective`):
    ``B = (1/P) Σ_μ y_μ s_μ x_μᵀ``, ``𝓗(Γ) = (1/P) Sᵀ diag(S Γ X_qᵀ) X_q`` (two ``P × D × D`` products,
    never the ``P × D²`` feature matrix), ``y² = (1/P) Σ y_μ²`` — the training energy without weight decay.

    Attributes
    ----------
    y2 : float
    B : ndarray (D, D)
    data : linattn.Prompts or None
        ``None`` for the population objective (then ``left`` and ``right`` are required); else prompts of dimension
        ``D``.
    left, right : ndarray (D, D) or None
        ``S₂`` and ``Σ`` of the population operator (``None`` for a dataset objective).
    """

    __repr__ = short_repr

    y2: float
    B: np.ndarray
    data: object = None
    left: np.ndarray | None = None
    right: np.ndarray | None = None

    def __post_init__(self):
        y2 = check.nonnegative("y2", self.y2)
        B = check.finite_array("B", self.B, ndim=2)
        if B.shape[0] != B.shape[1] or B.shape[0] == 0:
            check.fail("B", f"<array of shape {B.shape}>", "a square D x D matrix, D >= 1")
        for name in ("left", "right"):
            M = getattr(self, name)
            if M is not None:
                object.__setattr__(self, name, check.finite_array(name, M, shape=B.shape))
        if self.data is None:
            if self.left is None or self.right is None:
                missing = [n for n in ("left", "right") if getattr(self, n) is None]
                check.fail(missing[0], None, "a D x D matrix: an objective needs data (a dataset objective) or both "
                           "left and right (a population objective)")
        else:
            if not isinstance(self.data, Prompts):
                check.fail("data", f"<{type(self.data).__name__}>", "None or a linattn.Prompts")
            if self.data.D != B.shape[0]:
                check.fail("data", f"<Prompts of dimension D = {self.data.D}>",
                           f"Prompts of dimension D = {B.shape[0]} (the shape of B)")
            if self.left is not None or self.right is not None:
                check.fail("left" if self.left is not None else "right", "<array>",
                           "None when data is given (a dataset objective has no population operator)")
        object.__setattr__(self, "y2", y2)
        object.__setattr__(self, "B", B)

    def _gamma(self, Gamma, stack=False, name="Gamma"):
        """``Γ`` (or a stack ``(..., D, D)``) checked: finite, of this objective's shape (refused naming ``name``)."""
        G = check.finite_array(name, Gamma)
        if G.shape[-2:] != self.B.shape or (G.ndim != 2 and not stack) or G.ndim < 2:
            check.fail(name, f"<array of shape {G.shape}>",
                       f"an array of shape {'(..., ' if stack else '('}{self.B.shape[0]}, {self.B.shape[1]})")
        return G

    def _finite(self, value, Gamma, name="Gamma"):
        with np.errstate(over="ignore", invalid="ignore"):
            return check.finite_result(value, {name: Gamma}, "the objective")

    @public
    def apply(self, Gamma) -> np.ndarray:
        """``𝓗(Γ)`` (``ValueError`` naming ``Gamma`` when it overflows float64)."""
        G = self._gamma(Gamma)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._apply(G)
        return self._finite(out, G)

    def _apply(self, Gamma):
        if self.data is None:
            return self.left @ Gamma @ self.right
        d = self.data
        r = np.einsum("pi,ij,pj->p", d.s, Gamma, d.xq, optimize=True)
        return (d.s * r[:, None]).T @ d.xq / d.P

    @public
    def gradient(self, Gamma) -> np.ndarray:
        """``∂L/∂Γ = 𝓗(Γ) − B``."""
        G = self._gamma(Gamma)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._apply(G) - self.B
        return self._finite(out, G)

    @public
    def value(self, Gamma) -> float:
        """``L(Γ)``."""
        G = self._gamma(Gamma)
        return float(self._finite(self._value(G), G))

    def _value(self, G):
        with np.errstate(over="ignore", invalid="ignore"):
            return 0.5 * (self.y2 - 2.0 * float(np.sum(self.B * G)) + float(np.sum(G * self._apply(G))))

    @public
    def values(self, Gammas) -> np.ndarray:
        """``L(Γ)`` for a stack of shape (..., D, D) (vectorised for the population objective)."""
        G = self._gamma(Gammas, stack=True, name="Gammas")
        if self.data is not None:
            flat = G.reshape((-1,) + G.shape[-2:])
            out = np.array([self._value(g) for g in flat]).reshape(G.shape[:-2])
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                quad = np.einsum("...ij,ik,...kl,lj->...", G, self.left, G, self.right, optimize=True)
                out = 0.5 * (self.y2 - 2.0 * np.einsum("ij,...ij->...", self.B, G) + quad)
        return self._finite(out, G, "Gammas")


@public(pb=PROBLEM)
def population_objective(pb) -> Objective:
    """The exact test error ``E_g(Γ)`` of problem ``pb`` as an :class:`Objective` (any ``Σ``, linear link).

    Parameters
    ----------
    pb : linattn.Problem

    Returns
    -------
    Objective
        ``B = a²Σ²/D``, ``𝓗(Γ) = S₂ Γ Σ``, ``y² = V`` (``linattn/_covariance.py``).
    """
    if not pb.link.is_linear:
        check.fail("pb.link", pb.link.name, "a linear link for the population objective of factorized models")
    a = float(pb.link.slope)
    if pb.covariance is None:
        Sigma = np.eye(pb.D)
    else:
        Sigma = pb.covariance.matrix
    return Objective(y2=pb.label_variance, B=a * a * Sigma @ Sigma / pb.D, left=pb.context_covariance, right=Sigma)


@public(data=PROMPTS)
def dataset_objective(data, pb=None) -> Objective:
    """The training energy of one dataset (without weight decay) as an :class:`Objective`.

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem, optional
        Checked against ``data`` when given.

    Returns
    -------
    Objective
        ``E_t(Γ) = (1/2P) Σ_μ (y_μ − s_μᵀ Γ x_μ)²``.
    """
    if pb is not None:
        validate.problem_data(data, pb)
    B = (data.s * data.yq[:, None]).T @ data.xq / data.P
    return Objective(y2=float(data.yq @ data.yq) / data.P, B=B, data=data)
