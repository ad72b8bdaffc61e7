"""polyattn: attention through polyattn's C library, FlashAttention's interface.

    import polyattn
    out = polyattn.flash_attn_func(q, k, v, causal=True)

q, k, v: NumPy float32/float16 arrays (CPU backend), PyTorch tensors (CPU, or CUDA
used in place on the current stream; autograd and torch.compile work through the
custom ops torch.ops.polyattn.fwd/bwd), or any object with __dlpack__. No compiled
extension: ctypes over libpolyattn (polyattn.capi), found as capi's docstring and
the README describe (POLYATTN_LIB overrides).
"""

from . import capi
from ._api import (backward, flash_attn_backward, flash_attn_func, flash_attn_varlen_func,
                   flash_attn_with_kvcache, forward)
from .capi import PolyattnError

__version__ = "0.1.0"

__all__ = ["flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache",
           "flash_attn_backward", "forward", "backward", "load_library", "library_path",
           "backends", "version", "PolyattnError", "capi"]


def load_library(path=None):
    """Load libpolyattn now (from `path`, a file or directory, if given) and return
    the capi.Library; otherwise it loads on first use."""
    from ._core import library
    return library(path)


def library_path():
    """The file of the libpolyattn in use (loading it if needed)."""
    return load_library().path


def version():
    """The loaded library's version string, "major.minor.patch"."""
    return load_library().version_str()


def backends():
    """Every backend the library knows: dicts with name, built, usable, device_name,
    reason (why not usable), module_path."""
    return load_library().backend_list()
