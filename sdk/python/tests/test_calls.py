"""Ops called from Python on NumPy arrays: results against NumPy, every element type in and
out, the argument kinds, cores, and what is refused before anything runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

from neuron_customop_host import custom_op
from neuron_customop_host.errors import MisuseError
from neuron_customop_host.library import BFLOAT16

# c10::ScalarType codes of the API's element types.
CODES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6, "bfloat16": 15}


def test_relu_forward_and_backward_match_numpy(built) -> None:
    with built("relu") as lib:
        x = (np.arange(3000, dtype=np.float32) - 1493.5).reshape(60, 50)
        g = np.linspace(-1, 1, 3000, dtype=np.float32).reshape(60, 50)
        np.testing.assert_array_equal(lib.relu_forward(x), np.maximum(x, 0))
        np.testing.assert_array_equal(lib.relu_backward(g, x), np.where(x > 0, g, 0))
        assert lib.last_stats["per_core"][0]["translations"] > 0


def test_non_contiguous_inputs_are_made_contiguous(built) -> None:
    with built("relu") as lib:
        x = (np.arange(60 * 50, dtype=np.float32) - 1500).reshape(60, 50)
        for view in (x.T, x[::2, ::3], np.asfortranarray(x)):
            np.testing.assert_array_equal(lib.relu_forward(view), np.maximum(view, 0))


@pytest.mark.parametrize("name", CODES)
def test_every_element_type_goes_in_and_comes_out(built, name: str) -> None:
    with built("ops") as lib:
        values = (np.arange(24) % 50 - 20).reshape(4, 6)
        if name == "bfloat16":  # bfloat16 travels as its bit patterns (uint16)
            a = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            b = np.full_like(a, 0x3F80)  # 1.0
        else:
            a = values.astype(name) if name != "uint8" else (values + 20).astype(name)
            b = np.ones_like(a)
        # op 19: mul(a, b), in the input's type, returned in it.
        out = lib.elementwise(a, b, 0, 0, 19, 0, CODES[name])
        if name != "bfloat16":
            assert out.dtype == a.dtype and out.shape == a.shape
            np.testing.assert_array_equal(out, a * b)
            return
        # ml_dtypes' bfloat16 when it is installed, else the bit patterns.
        assert out.dtype == (BFLOAT16 if BFLOAT16 is not None else np.uint16) and out.shape == a.shape
        np.testing.assert_array_equal(out.view(np.uint16), a)
        if BFLOAT16 is not None:
            again = lib.elementwise(a.view(BFLOAT16), b.view(BFLOAT16), 0, 0, 19, 0, CODES[name])
            np.testing.assert_array_equal(again.view(np.uint16), a)


def test_without_ml_dtypes_bfloat16_comes_back_as_its_bits(built, build_dir) -> None:
    built("ops").close()
    script = (
        "import sys, numpy as np\n"
        "sys.modules['ml_dtypes'] = None\n"
        "from neuron_customop_host import load_library\n"
        "a = np.array([[0x3F80, 0xC000]], np.uint16)\n"
        "out = load_library(sys.argv[1]).elementwise(a, a, 0, 0, 19, 0, 15)\n"
        "print(out.dtype, out.tolist())\n"
    )
    p = subprocess.run([sys.executable, "-c", script, str(build_dir / "libops.so")], capture_output=True, text=True)
    assert p.stdout == "uint16 [[16256, 16512]]\n", p.stderr


def test_int_double_and_scalar_arguments(built) -> None:
    with built("misc") as lib:
        x = np.linspace(-3, 3, 3000, dtype=np.float32).reshape(60, 50)
        np.testing.assert_array_equal(lib.scale(60, 50, x, 0.5), x * np.float32(0.5))
        np.testing.assert_array_equal(lib.scale(np.int64(60), 50, x, 2), x * np.float32(2))
        with pytest.raises(TypeError, match="argument 0 takes an int"):
            lib.scale(60.0, 50, x, 0.5)
        with pytest.raises(TypeError, match="argument 3 takes a float"):
            lib.scale(60, 50, x, "0.5")
        with pytest.raises(TypeError, match="not bool"):
            lib.scale(True, 50, x, 0.5)
    with built("ops") as lib:
        a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
        # op 16: add(a, s, alpha t): an integral Scalar, then a float one on a float tensor.
        np.testing.assert_array_equal(lib.elementwise(a, a, 3, 2, 16, 0, CODES["int32"]), a + 6)
        f = a.astype(np.float32)
        np.testing.assert_array_equal(lib.elementwise(f, f, 0.5, 2, 16, 0, CODES["float32"]), f + 1)


@pytest.mark.parametrize("cores", [2, 8])
def test_multicore_on_2_and_8_cores(built, cores: int) -> None:
    x = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
    with built("relu_tcm", cores=cores) as lib, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        np.testing.assert_array_equal(lib.relu_multicore(x), np.maximum(x, 0))
        assert lib.last_stats["cores"] == cores and len(lib.last_stats["per_core"]) == cores
    # The device builds an op for 1 core or 8: a run on 2 says so.
    assert ["device-cores" in str(w.message) for w in said] == ([True] if cores == 2 else [])
    with built("relu_tcm", multicore=True) as lib:
        assert lib.cores == 8


def test_get_cpu_count_is_8_on_one_core_as_on_the_device(built) -> None:
    x = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
    with built("relu_tcm") as lib, pytest.raises(MisuseError, match="output-unwritten") as e:
        lib.relu_multicore(x)
    assert e.value.reports[0]["index"] == "375..3001"  # an eighth written, as on the device


def test_arrays_in_the_librarys_memory_are_used_in_place(built) -> None:
    with built("relu") as lib:
        e = lib.empty((60, 50), np.float32)
        e[:] = np.linspace(-1, 1, 3000, dtype=np.float32).reshape(60, 50)
        np.testing.assert_array_equal(lib.relu_forward(e), np.maximum(e, 0))
        e[0, 0] = 5.0  # written in place: the next call sees it
        assert lib.relu_forward(e)[0, 0] == 5.0


def test_what_is_refused_before_anything_runs(built, build_dir) -> None:
    with built("relu") as lib:
        x = np.ones((2, 3), np.float32)
        with pytest.raises(TypeError, match="takes 1 arguments"):
            lib.relu_forward(x, x)
        with pytest.raises(TypeError, match="give a NumPy array, not list"):
            lib.relu_forward([1.0, 2.0])
        with pytest.raises(TypeError, match="float64 are not an API type"):
            lib.relu_forward(np.ones(3))
        with pytest.raises(ValueError, match="past a tensor's limits"):
            lib.relu_forward(np.ones((1,) * 9, np.float32))
        with pytest.raises(AttributeError, match="no op 'relu_sideways'"):
            lib.relu_sideways(x)
        assert lib.server_pids() == [], "nothing ran, so no server started"
    with pytest.raises(ValueError, match="cores=9"):
        custom_op.load_library(build_dir / "librelu.so", cores=9)
    with pytest.raises(ValueError, match="'builtin'"):
        custom_op.load("builtin", ["a.cpp"], ["b.cpp"])


def test_ops_know_their_kernels_parameter_names_unless_the_program_is_stripped(built, build_dir, tmp_path) -> None:
    with built("misc") as lib:
        assert lib.ops["scale"].names == ["rows", "cols", "x", "factor"]
        assert "scale(rows: int, cols: int, x: tensor, factor: double)" in repr(lib.ops["scale"])
    stripped = tmp_path / "libmisc.so"
    shutil.copy(build_dir / "libmisc.so", stripped)
    subprocess.run(["strip", "--strip-debug", stripped], check=True)
    with custom_op.load_library(stripped) as lib:
        assert lib.ops["scale"].names is None
        assert lib.ops["scale"].params == ["int", "int", "tensor", "double"]
        assert lib.scale(2, 3, np.ones((2, 3), np.float32), 0.5).tolist() == [[0.5] * 3] * 2


SHAPE_COUNTING = """#include <stdio.h>
#include <stdlib.h>
#include <torch/torch.h>
#include "torchneuron/register.h"
// Appends a line to $NT_SHAPE_LOG each time it runs, and prints one if asked (argument 2).
torch::Tensor twice_shape(const torch::Tensor &x, int64_t noisy)
{
    FILE *f = fopen(getenv("NT_SHAPE_LOG"), "a");
    fputs("ran\\n", f);
    fclose(f);
    if (noisy)
        printf("shape of %lld\\n", (long long)x.numel());
    return torch::zeros(x.sizes(), torch::kFloat);
}
NEURON_LIBRARY(counting, m) { m.def("twice", &twice_shape, "twice"); }
"""

KERNEL_TWICE = """#include <torch/torch.h>
torch::Tensor twice(const torch::Tensor &x, int noisy)
{
    (void)noisy;
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    auto i = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t k = 0; k < x.size(0); ++k)
        o[k] = 2 * i[k];
    return out;
}
"""


def test_a_clean_shape_function_runs_once_per_signature(tmp_path, monkeypatch, capfd) -> None:
    log = tmp_path / "shape.log"
    monkeypatch.setenv("NT_SHAPE_LOG", str(log))
    (tmp_path / "shape.cpp").write_text(SHAPE_COUNTING)
    (tmp_path / "twice.cpp").write_text(KERNEL_TWICE)
    with custom_op.load("counting", [tmp_path / "twice.cpp"], [tmp_path / "shape.cpp"], tmp_path) as lib:
        x = np.arange(4, dtype=np.float32)
        for _ in range(3):
            assert lib.twice(x, 0).tolist() == [0, 2, 4, 6]
        assert log.read_text() == "ran\n", "the same signature again: the kept result"
        lib.twice(np.arange(5, dtype=np.float32), 0)
        assert log.read_text() == "ran\n" * 2, "another shape: run again"
        capfd.readouterr()
        for _ in range(2):
            lib.twice(x, 1)
        assert capfd.readouterr().out == "shape of 4\n" * 2, "one that prints runs every time"
        assert log.read_text() == "ran\n" * 4
