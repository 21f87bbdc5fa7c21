"""Neuron custom C++ operators on a workstation, from Python (docs/customop-python.md):

    from neuron_customop_host import custom_op
    lib = custom_op.load(name="relu", compute_srcs=["relu.cpp"], shape_srcs=["shape.cpp"])
    y = lib.relu_forward(x)              # x a NumPy array; y one too
    y = torch.ops.relu_ops.relu_forward(t)  # when PyTorch is installed

Errors: every one a NeuronCustomOpError, and the built-in class it stands for: before
anything runs ArgumentTypeError (a TypeError), ArgumentValueError (a ValueError),
ArgumentRangeError (an OverflowError), NotFoundError, NotALibraryError, NoSuchOpError,
BuildError (a RuntimeError); from a run MisuseError, CallInProgressError (a call nested in another, from a signal
handler), KernelCrashError, KernelTimeoutError,
RefusedError, HbmFullError, ServerGoneError. Warnings are NeuronCustomOpWarning.
"""

from . import custom_op
from .custom_op import load, load_library
from .errors import (
    ArgumentRangeError,
    ArgumentTypeError,
    ArgumentValueError,
    BuildError,
    CallInProgressError,
    HbmFullError,
    KernelCrashError,
    KernelTimeoutError,
    MisuseError,
    NeuronCustomOpError,
    NeuronCustomOpWarning,
    NoSuchOpError,
    NotALibraryError,
    NotFoundError,
    NotPicklableError,
    RefusedError,
    ServerGoneError,
    ShapeRelationError,
)
from .library import Library, Op, TensorSpec

__all__ = [
    "ArgumentRangeError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "BuildError",
    "CallInProgressError",
    "HbmFullError",
    "KernelCrashError",
    "KernelTimeoutError",
    "Library",
    "MisuseError",
    "NeuronCustomOpError",
    "NeuronCustomOpWarning",
    "NoSuchOpError",
    "NotALibraryError",
    "NotFoundError",
    "NotPicklableError",
    "RefusedError",
    "ServerGoneError",
    "ShapeRelationError",
    "TensorSpec",
    "Op",
    "custom_op",
    "load",
    "load_library",
]
__version__ = "0.1.0"
