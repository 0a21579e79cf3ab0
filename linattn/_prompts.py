"""Training prompts reduced to their sufficient statistics, and the features built from them.

The data enter the linear-attention model only through ``(s, x_q, y_q, y2)`` per prompt
(conventions §1). Features: ``h = vec(s x_qᵀ)`` (row-major, ``D²`` entries); the full model appends
``y2 x_q`` (``D`` entries). Parameter vectors are ``θ = [vec(Γ) row-major, v]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check as check
from ._arguments import public, public_class
from ._results import short_repr

#: largest feature |s_i x_q,j| (and |y2 x_q|, |y_q|) accepted: the Hessian, Gram matrix and energies use their
#: squares summed over prompts and parameters, which must stay far inside float64 (~1e308)
FEATURE_LIMIT = 1e100


def _feature_scale(name, size):
    if not size <= FEATURE_LIMIT:
        check.fail(name, f"<values making features up to {size:.3g}>",
                   f"values whose features (s x_qᵀ, y2 x_q) and labels stay below {FEATURE_LIMIT:g} in magnitude "
                   "(their squares enter the Hessian and the energies)")


def _readonly(a):
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


@public_class
@dataclass(frozen=True, eq=False)
class Prompts:
    """Sufficient statistics of ``P`` training prompts.

    Arrays are copied to read-only float64 storage; shapes and finiteness are checked.

    Parameters
    ----------
    s : array_like, shape (P, D)
        ``s = (1/N) Σ_i y_i x_i`` per prompt.
    xq : array_like, shape (P, D)
        Query tokens.
    yq : array_like, shape (P,)
        Query labels (the regression targets).
    y2 : array_like, shape (P,), optional
        ``y2 = (1/N) Σ_i y_i²``; needed only by the full model.
    pool : array_like, shape (K, D), optional
        The task pool of the dataset (``None``: a fresh task per prompt).
    task : array_like of int, shape (P,), optional
        Index into ``pool`` of each prompt's task (given together with ``pool``).
    """

    __repr__ = short_repr

    s: np.ndarray
    xq: np.ndarray
    yq: np.ndarray
    y2: np.ndarray | None = None
    pool: np.ndarray | None = None
    task: np.ndarray | None = None

    def __post_init__(self):
        s = check.finite_array("s", self.s, ndim=2)
        P, D = s.shape
        if P < 1 or D < 1:
            raise ValueError(f"s must have at least one prompt and one dimension; got shape {s.shape}")
        xq = check.finite_array("xq", self.xq, shape=(P, D))
        yq = check.finite_array("yq", self.yq, shape=(P,))
        object.__setattr__(self, "s", _readonly(s))
        object.__setattr__(self, "xq", _readonly(xq))
        object.__setattr__(self, "yq", _readonly(yq))
        xmax, smax = float(np.abs(xq).max()), float(np.abs(s).max())
        _feature_scale("xq" if xmax > smax else "s", smax * xmax)      # the larger factor of s x_qᵀ is named
        _feature_scale("yq", float(np.abs(yq).max()))
        if self.y2 is not None:
            y2 = check.finite_array("y2", self.y2, shape=(P,))
            if np.any(y2 < 0):
                raise ValueError("y2 must be non-negative (it is a mean of squared labels); "
                                 f"got minimum {y2.min()!r}")
            _feature_scale("xq" if xmax > float(y2.max()) else "y2", float(y2.max()) * xmax)
            object.__setattr__(self, "y2", _readonly(y2))
        if (self.pool is None) != (self.task is None):
            raise ValueError("pool and task must be given together (or both None); got "
                             f"pool={'None' if self.pool is None else 'an array'}, "
                             f"task={'None' if self.task is None else 'an array'}")
        if self.pool is not None:
            pool = check.finite_array("pool", self.pool, ndim=2)
            if pool.shape[1] != D or pool.shape[0] < 1:
                check.fail("pool", f"<array with shape {pool.shape}>", f"an array of shape (K, {D}), K >= 1")
            task = check.asarray("task", self.task, f"{P} integer indices into pool")
            if (task.shape != (P,) or not np.issubdtype(task.dtype, np.integer) or task.min() < 0
                    or task.max() >= pool.shape[0]):
                check.fail("task", f"<array with shape {task.shape}, dtype {task.dtype}>",
                           f"{P} integer indices in [0, {pool.shape[0] - 1}]")
            object.__setattr__(self, "pool", _readonly(pool))
            task = np.ascontiguousarray(task, dtype=np.int64)
            task.setflags(write=False)
            object.__setattr__(self, "task", task)

    @classmethod
    def _trusted(cls, s, xq, yq, y2=None, pool=None, task=None) -> "Prompts":
        """Prompts from arrays the library made and checked itself (finite float64 of matching shapes, features
        within ``FEATURE_LIMIT``, ``task`` integer indices into ``pool``): stored read-only like the constructor
        stores them, without its checks (the samplers and :meth:`take`)."""
        out = object.__new__(cls)
        for name, a in (("s", s), ("xq", xq), ("yq", yq), ("y2", y2), ("pool", pool)):
            object.__setattr__(out, name, None if a is None else _readonly(a))
        if task is not None:
            task = np.ascontiguousarray(task, dtype=np.int64)
            task.setflags(write=False)
        object.__setattr__(out, "task", task)
        return out

    @property
    def K(self) -> int | None:
        """Pool size (``None`` for fresh tasks)."""
        return None if self.pool is None else self.pool.shape[0]
    @property
    def P(self) -> int:
        """Number of prompts."""
        return self.s.shape[0]

    @property
    def D(self) -> int:
        """Token dimension."""
        return self.s.shape[1]

    @public
    def require(self, model: str) -> str:
        """Check that these prompts can serve ``model`` (the full model needs ``y2``).

        Parameters
        ----------
        model : {"reduced", "full"}

        Returns
        -------
        str
            The model name.
        """
        return self._require(model)

    def _require(self, model):
        """:meth:`require` of a checked model name."""
        if model == "full" and self.y2 is None:
            raise ValueError("model='full' needs y2 in the prompts; these Prompts have y2=None "
                             "(accepted: model='reduced', or Prompts built with y2)")
        return model

    @public
    def features(self, model: str = "reduced") -> np.ndarray:
        """Feature matrix ``F`` with rows ``h_μ`` (shape ``(P, M)``).

        ``h = vec(s x_qᵀ)`` row-major, so that ``h·vec(Γ) = sᵀ Γ x_q``; the full model appends
        ``y2 x_q`` so that ``h·θ = sᵀ Γ x_q + y2 v·x_q``.

        Parameters
        ----------
        model : {"reduced", "full"}

        Returns
        -------
        ndarray (P, M)
        """
        self._require(model)
        P, D = self.s.shape
        check.memory(16.0 * P * (D * D + D), f"the {P} x {D * D} feature matrix", "P or D")
        F = (self.s[:, :, None] * self.xq[:, None, :]).reshape(P, D * D)
        if model == "full":
            F = np.concatenate([F, self.y2[:, None] * self.xq], axis=1)
        return F

    @public
    def gram(self, model: str = "reduced") -> np.ndarray:
        r"""Gram matrix ``G_{μν} = h_μ·h_ν / P`` without forming features (conventions §2).

        Reduced: ``G = (S Sᵀ) ∘ (X_q X_qᵀ) / P``; full: ``G = (S Sᵀ + y2 y2ᵀ) ∘ (X_q X_qᵀ) / P``.
        Cost ``O(P² D)`` instead of ``O(P² D²)``.

        Parameters
        ----------
        model : {"reduced", "full"}

        Returns
        -------
        ndarray (P, P)
        """
        self._require(model)
        check.memory(24.0 * self.P**2, f"the {self.P} x {self.P} Gram matrix", "P")
        SS = self.s @ self.s.T
        if model == "full":
            SS += np.outer(self.y2, self.y2)
        SS *= self.xq @ self.xq.T
        SS /= self.P
        return SS

    @public
    def predict(self, Gamma, v=None) -> np.ndarray:
        """Linear-attention predictions ``ŷ = sᵀ Γ x_q (+ y2 v·x_q)`` for every prompt.

        Parameters
        ----------
        Gamma : array_like (D, D)
        v : array_like (D,), optional
            ``None`` for the reduced model.

        Returns
        -------
        ndarray (P,)
        """
        G = check.finite_array("Gamma", Gamma, shape=(self.D, self.D))
        if v is not None:
            v = check.finite_array("v", v, shape=(self.D,))
            self._require("full")
        return self._predict(G, v)

    def _predict(self, G, v):
        """:meth:`predict` of checked ``Γ`` and ``v`` (prompts with ``y2`` when ``v`` is given)."""
        yhat = np.einsum("pa,pa->p", self.s @ G, self.xq)
        if v is not None:
            yhat = yhat + self.y2 * (self.xq @ v)
        return yhat

    @public
    def take(self, index) -> "Prompts":
        """A subset of the prompts (``index``: slice, integer array or boolean mask).

        Parameters
        ----------
        index : slice, int array or bool mask
            A slice of integers (step not 0), a boolean mask of shape ``(P,)`` or a non-empty 1-d array of integers
            in ``[-P, P)``, selecting at least one prompt.

        Returns
        -------
        Prompts
        """
        if isinstance(index, slice):
            try:
                index.indices(self.P)             # a zero step or non-integer bounds: refused here, named
            except (TypeError, ValueError):
                check.fail("index", index, "a slice of integers with a non-zero step, a boolean mask of shape "
                           f"({self.P},), or a non-empty 1-d array of integers in [-{self.P}, {self.P})")
        else:
            idx = check.asarray("index", index, f"a slice, a boolean mask of shape ({self.P},), or a non-empty 1-d "
                                f"array of integers in [-{self.P}, {self.P})")
            if idx.dtype == bool:
                if idx.shape != (self.P,):
                    check.fail("index", f"<bool array with shape {idx.shape}>", f"a boolean mask of shape ({self.P},)")
            elif idx.dtype.kind not in "iu" or idx.ndim != 1 or idx.size == 0 or np.any(idx >= self.P) \
                    or np.any(idx < -self.P):
                check.fail("index", index if idx.size <= 8 else f"<array of {idx.size}>",
                           f"a slice, a boolean mask of shape ({self.P},), or a non-empty 1-d array of integers in "
                           f"[-{self.P}, {self.P})")
            index = idx
        out_s = self.s[index]
        if out_s.shape[0] == 0:
            check.fail("index", index, "a selection of at least one prompt")
        return Prompts._trusted(out_s, self.xq[index], self.yq[index], None if self.y2 is None else self.y2[index],
                                self.pool, None if self.task is None else self.task[index])
