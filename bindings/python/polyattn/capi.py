"""polyattn.capi -- the ctypes mirror of polyattn's C API (api/include/polyattn.h).

The one binding of the library: the friendly functions of the package
(polyattn.flash_attn_func, ...) and bench/compare_torch.py both go through it.
polyattn_context_desc, polyattn_tensor, polyattn_params and polyattn_backend_info
are ctypes.Structure with the header's field order, types and reserved arrays
(C enums are `int`); check_layout() compares them with the C layout. Only the
standard library is needed.

Which libpolyattn is loaded (the first that exists wins; library_candidates()
lists them, load() says which it took):
  1. the `path` argument of load() / Library(path), a file or a directory;
  2. env POLYATTN_LIB (a file or a directory);
  3. the package's own directory: polyattn/libpolyattn.so* or polyattn/lib/ (a
     bundle that ships the library inside the package);
  4. the install prefix: `cmake --install` writes polyattn/_install.py with the
     path from the package to the installed library;
  5. the dynamic loader's search for libpolyattn.so.<SOVERSION> (LD_LIBRARY_PATH,
     the ld.so cache, the standard directories), then ctypes.util.find_library;
  6. a source checkout the package sits in: <repo>/build/lib, <repo>/.devkit/lib.
GPU backend modules (libpolyattn-<name>.so) are found by the library itself, next
to the file it was loaded from and in POLYATTN_BACKEND_PATH.
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
        ("reserved_pad", ctypes.c_uint32),
        ("q_descale", _tensor_p),  # FP8 inputs only: float32 [1] or [batch, heads_kv]
        ("k_descale", _tensor_p),
        ("v_descale", _tensor_p),
        ("reserved", ctypes.c_uint32 * 9),
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
                              "reserved_pad": 108, "q_descale": 112, "v_descale": 128,
                              "reserved": 136}),
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


SOVERSION = 0
_LIB_NAMES = ("libpolyattn.so.%d" % SOVERSION, "libpolyattn.so")


def repo_root():
    """The source checkout this package lies in (bindings/python/polyattn), or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    return root if os.path.exists(os.path.join(root, "api", "include", "polyattn.h")) else None


def _in_dir(d):
    for n in _LIB_NAMES:
        p = os.path.join(d, n)
        if os.path.exists(p):
            return p
    return None


def _file_or_dir(p):
    return _in_dir(p) if os.path.isdir(p) else p


def library_candidates(path=None):
    """[(where, path)] in the order load() tries them (see the module docstring).
    A bare soname (step 5) is left to the dynamic loader to resolve."""
    out = []
    if path:
        out.append(("argument", _file_or_dir(path) or path))
    env = os.environ.get("POLYATTN_LIB")
    if env:
        out.append(("POLYATTN_LIB", _file_or_dir(env) or env))
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (here, os.path.join(here, "lib")):
        p = _in_dir(d)
        if p:
            out.append(("package", p))
    try:
        from . import _install  # written by cmake --install
        d = _install.LIBDIR
        if not os.path.isabs(d):
            d = os.path.normpath(os.path.join(here, d))
        p = _in_dir(d)
        if p:
            out.append(("install prefix", p))
    except ImportError:
        pass
    out.append(("dynamic loader", _LIB_NAMES[0]))
    try:
        import ctypes.util
        found = ctypes.util.find_library("polyattn")
        if found:
            out.append(("ctypes.util.find_library", found))
    except Exception:  # noqa: BLE001 (find_library runs ldconfig/gcc; never fatal)
        pass
    root = repo_root()
    if root:
        for rel in ("build/lib", ".devkit/lib"):
            p = _in_dir(os.path.join(root, rel))
            if p:
                out.append(("source checkout", p))
    return out


def _open(path=None):
    """(CDLL, path, where) of the first candidate that loads. An explicit path or
    POLYATTN_LIB that fails to load is an error, never skipped."""
    tried = []
    for where, p in library_candidates(path):
        try:
            dll = ctypes.CDLL(p)
        except OSError as e:
            if where in ("argument", "POLYATTN_LIB"):
                raise OSError("polyattn: cannot load %s (from %s): %s" % (p, where, e))
            tried.append("%s (%s): %s" % (p, where, e))
            continue
        real = p
        try:  # the file the loader actually mapped, for messages
            fn = dll.polyattn_version
            info = _dladdr(ctypes.cast(fn, ctypes.c_void_p).value)
            if info:
                real = info
        except Exception:  # noqa: BLE001
            pass
        return dll, os.path.abspath(real) if os.path.sep in real else real, where
    raise OSError("polyattn: libpolyattn not found; tried:\n  " + "\n  ".join(tried) +
                  "\nSet POLYATTN_LIB to the library (or its directory), or install it "
                  "(cmake --install) where the dynamic loader finds it.")


def _dladdr(addr):
    class Dl_info(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
    try:
        libc = ctypes.CDLL(None)
        f = libc.dladdr
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_void_p, ctypes.POINTER(Dl_info)]
    f.restype = ctypes.c_int
    info = Dl_info()
    if f(addr, ctypes.byref(info)) and info.dli_fname:
        return info.dli_fname.decode(errors="replace")
    return None


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
    "polyattn_backward_workspace_size": (_enum, [_vp, _c.POINTER(polyattn_params)] +
                                         [_tensor_p] * 9 + [_c.POINTER(_c.c_size_t)]),
    "polyattn_backward": (_enum, [_vp, _c.POINTER(polyattn_params)] + [_tensor_p] * 9 +
                          [_vp]),
}


class Library:
    """The loaded libpolyattn.so with typed functions."""

    def __init__(self, path=None):
        self.dll, self.path, self.found_by = _open(path)
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

    def backward_workspace_size(self, params, q, k, v, out, lse, dout, dq, dk, dv):
        n = ctypes.c_size_t()
        self.check("polyattn_backward_workspace_size",
                   self.lib.backward_workspace_size(
                       self.handle, ctypes.byref(params), *[_ref(t) for t in
                                                            (q, k, v, out, lse, dout, dq,
                                                             dk, dv)], ctypes.byref(n)))
        return n.value

    def backward(self, params, q, k, v, out, lse, dout, dq, dk, dv, workspace=None):
        self.check("polyattn_backward",
                   self.lib.backward(self.handle, ctypes.byref(params),
                                     *[_ref(t) for t in (q, k, v, out, lse, dout, dq, dk,
                                                         dv)],
                                     workspace.handle if workspace else None))

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
