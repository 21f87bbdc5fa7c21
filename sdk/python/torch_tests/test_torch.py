"""The ops through torch.ops, as a model's code calls them: against torch.relu, inside an
autograd Function (forward and backward kernels), under no_grad, on non-contiguous
tensors; and a three-layer MLP (784-120-84-10, the public tutorial's) whose two ReLUs are
the custom op, trained 20 SGD steps from a fixed seed: every loss bit-identical to the same
model with torch.relu."""

from __future__ import annotations

import os

import pytest
import torch
from conftest import KERNELS

import my_ops
from neuron_customop_host import NeuronCustomOpWarning, custom_op


def test_the_ops_are_torch_ops() -> None:
    x = torch.linspace(-2, 2, 3000).reshape(60, 50)
    assert torch.equal(torch.ops.relu_ops.relu_forward(x), torch.relu(x))
    g = torch.rand(60, 50)
    assert torch.equal(torch.ops.relu_ops.relu_backward(g, x), torch.where(x > 0, g, 0))


def test_the_schema_names_the_kernels_parameters() -> None:
    schema = torch.ops.relu_ops.relu_backward.default._schema
    assert [a.name for a in schema.arguments] == ["grad", "input"]
    x, g = torch.linspace(-2, 2, 12).reshape(3, 4), torch.rand(3, 4)
    assert torch.equal(torch.ops.relu_ops.relu_backward(input=x, grad=g), torch.where(x > 0, g, 0))


def test_uint16_is_refused_in_pytorchs_words_not_read_as_bfloat16() -> None:
    x = torch.tensor([16256, 0], dtype=torch.uint16)
    with pytest.raises(TypeError, match=r"tensors of torch\.uint16 are not an API type \(.*torch\.bfloat16"):
        torch.ops.relu_ops.relu_forward(x)


def test_the_fake_cache_tells_negative_zero_from_zero() -> None:
    from neuron_customop_host._torch import _key

    assert _key(-0.0) != _key(0.0)
    assert _key(float("nan")) == _key(float("nan"))
    assert _key(2) != _key(2.0)


def test_autograd_function_forward_and_backward() -> None:
    x = torch.linspace(-2, 2, 3000).reshape(60, 50).requires_grad_()
    y = my_ops.relu(x)
    y.sum().backward()
    x2 = x.detach().clone().requires_grad_()
    torch.relu(x2).sum().backward()
    assert torch.equal(y.detach(), torch.relu(x2).detach()) and torch.equal(x.grad, x2.grad)


def test_no_grad_and_non_contiguous() -> None:
    x = torch.linspace(-2, 2, 3000).reshape(50, 60).t()
    assert not x.is_contiguous()
    with torch.no_grad():
        assert torch.equal(my_ops.relu(x), torch.relu(x))


class Mlp(torch.nn.Module):
    def __init__(self, relu):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(784, 120), torch.nn.Linear(120, 84), torch.nn.Linear(84, 10)
        self.relu = relu

    def forward(self, x):
        return torch.log_softmax(self.fc3(self.relu(self.fc2(self.relu(self.fc1(x))))), dim=1)


def losses(relu) -> list[float]:
    torch.manual_seed(0)
    model = Mlp(relu)
    data = torch.randn(64, 784)
    target = torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out = []
    for _ in range(20):
        opt.zero_grad()
        loss = torch.nn.functional.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def test_an_mlp_trains_bit_for_bit_as_with_torch_relu() -> None:
    theirs, ours = losses(torch.relu), losses(my_ops.relu)
    assert ours == theirs, (ours, theirs)
    assert ours[-1] < ours[0]


def test_a_second_library_of_the_same_name_keeps_the_ops_it_does_not_define(tmp_path) -> None:
    with pytest.warns(NeuronCustomOpWarning, match="relu_forward now run .*librelu_again.so"):
        again = custom_op.load("relu_again", [KERNELS / "relu.cpp"], [KERNELS / "relu_forward_only_shape.cpp"], tmp_path)
    x = torch.linspace(-2, 2, 3000).reshape(60, 50)
    g = torch.rand(60, 50)
    assert torch.equal(torch.ops.relu_ops.relu_forward(x), torch.relu(x))
    assert again.server_pids(), "the new library ran relu_forward"
    assert torch.equal(torch.ops.relu_ops.relu_backward(g, x), torch.where(x > 0, g, 0))


def test_the_shape_function_is_the_fake_implementation() -> None:
    x = torch.linspace(-2, 2, 3000).reshape(60, 50)
    g = torch.rand(60, 50)
    for op, args in ((torch.ops.relu_ops.relu_forward, (x,)), (torch.ops.relu_ops.relu_backward, (g, x))):
        torch.library.opcheck(op, args)
    meta = torch.ops.relu_ops.relu_forward(torch.empty(7, 9, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (7, 9) and meta.dtype == torch.float32

    @torch.compile(fullgraph=True)
    def f(t: torch.Tensor) -> torch.Tensor:
        return torch.ops.relu_ops.relu_forward(t * 2) + 1

    assert torch.equal(f(x), torch.relu(x * 2) + 1)


def test_an_op_on_a_tensor_that_requires_grad_has_no_formula_as_the_docs_say() -> None:
    x = torch.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()
    y = torch.ops.relu_ops.relu_forward(x)
    assert y.requires_grad and type(y.grad_fn).__name__ == "CppFunction"
    with pytest.warns(UserWarning):
        y.sum().backward()
    assert x.grad is None


def test_torch_ops_run_on_the_emulated_q7_with_device_true(tmp_path) -> None:
    x = torch.linspace(-2, 2, 12).reshape(3, 4)
    sources = [KERNELS / "relu.cpp"], [KERNELS / "relu_shape.cpp"]
    with pytest.warns(NeuronCustomOpWarning, match="now run"):
        device = custom_op.load("relu_q7", *sources, tmp_path, device=True, profile=tmp_path / "profile")
    try:
        assert torch.equal(torch.ops.relu_ops.relu_forward(x), torch.relu(x))
        assert device.last_stats["device"]["instructions"] > 0
        assert (tmp_path / "profile" / "profile.txt").is_file()
    finally:
        device.close()
        with pytest.warns(NeuronCustomOpWarning, match="now run"):
            custom_op.load_library(os.path.join(os.environ["NT_TORCH_BUILD"], "librelu.so"))
    assert torch.equal(torch.ops.relu_ops.relu_forward(x), torch.relu(x))
