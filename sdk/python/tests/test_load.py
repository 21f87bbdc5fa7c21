"""custom_op.load writes lib<name>.so and compiles nothing when nothing changed;
load_library loads what it built; the package's version is the workspace's."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import neuron_customop_host
from neuron_customop_host import custom_op
from neuron_customop_host.errors import NeuronCustomOpWarning

from .conftest import KERNELS, ROOT


def test_load_builds_once_and_again_only_after_a_change(tmp_path: Path, capsys) -> None:
    src = tmp_path / "relu.cpp"
    shutil.copy(KERNELS / "relu.cpp", src)
    shape = KERNELS / "relu_shape.cpp"
    with custom_op.load("relu", [src], [shape], tmp_path, verbose=True) as lib:
        np.testing.assert_array_equal(lib.relu_forward(np.array([[-1.0, 2.0]], np.float32)), [[0.0, 2.0]])
    built = tmp_path / "librelu.so"
    first = built.stat().st_mtime_ns
    err = capsys.readouterr().err
    assert "building" in err and "librelu.so is not built yet" in err and "out of date" not in err
    custom_op.load("relu", [src], [shape], tmp_path, verbose=True).close()
    assert "up to date" in capsys.readouterr().err and built.stat().st_mtime_ns == first
    custom_op.load("relu", [src], [shape], tmp_path, extra_cflags=["-DUNUSED=1"]).close()
    assert built.stat().st_mtime_ns != first, "new flags build again"
    second = built.stat().st_mtime_ns
    src.write_text(src.read_text() + "\n// changed\n")
    custom_op.load("relu", [src], [shape], tmp_path).close()
    assert built.stat().st_mtime_ns != second, "a changed source builds again"


def test_a_changed_header_builds_again_and_verbose_says_which(tmp_path: Path, capsys) -> None:
    header = tmp_path / "factor.h"
    header.write_text("#define FACTOR 2.0\n")
    src = tmp_path / "scaled.cpp"
    src.write_text(
        '#include <torch/torch.h>\n#include "factor.h"\n'
        "torch::Tensor relu_forward(const torch::Tensor &input) {\n"
        "    torch::Tensor out = torch::zeros(input.sizes(), torch::kFloat);\n"
        "    out.accessor<float, 2>()[0][0] = FACTOR;\n    return out;\n}\n"
        "torch::Tensor relu_backward(const torch::Tensor &g, const torch::Tensor &input) { return relu_forward(g); }\n"
    )
    shape = KERNELS / "relu_shape.cpp"
    x = np.array([[-1.0, 3.0]], np.float32)
    with custom_op.load("scaled", [src], [shape], tmp_path) as lib:
        assert lib.relu_forward(x)[0, 0] == 2.0
    header.write_text("#define FACTOR 5.0\n")
    with custom_op.load("scaled", [src], [shape], tmp_path, verbose=True) as lib:
        assert lib.relu_forward(x)[0, 0] == 5.0
    err = capsys.readouterr().err
    assert f"out of date: {header.resolve()}" in err
    assert not list(tmp_path.glob("*.deps")), "the dependency list is not left behind"


def _factor_kernel(include: str) -> str:
    """A relu_forward whose first element is FACTOR, taken from `include` (C++ lines)."""
    return (
        f"#include <torch/torch.h>\n{include}\n"
        "torch::Tensor relu_forward(const torch::Tensor &input) {\n"
        "    torch::Tensor out = torch::zeros(input.sizes(), torch::kFloat);\n"
        "    out.accessor<float, 2>()[0][0] = FACTOR;\n    return out;\n}\n"
        "torch::Tensor relu_backward(const torch::Tensor &g, const torch::Tensor &input) { return relu_forward(g); }\n"
    )


def _first(name: str, src: Path, build: Path, flags: list[str]) -> float:
    with custom_op.load(name, [src], [KERNELS / "relu_shape.cpp"], build, extra_cflags=flags) as lib:
        return float(lib.relu_forward(np.array([[-1.0, 3.0]], np.float32))[0, 0])


def test_a_header_found_through_a_relative_include_folder_rebuilds(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "helper.h").write_text("#define FACTOR 2.0\n")
    src = tmp_path / "k.cpp"
    src.write_text(_factor_kernel('#include "helper.h"'))
    assert _first("rel", src, tmp_path / "b", ["-Iinc"]) == 2.0
    (tmp_path / "inc" / "helper.h").write_text("#define FACTOR 7.0\n")
    assert _first("rel", src, tmp_path / "b", ["-Iinc"]) == 7.0, "the changed header is seen"


def test_a_new_header_that_shadows_the_one_read_rebuilds(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    (second / "helper.h").write_text("#define FACTOR 2.0\n")
    src = tmp_path / "src" / "k.cpp"
    src.parent.mkdir()
    src.write_text(_factor_kernel('#include "helper.h"'))
    flags = [f"-I{first}", f"-I{second}"]
    assert _first("shadow", src, tmp_path / "b", flags) == 2.0
    (first / "helper.h").write_text("#define FACTOR 3.0\n")
    assert _first("shadow", src, tmp_path / "b", flags) == 3.0, "the header earlier in the search is seen"
    (src.parent / "helper.h").write_text("#define FACTOR 4.0\n")
    assert _first("shadow", src, tmp_path / "b", flags) == 4.0, "the source's own folder comes first"


def test_a_header_that_appears_where_has_include_looked_rebuilds(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    (inc / "cfg").mkdir(parents=True)
    src = tmp_path / "k.cpp"
    src.write_text(_factor_kernel('#if __has_include("cfg/cfg.h")\n#include "cfg/cfg.h"\n#else\n#define FACTOR 1.0\n#endif'))
    assert _first("probe", src, tmp_path / "b", [f"-I{inc}"]) == 1.0
    (inc / "cfg" / "cfg.h").write_text("#define FACTOR 6.0\n")
    assert _first("probe", src, tmp_path / "b", [f"-I{inc}"]) == 6.0, "the header that appeared is read"


def test_load_library_loads_what_load_built(built, build_dir: Path) -> None:
    built("relu").close()
    lib = custom_op.load_library(str(build_dir / "librelu.so"))
    assert lib.name == "relu_ops" and sorted(lib.ops) == ["relu_backward", "relu_forward"]
    assert lib.ops["relu_backward"].schema == "relu_backward(Tensor grad, Tensor input) -> Tensor"
    np.testing.assert_array_equal(lib.relu_forward(np.array([[-3.0]], np.float32)), [[0.0]])
    lib.close()


def test_a_build_failure_says_why(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cpp"
    bad.write_text("this is not C++\n")
    with pytest.raises(neuron_customop_host.BuildError) as e:
        custom_op.load("bad", [bad], [KERNELS / "relu_shape.cpp"], tmp_path)
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, neuron_customop_host.NeuronCustomOpError)
    assert "does not compile" in str(e.value) and "does not compile" in e.value.stderr
    with pytest.raises(neuron_customop_host.NotFoundError) as missing:
        custom_op.load("bad", [tmp_path / "absent.cpp"], [KERNELS / "relu_shape.cpp"], tmp_path)
    assert isinstance(missing.value, FileNotFoundError)


def test_the_version_is_the_workspaces() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    workspace = re.search(r'\[workspace\.package\]\nversion = "([^"]+)"', cargo).group(1)
    assert neuron_customop_host.__version__ == workspace


def test_the_package_is_typed_and_says_its_minimum_python() -> None:
    assert (Path(neuron_customop_host.__file__).parent / "py.typed").is_file()
    project = (ROOT / "sdk" / "python" / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.10"' in project and 'python_version = "3.10"' in project
    assert 'target-version = "py310"' in project and 'dynamic = ["version"]' in project


def test_load_library_runs_on_the_cores_load_was_given(tmp_path: Path) -> None:
    sources = ([KERNELS / "relu_tcm.cpp"], [KERNELS / "relu_tcm_shape.cpp"])
    custom_op.load("relu_tcm", *sources, tmp_path, multicore=True).close()
    path = tmp_path / "librelu_tcm.so"
    with custom_op.load_library(str(path)) as lib:
        assert lib.cores == 8  # as the device builds multicore into the library
        x = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
        np.testing.assert_array_equal(lib.relu_multicore(x), np.maximum(x, 0))
        assert len(lib.last_stats["per_core"]) == 8
    with custom_op.load_library(path, cores=2) as lib:
        assert lib.cores == 2, "load_library's own keyword overrides"
    with custom_op.load_library(path, multicore=False) as lib:
        assert lib.cores == 1
    custom_op.load("relu_tcm", *sources, tmp_path).close()  # up to date, now on one core
    with custom_op.load_library(path) as lib:
        assert lib.cores == 1


def test_what_the_device_refuses_is_refused_and_device_parity_false_warns(tmp_path: Path) -> None:
    src = tmp_path / "inc.cpp"
    kernel = (
        "#include <torch/torch.h>\n"
        "torch::Tensor relu_forward(const torch::Tensor &input) {\n"
        "    torch::Tensor out = torch::zeros(input.sizes(), torch::kFloat);\n"
        "    auto o = out.accessor<float, 2>();\n    BODY;\n    return out;\n}\n"
        "torch::Tensor relu_backward(const torch::Tensor &g, const torch::Tensor &input) { return relu_forward(g); }\n"
    )
    shape = KERNELS / "relu_shape.cpp"
    # The element is the device's proxy (on the host too); the compiler's words get a line.
    src.write_text(kernel.replace("BODY", "o[0][0]++"))
    with pytest.raises(RuntimeError, match="the device refuses it") as e:
        custom_op.load("inc", [src], [shape], tmp_path)
    assert "on the device an accessor's element is a proxy" in str(e.value)
    # -Wall -Werror: refused, unless device_parity=False, which warns on every call.
    src.write_text(kernel.replace("BODY", "int unused = 1; o[0][0] = 1.0f"))
    with pytest.raises(RuntimeError, match="unused variable 'unused'"):
        custom_op.load("inc", [src], [shape], tmp_path)
    with custom_op.load("inc", [src], [shape], tmp_path, device_parity=False) as lib:
        for _ in range(2):
            with pytest.warns(NeuronCustomOpWarning, match="device-parity-off"):
                assert lib.relu_forward(np.array([[-1.0, 3.0]], np.float32))[0, 0] == 1.0
