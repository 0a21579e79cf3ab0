"""The one reader of the library's ``.npy``/``.npz`` files (``linattn._arrayfiles``) behind every loader:
``diagnostics.load_checkpoints``, ``validation.Result.load`` and ``ExperimentData.load``. Every malformed file is
one ``ValueError`` naming the file — a cut ``.npy`` header raised ``tokenize.TokenError`` from numpy's header parser
in both loaders before. Property tests (hypothesis): random truncation, random bytes, a changed byte, a header
length that cuts the header, each in an ``.npy`` file and inside an ``.npz`` member."""
import io
import struct
import zipfile

import numpy as np
import pytest

import diagnostics
import validation

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _cut_header(raw, length):
    """An ``.npy`` whose header-length field says ``length``: numpy reads a header cut mid-dict."""
    return raw[:8] + struct.pack("<H", length) + raw[10:]


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)


def _loaders(tmp_path):
    """``(name, write(bytes) -> path, load(path))`` of every loader of array files, with a valid file's bytes."""
    result = validation.Result("x", "quick", {"a": 1}, {"y": np.arange(6.0)}, {"m": 2})
    good_result = result.save(str(tmp_path / "good.npz"))
    weights = _npy_bytes(np.arange(12.0).reshape(3, 4))
    out = []

    def checkpoint(suffix):
        def write(raw):
            path = tmp_path / f"step_1{suffix}"
            if suffix == ".npz":
                _zip(path, {"W.npy": raw})
            else:
                path.write_bytes(raw)
            return path
        return write

    def result_member(raw):             # the damaged bytes as the member holding the arrays of a result file
        path = tmp_path / "r.npz"
        with zipfile.ZipFile(good_result) as zf:
            members = {i.filename: zf.read(i) for i in zf.infolist()}
        _zip(path, {**members, "y.npy": raw})
        return path

    out.append(("load_checkpoints .npy", checkpoint(".npy"), lambda p: diagnostics.load_checkpoints([str(p)]),
                weights))
    out.append(("load_checkpoints .npz member", checkpoint(".npz"), lambda p: diagnostics.load_checkpoints([str(p)]),
                weights))
    out.append(("Result.load member", result_member, lambda p: validation.Result.load(str(p)),
                _npy_bytes(np.arange(6.0))))
    with open(good_result, "rb") as fh:
        whole = fh.read()

    def result_file(raw):
        path = tmp_path / "whole.npz"
        path.write_bytes(raw)
        return path

    out.append(("Result.load file", result_file, lambda p: validation.Result.load(str(p)), whole))
    return out


def _assert_value_or_named_error(load, path):
    try:
        load(path)
    except ValueError as err:
        assert repr(str(path)) in str(err) and "\n" not in str(err), str(err)


@pytest.mark.parametrize("length", [1, 5, 20, 40])
def test_a_cut_npy_header_is_a_value_error_naming_the_file(tmp_path, length):
    """``tokenize.TokenError: ('EOF in multi-line statement', (2, 0))`` from both loaders before."""
    for name, write, load, raw in _loaders(tmp_path)[:3]:
        path = write(_cut_header(raw, length))
        with pytest.raises(ValueError, match="has no readable .npy header") as err:
            load(path)
        assert repr(str(path)) in str(err.value), name


@pytest.fixture(scope="module")
def loaders(tmp_path_factory):
    return _loaders(tmp_path_factory.mktemp("arrayfiles"))


@given(which=st.integers(0, 3), how=st.sampled_from(["cut", "bytes", "flip"]), at=st.floats(0.0, 1.0),
       junk=st.binary(max_size=400))
def test_a_malformed_file_is_a_value_error_naming_it(loaders, which, how, at, junk):
    """Property: a valid file (or ``.npz`` member) cut at a random length, replaced by random bytes, or with one byte
    changed: each loader returns (a changed data byte is a number like any other) or raises a ValueError naming the
    file — never another exception."""
    name, write, load, raw = loaders[which]
    if how == "cut":
        damaged = raw[:int(at * len(raw))]
    elif how == "bytes":
        damaged = junk
    else:
        i = min(int(at * len(raw)), len(raw) - 1)
        damaged = raw[:i] + bytes([raw[i] ^ 0xFF]) + raw[i + 1:]
    _assert_value_or_named_error(load, write(damaged))


@given(which=st.integers(0, 2), length=st.integers(0, 130))
def test_a_header_length_that_cuts_the_header_is_a_value_error_naming_the_file(loaders, which, length):
    """Property: an ``.npy`` (a file, or a member of an ``.npz``) whose header-length field cuts its 118-byte header
    anywhere (or overruns it): a ValueError naming the file, or the array when the header still parses."""
    name, write, load, raw = loaders[which]
    _assert_value_or_named_error(load, write(_cut_header(raw, length)))


def test_experiment_data_load_reads_through_the_same_path(tmp_path):
    """``ExperimentData.load`` (a data class's own file) refuses a cut header the same way."""
    data_class = validation.experiments.get("spectra").data_class
    path = tmp_path / "d.npz"
    _zip(path, {"x.npy": _cut_header(_npy_bytes(np.ones(3)), 7)})
    with pytest.raises(ValueError, match=rf"path '{path}' is not .*has no readable .npy header"):
        data_class.load(str(path))
