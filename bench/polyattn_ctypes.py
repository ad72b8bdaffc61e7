"""polyattn_ctypes.py -- a minimal ctypes binding of polyattn's C API (forward only).

Mirrors api/include/polyattn.h exactly: polyattn_context_desc, polyattn_tensor,
polyattn_params and polyattn_backend_info as ctypes.Structure (same field order,
types and reserved arrays; C enums are `int`). No dependency beyond the standard
library, so the struct mirrors can be checked on a machine without torch or a GPU
(compare_torch.py --selftest-cpu).

Library path: load(path) with path=None resolves, in order, env POLYATTN_LIB,
build/lib/libpolyattn.so, .devkit/lib/libpolyattn.so (relative to the repo root,
the parent of this file's directory). The GPU backend modules (libpolyattn-cuda.so)
are found by the library itself next to the .so it was loaded from.
"""

import ctypes
import os

# ------------------------------------------------------------------ constants

POLYATTN_MAX_DIMS = 4
POLYATTN_MAX_HEAD_DIM = 256

# polyattn_status
STATUS_NAMES = [
    "POLYATTN_OK",
    "POLYATTN_ERR_NULL_ARGUMENT",
    "POLYATTN_ERR_INVALID_VALUE",
    "POLYATTN_ERR_SHAPE",
    "POLYATTN_ERR_HEAD_DIM",
    "POLYATTN_ERR_HEADS",
    "POLYATTN_ERR_DTYPE",
    "POLYATTN_ERR_STRIDE",
    "POLYATTN_ERR_BOUNDS",
    "POLYATTN_ERR_SEQLENS",
    "POLYATTN_ERR_OVERFLOW",
    "POLYATTN_ERR_UNSUPPORTED",
    "POLYATTN_ERR_OUT_OF_MEMORY",
    "POLYATTN_ERR_WORKSPACE",
    "POLYATTN_ERR_BACKEND",
    "POLYATTN_ERR_DEVICE",
    "POLYATTN_ERR_CONTEXT",
    "POLYATTN_ERR_ABI",
    "POLYATTN_ERR_INTERNAL",
]
POLYATTN_OK = 0
for _i, _n in enumerate(STATUS_NAMES):
    globals()[_n] = _i

# polyattn_backend_kind
BACKEND_AUTO = 0
BACKEND_CPU = 1
BACKEND_CUDA = 2
BACKEND_HIP = 3
BACKEND_VULKAN = 4

# polyattn_memory_kind
MEMORY_HOST = 0
MEMORY_CUDA_DEVICE = 1
MEMORY_HIP_DEVICE = 2
MEMORY_VK_BUFFER = 3

# polyattn_dtype
DTYPE_F32 = 0
DTYPE_F16 = 1
DTYPE_BF16 = 2
DTYPE_FP8_E4M3 = 3
DTYPE_I32 = 4
DTYPE_U8 = 5
DTYPE_SIZE = {DTYPE_F32: 4, DTYPE_F16: 2, DTYPE_BF16: 2, DTYPE_FP8_E4M3: 1,
              DTYPE_I32: 4, DTYPE_U8: 1}

# polyattn_sparsity
SPARSITY_NONE = 0
SPARSITY_BLOCK = 1
SPARSITY_AUTO_BLOCK = 2
SPARSITY_NM_2_4 = 3

_enum = ctypes.c_int  # C enums are int on every ABI polyattn targets

# -------------------------------------------------------------------- structs


class polyattn_backend_info(ctypes.Structure):
    _fields_ = [
        ("kind", _enum),
        ("name", ctypes.c_char_p),
        ("module_path", ctypes.c_char_p),
        ("built", ctypes.c_int),
        ("usable", ctypes.c_int),
        ("score", ctypes.c_int),
        ("device_count", ctypes.c_int),
        ("device_name", ctypes.c_char_p),
        ("reason", ctypes.c_char_p),
    ]


class polyattn_context_desc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", _enum),
        ("device", ctypes.c_int32),
        ("native_stream", ctypes.c_void_p),
        ("num_threads", ctypes.c_int32),
        ("reserved", ctypes.c_uint32 * 8),
    ]


class polyattn_tensor(ctypes.Structure):
    _fields_ = [
        ("buffer", ctypes.c_void_p),  # polyattn_buffer *
        ("offset", ctypes.c_size_t),  # bytes
        ("dtype", _enum),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * POLYATTN_MAX_DIMS),
        ("strides", ctypes.c_int64 * POLYATTN_MAX_DIMS),  # elements
    ]


_tensor_p = ctypes.POINTER(polyattn_tensor)


class polyattn_params(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("scale", ctypes.c_float),
        ("causal", ctypes.c_int32),
        ("window_left", ctypes.c_int32),
        ("window_right", ctypes.c_int32),
        ("softcap", ctypes.c_float),
        ("alibi_slopes", _tensor_p),
        ("cu_seqlens_q", _tensor_p),
        ("cu_seqlens_k", _tensor_p),
        ("max_seqlen_q", ctypes.c_int32),
        ("max_seqlen_k", ctypes.c_int32),
        ("seqused_k", _tensor_p),
        ("sparsity", _enum),
        ("block_mask", _tensor_p),
        ("block_q", ctypes.c_int32),
        ("block_k", ctypes.c_int32),
        ("block_threshold", ctypes.c_float),
        ("auto_density_cutoff", ctypes.c_float),
        ("block_mask_out", _tensor_p),
        ("deterministic", ctypes.c_int32),
        ("reserved", ctypes.c_uint32 * 16),
    ]


# Layout of the C structs as compiled by gcc on x86-64 Linux (LP64) from
# api/include/polyattn.h; checked by check_layout().
C_LAYOUT = {
    "polyattn_context_desc": (64, {"native_stream": 16, "num_threads": 24, "reserved": 28}),
    "polyattn_tensor": (88, {"dtype": 16, "shape": 24, "strides": 56}),
    "polyattn_params": (176, {"alibi_slopes": 24, "cu_seqlens_q": 32, "max_seqlen_q": 48,
                              "seqused_k": 56, "sparsity": 64, "block_mask": 72,
                              "block_q": 80, "block_threshold": 88,
                              "block_mask_out": 96, "deterministic": 104,
                              "reserved": 108}),
    "polyattn_backend_info": (56, {"name": 8, "built": 24, "reason": 48}),
}


def check_layout():
    """Compare the ctypes mirrors with the C layout (LP64). Returns a list of errors."""
    errs = []
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return ["not an LP64 platform: layout table does not apply"]
    for name, (size, offs) in C_LAYOUT.items():
        cls = globals()[name]
        if ctypes.sizeof(cls) != size:
            errs.append("%s: sizeof %d, C has %d" % (name, ctypes.sizeof(cls), size))
        for f, off in offs.items():
            got = getattr(cls, f).offset
            if got != off:
                errs.append("%s.%s: offset %d, C has %d" % (name, f, got, off))
    return errs


# -------------------------------------------------------------------- library


class PolyattnError(RuntimeError):
    def __init__(self, func, status, message):
        self.func = func
        self.status = status
        self.status_name = (STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES)
                            else "status %d" % status)
        self.message = message
        super().__init__("%s failed: %s: %s" % (func, self.status_name, message))


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_lib_path():
    env = os.environ.get("POLYATTN_LIB")
    if env:
        return env
    root = repo_root()
    for rel in ("build/lib/libpolyattn.so", ".devkit/lib/libpolyattn.so"):
        p = os.path.join(root, rel)
        if os.path.exists(p):
            return p
    return os.path.join(root, "build/lib/libpolyattn.so")


_c = ctypes
_vp = ctypes.c_void_p
_SIGS = {
    # name: (restype, argtypes)
    "polyattn_version": (_c.c_uint, []),
    "polyattn_version_string": (_c.c_char_p, []),
    "polyattn_status_string": (_c.c_char_p, [_enum]),
    "polyattn_backend_name": (_c.c_char_p, [_enum]),
    "polyattn_backends": (_enum, [_c.POINTER(_c.POINTER(polyattn_backend_info)),
                                  _c.POINTER(_c.c_size_t)]),
    "polyattn_context_desc_init": (None, [_c.POINTER(polyattn_context_desc)]),
    "polyattn_context_create": (_enum, [_c.POINTER(polyattn_context_desc), _c.POINTER(_vp)]),
    "polyattn_context_destroy": (None, [_vp]),
    "polyattn_context_backend": (_enum, [_vp]),
    "polyattn_context_device_name": (_c.c_char_p, [_vp]),
    "polyattn_last_error": (_c.c_char_p, [_vp]),
    "polyattn_synchronize": (_enum, [_vp]),
    "polyattn_buffer_alloc": (_enum, [_vp, _c.c_size_t, _c.POINTER(_vp)]),
    "polyattn_buffer_wrap": (_enum, [_vp, _enum, _vp, _c.c_size_t, _c.POINTER(_vp)]),
    "polyattn_buffer_write": (_enum, [_vp, _vp, _c.c_size_t, _vp, _c.c_size_t]),
    "polyattn_buffer_read": (_enum, [_vp, _vp, _c.c_size_t, _vp, _c.c_size_t]),
    "polyattn_buffer_size": (_c.c_size_t, [_vp]),
    "polyattn_buffer_free": (None, [_vp]),
    "polyattn_dtype_size": (_c.c_size_t, [_enum]),
    "polyattn_dtype_name": (_c.c_char_p, [_enum]),
    "polyattn_tensor_contiguous": (None, [_tensor_p, _vp, _c.c_size_t, _enum, _c.c_int32,
                                          _c.POINTER(_c.c_int64)]),
    "polyattn_params_init": (None, [_c.POINTER(polyattn_params)]),
    "polyattn_forward_workspace_size": (_enum, [_vp, _c.POINTER(polyattn_params), _tensor_p,
                                                _tensor_p, _tensor_p, _tensor_p, _tensor_p,
                                                _c.POINTER(_c.c_size_t)]),
    "polyattn_forward": (_enum, [_vp, _c.POINTER(polyattn_params), _tensor_p, _tensor_p,
                                 _tensor_p, _tensor_p, _tensor_p, _vp]),
}


class Library:
    """The loaded libpolyattn.so with typed functions."""

    def __init__(self, path=None):
        self.path = os.path.abspath(path or default_lib_path())
        self.dll = ctypes.CDLL(self.path)
        for name, (res, args) in _SIGS.items():
            fn = getattr(self.dll, name)
            fn.restype = res
            fn.argtypes = args
            setattr(self, name[len("polyattn_"):], fn)

    def version_str(self):
        return self.version_string().decode()

    def backend_list(self):
        lst = ctypes.POINTER(polyattn_backend_info)()
        n = ctypes.c_size_t()
        st = self.backends(ctypes.byref(lst), ctypes.byref(n))
        if st != POLYATTN_OK:
            raise PolyattnError("polyattn_backends", st, _s(self.last_error(None)))
        out = []
        for i in range(n.value):
            b = lst[i]
            out.append(dict(kind=b.kind, name=_s(b.name), module_path=_s(b.module_path),
                            built=b.built, usable=b.usable, score=b.score,
                            device_count=b.device_count, device_name=_s(b.device_name),
                            reason=_s(b.reason)))
        return out

    def context(self, backend=BACKEND_AUTO, device=0, native_stream=None, num_threads=0):
        return Context(self, backend, device, native_stream, num_threads)


def _s(b):
    return b.decode(errors="replace") if b is not None else ""


class Buffer:
    def __init__(self, ctx, handle, nbytes):
        self.ctx = ctx
        self.handle = handle  # c_void_p
        self.nbytes = nbytes

    def free(self):
        if self.handle is not None and self.handle.value:
            self.ctx.lib.buffer_free(self.handle)
        self.handle = None


class Context:
    def __init__(self, lib, backend, device, native_stream, num_threads):
        self.lib = lib
        d = polyattn_context_desc()
        lib.context_desc_init(ctypes.byref(d))
        if d.struct_size != ctypes.sizeof(polyattn_context_desc):
            raise RuntimeError("polyattn_context_desc mirror has size %d, the library's "
                               "init wrote struct_size %d" %
                               (ctypes.sizeof(polyattn_context_desc), d.struct_size))
        d.struct_size = ctypes.sizeof(polyattn_context_desc)
        d.backend = backend
        d.device = device
        d.native_stream = native_stream  # int / None
        d.num_threads = num_threads
        self.desc = d
        h = ctypes.c_void_p()
        st = lib.context_create(ctypes.byref(d), ctypes.byref(h))
        if st != POLYATTN_OK:
            raise PolyattnError("polyattn_context_create", st, _s(lib.last_error(None)))
        self.handle = h

    # -- errors
    def check(self, func, st):
        if st != POLYATTN_OK:
            raise PolyattnError(func, st, _s(self.lib.last_error(self.handle)))

    def backend(self):
        return self.lib.context_backend(self.handle)

    def device_name(self):
        return _s(self.lib.context_device_name(self.handle))

    def synchronize(self):
        self.check("polyattn_synchronize", self.lib.synchronize(self.handle))

    def close(self):
        if self.handle is not None:
            self.lib.context_destroy(self.handle)
            self.handle = None

    # -- buffers
    def wrap(self, kind, ptr, nbytes):
        out = ctypes.c_void_p()
        self.check("polyattn_buffer_wrap",
                   self.lib.buffer_wrap(self.handle, kind, ctypes.c_void_p(ptr), nbytes,
                                        ctypes.byref(out)))
        return Buffer(self, out, nbytes)

    def alloc(self, nbytes):
        out = ctypes.c_void_p()
        self.check("polyattn_buffer_alloc",
                   self.lib.buffer_alloc(self.handle, nbytes, ctypes.byref(out)))
        return Buffer(self, out, nbytes)

    # -- tensors and params
    @staticmethod
    def tensor(buffer, offset, dtype, shape, strides):
        t = polyattn_tensor()
        t.buffer = buffer.handle.value if buffer is not None else None
        t.offset = offset
        t.dtype = dtype
        t.ndim = len(shape)
        for i, (n, s) in enumerate(zip(shape, strides)):
            t.shape[i] = n
            t.strides[i] = s
        return t

    def params(self, **kw):
        p = polyattn_params()
        self.lib.params_init(ctypes.byref(p))
        if p.struct_size != ctypes.sizeof(polyattn_params):
            raise RuntimeError("polyattn_params mirror has size %d, the library's init "
                               "wrote struct_size %d" %
                               (ctypes.sizeof(polyattn_params), p.struct_size))
        p.struct_size = ctypes.sizeof(polyattn_params)
        for k, v in kw.items():
            if not hasattr(p, k):
                raise AttributeError("polyattn_params has no field %r" % k)
            setattr(p, k, v)
        return p

    # -- attention
    def forward_workspace_size(self, params, q, k, v, out, lse=None):
        n = ctypes.c_size_t()
        self.check("polyattn_forward_workspace_size",
                   self.lib.forward_workspace_size(self.handle, ctypes.byref(params),
                                                   ctypes.byref(q), ctypes.byref(k),
                                                   ctypes.byref(v), ctypes.byref(out),
                                                   _ref(lse), ctypes.byref(n)))
        return n.value

    def forward(self, params, q, k, v, out, lse=None, workspace=None):
        self.check("polyattn_forward",
                   self.lib.forward(self.handle, ctypes.byref(params), ctypes.byref(q),
                                    ctypes.byref(k), ctypes.byref(v), ctypes.byref(out),
                                    _ref(lse), workspace.handle if workspace else None))

    def forward_call(self, params, q, k, v, out, lse=None, workspace=None):
        """A no-argument callable running the forward with all ctypes arguments built
        once (for timing loops: only the C call and a status check per call)."""
        fn = self.lib.forward
        args = (self.handle, ctypes.byref(params), ctypes.byref(q), ctypes.byref(k),
                ctypes.byref(v), ctypes.byref(out), _ref(lse),
                workspace.handle if workspace else None)
        keep = (params, q, k, v, out, lse, workspace)  # keep referents alive
        check = self.check

        def call():
            st = fn(*args)
            if st:
                check("polyattn_forward", st)
        call._keep = keep
        return call


def _ref(t):
    return ctypes.byref(t) if t is not None else None
