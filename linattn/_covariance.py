r"""Anisotropic inputs ``x ~ N(0, Σ)``: the covariance and the exact moments it changes.

``Σ = U diag(s) Uᵀ``. Labels stay ``y = a w·x/√D + σ ε`` with ``w ~ N(0, I_D)`` (``a`` the slope of a
linear link, 1 by default). Conditioning on ``w`` and using Isserlis' theorem
(``E[(wᵀx)² x xᵀ] = (wᵀΣw) Σ + 2 Σwwᵀ Σ``), the exact second moment of ``s = (1/N) Σ_i y_i x_i`` is

.. math::
    S_2 := E[s sᵀ] = \frac{a^2}{D}\Big[\frac{N+1}{N} Σ^2 + \frac{\operatorname{tr} Σ}{N} Σ\Big]
          + \frac{σ^2}{N} Σ,

and, with ``x_q`` independent of ``s`` given the task, the exact test error of any ``(Γ, v)`` is

.. math::
    E_g = ½\big[V − 2a^2 \operatorname{tr}(Γ Σ^2)/D + \operatorname{tr}(Γ Σ Γᵀ S_2) + c_v\, vᵀ Σ v\big],

with ``V = a² tr Σ/D + σ²`` and ``c_v = (1 + 2/N)[(a² tr Σ/D + σ²)² + 2a⁴ tr Σ²/D²]`` (the ``Γ``–``v``
cross term vanishes by the ``(w, ε) → −(w, ε)`` symmetry). Its minimiser is

.. math:: Γ_* = a^2\Big[a^2\frac{N+1}{N} Σ + \frac{a^2 \operatorname{tr}Σ + D σ^2}{N} I\Big]^{-1},\quad v = 0,

which is the preconditioned estimator of Mainali & Teixeira [1]_ (their ``Σ̂[((N+1)/N)Σ + (trΣ/N) I]⁻¹``
for ``a = 1``, ``σ = 0``, in our ``1/√D`` label units). For ``Σ = I`` all of this reduces to conventions §2
(``S_2 = c I``, ``Γ_* = I/(D c)``). Checked against raw-token Monte Carlo in
``tests/linattn/test_covariance.py``.

References
----------
.. [1] N. Mainali and L. Teixeira, "Exact learning dynamics of in-context learning in linear
   transformers and its application to non-linear transformers", arXiv:2504.12916 (2025).
"""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._arguments import public, public_class, real

#: relative asymmetry and eigenvalue floor accepted for a covariance matrix
SYM_TOL = 1e-10


@public_class
class Covariance:
    """An input covariance ``Σ = U diag(s) Uᵀ`` (immutable; build with :func:`as_covariance`).

    Attributes
    ----------
    spectrum : ndarray (D,)
        Eigenvalues ``s`` (positive), in the order given (a vector) or ascending (a matrix).
    basis : ndarray (D, D) or None
        Eigenvectors ``U`` as columns; ``None`` means ``Σ = diag(s)`` in the standard basis.
    """

    __slots__ = ("spectrum", "basis", "_key")

    def __init__(self, spectrum, basis=None):
        spectrum = np.array(check.finite_array("spectrum", spectrum, ndim=1), dtype=float)
        if spectrum.size == 0 or np.any(spectrum <= 0):
            low = f"{spectrum.min():.3g}" if spectrum.size else "none"
            check.fail("spectrum", f"<vector of {spectrum.size} entries, minimum {low}>",
                       "a non-empty vector of positive eigenvalues")
        _in_range(spectrum, "spectrum")
        if basis is not None:
            basis = np.array(check.finite_array("basis", basis, ndim=2), dtype=float)
            D = spectrum.size
            if basis.shape != (D, D) or np.abs(basis.T @ basis - np.eye(D)).max() > ORTHO_TOL:
                check.fail("basis", f"<array of shape {basis.shape}>", f"an orthogonal {D} x {D} matrix "
                           f"(eigenvectors as columns; |UᵀU − I| <= {ORTHO_TOL:g})")
        self._store(spectrum, basis)

    def _store(self, spectrum, basis):
        spectrum.setflags(write=False)
        if basis is not None:
            basis.setflags(write=False)
        object.__setattr__(self, "spectrum", spectrum)
        object.__setattr__(self, "basis", basis)
        key = (spectrum.tobytes(), None if basis is None else basis.tobytes())
        object.__setattr__(self, "_key", key)

    @classmethod
    def _trusted(cls, spectrum, basis=None) -> "Covariance":
        """A covariance from eigenvalues and an orthogonal basis already checked (:func:`as_covariance`): float64
        arrays of its own, stored without the constructor's checks."""
        out = object.__new__(cls)
        out._store(np.array(spectrum, dtype=float), None if basis is None else np.array(basis, dtype=float))
        return out

    def __setattr__(self, name, value):
        raise AttributeError("Covariance is immutable")

    def __reduce__(self):
        return (Covariance, (self.spectrum, self.basis))

    def __eq__(self, other):
        return isinstance(other, Covariance) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        s = np.array2string(self.spectrum, precision=4, threshold=6)
        return f"Covariance(spectrum={s}{'' if self.basis is None else ', rotated'})"

    @property
    def D(self) -> int:
        return self.spectrum.size

    @property
    def matrix(self) -> np.ndarray:
        """``Σ`` as a dense ``D × D`` matrix."""
        return self._apply(np.eye(self.D), power=1.0)

    @property
    def trace(self) -> float:
        """``tr Σ``."""
        return float(self.spectrum.sum())

    @property
    def trace2(self) -> float:
        """``tr Σ²``."""
        return float(self.spectrum @ self.spectrum)

    def _array(self, name, A, matrix=False):
        """``A`` checked: finite, real, its last axis (its shape, if ``matrix``) ``D``."""
        A = check.finite_array(name, A)
        D = self.D
        if (A.shape != (D, D)) if matrix else (A.ndim == 0 or A.shape[-1] != D):
            check.fail(name, f"<array with shape {A.shape}>",
                       f"an array of shape ({D}, {D})" if matrix else f"an array whose last axis has length D = {D}")
        return A

    @staticmethod
    def _finite(out, culprits, what):
        return check.finite_result(out, culprits, what)

    @public(power=real())
    def apply(self, A, power=1.0) -> np.ndarray:
        """``Σ^power A`` (``A`` of shape (D, …)), through the eigenbasis.

        Parameters
        ----------
        A : array_like (D, ...)
            Finite real numbers, first axis of length ``D``.
        power : float
            A finite real number such that ``Σ^power`` (and the product) stays finite in float64.

        Returns
        -------
        ndarray

        Raises
        ------
        ValueError
            A bad ``A`` or ``power``, or a result that overflows float64 (naming the one that made it).
        """
        A = check.finite_array("A", A)
        if A.ndim == 0 or A.shape[0] != self.D:
            check.fail("A", f"<array with shape {A.shape}>", f"an array whose first axis has length D = {self.D}")
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            sp = self.spectrum**power
            check.finite_result(sp, {"power": np.asarray(power)}, "Σ^power")
            out = self._apply(A, power)
        return self._finite(out, {"A": A}, "Σ^power A")

    def _apply(self, A, power=1.0):
        """:meth:`apply` without checks (the library's own calls)."""
        A = np.asarray(A, dtype=float)
        sp = self.spectrum**power
        if self.basis is None:
            return sp.reshape((-1,) + (1,) * (A.ndim - 1)) * A
        U = self.basis
        return U @ (sp.reshape((-1,) + (1,) * (A.ndim - 1)) * (U.T @ A))

    @public
    def function(self, values) -> np.ndarray:
        """``U diag(values) Uᵀ``: a matrix function of ``Σ`` given its values on the spectrum.

        Parameters
        ----------
        values : array_like (D,)
            Finite real numbers, one per eigenvalue.

        Returns
        -------
        ndarray (D, D)

        Raises
        ------
        ValueError
            ``values`` of another length, non-finite, or so large that the matrix overflows float64.
        """
        values = check.finite_array("values", values, shape=(self.D,))
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._function(values)
        return self._finite(out, {"values": values}, "U diag(values) Uᵀ")

    def _function(self, values):
        """:meth:`function` without checks (the library's own calls)."""
        values = np.asarray(values, dtype=float)
        if self.basis is None:
            return np.diag(values)
        return (self.basis * values) @ self.basis.T

    @public
    def to_eigenbasis(self, A) -> np.ndarray:
        """``Uᵀ A U`` for a ``D × D`` matrix (or ``Uᵀ a`` for vectors along the last axis).

        Parameters
        ----------
        A : array_like (D, D) or (..., D)
            Finite real numbers, last axis of length ``D``.

        Returns
        -------
        ndarray

        Raises
        ------
        ValueError
            A bad ``A``, or one so large that the rotation overflows float64.
        """
        A = self._array("A", A)
        if self.basis is None:
            return A.copy()
        U = self.basis
        with np.errstate(over="ignore", invalid="ignore"):
            out = U.T @ A @ U if A.ndim == 2 and A.shape == (self.D, self.D) else A @ U
        return self._finite(out, {"A": A}, "the rotated array")

    @public
    def from_eigenbasis(self, A) -> np.ndarray:
        """``U A Uᵀ`` for a ``D × D`` matrix (inverse of :meth:`to_eigenbasis`).

        Parameters
        ----------
        A : array_like (D, D)

        Returns
        -------
        ndarray (D, D)

        Raises
        ------
        ValueError
            A bad ``A``, or one so large that the rotation overflows float64.
        """
        A = self._array("A", A, matrix=True)
        if self.basis is None:
            return A.copy()
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.basis @ A @ self.basis.T
        return self._finite(out, {"A": A}, "the rotated matrix")

    @public
    def rotate_rows(self, X) -> np.ndarray:
        """Rows ``x_e`` given in the eigenbasis, returned in the standard basis (``x = U x_e``).

        Parameters
        ----------
        X : array_like (..., D)

        Returns
        -------
        ndarray (..., D)

        Raises
        ------
        ValueError
            A bad ``X``, or one so large that the rotation overflows float64.
        """
        X = self._array("X", X)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._rotate_rows(X)
        return self._finite(out, {"X": X}, "the rotated rows")

    def _rotate_rows(self, X):
        """:meth:`rotate_rows` without checks (the samplers' inner loops)."""
        return X if self.basis is None else X @ self.basis.T


#: largest entry of ``|UᵀU − I|`` accepted for an eigenbasis (numpy's ``eigh`` gives ~ D·eps)
ORTHO_TOL = 1e-8
#: eigenvalues of Σ: the exact errors use fourth moments of the inputs (``s⁴``), which must stay finite in float64
EIGENVALUE_RANGE = (1e-50, 1e50)


def _in_range(s, name="covariance"):
    lo, hi = EIGENVALUE_RANGE
    if s.min() < lo or s.max() > hi:
        check.fail(name, f"<eigenvalues from {s.min():.3g} to {s.max():.3g}>",
                   f"eigenvalues in [{lo:g}, {hi:g}] (the exact errors use their fourth powers)")


def as_covariance(covariance, D, name="covariance"):
    """Validate ``covariance`` and return a :class:`Covariance`, or ``None`` for ``Σ = I``.

    Parameters
    ----------
    covariance : None, Covariance, array_like (D,) or array_like (D, D)
        ``None``: identity. A vector: the eigenvalues, ``Σ = diag(value)``. A matrix: symmetric
        positive definite (asymmetry up to ``1e-10`` relative is symmetrised).
    D : int
    name : str
        Argument name used in error messages.

    Returns
    -------
    Covariance or None
        ``None`` whenever ``Σ`` is exactly the identity, so that isotropic problems take the
        isotropic code paths bit for bit.
    """
    value = covariance
    if value is None or isinstance(value, Covariance) and value.D == D:
        if isinstance(value, Covariance) and np.all(value.spectrum == 1.0):
            return None
        return value
    if isinstance(value, Covariance):
        check.fail(name, value, f"a covariance of dimension D = {D} (this one has {value.D})")
    arr = check.finite_array(name, value)
    if arr.shape == (D,):
        if np.any(arr <= 0):
            check.fail(name, f"<vector with minimum {arr.min():.3g}>", "a vector of D positive eigenvalues")
        _in_range(arr, name)
        return None if np.all(arr == 1.0) else Covariance._trusted(arr)
    if arr.shape == (D, D):
        scale = max(np.abs(arr).max(), 1e-300)
        if np.abs(arr - arr.T).max() > SYM_TOL * scale:
            check.fail(name, "<asymmetric matrix>", f"a symmetric positive definite {D} x {D} matrix")
        if np.array_equal(arr, np.eye(D)):
            return None
        s, U = np.linalg.eigh(0.5 * (arr + arr.T))
        if s[0] <= SYM_TOL * s[-1]:
            check.fail(name, f"<matrix with smallest eigenvalue {s[0]:.3g}>",
                       f"a symmetric positive definite {D} x {D} matrix")
        _in_range(s, name)
        return Covariance._trusted(s, U)
    check.fail(name, f"<array with shape {arr.shape}>",
               f"None, a vector of {D} eigenvalues or a {D} x {D} matrix")
