"""Grid functions of :func:`validation.sweep` registered by name (``linattn sweep gibbs|langevin|long_time_limit``):
one dataset's exact Gibbs averages, one Langevin simulation with the seed's protocol, and one long-time
gradient-flow limit, each ``fn(**point, rng)`` returning a dict of floats.

Per-block weight decay: a grid coordinate holds scalars only, so the pair ``(λ_Γ, λ_v)`` of the full model is
given as two grid parameters, ``lam`` (``λ_Γ``) and ``lam_v`` (e.g. ``{"lam": [0.01 / 20], "lam_v": [0.01]}``,
Lu et al.'s ridge ``λ_L = 0.01`` at ``D = 20``; in a TOML grid ``lam_v = [0.01]``). A direct call may also pass
``lam=(λ_Γ, λ_v)``.
"""
from __future__ import annotations

import numpy as np

import linattn
from linattn import _check as check

from ..sweeps import grid_function


def decay(lam, lam_v=None):
    """The weight decay of a grid point: ``lam``, or the pair ``(lam, lam_v)`` when ``lam_v`` is given.

    Parameters
    ----------
    lam : float or (float, float)
        ``λ``, ``λ_Γ`` (with ``lam_v``), or a pair ``(λ_Γ, λ_v)`` (then ``lam_v`` must be ``None``).
    lam_v : float, optional
        ``λ_v`` of the ``v`` block.

    Returns
    -------
    float or tuple
        ``lam`` itself, or the Python tuple ``(lam, lam_v)`` (the per-block form every engine reads the same way).
    """
    if lam_v is None:
        return lam
    if np.ndim(lam) != 0:
        check.fail("lam_v", lam_v, "None when lam is already a pair (lam_Gamma, lam_v)")
    return (lam, lam_v)


@grid_function("gibbs")
def gibbs_point(D, N, P, beta, lam, noise=0.0, model="reduced", lam_v=None, rng=None):
    """Exact Gibbs averages ``⟨E_t⟩``, ``⟨E_g⟩`` of one dataset (:func:`replica.gibbs`).

    Parameters
    ----------
    D, N, P : int
    beta, noise : float
    lam : float or (float, float)
        ``λ``, or ``λ_Γ`` with ``lam_v`` (module docstring).
    model : {"reduced", "full"}
    lam_v : float, optional
        ``λ_v`` of the per-block decay (full model).
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``.
    """
    import replica

    pb = linattn.Problem(D, N, noise)
    g = replica.gibbs(pb.sample(P, rng=rng), pb, beta, decay(lam, lam_v), model)
    return {"train": float(g.train), "test": float(g.test)}


@grid_function("langevin")
def langevin_point(D, N, P, beta, lam, noise=0.0, model="reduced", n_chains=1, lam_v=None, rng=None):
    """One Langevin simulation with the seed's protocol on a fresh dataset (the markers of
    Figs. 2–3): sample means of ``E_t``, ``E_g`` and the exact Gibbs values of that dataset.

    Parameters
    ----------
    D, N, P : int
    beta, noise : float
    lam : float or (float, float)
        ``λ``, or ``λ_Γ`` with ``lam_v`` (module docstring).
    model : {"reduced", "full"}
    n_chains : int
    lam_v : float, optional
        ``λ_v`` of the per-block decay (full model).
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``, ``exact_train``, ``exact_test``, ``dt``.
    """
    from ..simulators._langevin import langevin

    pb = linattn.Problem(D, N, noise)
    data = pb.sample(P, rng=rng)
    r = langevin(data, pb, beta, decay(lam, lam_v), model=model, n_chains=n_chains, rng=int(rng.integers(2**62)))
    return {"train": r.train_mean, "test": r.test_mean, "exact_train": r.exact_train, "exact_test": r.exact_test,
            "dt": r.dt}


@grid_function("long_time_limit")
def long_time_point(D, N, P, lam, noise=0.0, model="reduced", lam_v=None, rng=None):
    """``ΔEr`` and the contrast ratio of the long-time limit of gradient flow on one dataset.

    Parameters
    ----------
    D, N, P : int
    noise : float
    lam : float or (float, float)
        ``λ``, or ``λ_Γ`` with ``lam_v`` (module docstring).
    model : {"reduced", "full"}
    lam_v : float, optional
        ``λ_v`` of the per-block decay (full model).
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``, ``gap``, ``contrast``.
    """
    import dynamics

    pb = linattn.Problem(D, N, noise)
    lim = dynamics.long_time_limit(pb.sample(P, rng=rng), pb, decay(lam, lam_v), model)
    return {"train": lim.train, "test": lim.test, "gap": lim.gap, "contrast": lim.contrast}
