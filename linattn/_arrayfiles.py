"""Reading ``.npy`` and ``.npz`` files handed to the library: one path for every loader (checkpoints, result files,
the result a store keeps).

A file is read in two steps. First its claims, without decompressing or allocating anything: the sizes a zip
declares for its members and the shape and dtype each ``.npy`` header states (:func:`claims`); a header that numpy
cannot parse, an object array (a pickle) or a member that is not an ``.npy`` array is refused there. Then, after the
caller has checked the claimed sizes against the memory limit, the arrays (:func:`read`): a member holding fewer bytes
than its header claims is refused before numpy allocates the claim. Whatever goes wrong in either step — numpy's
header parser alone raises ``ValueError``, ``SyntaxError`` or ``tokenize.TokenError`` for a damaged header,
``zipfile`` and ``zlib`` their own errors for damaged archives — leaves as one ``ValueError`` naming the file and
saying what it is not.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass

import numpy as np

from . import _check as check


@dataclass(frozen=True)
class Member:
    """What one array of a file claims: its member name (``""`` for an ``.npy`` file), shape and dtype (so
    :attr:`nbytes` of data), and the bytes of data the file holds for it (:attr:`held`)."""

    name: str
    shape: tuple
    dtype: np.dtype
    held: int

    @property
    def elements(self) -> float:
        return float(np.prod(self.shape, dtype=float))

    @property
    def nbytes(self) -> float:
        return self.elements * self.dtype.itemsize


class _Refused(ValueError):
    """A reason of this module's own (printed as it is, without its type)."""


def _header(f, member):
    """``(shape, dtype, data offset)`` of the ``.npy`` stream ``f``; a ValueError naming ``member`` otherwise."""
    label = f"member {member!r}" if member else "the file"
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:   # 3.0: structured arrays with unicode field names, never arrays of numbers
            raise _Refused(f"{label} has .npy format version {version}, not 1.0 or 2.0")
        offset = f.tell()
    except _Refused:
        raise
    except Exception as err:   # numpy's parser: ValueError, SyntaxError, tokenize.TokenError, UnicodeError, …
        raise _Refused(f"{label} has no readable .npy header ({type(err).__name__}: {_line(err)})") from None
    if dtype.hasobject:
        raise _Refused(f"{label} holds an object array (pickles are refused)")
    return tuple(int(n) for n in shape), dtype, offset


def _line(err):
    """An exception's message as one short line."""
    text = " ".join(str(err).split())
    return text if len(text) <= 200 else text[:200] + "…"


def claims(path, where, what, kind):
    """The arrays a ``.npy`` or ``.npz`` file claims, read from its headers only (nothing decompressed or
    allocated); the sizes a zip declares for its members are checked against the memory limit first (a zip bomb
    declares them too).

    Parameters
    ----------
    path : str
    where : str
        How the messages name the file (``"path '/x/r.npz'"``).
    what : str
        What the file should be (``"a result file written by Result.save"``).
    kind : {"npy", "npz"}
        One array in ``.npy`` format, or a zip of ``.npy`` members.

    Returns
    -------
    list of Member

    Raises
    ------
    ValueError
        ``"{where} is not {what}: …"`` for a file that is not one (damaged, truncated, random bytes, an unreadable
        header, a member that is not an ``.npy`` array, an object array); ``"{where} too large: …"`` when the
        sizes its zip declares exceed the memory limit.
    """
    try:
        if kind == "npy":
            with open(path, "rb") as f:
                shape, dtype, offset = _header(f, "")
            return [Member("", shape, dtype, os.path.getsize(path) - offset)]
        if not zipfile.is_zipfile(path):
            raise _Refused("not a zip archive")
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except Exception as err:  # OSError, zipfile.BadZipFile, EOFError, struct.error, …
        raise ValueError(f"{where} is not {what}: {_reason(err)}") from None
    check.memory(float(sum(info.file_size for info in infos)),
                 f"its {len(infos)} members, uncompressed (sizes declared by the zip)", where)
    found = []
    try:
        with zipfile.ZipFile(path) as zf:
            for info in infos:
                if not info.filename.endswith(".npy"):
                    raise _Refused(f"member {info.filename!r} is not an .npy array")
                with zf.open(info) as f:
                    shape, dtype, offset = _header(f, info.filename)
                found.append(Member(info.filename, shape, dtype, info.file_size - offset))
    except Exception as err:  # also zlib.error, NotImplementedError (a compression zipfile lacks), …
        raise ValueError(f"{where} is not {what}: {_reason(err)}") from None
    return found


def held(members, where, what):
    """Refuse a member whose header claims more data than the file holds for it (``numpy.load`` would allocate the
    claim before finding the data short): ``"{where} is not {what}: …"``.

    Parameters
    ----------
    members : list of Member
    where, what : str
        As :func:`claims`.
    """
    for m in members:
        if m.nbytes > m.held:
            label = f"member {m.name!r}" if m.name else "its .npy header"
            raise ValueError(f"{where} is not {what}: {label} claims {m.nbytes:.6g} bytes of data but "
                             f"{'holds' if m.name else 'the file holds'} {m.held}")


def _reason(err):
    """The message of one of this module's own ValueErrors as it is; another exception with its type."""
    if isinstance(err, _Refused):
        return _line(err)
    return f"{type(err).__name__}: {_line(err)}"


def read(path, where, what, members=None):
    """The arrays of a ``.npy`` (as ``{"": array}``) or ``.npz`` file, read with ``allow_pickle=False``. Call
    :func:`claims` first and check the sizes it returns against the memory limit: this reads what the headers say.

    Parameters
    ----------
    path, where, what : str
        As :func:`claims` (its ``kind`` from the suffix when ``members`` is omitted).
    members : list of Member, optional
        What :func:`claims` returned (read again when omitted).

    Returns
    -------
    dict of str to ndarray
        By member name without ``.npy`` (``""`` for an ``.npy`` file).

    Raises
    ------
    ValueError
        ``"{where} is not {what}: …"`` for a member that holds fewer bytes than its header claims, and for anything
        numpy, zipfile or zlib raise while reading.
    """
    if members is None:
        members = claims(path, where, what, "npz" if path.endswith(".npz") else "npy")
    held(members, where, what)
    try:
        if len(members) == 1 and members[0].name == "":
            return {"": np.asarray(np.load(path, allow_pickle=False))}
        out = {}
        with zipfile.ZipFile(path) as zf:
            for m in members:
                with zf.open(m.name) as f:
                    out[m.name[:-len(".npy")]] = np.lib.format.read_array(f, allow_pickle=False)
        return out
    except Exception as err:  # a member damaged after its header: zlib.error, BadZipFile (CRC), EOFError, …
        raise ValueError(f"{where} is not {what}: {type(err).__name__}: {_line(err)}") from None
