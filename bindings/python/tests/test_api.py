"""Errors, library discovery and the small API."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import make_qkv

import polyattn
from polyattn import capi


def test_struct_layout_matches_c():
    assert capi.check_layout() == []


def test_version_and_backends():
    assert polyattn.version().count(".") == 2
    cpu = [b for b in polyattn.backends() if b["name"] == "cpu"]
    assert cpu and cpu[0]["usable"]


def test_library_error_names_status_and_argument(rng):
    q, k, v = make_qkv(rng, np.float32, 1, 4, 4, 3, 2, 8)  # Hq=3 not a multiple of Hkv=2
    with pytest.raises(polyattn.PolyattnError) as e:
        polyattn.flash_attn_func(q, k, v)
    assert e.value.status == capi.POLYATTN_ERR_HEADS
    assert "POLYATTN_ERR_HEADS" in str(e.value) and e.value.message


def test_bad_inputs(rng):
    q, k, v = make_qkv(rng, np.float32, 1, 4, 4, 2, 2, 8)
    with pytest.raises(TypeError, match="float64"):
        polyattn.flash_attn_func(q.astype(np.float64), k, v)
    with pytest.raises(ValueError, match="dropout"):
        polyattn.flash_attn_func(q, k, v, dropout_p=0.1)
    with pytest.raises(ValueError, match="sparsity"):
        polyattn.flash_attn_func(q, k, v, sparsity="dense-ish")
    with pytest.raises(TypeError):
        polyattn.flash_attn_func([1.0], k, v)
    out = np.broadcast_to(np.zeros(q.shape[-1], np.float32), q.shape)
    with pytest.raises(ValueError, match="read-only"):
        polyattn.forward(q, k, v, out)
    with pytest.raises(polyattn.PolyattnError) as e:  # head dim not contiguous
        polyattn.flash_attn_func(np.asfortranarray(q), k, v)
    assert e.value.status == capi.POLYATTN_ERR_STRIDE


def test_search_order_documented_and_env_wins(tmp_path):
    """POLYATTN_LIB comes first; a wrong one is an error naming it, never skipped."""
    env = dict(os.environ, POLYATTN_LIB=str(tmp_path / "nope.so"))
    code = ("import polyattn, sys\n"
            "try:\n    polyattn.version()\nexcept OSError as e:\n    print(e); sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(polyattn.__file__)))
    assert r.returncode == 3 and "POLYATTN_LIB" in r.stdout, r.stdout + r.stderr
    # a directory works too
    env["POLYATTN_LIB"] = os.path.dirname(polyattn.library_path())
    r = subprocess.run([sys.executable, "-c", "import polyattn; print(polyattn.library_path())"],
                       env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(polyattn.__file__)))
    # the library of that directory (its file name may be the soname or the plain name)
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.strip()) == env["POLYATTN_LIB"], r.stdout
    where = [w for w, _ in capi.library_candidates("/x")]
    assert where[0] == "argument" and where.index("dynamic loader") > 0


def test_workspace_from_the_caller(rng):
    """The torch path's workspace route (a fresh array per call from an allocator) on
    NumPy: the binding must keep the array alive through the call."""
    from polyattn import _core
    q, k, v = make_qkv(rng, np.float32, 1, 64, 64, 4, 2, 32)
    ref, ref_lse = polyattn.flash_attn_func(q, k, v, causal=True, return_lse=True)
    out, lse = np.empty_like(q), np.empty_like(ref_lse)
    sizes = []

    def alloc(n):
        sizes.append(n)
        return np.empty(n, np.uint8)
    for _ in range(3):
        _core.forward(q, k, v, out, lse, _core.Options(causal=True), workspace=alloc)
        assert np.array_equal(out, ref) and np.array_equal(lse, ref_lse)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    _core.backward(q, k, v, out, lse, np.ones_like(out), dq, dk, dv, _core.Options(causal=True),
                   workspace=alloc)
    g = polyattn.flash_attn_backward(np.ones_like(out), q, k, v, out, lse, causal=True)
    assert all(np.array_equal(a, b) for a, b in zip((dq, dk, dv), g))
    assert sizes and all(n > 0 for n in sizes)
