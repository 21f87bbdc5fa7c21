"""A model's my_ops.py in the public training sample's style, with its import line changed
to this package's: the library `build.py` made, loaded, and its two kernels as the forward
and backward of an autograd Function."""

from __future__ import annotations

import os

import torch

from neuron_customop_host import custom_op

custom_op.load_library(os.path.join(os.environ["NT_TORCH_BUILD"], "librelu.so"))


class Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.ops.relu_ops.relu_forward(input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        return torch.ops.relu_ops.relu_backward(grad, input)


relu = Relu.apply
