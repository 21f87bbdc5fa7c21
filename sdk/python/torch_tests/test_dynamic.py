"""torch.compile with dynamic shapes over custom ops (sdk/tests/customops/sizes.cpp): an
output whose sizes are an affine function of the inputs' stays symbolic (one graph for
every size, mark_dynamic accepted); one that is not (a product of sizes) is compiled again
for each size, with a warning that says why; and a relation that held at the sizes tried
but not at a later one raises ShapeRelationError, never a wrong result."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch._dynamo.testing
from conftest import KERNELS

from neuron_customop_host import NeuronCustomOpWarning, ShapeRelationError, custom_op


@pytest.fixture(scope="module")
def sizes_ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    build = tmp_path_factory.mktemp("sizes")
    library = custom_op.load("sizes", [KERNELS / "sizes.cpp"], [KERNELS / "sizes_shape.cpp"], build)
    yield torch.ops.sizes_ops
    library.close()


def compiled(fn: Callable[..., torch.Tensor], **options: Any) -> tuple[Callable[..., torch.Tensor], Any]:
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    return torch.compile(fn, fullgraph=True, backend=counter, **options), counter


def test_a_sum_of_sizes_stays_symbolic_one_graph_for_every_size(sizes_ops: Any) -> None:
    f, counter = compiled(lambda a, b: sizes_ops.joined(a * 2, b) + 1, dynamic=True)
    for n in range(2, 14):
        a, b = torch.arange(n, dtype=torch.float32), torch.arange(n + 3, dtype=torch.float32) - 5
        assert torch.equal(f(a, b), torch.cat([a * 2, b]) + 1)
    assert counter.frame_count == 1


def test_mark_dynamic_is_kept(sizes_ops: Any) -> None:
    f, counter = compiled(lambda a, b: sizes_ops.joined(a, b))
    for n in (4, 9, 23):
        a, b = torch.ones(n), torch.zeros(5)
        torch._dynamo.mark_dynamic(a, 0)
        assert torch.equal(f(a, b), torch.cat([a, b]))
    assert counter.frame_count == 1


def test_a_product_of_sizes_is_compiled_again_with_a_warning(sizes_ops: Any) -> None:
    f, counter = compiled(lambda a, b: sizes_ops.products(a, b), dynamic=True)
    said = (
        r"sizes_ops\.products: the output's sizes are not kept symbolic \(the shape function gives \(90,\) "
        r"where its sizes' relation \(3\*arg1\.size\(0\) \+ 4\*arg0\.size\(0\) - 12\) gives \(55,\)\)"
    )
    with pytest.warns(NeuronCustomOpWarning, match=said):
        for n in (3, 4, 5):
            a, b = torch.arange(n, dtype=torch.float32), torch.arange(4, dtype=torch.float32) + 1
            assert torch.equal(f(a, b), torch.outer(a, b).flatten())
    assert counter.frame_count == 3


def test_a_relation_that_stops_holding_raises(sizes_ops: Any) -> None:
    f, counter = compiled(lambda a: sizes_ops.first_sixteen(a) * 3, dynamic=True)
    a = torch.arange(4, dtype=torch.float32)
    assert torch.equal(f(a), a * 3)
    with pytest.raises(
        ShapeRelationError, match=r"the output is \(16,\) for inputs of \[\[20\]\].*assumed \(arg0\.size\(0\)\) = \(20,\)"
    ):
        f(torch.arange(20, dtype=torch.float32))
    assert counter.frame_count == 1
    eager = sizes_ops.first_sixteen(torch.arange(3, dtype=torch.float32))
    assert eager.tolist() == [0.0, 1.0, 2.0]


def test_the_sizes_library_is_where_the_tests_built_it(sizes_ops: Any) -> None:
    assert Path(KERNELS / "sizes.cpp").is_file() and hasattr(sizes_ops, "joined")
