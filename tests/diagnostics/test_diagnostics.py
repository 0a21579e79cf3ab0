"""Training diagnostics on synthetic trajectories with known answers (no framework needed)."""
import numpy as np
import pytest

import diagnostics

RNG = np.random.default_rng(7)


def _orth(n, k, rng=RNG):
    return np.linalg.qr(rng.standard_normal((n, n)))[0][:, :k]


def _matrix(s, m=7, n=5, rng=RNG):
    """An m × n matrix with singular values s (len(s) <= n) in random orthonormal bases."""
    return _orth(m, len(s), rng) @ np.diag(s) @ _orth(n, len(s), rng).T


# ----------------------------------------------------------------------------- ranks
@pytest.mark.parametrize("k", [1, 2, 4])
def test_effective_rank_of_equal_singular_values_is_their_number(k):
    assert diagnostics.effective_rank(_matrix(np.full(k, 3.0))) == pytest.approx(k, rel=1e-12)


def test_effective_rank_formula_invariances_and_stacks():
    s = np.array([4.0, 2.0, 1.0, 0.5])
    p = s / s.sum()
    M = _matrix(s)
    assert diagnostics.effective_rank(M) == pytest.approx(np.exp(-np.sum(p * np.log(p))), rel=1e-12)
    q = s[1:] / s[1:].sum()                          # marginalised: the top singular value removed
    assert diagnostics.effective_rank(M, skip=1) == pytest.approx(np.exp(-np.sum(q * np.log(q))), rel=1e-12)
    Q = _orth(7, 7)
    assert diagnostics.effective_rank(5.0 * Q @ M) == pytest.approx(diagnostics.effective_rank(M), rel=1e-12)
    stack = np.stack([M, 2 * M, np.zeros_like(M)])
    np.testing.assert_allclose(diagnostics.effective_rank(stack), [diagnostics.effective_rank(M)] * 2 + [0.0],
                               rtol=1e-12)
    assert diagnostics.effective_rank(stack[None]).shape == (1, 3)
    assert diagnostics.stable_rank(M) == pytest.approx(np.sum(s**2) / 16.0, rel=1e-12)
    np.testing.assert_allclose(diagnostics.stable_rank(stack), [np.sum(s**2) / 16.0] * 2 + [0.0], rtol=1e-12)


def test_randomized_singular_values_match_lapack_on_a_decaying_spectrum():
    s = 0.7 ** np.arange(300)
    A = _matrix(s, 400, 300)
    top = diagnostics.singular_values(A, k=8, rng=1)          # randomised path (min(m, n) >= 256)
    np.testing.assert_allclose(top, s[:8], rtol=1e-10)
    # effective rank from the top k: the neglected tail carries 0.7^k / (1 − 0.7) of the mass
    full = diagnostics.effective_rank(A)
    assert diagnostics.effective_rank(A, k=60) == pytest.approx(full, rel=1e-6)
    assert diagnostics.effective_rank(A, k=8) != pytest.approx(full, rel=1e-3)   # a truncation that shows


def test_progress_bar_path_gives_the_same_numbers():
    stack = np.stack([_matrix([3.0, 1.0, 0.2]) for _ in range(4)])
    np.testing.assert_allclose(diagnostics.effective_rank(stack, progress=True), diagnostics.effective_rank(stack),
                               rtol=1e-12)


# ----------------------------------------------------------------------------- subspaces
def test_rotating_subspace_distance_is_sine_and_angle_is_the_rotation():
    n, thetas = 6, np.linspace(0.0, np.pi / 2, 13)
    e = _orth(n, 2)
    ref = np.outer([1.0, 2.0, 0, 0], e[:, 0])[:4]           # rank one, row space e0
    traj = np.stack([np.outer([0.5, -1.0, 3.0, 0.0], np.cos(t) * e[:, 0] + np.sin(t) * e[:, 1]) for t in thetas])
    np.testing.assert_allclose(diagnostics.subspace_distance(traj, ref), np.sin(thetas), atol=1e-12)
    np.testing.assert_allclose(diagnostics.principal_angles(traj, ref)[:, 0], thetas, atol=1e-12)
    # column spaces of the transposes are the same row spaces
    np.testing.assert_allclose(diagnostics.subspace_distance(np.swapaxes(traj, 1, 2), ref.T, side="column"),
                               np.sin(thetas), atol=1e-12)
    assert diagnostics.subspace_distance(ref, ref) == pytest.approx(0.0, abs=1e-14)


def test_subspace_distance_counts_the_reference_outside_the_numerical_row_space():
    U, V = _orth(5, 5), _orth(5, 5)
    ref = U @ np.diag([4.0, 3.0, 2.0, 1.0, 0.0]) @ V.T
    M = U @ np.diag([1.0, 1e-3, 0.5, 0.0, 0.0]) @ V.T
    # rtol = 1e-2 drops direction 2 (σ = 1e-3): outside are σ = 3 and 1
    assert diagnostics.subspace_distance(M, ref, rtol=1e-2) == pytest.approx(np.sqrt(10 / 30), rel=1e-12)
    assert diagnostics.subspace_distance(M, ref) == pytest.approx(np.sqrt(1 / 30), rel=1e-12)       # exact pinv
    assert diagnostics.subspace_distance(M, ref, rank=1) == pytest.approx(np.sqrt(14 / 30), rel=1e-12)
    pinv = np.linalg.pinv(M)                                  # the definition, literally
    assert diagnostics.subspace_distance(M, ref) == pytest.approx(
        np.linalg.norm(ref @ (np.eye(5) - pinv @ M)) / np.linalg.norm(ref), rel=1e-10)


def test_principal_angles_agree_with_scipy():
    from scipy.linalg import subspace_angles

    A, B = RNG.standard_normal((3, 8)), RNG.standard_normal((3, 8))
    np.testing.assert_allclose(diagnostics.principal_angles(A, B), np.sort(subspace_angles(A.T, B.T)), atol=1e-12)


def test_diagnose_equals_the_single_measures():
    traj = np.stack([_matrix([3.0, 1.0, t]) for t in np.linspace(0.01, 2.0, 9)])
    d = diagnostics.diagnose(traj, np.arange(1.0, 10.0), skip=1, rtol=0.05)
    np.testing.assert_allclose(d.effective_rank, diagnostics.effective_rank(traj), rtol=1e-12)
    np.testing.assert_allclose(d.marginalised_rank, diagnostics.effective_rank(traj, skip=1), rtol=1e-12)
    np.testing.assert_allclose(d.stable_rank, diagnostics.stable_rank(traj), rtol=1e-12)
    np.testing.assert_allclose(d.subspace_distance, diagnostics.subspace_distance(traj, traj[-1], rtol=0.05),
                               atol=1e-12)
    np.testing.assert_allclose(d.max_angle, diagnostics.principal_angles(traj, traj[-1])[:, -1], atol=1e-12)


# ----------------------------------------------------------------------------- known transition times
T_K = np.array([20.0, 300.0, 4000.0])
TIMES = np.geomspace(1.0, 1e5, 500)


def _growing_rank(width, final=(1.0, 2.0, 4.0)):
    """Singular values switching on at T_K (logistic in log t of the given width): rank 0 → 3."""
    amp = 1.0 / (1.0 + np.exp(-(np.log(TIMES)[:, None] - np.log(T_K)) / width))
    U, V = _orth(6, 3), _orth(4, 3)
    return np.einsum("ia,ta,ja->tij", U, amp * final, V), U @ np.diag(final) @ V.T


def test_a_matrix_whose_rank_grows_at_known_times():
    traj, ref = _growing_rank(0.05)
    d = diagnostics.diagnose(traj, TIMES, reference=ref, rtol=0.1)
    spacing = TIMES[1] / TIMES[0]
    # a relative cutoff always keeps the largest direction, so the distance falls twice: when mode k = 2, 3
    # reaches σ_k(t) = rtol · σ_max(t), i.e. amp_k = ρ_k = rtol σ_max / σ_k(∞) = 0.05 on its logistic:
    # ln t = ln T_k + width · ln(ρ/(1 − ρ)) exactly; the change point sits within one record of it
    rho = 0.1 * np.array([1.0, 2.0]) / np.array([2.0, 4.0])
    predicted = T_K[1:] * np.exp(0.05 * np.log(rho / (1 - rho)))
    cp = d.transitions("subspace_distance", n=2, method="step")
    assert np.all(np.abs(np.log(cp / predicted)) < np.log(spacing))
    # plateaus of the distance: exact values ‖σ outside‖ / ‖σ‖
    for t, level in [(5.0, np.sqrt(20 / 21)), (100.0, np.sqrt(20 / 21)), (1000.0, 4 / np.sqrt(21)), (5e4, 0.0)]:
        assert d.subspace_distance[np.searchsorted(TIMES, t)] == pytest.approx(level, abs=1e-6)
    # equal final singular values: the stable rank Σσ²/σ_max² steps 1 → 2 → 3 by L_k² (L logistic), whose
    # steepest point in ln t is at L = 2/3, i.e. ln t = ln T_k + width · ln 2 (parabolic refinement: 1e-3)
    traj, ref = _growing_rank(0.3, final=(1.0, 1.0, 1.0))
    st = diagnostics.diagnose(traj, TIMES, reference=ref).transitions("stable_rank", n=2)
    np.testing.assert_allclose(np.log(st), np.log(T_K[1:]) + 0.3 * np.log(2.0), atol=1e-3)


def test_steepest_changes_of_logistic_steps_are_their_centres():
    u = np.log(TIMES)
    series = sum(a / (1.0 + np.exp(-(u - np.log(t)) / 0.3)) for a, t in zip([1.0, 0.5, 2.0], T_K))
    np.testing.assert_allclose(diagnostics.steepest_changes(series, TIMES, n=3), T_K, rtol=2e-3)
    lin = np.linspace(0.0, 10.0, 400)
    np.testing.assert_allclose(diagnostics.steepest_changes(np.tanh(lin - 6.3), lin, n=1, scale="linear"), [6.3],
                               atol=1e-3)


def test_change_points_of_a_noisy_staircase():
    rng = np.random.default_rng(3)
    cuts = [60, 170, 330]
    series = np.repeat([0.0, 1.0, 2.5, 3.0], np.diff([0] + cuts + [TIMES.size])) + 0.1 * rng.standard_normal(TIMES.size)
    found = diagnostics.change_points(series, TIMES, n=3)
    expected = np.sqrt(TIMES[np.array(cuts) - 1] * TIMES[cuts])
    # steps of 1, 1.5 and 0.5, noise s.d. 0.1: moving a cut by k records changes the squared error by
    # k·step² − 2·step·(sum of k noises) ~ k·0.25 ± 0.1·√k for the smallest step, so |k| <= 1 (P(k = 2) ~ 1e-3)
    assert np.all(np.abs(np.log(found / expected)) <= np.log(TIMES[1] / TIMES[0]) * 1.000001)
    with pytest.raises(ValueError, match="n"):
        diagnostics.change_points(series, TIMES, n=400)


def test_loss_curvature_of_known_curves():
    u = np.log(TIMES)
    # ln L = −(u − 5)² / 4 in log axes: curvature −1/2 (the cubic filter is exact for quadratics)
    np.testing.assert_allclose(diagnostics.loss_curvature(np.exp(-(u - 5) ** 2 / 4), TIMES)[20:-20], -0.5, atol=1e-6)
    # a power law is straight in log–log axes
    np.testing.assert_allclose(diagnostics.loss_curvature(TIMES ** -0.7, TIMES), 0.0, atol=1e-9)


def test_rolling_autocorrelation_of_an_ar1_process():
    rng = np.random.default_rng(11)
    phi, n = 0.8, 20000
    x = np.zeros(n)
    eps = rng.standard_normal(n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + eps[i]
    r = diagnostics.rolling_autocorrelation(x, window=n)
    # s.e. of the lag-1 estimate ≈ √((1 − φ²)/n); detrending biases it by O((1 + 4φ)/n)
    assert abs(r[0] - phi) < 4 * np.sqrt((1 - phi**2) / n) + (1 + 4 * phi) / n
    # white noise: ≈ 0; a straight line: exactly 0 (no residual)
    assert abs(diagnostics.rolling_autocorrelation(eps, window=n)[0]) < 4 / np.sqrt(n) + 1 / n
    assert np.all(diagnostics.rolling_autocorrelation(np.arange(50.0), window=10) == 0.0)
    assert diagnostics.rolling_autocorrelation(x[:100], window=30).shape == (71,)


# ----------------------------------------------------------------------------- checkpoints and circuits
def test_checkpoint_folder_is_read_in_step_order(tmp_path):
    W = RNG.standard_normal((4, 3, 2))
    for step in (300, 20, 1000, 100):
        i = [20, 100, 300, 1000].index(step)
        np.savez(tmp_path / f"ckpt_{step}.npz", W_Q=W[i], b=np.full(2, step))
    run = diagnostics.load_checkpoints(tmp_path)
    np.testing.assert_array_equal(run.steps, [20, 100, 300, 1000])
    np.testing.assert_array_equal(run["W_Q"], W)
    np.testing.assert_array_equal(run["b"][:, 0], run.steps)
    only = diagnostics.load_checkpoints(sorted(tmp_path.iterdir())[:2], names=["W_Q"])
    assert list(only.weights) == ["W_Q"]
    np.save(tmp_path / "x_5.npy", W[0])
    with pytest.raises(ValueError, match="names"):
        diagnostics.load_checkpoints(tmp_path, names=["W_Q"])   # the .npy file has only "weight"


def test_qk_and_ov_circuits_per_head():
    H, dh, d = 3, 2, 5
    WQ, WK, WV = (RNG.standard_normal((10, H * dh, d)) for _ in range(3))
    WO = RNG.standard_normal((10, d, H * dh))
    qk, ov = diagnostics.qk_circuit(WQ, WK, heads=H), diagnostics.ov_circuit(WO, WV, heads=H)
    for h in range(H):
        sl = slice(h * dh, (h + 1) * dh)
        np.testing.assert_allclose(qk[:, h], np.swapaxes(WQ[:, sl], 1, 2) @ WK[:, sl], rtol=1e-12)
        np.testing.assert_allclose(ov[:, h], WO[:, :, sl] @ WV[:, sl], rtol=1e-12)
    # the sum of the heads' OV circuits is W_O W_V, and each has rank <= d_h
    np.testing.assert_allclose(ov.sum(axis=1), WO @ WV, rtol=1e-10)
    assert np.all(np.linalg.matrix_rank(qk[0]) == dh)
    q, k, v = diagnostics.split_in_proj(np.concatenate([WQ[:, :d], WK[:, :d], WV[:, :d]], axis=1))
    np.testing.assert_array_equal(q, WQ[:, :d])
    np.testing.assert_array_equal(v, WV[:, :d])
    np.testing.assert_array_equal(k, WK[:, :d])


def test_torch_checkpoints_when_torch_is_installed(tmp_path):
    torch = pytest.importorskip("torch")
    layer = torch.nn.MultiheadAttention(4, 2, bias=False)
    torch.save(layer.state_dict(), tmp_path / "step_7.pt")
    run = diagnostics.load_checkpoints(tmp_path)
    np.testing.assert_allclose(run["in_proj_weight"][0], layer.in_proj_weight.detach().double().numpy())
    assert run.steps.tolist() == [7]


def test_diagnose_with_the_top_k_on_large_matrices_equals_the_full_svd():
    # T = 4 matrices 300 × 300 whose spectrum decays as 0.5^i: the top 40 carry all but 0.5^40 of it
    rng = np.random.default_rng(5)
    U, V = _orth(300, 300, rng), _orth(300, 300, rng)
    traj = np.stack([(U * (0.5 ** np.arange(300) * (1 + 0.1 * t))) @ V.T for t in range(4)])
    full = diagnostics.diagnose(traj, rtol=1e-3)
    top = diagnostics.diagnose(traj, rtol=1e-3, k=40, rng=1)            # randomised path (min(m, n) >= 256)
    np.testing.assert_allclose(top.stable_rank, full.stable_rank, rtol=1e-12)
    np.testing.assert_allclose(top.effective_rank, full.effective_rank, rtol=1e-9)
    np.testing.assert_allclose(top.subspace_distance, full.subspace_distance, atol=1e-9)
    # singular values to rtol 1e-8 or, for the smallest, the absolute accuracy ε‖M‖ of any SVD
    np.testing.assert_allclose(top.singular_values, full.singular_values[:, :40], rtol=1e-8, atol=1e-13)


# ----------------------------------------------------------------------------- checkpoints you can trust
def _save_run(folder, names):
    W = RNG.standard_normal((len(names), 3, 2))
    for i, name in enumerate(names):
        np.savez(folder / name, W=W[i])
    return W


def test_checkpoint_order_follows_the_step_word_not_the_last_number(tmp_path):
    W = _save_run(tmp_path, ["epoch1_loss0.90.npz", "epoch2_loss0.50.npz", "epoch3_loss0.25.npz"])
    run = diagnostics.load_checkpoints(tmp_path)
    np.testing.assert_array_equal(run.steps, [1, 2, 3])
    np.testing.assert_array_equal(run["W"], W)
    assert len(repr(run)) < 200 and "T=3" in repr(run)


def test_checkpoint_step_by_regex_and_callable(tmp_path):
    W = _save_run(tmp_path, ["a_loss3_b7.npz", "a_loss1_b9.npz"])
    run = diagnostics.load_checkpoints(tmp_path, step=r"_b(\d+)")
    np.testing.assert_array_equal(run.steps, [7, 9])
    np.testing.assert_array_equal(run["W"], W)
    run = diagnostics.load_checkpoints(tmp_path, step=lambda p: -float(p.rsplit("_b", 1)[1][:-4]))
    np.testing.assert_array_equal(run.steps, [-9, -7])
    with pytest.raises(ValueError, match="step"):
        diagnostics.load_checkpoints(tmp_path, step=r"nomatch(\d+)")
    with pytest.raises(ValueError, match="step"):
        diagnostics.load_checkpoints(tmp_path, step=lambda p: "x")


def test_checkpoint_fallbacks_warn_and_say_how_the_order_was_decided(tmp_path):
    _save_run(tmp_path, ["ckpt_10.npz", "final.npz", "ckpt_5.npz"])
    with pytest.warns(UserWarning, match="without a step number"):
        run = diagnostics.load_checkpoints(tmp_path)
    assert [f.split("/")[-1] for f in run.files] == ["ckpt_5.npz", "ckpt_10.npz", "final.npz"]
    np.testing.assert_array_equal(run.steps, [5, 10, 11])
    other = tmp_path / "b"
    other.mkdir()
    _save_run(other, ["run3_lr0001.npz", "run4_lr0001.npz"])
    with pytest.warns(UserWarning, match="several numbers"):
        assert list(diagnostics.load_checkpoints(other).steps) == [3, 4]


@pytest.mark.parametrize("names, steps", [
    (["ckpt_epoch=103_loss=9.79.npz", "ckpt_epoch=7_loss=12.5.npz"], [7, 103]),        # epoch= is a step word
    (["run2_epoch=10.npz", "run2_epoch=20.npz"], [10, 20]),                             # the word beats the run number
    (["epoch=0-step=500.npz", "epoch=1-step=1000.npz", "epoch=1-step=1500.npz"], [500, 1000, 1500]),   # Lightning
    (["model_global_step_200.npz", "model_global_step_100.npz"], [100, 200]),
    (["iter_3000_lr1e-4.npz", "iter_300_lr1e-4.npz"], [300, 3000]),
    (["checkpoint-500.npz", "checkpoint-1000.npz"], [500, 1000]),                       # Hugging Face
    (["split3_it40.npz", "split3_it8.npz"], [8, 40]),                                   # no "it" inside a word
])
def test_common_checkpoint_names_give_their_steps_without_warning(tmp_path, names, steps):
    import warnings
    W = _save_run(tmp_path, names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = diagnostics.load_checkpoints(tmp_path)
    np.testing.assert_array_equal(run.steps, steps)
    order = np.argsort([names.index(f.split("/")[-1]) for f in run.files])
    np.testing.assert_array_equal(run["W"][order], W)


def test_checkpoint_warnings_are_one_short_line(tmp_path):
    """30 guessed names gave a 3,474-character warning listing every file; now one line with an example."""
    _save_run(tmp_path, [f"run{i}_lr{i + 100}.npz" for i in range(30)] + ["final.npz"])
    with pytest.warns(UserWarning) as caught:
        run = diagnostics.load_checkpoints(tmp_path)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "\n" not in text and len(text) < 300, text
    assert "30 file name(s)" in text and "1 file(s) without" in text and "step=REGEX" in text
    np.testing.assert_array_equal(run.steps, list(range(30)) + [30])


def test_empty_checkpoint_folder_is_named_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("no checkpoints here")
    with pytest.raises(ValueError, match="this folder has none"):
        diagnostics.load_checkpoints(tmp_path)


@pytest.mark.parametrize("case", ["duplicate", "complex", "empty", "truncated", "disjoint", "object"])
def test_bad_checkpoint_folders_raise_a_value_error_naming_the_file(tmp_path, case):
    np.savez(tmp_path / "ckpt_1.npz", W=np.ones((2, 2)))
    bad = tmp_path / "ckpt_2.npz"
    if case == "duplicate":
        np.savez(tmp_path / "step_1.npz", W=np.ones((2, 2)))
        match = "both read as step 1"
    elif case == "complex":
        np.savez(bad, W=np.ones((2, 2)) * 1j)
        match = "complex"
    elif case == "empty":
        bad.write_bytes(b"")
        match = "ckpt_2.npz"
    elif case == "truncated":
        np.savez(bad, W=np.ones((20, 20)))
        bad.write_bytes(bad.read_bytes()[:100])
        match = "ckpt_2.npz"
    elif case == "disjoint":
        np.savez(bad, V=np.ones((2, 2)))
        match = "in common"
    else:
        np.save(tmp_path / "ckpt_2.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
        match = "ckpt_2.npy"
    with pytest.raises(ValueError, match=match):
        diagnostics.load_checkpoints(tmp_path)


def test_step_zero_works_in_transitions_with_a_stated_rule():
    t = np.arange(0, 400, 10.0)
    series = 1 / (1 + np.exp(-(t - 200) / 15))
    with pytest.warns(UserWarning, match="leaves out the 1 record"):
        log = diagnostics.steepest_changes(series, t, scale="log")
    lin = diagnostics.steepest_changes(series, t, scale="linear")
    assert abs(lin[0] - 200) < 10 and abs(log[0] - 200) < 20
    M = RNG.standard_normal((t.size, 4, 2)) * series[:, None, None]
    M[:, :, 1] *= 1e-3
    d = diagnostics.diagnose(M + 1e-6, t, rtol=0.01)
    assert d.transitions("effective_rank", scale="linear").shape == (1,)
    assert "T=40" in repr(d) and len(repr(d)) < 300


def test_trivially_zero_subspace_distance_warns():
    M = RNG.standard_normal((5, 4, 4))
    with pytest.warns(UserWarning, match="pass\\s+rtol"):
        d = diagnostics.diagnose(M)
    assert np.all(d.subspace_distance <= 1e-12)
