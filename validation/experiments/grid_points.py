"""Grid functions of :func:`validation.sweep` registered by name (``linattn sweep gibbs|langevin|long_time_limit``):
one dataset's exact Gibbs averages, one Langevin simulation with the seed's protocol, and one long-time
gradient-flow limit, each ``fn(**point, rng)`` returning a dict of floats.
"""
from __future__ import annotations

import linattn

from ..sweeps import experiment


@experiment("gibbs")
def gibbs_point(D, N, P, beta, lam, noise=0.0, model="reduced", rng=None):
    """Exact Gibbs averages ``⟨E_t⟩``, ``⟨E_g⟩`` of one dataset (:func:`replica.gibbs`).

    Parameters
    ----------
    D, N, P : int
    beta, lam, noise : float
    model : {"reduced", "full"}
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``.
    """
    import replica

    pb = linattn.Problem(D, N, noise)
    g = replica.gibbs(pb.sample(P, rng=rng), pb, beta, lam, model)
    return {"train": float(g.train), "test": float(g.test)}


@experiment("langevin")
def langevin_point(D, N, P, beta, lam, noise=0.0, model="reduced", n_chains=1, rng=None):
    """One Langevin simulation with the seed's protocol on a fresh dataset (the markers of
    Figs. 2–3): sample means of ``E_t``, ``E_g`` and the exact Gibbs values of that dataset.

    Parameters
    ----------
    D, N, P : int
    beta, lam, noise : float
    model : {"reduced", "full"}
    n_chains : int
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``, ``exact_train``, ``exact_test``, ``dt``.
    """
    from ..simulators.langevin import langevin

    pb = linattn.Problem(D, N, noise)
    data = pb.sample(P, rng=rng)
    r = langevin(data, pb, beta, lam, model=model, n_chains=n_chains, rng=int(rng.integers(2**62)))
    return {"train": r.train_mean, "test": r.test_mean, "exact_train": r.exact_train, "exact_test": r.exact_test,
            "dt": r.dt}


@experiment("long_time_limit")
def long_time_point(D, N, P, lam, noise=0.0, model="reduced", rng=None):
    """``ΔEr`` and the contrast ratio of the long-time limit of gradient flow on one dataset.

    Parameters
    ----------
    D, N, P : int
    lam, noise : float
    model : {"reduced", "full"}
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``train``, ``test``, ``gap``, ``contrast``.
    """
    import dynamics

    pb = linattn.Problem(D, N, noise)
    lim = dynamics.long_time_limit(pb.sample(P, rng=rng), pb, lam, model)
    return {"train": lim.train, "test": lim.test, "gap": lim.gap, "contrast": lim.contrast}
