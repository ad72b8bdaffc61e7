"""Array adapters: NumPy arrays, PyTorch tensors and any object with __dlpack__
become a View (memory kind, device, address, dtype, shape, strides in elements),
without copying. The View keeps the object (or the DLPack capsule) alive."""

import ctypes

from . import capi

_HOST, _CUDA, _HIP = capi.MEMORY_HOST, capi.MEMORY_CUDA_DEVICE, capi.MEMORY_HIP_DEVICE
# The backend that addresses each memory kind.
BACKEND_OF = {_HOST: capi.BACKEND_CPU, _CUDA: capi.BACKEND_CUDA, _HIP: capi.BACKEND_HIP}
KIND_NAME = {_HOST: "cpu", _CUDA: "cuda", _HIP: "hip"}


class View:
    __slots__ = ("kind", "device", "ptr", "dtype", "shape", "strides", "itemsize", "keep",
                 "name")

    def __init__(self, kind, device, ptr, dtype, shape, strides, keep, name=""):
        self.kind = kind
        self.device = device
        self.ptr = ptr
        self.dtype = dtype
        self.shape = tuple(int(n) for n in shape)
        self.strides = tuple(int(s) for s in strides)
        self.itemsize = capi.DTYPE_SIZE[dtype]
        self.keep = keep
        self.name = name

    def extent(self):
        """(first byte, bytes) of the memory the view can touch, and the byte offset
        of element 0 from that first byte."""
        if any(n == 0 for n in self.shape):
            return self.ptr, 0, 0
        lo = sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        return self.ptr + lo * self.itemsize, (hi - lo + 1) * self.itemsize, -lo * self.itemsize


# ---------------------------------------------------------------------- NumPy

_NP_DTYPES = {"float32": capi.DTYPE_F32, "float16": capi.DTYPE_F16, "int32": capi.DTYPE_I32,
              "uint8": capi.DTYPE_U8, "bool": capi.DTYPE_U8}


def is_numpy(x):
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def from_numpy(a, name=""):
    dt = _NP_DTYPES.get(a.dtype.name)
    if dt is None:
        raise TypeError("%s: NumPy dtype %s is not supported (float32 or float16; "
                        "int32 for sequence lengths, uint8/bool for block masks; bf16 "
                        "through torch or DLPack)" % (name or "array", a.dtype))
    if any(s % a.itemsize for s in a.strides):
        raise ValueError("%s: strides %s are not multiples of the item size" %
                         (name or "array", a.strides))
    ptr = a.__array_interface__["data"][0]
    return View(_HOST, 0, ptr, dt, a.shape, [s // a.itemsize for s in a.strides], a, name)


# -------------------------------------------------------------------- PyTorch


def is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and \
        hasattr(x, "untyped_storage")


_TORCH_DTYPES = None


def from_torch(t, name=""):
    global _TORCH_DTYPES
    import torch
    if _TORCH_DTYPES is None:
        _TORCH_DTYPES = {torch.float32: capi.DTYPE_F32, torch.float16: capi.DTYPE_F16,
                         torch.bfloat16: capi.DTYPE_BF16, torch.int32: capi.DTYPE_I32,
                         torch.uint8: capi.DTYPE_U8, torch.bool: capi.DTYPE_U8}
    dt = _TORCH_DTYPES.get(t.dtype)
    if dt is None:
        raise TypeError("%s: torch dtype %s is not supported (float32, float16, bfloat16; "
                        "int32 for sequence lengths, uint8/bool for block masks)" %
                        (name or "tensor", t.dtype))
    dev = t.device
    if dev.type == "cpu":
        kind, idx = _HOST, 0
    elif dev.type == "cuda":
        kind = _HIP if getattr(torch.version, "hip", None) else _CUDA
        idx = dev.index if dev.index is not None else torch.cuda.current_device()
    else:
        raise TypeError("%s: tensors on %s are not supported (cpu, cuda)" % (name or "tensor",
                                                                            dev))
    return View(kind, idx, t.data_ptr(), dt, t.shape, t.stride(), t, name)


# --------------------------------------------------------------------- DLPack
# dlpack.h v0.8 structs (the ABI every producer of __dlpack__ shares).


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM, _DL_CUDA_MANAGED = 1, 2, 3, 10, 13
_DL_DTYPES = {(2, 32): capi.DTYPE_F32, (2, 16): capi.DTYPE_F16, (4, 16): capi.DTYPE_BF16,
              (0, 32): capi.DTYPE_I32, (1, 8): capi.DTYPE_U8, (6, 8): capi.DTYPE_U8}
# DLPack's stream argument for the legacy default stream (CUDA and ROCm): polyattn
# runs DLPack inputs on that stream (cudaStreamLegacy), so the producer orders its
# work before ours.
DLPACK_LEGACY_STREAM = 1

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def has_dlpack(x):
    return hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")


def from_dlpack(x, name=""):
    dev_type, dev_id = x.__dlpack_device__()
    dev_type = int(dev_type)
    if dev_type in (_DL_CPU, _DL_CUDA_HOST):
        kind, stream = _HOST, None
    elif dev_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        kind, stream = _CUDA, DLPACK_LEGACY_STREAM
    elif dev_type == _DL_ROCM:
        kind, stream = _HIP, DLPACK_LEGACY_STREAM
    else:
        raise TypeError("%s: DLPack device type %d is not supported" % (name or "array",
                                                                       dev_type))
    capsule = x.__dlpack__(stream=stream) if stream is not None else x.__dlpack__()
    # The capsule stays named "dltensor" (unconsumed) and alive in the View: when it
    # is collected, the producer's capsule destructor releases the tensor.
    p = _get_pointer(capsule, b"dltensor")
    t = _DLTensor.from_address(p)
    key = (t.dtype.code, t.dtype.bits)
    if key not in _DL_DTYPES or t.dtype.lanes != 1:
        raise TypeError("%s: DLPack dtype (code %d, bits %d, lanes %d) is not supported" %
                        (name or "array", t.dtype.code, t.dtype.bits, t.dtype.lanes))
    nd = t.ndim
    shape = [t.shape[i] for i in range(nd)]
    if t.strides:
        strides = [t.strides[i] for i in range(nd)]
    else:  # NULL strides: compact row-major
        strides, acc = [0] * nd, 1
        for i in reversed(range(nd)):
            strides[i] = acc
            acc *= shape[i]
    ptr = (t.data or 0) + t.byte_offset
    return View(kind, int(dev_id) if kind != _HOST else 0, ptr, _DL_DTYPES[key], shape,
                strides, (x, capsule), name)


def as_view(x, name=""):
    """A View of NumPy array, torch tensor or __dlpack__ object `x`."""
    if isinstance(x, View):
        return x
    if is_numpy(x):
        return from_numpy(x, name)
    if is_torch(x):
        return from_torch(x, name)
    if has_dlpack(x):
        return from_dlpack(x, name)
    raise TypeError("%s: expected a NumPy array, a torch tensor or an object with "
                    "__dlpack__, got %s" % (name or "argument", type(x).__name__))
