r"""Link functions of single-index tasks ``y = f(u) + σ ε``, ``u = w·x/√D``, and their Gaussian moments.

Hermite coefficients (conventions §6.3; Letey, Rysmakhanov, Lu et al., "nonlinearity–noise equivalence"):
for ``z ~ N(0, 1)``

.. math:: μ_0 = E f(z),\qquad μ_1 = E[z f(z)],\qquad μ_*^2 = E f(z)^2 − μ_0^2 − μ_1^2 .

Finite-D radial moments. At finite ``D`` the task norm fluctuates: given ``w``, ``u_i = √r g_i`` with
``r = |w|²/D ~ χ²_D/D`` and ``g_i ~ N(0, 1)``, so every exact population quantity of the attention
model is an average over ``r`` of the one-dimensional moments

.. math:: φ_1(r) = E[g f(√r g)],\ φ_2(r) = E f(√r g)^2,\ φ_{22}(r) = E[g^2 f(√r g)^2],\ φ_4(r) = E f(√r g)^4

(:func:`radial_moments`). They are computed by composite Gauss–Legendre quadrature of the Gaussian integral
on unit panels of ``[−40, 40]`` (the tail beyond is below 1e-340 of any moment of a square-integrable link of
at most exponential-quadratic growth, checked: the outermost panels must carry less than ``TOL``).
The panel edges include 0, so the kinks of ``relu`` and ``sign`` cost nothing (plain Gauss–Hermite
converges only algebraically there); a custom link with a kink elsewhere converges slowly and may be
refused.
The ``r`` average is a composite Gauss–Legendre rule in ``ρ = √r`` for the ``χ_D/√D`` density
(a Gauss–Laguerre rule in ``r`` converges only algebraically: ``φ₂(r) → 1 − O(r^{−1/2})`` for ``tanh``).
Both rules are doubled until two successive orders agree to ``TOL``; otherwise the link is refused
(``ValueError``: not square-integrable under the Gaussian, or too rough for the quadrature).

Polynomial links (``"cubic"``, ``"hermite:k"``, :meth:`Link.polynomial`, a ``numpy.polynomial.Polynomial``) carry
their finite Hermite expansion ``f = Σ_k a_k He_k``: their Hermite coefficients are exact (``μ₀ = a₀``, ``μ₁ = a₁``,
``μ_*² = Σ_{k≥2} k! a_k²``) and every Gaussian moment ``E[g^j f(s g)^p]`` at any scale ``s`` is a polynomial integral,
computed exactly by the Gauss–Hermite rule of ``2·degree + 3`` nodes (exact to degree ``4·degree + 5``), with
positive weights and no convergence test: no round-off can make a polynomial look "not square-integrable".

Convergence tests compare two orders relative to the size of the terms they sum (``Σ |w_i t_i|``, the scale of the
round-off of the sum), not relative to the result: a moment that cancels to ~0 (``E[(g² − 1) f]`` of an odd link) is
converged when the orders agree to ``TOL`` of its terms.

Named links: ``"linear"`` (``z``), ``"tanh"``, ``"relu"`` (``max(0, z)``), ``"sign"``, ``"cubic"``
(``z³``), ``"hermite:k"`` (the normalised Hermite polynomial ``He_k(z)/√(k!)``), or any vectorised
callable. Linear links ``f(z) = a z`` (:meth:`Link.linear`) keep Gaussian labels and the library's
closed forms; every other link goes through the quadrature.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import _check as check
from ._arguments import public, public_class
from ._numerics import quadrature
from ._results import short_repr

#: agreement required between two successive quadrature orders (relative to the moment's scale)
TOL = 1e-12
#: Gauss–Legendre nodes per unit panel tried; the last one failing means "not converged"
ORDERS = (12, 24, 48)
#: Gauss–Legendre nodes per panel tried for the task-norm average (:func:`linattn._numerics.quadrature.chi_square_rule`)
R_ORDERS = (8, 16, 32)
NAMES = ("linear", "tanh", "relu", "sign", "cubic", "hermite:k")


@dataclass(frozen=True)
class Hermite:
    """Hermite decomposition of a link under ``z ~ N(0, 1)``.

    Attributes
    ----------
    mu0 : float
        ``μ₀ = E f(z)``.
    mu1 : float
        ``μ₁ = E z f(z)`` (the linear component the attention can learn).
    mu_star2 : float
        ``μ_*² = E f² − μ₀² − μ₁²`` (the nonlinear part, which acts as noise).
    """

    __repr__ = short_repr

    mu0: float
    mu1: float
    mu_star2: float

    def __iter__(self):
        return iter((self.mu0, self.mu1, self.mu_star2))


def _hermite_unit(k):
    """Hermite coefficients of ``He_k(z)/√(k!)``."""
    coef = np.zeros(k + 1)
    coef[k] = 1.0 / math.sqrt(math.factorial(k))
    return coef


def _normalised_hermite(k):
    """``f(z) = He_k(z)/√(k!)`` (vectorised; :func:`linattn._numerics.quadrature.normalised_hermite`)."""
    def f(z):
        return quadrature.normalised_hermite(z, k)[k]
    return f


def _hermite_series(coef):
    """``f(z) = Σ_k coef_k He_k(z)`` (vectorised)."""
    coef = np.array(coef, dtype=float)

    def f(z):
        return np.polynomial.hermite_e.hermeval(z, coef)
    return f


_NAMED = {
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
    "sign": np.sign,
}
#: Hermite coefficients of the named polynomial links (``z³ = He₃ + 3 He₁``)
_NAMED_POLYNOMIALS = {"cubic": (0.0, 3.0, 0.0, 1.0)}
#: the largest degree of a polynomial link (``f⁴`` of degree 160 is still integrated exactly in float64)
MAX_DEGREE = 40
#: magnitudes a linear link's slope ``a`` may have (besides 0), and the largest value of any other link on ``|z| < 8``
#: (:data:`LINK_SCALE`): the exact moments use ``a²``, ``a⁴`` (``E f⁴ = 3a⁴ E r²``, ``c_v ∝ (a² + σ²)² + 2a⁴/D``) and
#: ``1/a``, which then lie in ``[1e-160, 1e160]`` — finite and non-zero in float64, with room for the factors
#: ``1/D``, ``1/N`` (``>= 2**-53``), ``σ⁴ <= 1e24`` and the products the theories form with them — and sampled
#: features ``y2 x_q ~ a²`` stay far below the prompts' :data:`linattn._prompts.FEATURE_LIMIT` (1e100). At ``a = 1e77``
#: ``a⁴`` overflowed (``OverflowError``, ``inf``); at ``a = 1e-100`` ``c_v`` underflowed to 0 (``ZeroDivisionError``)
SLOPE_RANGE = (1e-40, 1e40)


def _slope(slope, name="slope"):
    """A linear link's slope: 0 (labels are pure noise) or ``1e-40 <= |a| <= 1e40`` (:data:`SLOPE_RANGE`)."""
    a = check.real(name, slope)
    if a != 0.0 and not SLOPE_RANGE[0] <= abs(a) <= SLOPE_RANGE[1]:
        check.fail(name, slope, f"0 or a real number with {SLOPE_RANGE[0]:g} <= |{name}| <= {SLOPE_RANGE[1]:g} "
                   "(the exact moments use a⁴, which must stay finite and non-zero in float64)")
    return a


def _hermite_coefficients(coef):
    """A polynomial link's Hermite coefficients, trailing zeros dropped (finite, degree <= MAX_DEGREE)."""
    c = np.trim_zeros(check.finite_array("hermite_coef", coef, ndim=1), "b")
    if c.size == 0:
        c = np.zeros(1)
    if c.size > MAX_DEGREE + 1:
        check.fail("hermite_coef", coef, f"the Hermite coefficients of a polynomial of degree <= {MAX_DEGREE}")
    c.setflags(write=False)
    return c


@public_class
class Link:
    """A link function ``f`` of a single-index task (module docstring).

    Use :func:`as_link` (or pass a name or callable to :class:`linattn.Problem`) rather than the
    constructor.

    Attributes
    ----------
    name : str
        ``"linear"``, ``"linear*a"``, a named link, ``"hermite:k"`` or ``"custom:<callable name>"``.
    slope : float or None
        ``a`` for a linear link ``f(z) = a z`` (Gaussian labels, closed forms); ``None`` otherwise.
    hermite_coef : ndarray or None
        ``(a_0, …, a_k)`` of a polynomial link ``f = Σ a_j He_j`` (exact moments, module docstring); ``None`` for
        other links.
    """

    def __init__(self, name, fn, slope=None, hermite_coef=None):
        if not isinstance(name, str) or not name:
            check.fail("name", name, "a non-empty string")
        self.name = name
        self.fn = fn
        self.slope = None if slope is None else _slope(slope)
        self.hermite_coef = None if hermite_coef is None else _hermite_coefficients(hermite_coef)
        self.output_eps = float(np.finfo(float).eps)     # the precision of what ``fn`` returns (float32: 1.2e-7)

    @classmethod
    @public
    def linear(cls, slope=1.0):
        """The linear link ``f(z) = a z``.

        Parameters
        ----------
        slope : float
            ``a``: 0 (labels are pure noise) or a real number with ``1e-40 <= |a| <= 1e40`` (:data:`SLOPE_RANGE`:
            the exact moments ``a²``, ``a⁴`` stay finite and non-zero in float64).

        Returns
        -------
        Link

        Raises
        ------
        ValueError
            A slope outside that range, naming ``slope``.
        """
        return cls._linear(slope)

    @classmethod
    def _linear(cls, slope=1.0):
        return cls._checked_linear(_slope(slope))

    @classmethod
    def _checked_linear(cls, a):
        """:meth:`linear` of a checked slope ``a`` (a float in :data:`SLOPE_RANGE` or 0)."""
        link = cls("linear" if a == 1.0 else f"linear*{a!r}", lambda z: a * np.asarray(z, float))
        link.slope = a
        return link

    @classmethod
    @public
    def polynomial(cls, coefficients):
        """The polynomial link ``f(z) = Σ_k c_k z^k`` (exact moments at every task norm; module docstring).

        Parameters
        ----------
        coefficients : sequence of float
            ``(c_0, c_1, …, c_k)`` in the power basis, finite, of degree ``k <= MAX_DEGREE`` (40); or a
            ``numpy.polynomial.Polynomial``. A linear polynomial ``c_1 z`` needs ``c_1 = 0`` or
            ``1e-40 <= |c_1| <= 1e40`` (:data:`SLOPE_RANGE`); any other one values of magnitude in
            :data:`LINK_SCALE` on ``|z| < 8``.

        Returns
        -------
        Link
            Named ``"poly:(c_0, …, c_k)"``; a degree-one polynomial without constant is :meth:`linear`.
        """
        return cls._polynomial(coefficients)

    @classmethod
    def _polynomial(cls, coefficients):
        if isinstance(coefficients, np.polynomial._polybase.ABCPolyBase):     # any numpy series: to the power basis
            coefficients = coefficients.convert(kind=np.polynomial.Polynomial, domain=[-1, 1], window=[-1, 1]).coef
        c = np.trim_zeros(check.finite_array("coefficients", coefficients, ndim=1), "b") + 0.0   # -0.0 -> 0.0
        if c.size > MAX_DEGREE + 1:
            check.fail("coefficients", coefficients, f"the power-basis coefficients of a polynomial of degree <= "
                       f"{MAX_DEGREE}")
        if c.size <= 2 and (c.size == 0 or c[0] == 0.0):
            a = float(c[1]) if c.size == 2 else 0.0
            if a != 0.0 and not SLOPE_RANGE[0] <= abs(a) <= SLOPE_RANGE[1]:
                check.fail("coefficients", coefficients, "a polynomial whose linear coefficient c_1 (no constant) is 0 "
                           f"or has {SLOPE_RANGE[0]:g} <= |c_1| <= {SLOPE_RANGE[1]:g}")
            return cls._linear(a)
        name = "poly:(" + ", ".join(repr(float(x)) for x in c) + ")"
        power = c.copy()

        def f(z):      # Horner in the power basis (the Hermite series cancels catastrophically at high degree)
            return np.polynomial.polynomial.polyval(z, power)
        link = cls(name, f, hermite_coef=np.polynomial.hermite_e.poly2herme(c))
        _check_scale(link, "coefficients")      # validated at once, like a callable given to as_link
        return link

    @property
    def degree(self):
        """The degree of a polynomial link (``None`` for other links, ``1`` for linear ones)."""
        if self.slope is not None:
            return 1
        return None if self.hermite_coef is None else len(self.hermite_coef) - 1

    def _key(self):
        return (self.name, id(self.fn)) if self.name.startswith("custom:") else (self.name, self.slope)

    def __eq__(self, other):
        return isinstance(other, Link) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Link({self.name!r})"

    def __call__(self, z):
        """Evaluate ``f`` elementwise (float64 array in, same shape out).

        Parameters
        ----------
        z : array_like
            Real numbers (``±inf`` allowed; NaN, booleans, strings and complex numbers are refused, naming
            ``z``).

        Returns
        -------
        ndarray
            ``f(z)``. A polynomial link (``"cubic"``, ``"hermite:k"``, ...) is ``±inf`` at ``±inf`` and wherever its
            value exceeds float64's range (``He₃(1e300)/√6 ≈ 4e899``: ``inf``, the float64 rounding of the true
            value), with the sign of its leading term there.
        """
        try:
            raw_z = np.asarray(z)
        except (ValueError, TypeError):           # ragged nested lists
            check.fail("z", f"<{type(z).__name__} of uneven shape>", "a real number or an array of them")
        if raw_z.dtype.kind not in "iuf":
            check.fail("z", z if raw_z.ndim == 0 else f"<array of dtype {raw_z.dtype}>",
                       "a real number or an array of them")
        z = raw_z.astype(float)
        if np.isnan(z).any():
            check.fail("z", float(z) if z.ndim == 0 else f"<array with {int(np.isnan(z).sum())} NaN>",
                       "real numbers (±inf allowed), not NaN")
        try:
            if self.hermite_coef is not None:    # a polynomial overflows to ±inf (or inf − inf: below) far out
                with np.errstate(over="ignore", invalid="ignore"):
                    raw = np.asarray(self.fn(z))
            else:
                raw = np.asarray(self.fn(z))
        except Exception as err:                    # the callable's own failure, named as the link's
            raise ValueError(f"link must evaluate on float arrays; {self.name} raised {type(err).__name__}: "
                             f"{err}") from err
        if raw.dtype.kind not in "biuf":            # complex values would lose their imaginary part silently
            raise ValueError(f"link must return real numbers; {self.name} returned dtype {raw.dtype}")
        if raw.dtype.kind == "f":
            self.output_eps = max(self.output_eps, float(np.finfo(raw.dtype).eps))
        out = raw.astype(float)
        if out.shape != z.shape:
            raise ValueError(f"link must be vectorised (return an array of the input's shape {z.shape}); "
                             f"{self.name} returned shape {out.shape}")
        if self.hermite_coef is not None and self.degree > 0 and np.isnan(out).any():
            # a polynomial at ±inf or where its terms overflow (inf − inf in the recurrence: He₄(1e160), He₃(∞)):
            # its leading term's limit, ±inf (the float64 rounding of the true value)
            nan = np.isnan(out)
            lead = np.sign(self.hermite_coef[-1]) * np.sign(z[nan]) ** self.degree
            out = np.where(nan, 0.0, out)
            out[nan] = lead * np.inf
        return out

    @property
    def is_linear(self) -> bool:
        """``True`` for ``f(z) = a z`` (Gaussian labels)."""
        return self.slope is not None

    @property
    def hermite(self) -> Hermite:
        """``(μ₀, μ₁, μ_*²)`` to ``TOL`` (closed forms for the named links, quadrature otherwise)."""
        return _hermite(self)


@public
def as_link(link, name="link") -> Link:
    """Turn a name, a callable or a :class:`Link` into a :class:`Link` (validated).

    Parameters
    ----------
    link : str, callable, numpy.polynomial.Polynomial or Link
        A name among ``"linear"``, ``"tanh"``, ``"relu"``, ``"sign"``, ``"cubic"``, ``"hermite:k"``
        (``k`` an integer in ``[0, 40]``), a polynomial (:meth:`Link.polynomial`: exact moments), or a vectorised
        callable ``f(z)``.
    name : str
        Argument name used in error messages.

    Returns
    -------
    Link

    Raises
    ------
    ValueError
        Unknown name; a callable that is not vectorised, returns non-finite values on the
        quadrature nodes, is not square-integrable under the Gaussian (``E f⁴`` must exist too), or whose values on
        ``|z| < 8`` are of magnitude outside ``[1e-40, 1e40]`` (:data:`LINK_SCALE`; a link that is 0 is allowed).
    """
    return _as_link(link, name)


def _as_link(link, name="link"):
    """:func:`as_link` (a :class:`linattn.Problem` validates its link with it)."""
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        if link == "linear":
            return Link._checked_linear(1.0)
        if link in _NAMED:
            return Link(link, _NAMED[link])
        if link.startswith("hermite:"):
            k = link.split(":", 1)[1]
            if not (k.isdecimal() and len(k) <= 6):      # '²' is a digit but not decimal; 5000 digits: no int()
                check.fail(name, link, "'hermite:k' with k an integer in [0, 40]")
            k = check.nonneg_int(f"{name} degree", int(k), maximum=MAX_DEGREE)
            return (Link(f"hermite:{k}", _normalised_hermite(k), hermite_coef=_hermite_unit(k)) if k != 1
                    else Link("hermite:1", lambda z: np.asarray(z, float), slope=1.0))
        if link in _NAMED_POLYNOMIALS:
            coef = _NAMED_POLYNOMIALS[link]
            return Link(link, _hermite_series(coef), hermite_coef=coef)
        check.fail(name, link, f"one of {NAMES} or a vectorised callable")
    if isinstance(link, np.polynomial.Polynomial):
        return Link._polynomial(link)
    if callable(link):
        lk = Link(f"custom:{getattr(link, '__name__', type(link).__name__)}", link)
        _hermite(lk)     # validates: vectorised, finite, square-integrable
        return lk
    check.fail(name, link, f"one of {NAMES} or a vectorised callable")


# --------------------------------------------------------------------------- quadrature
def gauss_orders(link):
    """The orders of the Gaussian rule to try for ``link``: :data:`ORDERS` (composite rule, refined until two
    agree), or the one exact Gauss–Hermite order ``2·degree + 3`` of a polynomial link (exact to degree
    ``4·degree + 5``, which covers ``g⁴ f²`` and ``f⁴``).

    Parameters
    ----------
    link : Link

    Returns
    -------
    tuple of int
    """
    return ORDERS if link.hermite_coef is None else (2 * link.degree + 3,)


def gauss_rule(link, n):
    """Nodes ``z`` and log-weights of the Gaussian rule of order ``n`` for ``link`` (:func:`gauss_orders`): the
    Gauss–Hermite rule of ``n`` nodes for a polynomial link (:func:`linattn._numerics.quadrature.gauss_hermite`), the
    composite rule of ``n`` nodes per panel otherwise (:func:`linattn._numerics.quadrature.gauss_panels`).

    Parameters
    ----------
    link : Link
    n : int

    Returns
    -------
    (ndarray, ndarray)
    """
    return quadrature.gauss_hermite(n) if link.hermite_coef is not None else quadrature.gauss_panels(n)


#: the moments of :func:`gauss_moments`, as ``(j, p)`` of ``E[g^j f(s g)^p]``
GAUSS_POWERS = ((0, 1), (1, 1), (0, 2), (2, 2), (0, 4), (0, 3))


def moment_table(link, scales, n, powers):
    """``E[g^j f(s g)^p]`` for ``g ~ N(0, 1)``, each scale ``s`` and each ``(j, p)`` of ``powers`` (the rule
    :func:`gauss_rule` of order ``n``), with the size ``E|g^j f(s g)^p|`` of the terms summed (the scale of the
    round-off: :func:`until_converged` measures convergence against it).

    Parameters
    ----------
    link : Link
    scales : ndarray (m,)
    n : int
    powers : sequence of (int, int)
        At least one pair ``(j, p)`` of integers ``0 <= j, p <= 64``.

    Returns
    -------
    values, sizes : ndarray (m, len(powers))

    Raises
    ------
    ValueError
        The link is not finite for ``|z| < 8`` at a scale, or a moment does not exist (the
        integrand does not decay by ``|z| = quadrature.CUTOFF``, or overflows float64).
    """
    z, logw = gauss_rule(link, n)
    check.memory(8.0 * 3 * scales.size * z.size * (len(powers) + 2),
                 f"the moments at {scales.size} scales x {z.size} nodes", "scales")
    with np.errstate(all="ignore"):
        F = link(np.multiply.outer(scales, z))
        w = np.exp(logw)
        terms = [z**j * F**p * w for j, p in powers]
        if not all(np.isfinite(t).all() for t in terms) and np.isfinite(F).all():
            # f^p overflowed where the Gaussian weight makes the term small (a polynomial link at a large task-norm
            # scale): f^p g^j w = sign(f)^p exp(p log|f| + log w) g^j instead; log|0| = −inf gives an exact 0
            sign, logf = np.sign(F), np.log(np.abs(F))
            terms = [z**j * sign**p * np.exp(p * logf + logw) for j, p in powers]
        values = np.stack([t.sum(axis=-1) for t in terms], axis=1)
        sizes = np.stack([np.abs(t).sum(axis=-1) for t in terms], axis=1)
        tail = np.abs(z) > quadrature.CUTOFF - 1
        tails = np.stack([np.abs(t[:, tail]).sum(axis=-1) for t in terms], axis=1)
    bad = ~np.all(np.isfinite(F[:, np.abs(z) < 8]), axis=1)
    if bad.any():
        scale = float(scales[bad][0])
        if scale == 1.0:
            raise ValueError(f"link {link.name} returned non-finite values for |z| < 8")
        raise ValueError(f"link {link.name} returned non-finite values f(s z) for |z| < 8 at the task-norm scale "
                         f"s = |w|/√D = {scale:.4g}: at finite D the task norm r = |w|²/D ~ χ²_D/D is unbounded, and "
                         "the label moments averaged over it do not exist for a link that grows this fast")
    if not (np.all(np.isfinite(sizes)) and np.all(tails <= link_tolerance(link) * sizes)):
        top = float(np.max(scales)) if scales.size else 1.0
        raise ValueError(f"link {link.name} must have finite label moments E[g^j f(s g)^p] (p <= 4) at the scales "
                         f"s = |w|/√D up to {top:.4g}; it has not (the integrand does not decay by "
                         f"|z| = {quadrature.CUTOFF}, "
                         "or overflows float64): it is not square-integrable under the Gaussian there")
    return values, sizes


def gauss_moments(link, scales, n):
    """``[E f, E g f, E f², E g² f², E f⁴, E f³]`` of ``f(s g)``, ``g ~ N(0, 1)``, for each scale ``s`` (the rule
    :func:`gauss_rule` of order ``n``; a building block of the link quadrature; :func:`moment_table` also returns
    the sizes of the terms).

    Parameters
    ----------
    link : Link
    scales : ndarray (m,)
    n : int

    Returns
    -------
    ndarray (m, 6)
    """
    return moment_table(link, scales, n, GAUSS_POWERS)[0]


def link_tolerance(link):
    """``TOL``, or the callable's own precision when it returns fewer digits (a float32 link: ~1e-4).

    Parameters
    ----------
    link : Link

    Returns
    -------
    float
    """
    return max(TOL, 1e3 * link.output_eps)


def until_converged(estimate, orders, what, link):
    """Evaluate ``estimate(n)`` for increasing ``n`` until two successive values agree to the tolerance
    (``TOL``, or the precision the link's callable returns: :func:`link_tolerance`) relative to the size of the
    terms they sum; a single order is an exact rule (returned without comparison).

    Parameters
    ----------
    estimate : callable
        ``n -> (value, size)``: the estimate and, elementwise, the size ``Σ |w_i t_i|`` of the terms it sums
        (``size >= |value|``; round-off of the sum is a small multiple of ``eps · size``).
    orders : sequence of int
        Increasing orders to try: a non-empty, strictly increasing sequence of integers ``>= 1`` (the caller's rule,
        not checked here).
    what : str
        What is estimated (for the error message).
    link : Link

    Returns
    -------
    (ndarray, ndarray)
        The last estimate and its size.

    Raises
    ------
    ValueError
        The last two orders still disagree (the link is not square-integrable, or
        too rough, at this ``D``).
    """
    prev, prev_size, diff = None, None, np.inf
    for n in orders:
        cur, size = estimate(n)
        if len(orders) == 1:
            return cur, size
        if prev is not None:
            gap = np.abs(cur - prev)
            tol = link_tolerance(link) * np.maximum(size, prev_size)
            if np.all(gap <= tol):
                return cur, size
            diff = float(np.max(gap / np.where(tol > 0, tol / link_tolerance(link), 1.0)))
        prev, prev_size = cur, size
    raise ValueError(f"link {link.name} is not square-integrable under the Gaussian (E f⁴ must be finite), or "
                     "too rough for the half-range Gauss quadrature: "
                     f"{what} did not converge to {link_tolerance(link):.1g} of the terms' size "
                     f"(orders up to {orders[-1]}; last relative difference {diff:.3g})")


def power_size(values, sizes, p):
    """The size of ``values**p`` for :func:`until_converged` of an average of powers of converged estimates:
    ``|v|^p + p |v|^{p−1} s``, so that an error of ``TOL · s`` in ``v`` (what its own convergence allows) moves
    ``v^p`` by at most ``TOL`` times this size (first order).

    Parameters
    ----------
    values, sizes : ndarray
        Estimates and the sizes of their terms (:func:`moment_table`), of the same shape.
    p : int

    Returns
    -------
    ndarray
    """
    v = np.abs(values)
    with np.errstate(over="ignore", invalid="ignore"):
        out = v**p + p * v ** (p - 1) * sizes
    return check.finite_result(out, {"values": values, "sizes": sizes}, f"the size of values**{p}")


#: magnitudes a link's values may have (their maximum on ``|z| < 8``): its moments use ``f⁴``, which must stay finite
#: and non-zero in float64 — the bounds of a linear link's slope (:data:`SLOPE_RANGE`; ``1e-90 tanh`` gave ``c_v = 0``)
LINK_SCALE = SLOPE_RANGE


def _check_scale(link, name="link"):
    """Refuse a link whose values are so small or so large that ``f⁴`` under- or overflows float64 (the moments would
    be 0 or inf, not the link's): the bounds are those of a linear link's slope (:data:`LINK_SCALE`). A link that is 0
    everywhere is allowed (labels are pure noise)."""
    z = quadrature.gauss_panels(ORDERS[0])[0]
    z = z[np.abs(z) < 8]
    with np.errstate(all="ignore"):
        F = link(z)
    if not np.all(np.isfinite(F)):
        return                      # refused with its own message by the quadrature
    top = float(np.max(np.abs(F)))
    if top != 0.0 and not LINK_SCALE[0] <= top <= LINK_SCALE[1]:
        check.fail(name, f"<{link.name} with max |f(z)| = {top:.3g} on |z| < 8>",
                   f"a function with values of magnitude between {LINK_SCALE[0]:g} and {LINK_SCALE[1]:g} (its "
                   "moments use f⁴, which must stay finite and non-zero in float64; rescale the labels)")


@functools.lru_cache(maxsize=256)
def _hermite(link):
    if link.is_linear:
        return Hermite(0.0, float(link.slope), 0.0)
    _check_scale(link)
    if link.hermite_coef is not None:            # E He_j He_k = k! δ_jk
        a = link.hermite_coef
        norms = np.array([math.factorial(k) for k in range(a.size)], dtype=float)
        return Hermite(float(a[0]), float(a[1]) if a.size > 1 else 0.0, float(np.sum(norms[2:] * a[2:] ** 2)))

    def at_one(n):
        m, size = moment_table(link, np.ones(1), n, GAUSS_POWERS)
        return m[0], size[0]

    m, _ = until_converged(at_one, gauss_orders(link), "the Gaussian moments", link)
    mu0, mu1 = float(m[0]), float(m[1])
    # μ_*² = E[(f − μ₀ − μ₁ z)²] directly: E f² − μ₀² − μ₁² cancels catastrophically for a link with a large offset
    # or slope (1e8 + tanh gave 0); the errors of μ₀, μ₁ enter only at second order. The residual is as smooth as f,
    # whose moments converged: the finest rule is used without a second convergence test (the residual of an offset
    # link is known only to eps·|f| per node, which no comparison of orders can beat)
    residual = Link(f"{link.name} − μ₀ − μ₁z", lambda z: link(z) - mu0 - mu1 * np.asarray(z, float))
    rest = moment_table(residual, np.ones(1), gauss_orders(link)[-1], ((0, 2),))[0][0]
    return Hermite(mu0, mu1, float(rest[0]))


@dataclass(frozen=True)
class RadialMoments:
    """Averages over the task norm ``r = |w|²/D ~ χ²_D/D`` of the one-dimensional label moments.

    Attributes
    ----------
    phi1_sq : float
        ``E_r φ₁(r)²`` (the teacher strength ``b``: ``E[ŷ y_q] = b tr Γ / D``).
    phi2 : float
        ``E_r φ₂(r) = E f(u)²``.
    phi22 : float
        ``E_r φ₂₂(r) = E[g² f(√r g)²]``.
    phi4 : float
        ``E_r φ₄(r) = E f(u)⁴``.
    phi2_sq : float
        ``E_r φ₂(r)²``.
    """

    __repr__ = short_repr

    phi1_sq: float
    phi2: float
    phi22: float
    phi4: float
    phi2_sq: float


@public
def radial_moments(link, D) -> RadialMoments:
    """The ``r``-averaged moments that fix every exact population quantity (module docstring).

    Parameters
    ----------
    link : Link
    D : int
        Token dimension (the law of ``r = |w|²/D`` is ``χ²_D/D``).

    Returns
    -------
    RadialMoments
        Closed forms for linear links (``E r = 1``, ``E r² = 1 + 2/D``); quadrature otherwise,
        converged to ``TOL`` in both the Gaussian and the ``r`` rule.
    """
    return _radial_moments(_as_link(link), D)      # D checked (an int) before the cache hashes it


@functools.lru_cache(maxsize=256)
def _radial_moments(link, D) -> RadialMoments:
    if link.is_linear:
        a2 = float(link.slope) ** 2
        er2 = 1.0 + 2.0 / D
        return RadialMoments(phi1_sq=a2, phi2=a2, phi22=3.0 * a2, phi4=3.0 * a2 * a2 * er2, phi2_sq=a2 * a2 * er2)
    _hermite(link)                      # validates the link once (scale, finiteness, convergence at r = 1)

    def average(n_r):
        r, w = quadrature.chi_square_rule(D, n_r)
        keep = w > 0.0                 # nodes far in the χ_D tail, where the weight underflows, add exactly 0: skip
        r, w = r[keep], w[keep]        # them (a link's moments at such norms may overflow although they are finite)

        cols = [(1, 2), (2, 1), (3, 1), (4, 1), (2, 2)]          # (moment, power): φ₁², φ₂, φ₂₂, φ₄, φ₂²

        def at_order(n):
            m, size = moment_table(link, np.sqrt(r), n, GAUSS_POWERS)
            return (np.array([w @ m[:, k] ** p for k, p in cols]),
                    np.array([w @ power_size(m[:, k], size[:, k], p) for k, p in cols]))
        return until_converged(at_order, gauss_orders(link), f"the Gaussian moments at D = {D}", link)

    out, _ = until_converged(average, R_ORDERS, f"the average over the task norm χ²_{D}/{D}", link)
    return RadialMoments(*map(float, out))
