"""Your own OpenCL kernel as a PyTorch op, forward and backward, in a training loop.

`examples::silu` is a `torch.library.custom_op` whose forward and backward run pyopencl kernels
directly on the ocl tensors' memory (torch_ocl.interop: no copies), on torch's own queue (so they
run in order with torch's work, without host waits). A small MLP with it trains on the ocl
device, and the same loop with the built-in `torch.nn.functional.silu` on the CPU gives the same
losses and weights.

    python examples/custom_kernel.py [--steps 30]
"""

from __future__ import annotations

import argparse

import numpy as np
import pyopencl as cl
import torch

import torch_ocl
from torch_ocl import interop

SOURCE = """
// y = x * sigmoid(x); the tensors are `n` contiguous floats at element offsets of their buffers.
__kernel void silu_forward(__global float* y, ulong y_off, __global const float* x, ulong x_off,
                           uint n) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const float v = x[x_off + i];
  y[y_off + i] = v / (1.0f + exp(-v));
}

// dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)
__kernel void silu_backward(__global float* dx, ulong dx_off, __global const float* dy,
                            ulong dy_off, __global const float* x, ulong x_off, uint n) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const float v = x[x_off + i];
  const float s = 1.0f / (1.0f + exp(-v));
  dx[dx_off + i] = dy[dy_off + i] * s * (1.0f + v * (1.0f - s));
}
"""

LOCAL_SIZE = 64
_kernels: dict[tuple[int, str], cl.Kernel] = {}


def _kernel(device: int, name: str) -> cl.Kernel:
    """Kernel `name`, built once per device in that device's context."""
    if (device, name) not in _kernels:
        program = cl.Program(interop.context(device), SOURCE).build()
        for kernel_name in ("silu_forward", "silu_backward"):
            _kernels[device, kernel_name] = cl.Kernel(program, kernel_name)
    return _kernels[device, name]


def _launch(name: str, out: torch.Tensor, *inputs: torch.Tensor) -> None:
    """Runs kernel `name` over contiguous float32 tensors of one device, on torch's current
    queue of that device: after torch's work on them, before torch's next op."""
    device = out.device.index
    args = []
    for t in (out, *inputs):
        a = interop.as_pyopencl_array(t)  # a view of t's memory: buffer + byte offset
        args += [a.base_data, np.uint64(a.offset // t.element_size())]
    n = out.numel()
    global_size = (n + LOCAL_SIZE - 1) // LOCAL_SIZE * LOCAL_SIZE
    kernel = _kernel(device, name)
    kernel(interop.queue(device=device), (global_size,), (LOCAL_SIZE,), *args, np.uint32(n))


def _check(x: torch.Tensor) -> None:
    if x.device.type != "ocl" or x.dtype != torch.float32:
        raise TypeError(f"examples::silu runs on ocl float32 tensors, got {x.device} {x.dtype}")


@torch.library.custom_op("examples::silu", mutates_args=())
def silu(x: torch.Tensor) -> torch.Tensor:
    _check(x)
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() > 0:
        _launch("silu_forward", y, x)
    return y


@silu.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("examples::silu_backward", mutates_args=())
def silu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    _check(x)
    grad, x = grad.contiguous(), x.contiguous()
    dx = torch.empty_like(x)
    if x.numel() > 0:
        _launch("silu_backward", dx, grad, x)
    return dx


@silu_backward.register_fake
def _(grad, x):
    return torch.empty_like(x)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return silu_backward(grad, x)


silu.register_autograd(_backward, setup_context=_setup_context)


class MLP(torch.nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 64)
        self.fc2 = torch.nn.Linear(64, 1)
        self.activation = activation

    def forward(self, x):
        return self.fc2(self.activation(self.fc1(x)))


def train(device: str, activation, steps: int, state=None):
    """`steps` SGD steps of the MLP on a fixed regression problem; returns losses and weights."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(256, 16, generator=gen)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    model = MLP(activation)
    if state is not None:
        model.load_state_dict(state)
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses).cpu(), {k: v.cpu() for k, v in model.state_dict().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    if not torch_ocl.is_available():
        raise SystemExit(f"no OpenCL device: {torch.ocl.why_unavailable()}")
    torch.manual_seed(0)
    init = MLP(torch.nn.functional.silu).state_dict()
    ref_losses, ref_state = train("cpu", torch.nn.functional.silu, args.steps, init)
    waits = torch.ocl.host_wait_count()
    losses, state = train("ocl", silu, args.steps, init)
    waits = torch.ocl.host_wait_count() - waits
    print(f"device: {torch.ocl.get_device_name()}")
    print("step  loss (ocl, pyopencl silu)  loss (cpu, torch silu)")
    for i in range(0, args.steps, max(1, args.steps // 6)):
        print(f"{i:4d}  {losses[i].item():26.6f}  {ref_losses[i].item():22.6f}")
    loss_err = (losses - ref_losses).abs().max().item()
    weight_err = max((state[k] - ref_state[k]).abs().max().item() for k in state)
    print(f"largest difference: losses {loss_err:.2e}, weights {weight_err:.2e}")
    print(f"host waits during the device run: {waits} (copying the losses and weights to the CPU)")
    if not (loss_err < 1e-4 and weight_err < 1e-4):
        raise SystemExit("the ocl run with the pyopencl kernels does not match the CPU")
    print("ok: the custom pyopencl op trains like the built-in one")


if __name__ == "__main__":
    main()
