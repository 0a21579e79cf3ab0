"""The exact O(D) sampler keeps its random stream: the prompts of a seed are bit for bit those of the plain
per-prompt construction (linattn/sampling.py module docstring), written out here from the same generator — a pool's
norms and directions are computed once per task and ``s`` is assembled in place, which must not change a bit."""
import numpy as np
import pytest

import linattn
from linattn import _check as check
from linattn.pools import draw_pool


def _reference(pb, P, seed):
    """The sampler's construction, one prompt's task at a time (linear link), in its blocks of the stream."""
    gen = check.rng(seed)
    D, N, sig = pb.D, pb.N, pb.noise
    batch = max(64, (1 << 17) // D)
    pool, task = draw_pool(pb, P, gen) if pb.tasks is not None else (None, None)
    cov = pb.covariance
    root = None if cov is None else np.sqrt(cov.spectrum)
    out = {k: [] for k in ("s", "xq", "yq", "y2")}
    for a in range(0, P, batch):
        n = min(P, a + batch) - a
        w = gen.standard_normal((n, D)) if pool is None else pool[task[a:a + n]]
        wq = w
        if cov is not None:
            w = w * root
        wn = np.sqrt(np.einsum("pd,pd->p", w, w))
        what = w / wn[:, None]
        r = wn**2 / D
        K = gen.chisquare(N, size=n)
        zeta = gen.standard_normal((n, D))
        z1 = np.einsum("pd,pd->p", zeta, what)
        along = np.sqrt(r) * K + sig * np.sqrt(K) * z1
        Y2 = (r + sig**2) * K
        perp = np.sqrt(Y2)
        s = ((along - perp * z1) / N)[:, None] * what + (perp / N)[:, None] * zeta
        xq = gen.standard_normal((n, D))
        if cov is not None:
            s, xq = s * root, xq * root
        yq = np.einsum("pd,pd->p", wq, xq) / np.sqrt(D) + sig * gen.standard_normal(n)
        if cov is not None and cov.basis is not None:
            s, xq = cov.rotate_rows(s), cov.rotate_rows(xq)
        for k, v in (("s", s), ("xq", xq), ("yq", yq), ("y2", Y2 / N)):
            out[k].append(v)
    return {k: np.concatenate(v) for k, v in out.items()}


_A = np.random.default_rng(5).standard_normal((7, 7))


@pytest.mark.parametrize("kw", [dict(D=64, N=640, noise=0.1, tasks=64, task_law="sphere"),
                                dict(D=7, N=13, noise=0.3, tasks=5), dict(D=13, N=20, noise=0.0, tasks=40,
                                                                          assignment="balanced"),
                                dict(D=13, N=20, noise=0.2), dict(D=7, N=9, noise=0.2, covariance=np.arange(1, 8.0)),
                                dict(D=7, N=9, noise=0.2, covariance=_A @ _A.T / 7 + np.eye(7))])
def test_sampler_stream_is_the_per_prompt_construction(kw):
    pb = linattn.Problem(**kw)
    for P, seed in ((1, 0), (37, (3, 4)), (5000, 11)):
        got = pb.sample(P, rng=seed)
        ref = _reference(pb, P, seed)
        for k in ("s", "xq", "yq", "y2"):
            assert np.array_equal(getattr(got, k), ref[k]), (kw, P, k)
