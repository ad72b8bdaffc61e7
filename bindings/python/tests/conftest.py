"""Shared pieces of the binding's tests. Run from a checkout: the package is
imported from bindings/python (unless POLYATTN_TEST_INSTALLED=1, which tests an
installed copy found on sys.path), the library as polyattn.capi describes
(POLYATTN_LIB overrides). Each context asks for the backend its arrays live on, so
a POLYATTN_BACKEND override in the environment is removed for the tests."""

import os
import sys

import numpy as np
import pytest

os.environ.pop("POLYATTN_BACKEND", None)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if os.environ.get("POLYATTN_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.dirname(HERE))


def pytest_report_header(config):
    import polyattn
    try:
        return "polyattn %s from %s; library %s" % (polyattn.version(), polyattn.__file__,
                                                   polyattn.library_path())
    except OSError as e:
        return "polyattn: library not loadable: %s" % e


@pytest.fixture
def rng(request):
    # A fresh, reproducible stream per test (its name seeds it; POLYATTN_TEST_SEED=n
    # draws another set).
    import zlib
    extra = os.environ.get("POLYATTN_TEST_SEED", "")
    return np.random.default_rng(zlib.crc32((request.node.nodeid + extra).encode()))


def randn(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def make_qkv(rng, dtype, B, Sq, Sk, Hq, Hkv, D, Dv=None, layout="bshd"):
    """q [B, Sq, Hq, D], k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv] in one of the layouts:
    'bshd' contiguous; 'bhsd' views of [B, H, S, D] storage; 'packed' views of one
    [B, S, 3, H, D] array (needs Sq == Sk, Hq == Hkv, D == Dv)."""
    Dv = Dv or D
    if layout == "bshd":
        return (randn(rng, (B, Sq, Hq, D), dtype), randn(rng, (B, Sk, Hkv, D), dtype),
                randn(rng, (B, Sk, Hkv, Dv), dtype))
    if layout == "bhsd":
        return (randn(rng, (B, Hq, Sq, D), dtype).transpose(0, 2, 1, 3),
                randn(rng, (B, Hkv, Sk, D), dtype).transpose(0, 2, 1, 3),
                randn(rng, (B, Hkv, Sk, Dv), dtype).transpose(0, 2, 1, 3))
    if layout == "packed":
        assert Sq == Sk and Hq == Hkv and D == Dv
        qkv = randn(rng, (B, Sq, 3, Hq, D), dtype)
        return qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    raise ValueError(layout)
