"""Shared fixtures.

Every test sees the same memory limit (``LINATTN_MEMORY_LIMIT`` = 16 GiB) whatever the machine: the memory guards
refuse work beyond 80 % of the physical memory by default, so without this a size refused on a 24 GiB machine is
accepted on a 128 GiB one (and the test then meets another check, or runs for hours). A test that needs another limit
sets its own with ``monkeypatch``.
"""
import os
import pathlib

import numpy as np
import pytest

import linattn

#: the memory limit every test runs under (bytes)
TEST_MEMORY_LIMIT = 16 << 30


def pytest_configure(config):
    """Before any fixture (module-scoped ones too) and in every xdist worker. Also the hypothesis profiles of the
    property tests: ``default`` (``make test``: few examples, derandomized, so a run is reproducible and short) and
    ``matrix`` (``make test-matrix``: ten times the examples, random), chosen by ``LINATTN_HYPOTHESIS_PROFILE``."""
    os.environ["LINATTN_MEMORY_LIMIT"] = str(TEST_MEMORY_LIMIT)
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    settings.register_profile("default", max_examples=25, derandomize=True, **common)
    settings.register_profile("matrix", max_examples=250, **common)
    settings.load_profile(os.environ.get("LINATTN_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


@pytest.fixture
def two_gib_memory_limit(monkeypatch):
    """A 2 GiB memory limit instead of TEST_MEMORY_LIMIT: the memory guards of the Markov-chain task, its bottleneck
    and the minimal model checked where a small machine meets them."""
    monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(2**31))


def pytest_sessionstart(session):
    """Under the test matrix (``LINATTN_EXPECT_INSTALLED=1``, noxfile.py) the library must be the installed wheel,
    not the source tree beside the tests."""
    if os.environ.get("LINATTN_EXPECT_INSTALLED") == "1":
        tree = pathlib.Path(__file__).resolve().parents[1] / "linattn"
        where = pathlib.Path(linattn.__file__).resolve()
        if where.parent == tree:
            raise pytest.UsageError(f"linattn was imported from the source tree ({where}), not the installed wheel")
