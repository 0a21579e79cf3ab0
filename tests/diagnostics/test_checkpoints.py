"""Checkpoints and circuits (:func:`diagnostics.load_checkpoints`, :class:`diagnostics.Checkpoints`,
:func:`diagnostics.qk_circuit`, :func:`diagnostics.ov_circuit`): claimed sizes checked before reading,
non-finite weights and unreadable tensors refused by file, circuits that overflow refused by name."""
import io
import tempfile
import zipfile

import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import diagnostics


def _bad_checkpoints():
    d = tempfile.mkdtemp(prefix="checkpoints")
    np.savez(f"{d}/step1.npz", W=np.ones((2, 2)), b=np.ones(2))
    np.savez(f"{d}/step2.npz", W=np.array([[1.0, np.nan], [0.0, 1.0]]), b=np.ones(2))
    return d


def _npy_header(shape):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue()


REFUSED = refusals(name_as_word, [
    # circuits that overflow
    ("qk-circuit", lambda: diagnostics.qk_circuit(np.ones((4, 4)) * 1e200, np.ones((4, 4)) * 1e200), "W_Q"),
    ("ov-circuit", lambda: diagnostics.ov_circuit(np.ones((4, 4)) * 1e200, np.ones((4, 4)) * 1e200), "W_O"),
    ("qk-circuit-memory", lambda: diagnostics.qk_circuit(np.ones((10, 1, 20000)), np.ones((10, 1, 20000))),
     "W_Q"),
    ("checkpoints", lambda: diagnostics.Checkpoints(np.array([0, 1]), {"W": np.ones((3, 2, 2))}), "weights"),
]) + refusals(name_not_within_letters, [
    # accepted nonsense: NaN weights loaded
    ("checkpoints-nan", lambda: diagnostics.load_checkpoints(_bad_checkpoints()), "source"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_checkpoints_claimed_sizes_checked_before_reading(tmp_path, monkeypatch):
    """The sizes the headers claim are checked before numpy allocates them."""
    bomb = tmp_path / "bomb"
    bomb.mkdir()
    with zipfile.ZipFile(bomb / "step_1.npz", "w") as zf:
        zf.writestr("W.npy", _npy_header((10**12,)) + bytes(64))
    with pytest.raises(ValueError, match=r"\bsource\b") as err:
        diagnostics.load_checkpoints(str(bomb))
    assert "MemoryError" not in str(err.value) and "claims" in str(err.value)
    honest = tmp_path / "honest"                  # a complete file, larger than the memory limit once loaded
    honest.mkdir()
    for k in range(2):
        np.save(honest / f"step_{k}.npy", np.zeros(200_000))
    monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(2**20))
    with pytest.raises(ValueError, match=r"\bsource\b.*memory limit"):
        diagnostics.load_checkpoints(str(honest))
    monkeypatch.delenv("LINATTN_MEMORY_LIMIT")
    run = diagnostics.load_checkpoints(str(honest))
    assert run["weight"].shape == (2, 200_000)


def test_circuits_unchanged():
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(2, 6, 4)), rng.normal(size=(2, 6, 4))
    out = diagnostics.qk_circuit(Q, K, heads=2)
    assert np.allclose(out[1, 0], Q[1, :3].T @ K[1, :3]) and out.shape == (2, 2, 4, 4)
    O, V = rng.normal(size=(4, 6)), rng.normal(size=(6, 4))
    assert np.allclose(diagnostics.ov_circuit(O, V, heads=2)[1], O[:, 3:] @ V[3:])


def test_load_checkpoints_keeps_finite_weights_of_a_diverged_run():
    assert diagnostics.load_checkpoints(_bad_checkpoints(), names=["b"]).weights["b"].shape == (2, 2)


def test_checkpoint_steps_and_names_must_be_meaningful(tmp_path):
    np.savez(tmp_path / "snan.npz", W=np.eye(2))
    np.savez(tmp_path / "s1.npz", W=np.eye(2))
    with pytest.raises(ValueError, match="step must be a pattern whose match is a finite number"):
        diagnostics.load_checkpoints(str(tmp_path), step=r"s(.*)")
    with pytest.raises(ValueError, match="names must be a non-empty list"):
        diagnostics.load_checkpoints(str(tmp_path), names=[], step=lambda f: len(f))
    with pytest.raises(ValueError, match=r"names must be distinct entries \('W' is repeated"):   # kept once before
        diagnostics.load_checkpoints(str(tmp_path), names=["W", "W"], step=lambda f: len(f))
    with pytest.raises(ValueError, match="step must be a callable returning a finite number"):
        diagnostics.load_checkpoints(str(tmp_path), step=lambda f: 10**400)


@pytest.mark.filterwarnings("ignore::UserWarning")        # torch's deprecation notes on quantized and complex32
def test_torch_checkpoints_are_read_exactly_or_refused_by_file_and_dtype(tmp_path):
    """bfloat16 and float8 widen exactly to float32, sparse layouts are made dense; quantized and complex32 tensors
    are refused naming the file and the dtype (they raised TypeError); a missing weight name is a ValueError."""
    torch = pytest.importorskip("torch")
    w = torch.tensor([[1.5, -2.25], [3.0, 0.09375]])
    for k, t in enumerate((w.to(torch.bfloat16), w.to(torch.float8_e4m3fn), w.to_sparse(), w.to_sparse_csr())):
        d = tmp_path / f"ok{k}"
        d.mkdir()
        torch.save({"W": t}, d / "step_1.pt")
        assert np.array_equal(diagnostics.load_checkpoints(str(d))["W"][0], w.numpy())
    for k, (t, words) in enumerate(((torch.quantize_per_tensor(w, 0.1, 0, torch.qint8), "quantized tensor of dtype "
                                     "torch.qint8"), (w.to(torch.complex32), "complex, dtype torch.complex32"))):
        d = tmp_path / f"bad{k}"
        d.mkdir()
        torch.save({"W": t}, d / "step_1.pt")
        with pytest.raises(ValueError, match=f"^source must be .*{words}.*step_1.pt"):
            diagnostics.load_checkpoints(str(d))
    with pytest.raises(ValueError, match="^name must be one of the weight names"):
        diagnostics.load_checkpoints(str(tmp_path / "ok0"))["nope"]
