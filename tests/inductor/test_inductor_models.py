"""Networks trained one step with torch.compile (Inductor) on ocl. Slow: tens of seconds to
minutes of Inductor compilation each (``pytest -m slow tests/inductor``).

- A CNN (convolutions extern, batch norm and pooling around generated kernels) and a transformer
  encoder layer with an embedding against float64 on the CPU; attention with dynamic shapes.
- The default model set of tests/models/test_models.py (its small CNN and UNet block, the
  transformers, torchvision and timm models of its default run), each step compiled with the
  default backend and compared with the eager ocl step, loss and every gradient, within the
  tolerances tests/models uses for eager steps; the CPU fallback raises throughout.
"""

from __future__ import annotations

import copy

import pytest
import torch
from ocl_testing import DEVICE

from torch_ocl._inductor.runtime import launch_count

pytestmark = pytest.mark.slow


def check_training_step(model, x, y):
    ref = copy.deepcopy(model).double()
    expected = torch.nn.functional.cross_entropy(ref(x.double() if x.is_floating_point() else x), y)
    expected.backward()
    dev = copy.deepcopy(model).to(DEVICE)
    torch._dynamo.reset()
    step = torch.compile(lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y))
    with torch.ocl.fallback_mode("error"):
        loss = step(dev, x.to(DEVICE), y.to(DEVICE))
        loss.backward()
    torch.testing.assert_close(loss.cpu().double(), expected.detach(), rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(dev.named_parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_cnn_training_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    check_training_step(model, torch.randn(4, 3, 16, 16), torch.randint(10, (4,)))


class _Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 32)
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, i):
        return self.head(self.layer(self.emb(i)).mean(1))


def test_transformer_encoder_training_step():
    torch.manual_seed(0)
    check_training_step(_Encoder(), torch.randint(50, (3, 7)), torch.randint(5, (3,)))


def test_attention_training_with_dynamic_shapes():
    # ATen's composite scaled_dot_product_attention asks the device's backend choice with fake
    # tensors of symbolic sizes here: the choice must read SymInts (it once called numel()).
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    dev = copy.deepcopy(mha).to(DEVICE)
    torch._dynamo.reset()
    step = torch.compile(lambda m, x: m(x, x, x, need_weights=False)[0], dynamic=True)
    for shape in [(2, 5, 16), (3, 7, 16)]:
        x = torch.randn(*shape)
        ref_x = x.double().requires_grad_()
        ref = copy.deepcopy(mha).double()
        expected = ref(ref_x, ref_x, ref_x, need_weights=False)[0]
        expected.square().sum().backward()
        dev_x = x.to(DEVICE).requires_grad_()
        dev.zero_grad()
        with torch.ocl.fallback_mode("error"):
            out = step(dev, dev_x)
            out.square().sum().backward()
        torch.testing.assert_close(
            out.detach().cpu().double(), expected.detach(), rtol=1e-4, atol=1e-5
        )
        torch.testing.assert_close(dev_x.grad.cpu().double(), ref_x.grad, rtol=1e-4, atol=1e-5)
        for (name, p), q in zip(dev.named_parameters(), ref.parameters(), strict=True):
            torch.testing.assert_close(
                p.grad.cpu().double(), q.grad, rtol=1e-4, atol=1e-4, msg=name
            )


# --------------------------------------------------------------------------------------------
# tests/models' default model set, compiled


def _default_models():
    """name -> a function returning (model, inputs, loss function), for the models of
    tests/models/test_models.py's default run (its own definitions and sizes)."""
    from models import test_models as tm

    cases = {
        "small_cnn": lambda: (tm.SmallCNN(), tm._images(4, 32), tm._classification_loss),
        "unet_block": lambda: (tm.UNetBlock(), tm._images(2, 16)[:1], lambda m, x: m(x)),
    }
    if tm.transformers is not None:
        t = tm.transformers

        def gpt2():
            cfg = t.GPT2Config(
                vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                tie_word_embeddings=True,
            )  # fmt: skip
            ids = torch.randint(97, (2, 11), generator=torch.Generator().manual_seed(1))
            return t.GPT2LMHeadModel(cfg), (ids,), lambda m, i: m(input_ids=i, labels=i).loss

        cases["gpt2"] = gpt2
        for name, make in tm.TRANSFORMERS_SMALL.items():
            cases[name] = lambda make=make: make(t)
    if getattr(tm, "torchvision", None) is not None:
        for name, (size, batch) in tm.SMALL.items():
            cases[f"torchvision_{name}"] = lambda name=name, size=size, batch=batch: (
                tm._torchvision_model(name, size),
                tm._images(batch, size, seed=3),
                tm._classification_loss,
            )
    if tm.timm is not None:
        for name, (size, kwargs, *batch) in tm.TIMM_SMALL.items():
            cases[f"timm_{name}"] = lambda name=name, size=size, kwargs=kwargs, batch=batch: (
                tm.timm.create_model(name, pretrained=False, num_classes=10, **kwargs),
                tm._images(batch[0] if batch else 2, size, seed=3),
                tm._classification_loss,
            )
    return cases


DEFAULT_MODELS = [
    "small_cnn",
    "unet_block",
    "gpt2",
    "llama_gqa",
    "t5",
    *(f"torchvision_{n}" for n in (
        "resnet18", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x1_0", "efficientnet_b0",
        "convnext_small", "vit_b_16",
    )),
    *(f"timm_{n}" for n in (
        "resnet10t", "convnext_atto", "vit_tiny_patch16_224", "mobilevitv2_050",
    )),
]  # fmt: skip


def _grads(model, inputs, loss_fn):
    loss = loss_fn(model, *inputs)
    loss.backward()
    return loss, {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("name", DEFAULT_MODELS)
def test_default_model_compiled_step_equals_eager(name):
    """One training step (loss and gradients) of each default model, compiled with the default
    backend, equals the eager ocl step within the eager model tests' tolerance: a relative error
    (||compiled - eager|| / ||eager||) of at most 1e-4, or 3x the relative error of CPU torch's
    float32 step against float64 where that is larger (ill-conditioned batch norms), with the
    same floor for gradients that are zero in exact arithmetic."""
    from models import test_models as tm

    cases = _default_models()
    if name not in cases:
        pytest.skip(f"{name}: its package (transformers, torchvision or timm) is not installed")
    torch.manual_seed(0)
    model, inputs, loss_fn = cases[name]()
    model = tm._no_dropout(model).train()
    ref = copy.deepcopy(model).double()
    cpu32 = copy.deepcopy(model)
    eager = copy.deepcopy(model).to(DEVICE)
    compiled_model = copy.deepcopy(model).to(DEVICE)
    dev_inputs = [x.to(DEVICE) for x in inputs]

    ref_loss, ref_grads = _grads(
        ref, [x.double() if x.is_floating_point() else x for x in inputs], loss_fn
    )
    cpu_loss, cpu_grads = _grads(cpu32, inputs, loss_fn)
    torch._dynamo.reset()
    step = torch.compile(loss_fn)
    with torch.ocl.fallback_mode("error"):
        loss, grads = _grads(eager, dev_inputs, loss_fn)
        before = launch_count()
        c_loss, c_grads = _grads(compiled_model, dev_inputs, step)
        launched = launch_count() - before
    assert launched > 0, "the compiled step launched no generated kernel"

    def check(what, actual, wanted, cpu, ref64, floor=0.0):
        err = tm._rel_err(actual, wanted.detach().cpu(), floor)
        allowed = max(tm.REL_TOL, 3 * tm._rel_err(cpu, ref64, floor))
        assert err <= allowed, f"{what}: relative error {err:.2e} to eager (allowed {allowed:.2e})"

    check("loss", c_loss, loss, cpu_loss, ref_loss)
    assert c_grads.keys() == grads.keys() == ref_grads.keys()
    floor = 1e-3 * max((r.norm().item() for r in ref_grads.values()), default=0.0)
    for n in grads:
        check(f"gradient of {n}", c_grads[n], grads[n], cpu_grads[n], ref_grads[n], floor)
