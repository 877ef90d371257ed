"""Real networks on ocl: forward, backward and one optimizer step against a float64 CPU reference.

Each case builds a model from third-party code (torchvision, transformers) or a small block as
real code writes it, from a fixed seed with random weights (nothing is downloaded), and checks:
  - the loss, every gradient and every parameter after one SGD step agree with the same model in
    float64 on the CPU (relative error of the whole tensor, ||ocl - ref|| / ||ref||) within 1e-4,
    or within 3x the error of CPU torch's own float32 step where that is larger;
  - the step ran without the CPU fallback (tests/conftest.py sets it to "error" here) and without
    a single host wait (the loss is read only after the step);
The default run covers one small instance per family; TORCH_OCL_MODELS=full (nox -s models) runs
torchvision's whole zoo at the sizes the issue names, and more timm models.
"""

from __future__ import annotations

import copy
import gc
import os

import pytest
import torch
from ocl_testing import DEVICE
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

FULL = os.environ.get("TORCH_OCL_MODELS") == "full"


@pytest.fixture(autouse=True)
def _release_memory():
    """Each network's tensors go back to the system after its test (the caching allocator
    would keep the largest network's blocks for the rest of the run)."""
    yield
    gc.collect()
    torch.ocl.empty_cache()


REL_TOL = 1e-4


def _rel_err(actual: torch.Tensor, expected: torch.Tensor, floor: float = 0.0) -> float:
    """||actual - expected|| / max(||expected||, floor). The floor keeps gradients that are zero
    in exact arithmetic (a conv bias before batch norm) from dividing rounding noise by ~0."""
    expected = expected.double()
    diff = (actual.detach().cpu().double() - expected).norm().item()
    scale = max(expected.norm().item(), floor)
    return diff / scale if scale > 0 else diff


def _no_dropout(model: nn.Module) -> nn.Module:
    """Dropout draws different masks on two devices: switch it off, keep everything else."""
    for m in model.modules():
        if isinstance(m, nn.Dropout | nn.Dropout1d | nn.Dropout2d | nn.Dropout3d):
            m.p = 0.0
        if type(m).__name__ == "StochasticDepth":  # torchvision.ops: drops whole residual rows
            m.p = 0.0
        if isinstance(getattr(m, "drop_prob", None), float):  # timm's DropPath (swin: 0.1)
            m.drop_prob = 0.0
        if hasattr(m, "dropout") and isinstance(m.dropout, float):
            m.dropout = 0.0
        if hasattr(m, "attention_dropout") and isinstance(m.attention_dropout, float):
            m.attention_dropout = 0.0
    return model


def _one_step(model: nn.Module, inputs, loss_fn, lr: float):
    """loss, gradients (by parameter name) and parameters after one SGD step."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss = loss_fn(model, *inputs)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    opt.step()
    return loss, grads, dict(model.named_parameters())


class _WaitAudit(TorchDispatchMode):
    """Host waits of a step, by the op that made them. A wait inside an op that reads a device
    value for the caller (`bool(mask.all())` in transformers' mask code, `.item()`, `.cpu()`) is
    the model's own, as it is on CUDA; a wait inside any other op is one the backend added."""

    HOST_READS = ("aten._local_scalar_dense", "aten.item", "aten.equal", "aten.is_nonzero")
    # Ops whose output size depends on the input's values (deberta's relative positions call
    # nonzero): the host must read that size before it can allocate, on CUDA too.
    DATA_DEPENDENT_SHAPE = (
        "aten.nonzero.",
        "aten.masked_select.",
        "aten._unique2.",
        "aten.unique_",
    )

    def __init__(self):
        super().__init__()
        self.added: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        before = torch.ocl.host_wait_count()
        out = func(*args, **(kwargs or {}))
        if torch.ocl.host_wait_count() != before:
            name = str(func)
            to_cpu = isinstance(out, torch.Tensor) and out.device.type == "cpu"
            own = name.startswith(self.HOST_READS + self.DATA_DEPENDENT_SHAPE)
            if not to_cpu and not own:
                self.added.append(name)
        return out


def _check_step(model: nn.Module, inputs, loss_fn, lr: float = 0.01):
    """One SGD step of model on ocl (float32), compared with the same step in float64 on the CPU.
    A tensor may differ from float64 by REL_TOL, or by 3x what CPU torch's own float32 step
    differs by (batch norm over a handful of values is ill-conditioned: CPU float32 itself is
    then further than 1e-4 from float64). Also checks the backend added no host wait to the
    step (the model's own reads of device values are the model's: see _WaitAudit)."""
    model = _no_dropout(model).train()
    ref = copy.deepcopy(model).double()
    cpu32 = copy.deepcopy(model)
    dev_model = model.to(DEVICE)
    to_dev = [x.to(DEVICE) for x in inputs]
    to_ref = [x.double() if x.is_floating_point() else x for x in inputs]

    torch.ocl.synchronize()
    with _WaitAudit() as audit:
        loss, grads, params = _one_step(dev_model, to_dev, loss_fn, lr)
    assert not audit.added, f"the backend waited for the device in {audit.added}"
    ref_loss, ref_grads, ref_params = _one_step(ref, to_ref, loss_fn, lr)
    cpu_loss, cpu_grads, cpu_params = _one_step(cpu32, inputs, loss_fn, lr)

    def check(what, actual, expected, cpu, floor=0.0):
        err = _rel_err(actual, expected, floor)
        allowed = max(REL_TOL, 3 * _rel_err(cpu, expected, floor))
        assert err <= allowed, f"{what}: relative error {err:.2e} (CPU float32: {allowed / 3:.2e})"

    check("loss", loss, ref_loss, cpu_loss)
    assert grads.keys() == ref_grads.keys()
    floor = 1e-3 * max((r.norm().item() for r in ref_grads.values()), default=0.0)
    for name, r in ref_grads.items():
        check(f"gradient of {name}", grads[name], r, cpu_grads[name], floor)
    # A parameter that starts at zero and whose exact gradient is zero (the bias of a batch norm
    # that feeds another batch norm, which removes any shift) is rounding noise after the step:
    # it gets the gradients' floor, scaled by the step.
    for name, r in ref_params.items():
        check(f"parameter {name} after the step", params[name], r, cpu_params[name], lr * floor)


def _classification_loss(model, x, y):
    out = model(x)
    if isinstance(out, tuple):  # inception/googlenet aux outputs in training
        out = out[0]
    if hasattr(out, "logits"):
        out = out.logits
    return nn.functional.cross_entropy(out, y)


def _images(batch: int, size: int, channels: int = 3, classes: int = 10, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, channels, size, size, generator=g), torch.randint(
        classes, (batch,), generator=g
    )


# --------------------------------------------------------------------------------------------
# small blocks as real code writes them


class SmallCNN(nn.Module):
    """3 conv-BN-ReLU blocks, pooling, a linear head (the issue's small CNN)."""

    def __init__(self):
        super().__init__()
        layers, c = [], 3
        for width in (16, 32, 64):
            layers += [nn.Conv2d(c, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU()]
            layers.append(nn.MaxPool2d(2))
            c = width
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(64 * 4 * 4, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


class UNetBlock(nn.Module):
    """Down (conv, group norm, SiLU), up (transposed conv and upsample), skip concatenation."""

    def __init__(self, c=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(c, 2 * c, 3, 2, 1), nn.GroupNorm(4, 2 * c), nn.SiLU())
        self.up = nn.ConvTranspose2d(2 * c, c, 4, 2, 1)
        upsample = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up2 = nn.Sequential(upsample, nn.Conv2d(2 * c, c, 1))
        self.mix = nn.Conv2d(3 * c, c, 1)
        self.inp = nn.Conv2d(3, c, 3, padding=1)

    def forward(self, x):
        x = self.inp(x)
        d = self.down(x)
        return self.mix(torch.cat([x, self.up(d), self.up2(d)], 1)).square().mean()


def test_small_cnn():
    x, y = _images(4, 32)
    _check_step(SmallCNN(), (x, y), _classification_loss)


def test_unet_block():
    torch.manual_seed(0)
    x, _ = _images(2, 16)
    _check_step(UNetBlock(), (x,), lambda m, x: m(x))


# --------------------------------------------------------------------------------------------
# transformers models built from configs (random weights)

transformers = pytest.importorskip("transformers")


def test_gpt2_causal_lm_tied_weights():
    cfg = transformers.GPT2Config(
        vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4, tie_word_embeddings=True
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.randint(97, (2, 11), generator=torch.Generator().manual_seed(1))
    _check_step(model, (ids,), lambda m, ids: m(input_ids=ids, labels=ids).loss)


def test_bert_encoder_with_padding_mask():
    cfg = transformers.BertConfig(
        vocab_size=101,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=3,
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(cfg)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(101, (3, 9), generator=g)
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[1, 6:] = 0
    mask[2, 3:] = 0
    labels = torch.randint(3, (3,), generator=g)
    _check_step(
        model,
        (ids, mask, labels),
        lambda m, ids, mask, labels: m(input_ids=ids, attention_mask=mask, labels=labels).loss,
    )


def _token_ids(batch: int, length: int, seed: int, vocab: int = 103) -> torch.Tensor:
    return torch.randint(vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def _causal_lm(model):
    ids = _token_ids(2, 10, seed=1)
    return model, (ids,), lambda m, ids: m(input_ids=ids, labels=ids).loss


def _seq2seq(model):
    src, tgt = _token_ids(2, 9, seed=1), _token_ids(2, 7, seed=2)
    return model, (src, tgt), lambda m, src, tgt: m(input_ids=src, labels=tgt).loss


def _sequence_classification(model):
    ids = _token_ids(3, 9, seed=1)
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[1, 5:] = 0
    labels = torch.randint(3, (3,), generator=torch.Generator().manual_seed(4))
    return (
        model,
        (ids, mask, labels),
        lambda m, ids, mask, labels: m(input_ids=ids, attention_mask=mask, labels=labels).loss,
    )


def _image_classification(model):
    return model, _images(2, 32, seed=3), _classification_loss


def _whisper(model):
    features = torch.randn(2, 16, 32, generator=torch.Generator().manual_seed(5))
    labels = _token_ids(2, 6, seed=2)
    return model, (features, labels), lambda m, f, y: m(input_features=f, labels=y).loss


# name -> a function of transformers returning (model, inputs, loss function); tiny configs of the
# architectures users train (rotary embeddings, grouped-query attention, RMSNorm, gated MLPs,
# relative position biases, encoder-decoder cross attention, conv front ends, state spaces).
_LAYERS = dict(vocab_size=103, hidden_size=32, num_hidden_layers=2, num_attention_heads=4)
_DECODER = dict(**_LAYERS, intermediate_size=64)
TRANSFORMERS_SMALL = {
    "llama_gqa": lambda t: _causal_lm(
        t.LlamaForCausalLM(
            t.LlamaConfig(**_DECODER, num_key_value_heads=2, max_position_embeddings=64)
        )
    ),
    "t5": lambda t: _seq2seq(
        t.T5ForConditionalGeneration(
            t.T5Config(
                vocab_size=103,
                d_model=32,
                d_kv=8,
                d_ff=64,
                num_layers=2,
                num_heads=4,
                decoder_start_token_id=0,
            )
        )
    ),
}
TRANSFORMERS_FULL = {
    **TRANSFORMERS_SMALL,
    "mistral_sliding_window": lambda t: _causal_lm(
        t.MistralForCausalLM(t.MistralConfig(**_DECODER, num_key_value_heads=2, sliding_window=4))
    ),
    "qwen2": lambda t: _causal_lm(
        t.Qwen2ForCausalLM(t.Qwen2Config(**_DECODER, num_key_value_heads=2))
    ),
    "gemma": lambda t: _causal_lm(
        t.GemmaForCausalLM(t.GemmaConfig(**_DECODER, num_key_value_heads=2, head_dim=8))
    ),
    "phi": lambda t: _causal_lm(t.PhiForCausalLM(t.PhiConfig(**_DECODER))),
    "gpt_neox": lambda t: _causal_lm(t.GPTNeoXForCausalLM(t.GPTNeoXConfig(**_DECODER))),
    "falcon": lambda t: _causal_lm(t.FalconForCausalLM(t.FalconConfig(**_LAYERS))),
    "opt": lambda t: _causal_lm(
        t.OPTForCausalLM(
            t.OPTConfig(
                vocab_size=103,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                ffn_dim=64,
                word_embed_proj_dim=32,
                max_position_embeddings=64,
            )
        )
    ),
    "mamba": lambda t: _causal_lm(
        t.MambaForCausalLM(
            t.MambaConfig(vocab_size=103, hidden_size=32, num_hidden_layers=2, state_size=8)
        )
    ),
    "bart": lambda t: _seq2seq(
        t.BartForConditionalGeneration(
            t.BartConfig(
                vocab_size=103,
                d_model=32,
                encoder_layers=2,
                decoder_layers=2,
                encoder_attention_heads=4,
                decoder_attention_heads=4,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
                max_position_embeddings=64,
            )
        )
    ),
    "roberta": lambda t: _sequence_classification(
        t.RobertaForSequenceClassification(
            t.RobertaConfig(**_DECODER, max_position_embeddings=64, num_labels=3)
        )
    ),
    "distilbert": lambda t: _sequence_classification(
        t.DistilBertForSequenceClassification(
            t.DistilBertConfig(
                vocab_size=103, dim=32, n_layers=2, n_heads=4, hidden_dim=64, num_labels=3
            )
        )
    ),
    "deberta_v2": lambda t: _sequence_classification(
        t.DebertaV2ForSequenceClassification(
            t.DebertaV2Config(**_DECODER, max_position_embeddings=64, num_labels=3)
        )
    ),
    "vit": lambda t: _image_classification(
        t.ViTForImageClassification(
            t.ViTConfig(
                image_size=32,
                patch_size=8,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=64,
                num_labels=10,
            )
        )
    ),
    "convnext": lambda t: _image_classification(
        t.ConvNextForImageClassification(
            t.ConvNextConfig(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], num_labels=10)
        )
    ),
    "swin": lambda t: _image_classification(
        t.SwinForImageClassification(
            t.SwinConfig(
                image_size=32,
                patch_size=2,
                embed_dim=16,
                depths=[1, 1],
                num_heads=[2, 4],
                window_size=4,
                num_labels=10,
            )
        )
    ),
    "whisper": lambda t: _whisper(
        t.WhisperForConditionalGeneration(
            t.WhisperConfig(
                vocab_size=103,
                d_model=32,
                encoder_layers=1,
                decoder_layers=1,
                encoder_attention_heads=4,
                decoder_attention_heads=4,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
                num_mel_bins=16,
                max_source_positions=16,
                max_target_positions=32,
                decoder_start_token_id=1,
                pad_token_id=0,
                bos_token_id=1,
                eos_token_id=2,
            )
        )
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMERS_FULL if FULL else TRANSFORMERS_SMALL))
def test_transformers(name):
    torch.manual_seed(0)
    model, inputs, loss_fn = (TRANSFORMERS_FULL if FULL else TRANSFORMERS_SMALL)[name](transformers)
    _check_step(model, inputs, loss_fn)


def test_llama_generate():
    """generate() as users call it: greedy and beam search give the CPU's tokens (same weights,
    left-padded prompts, KV cache); sampling (top-k, top-p, temperature) runs natively and gives
    tokens of the vocabulary (its random draws are the device generator's, not the CPU's)."""
    cfg = transformers.LlamaConfig(
        **_DECODER,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    device_model = copy.deepcopy(model).to(DEVICE)
    ids = torch.randint(2, 103, (2, 5), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, :2] = 0
    for kwargs in ({"do_sample": False}, {"num_beams": 3, "do_sample": False}):
        with torch.no_grad():
            expected = model.generate(ids, attention_mask=mask, max_new_tokens=12, **kwargs)
            actual = device_model.generate(
                ids.to(DEVICE), attention_mask=mask.to(DEVICE), max_new_tokens=12, **kwargs
            )
        assert torch.equal(actual.cpu(), expected), kwargs
    with torch.no_grad():
        sampled = device_model.generate(
            ids.to(DEVICE),
            attention_mask=mask.to(DEVICE),
            max_new_tokens=12,
            do_sample=True,
            top_k=10,
            top_p=0.9,
            temperature=0.8,
        ).cpu()
    assert sampled.shape == (2, 17) and torch.equal(sampled[:, :5], ids)
    assert ((sampled >= 0) & (sampled < 103)).all()


# --------------------------------------------------------------------------------------------
# torchvision (pure-Python models; tests/conftest.py stubs its C++ registrations)

torchvision = pytest.importorskip("torchvision")

# name -> (input size, batch) for the default run (small) and the full run (the sizes).
# The small sizes keep batch norm away from its degenerate cases: over 2 values (batch 2 at a 1x1
# feature map) its output is +-1 whatever the input and its gradient amplifies rounding by orders
# of magnitude (CPU torch's float32, which accumulates batch statistics in double, is then still
# close to float64, a float32-accumulating device is not). A ReLU input within rounding of 0 can
# still flip its mask and move a gradient by ~1e-2 at some sizes (shufflenet at 64x4): that is
# rounding, not a wrong kernel - test_torchvision_op_by_op checks every op on its own inputs.
SMALL = {
    "resnet18": (64, 2),
    "mobilenet_v2": (64, 4),
    "squeezenet1_0": (48, 2),
    "shufflenet_v2_x1_0": (48, 4),
    "efficientnet_b0": (64, 4),
    "convnext_small": (32, 2),
    "vit_b_16": (32, 2),
}
# The zoo at sizes where float32 can meet the 1e-4 criterion at all: at 64x64 batch 2 the last
# stages of resnet50, resnext50_32x4d, wide_resnet50_2, googlenet, mnasnet1_0, efficientnet_b4 and
# regnet_y_400mf normalise a handful of values per channel, and CPU torch's own float32 step was
# up to 3.6e-2 from float64 there (oneDNN off; 1.1e-4 with it). At those sizes
# test_torchvision_float64 runs them instead, where rounding cannot hide a wrong kernel. resnet18 at
# 64x64 batch 8: one ReLU input in layer1 is -8.7e-7 in float64 and +1.7e-6 here (at a scale of
# 0.8), and that one flipped mask puts conv1's weight gradient 4.7e-3 off (every op of the step
# matches on its own inputs); at 96x96 no mask flips.
ZOO = {
    "alexnet": (64, 2),
    "vgg16": (32, 2),
    "resnet18": (96, 8),
    "resnet50": (128, 4),
    "resnext50_32x4d": (128, 4),
    "wide_resnet50_2": (160, 4),
    "squeezenet1_0": (64, 2),
    "googlenet": (128, 4),
    "inception_v3": (80, 2),
    "densenet161": (64, 2),
    "shufflenet_v2_x1_0": (64, 2),
    "mobilenet_v2": (64, 2),
    "mobilenet_v3_small": (64, 2),
    "mobilenet_v3_large": (64, 2),
    "mnasnet1_0": (128, 4),
    "efficientnet_b0": (64, 2),
    "efficientnet_b4": (128, 4),
    "regnet_y_400mf": (224, 4),
    "convnext_small": (64, 2),
    "vit_b_16": (64, 2),
}
# Cheaper sizes for the checks that do not depend on conditioning (op by op, float64).
ZOO_SMALL = {
    name: (80 if name == "inception_v3" else 32 if name == "vgg16" else 64, 2) for name in ZOO
}


def _torchvision_model(name: str, size: int) -> nn.Module:
    torch.manual_seed(0)
    kwargs = {"num_classes": 10}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=True)
    if name == "vit_b_16":
        kwargs["image_size"] = size
    return getattr(torchvision.models, name)(**kwargs)


CASES = ZOO if FULL else SMALL


@pytest.mark.parametrize("name", sorted(CASES))
def test_torchvision(name):
    size, batch = CASES[name]
    model = _torchvision_model(name, size)
    x, y = _images(batch, size, seed=3)
    _check_step(model, (x, y), _classification_loss)


# --------------------------------------------------------------------------------------------
# op by op (tests/models/opcheck.py): each op of the step against float64 on its own inputs

OP_BY_OP = ZOO_SMALL if FULL else {"mobilenet_v2": (32, 2), "shufflenet_v2_x1_0": (32, 2)}


@pytest.mark.parametrize("name", sorted(OP_BY_OP))
def test_torchvision_op_by_op(name):
    from .opcheck import OpByOpCheck

    size, batch = OP_BY_OP[name]
    model = _no_dropout(_torchvision_model(name, size)).train().to(DEVICE)
    x, y = _images(batch, size, seed=3)
    with OpByOpCheck() as check:
        loss = _classification_loss(model, x.to(DEVICE), y.to(DEVICE))
        loss.backward()
    assert check.count > 100, "the step ran too few ops to be the network's"
    assert not check.unchecked, "ops the CPU could not run:\n" + "\n".join(check.unchecked)
    assert not check.mismatches, "\n".join(str(m) for m in check.mismatches)


# --------------------------------------------------------------------------------------------
# float64 on the device: the same step in double on both sides, where a kernel's error cannot hide
# behind float32 rounding, at sizes whose batch norms make float32 ill-conditioned (at 64x64
# batch 2: within 1e-12 of the CPU for regnet_y_400mf and wide_resnet50_2). A batch norm over 2
# values amplifies even double rounding (mobilenet_v2 at 32x32 batch 2: the loss 5e-8 off, every
# op within 1e-12 on its own inputs), so these sizes keep 4 or more values per channel.

F64_TOL = 1e-9
F64_CASES = (
    {
        **ZOO_SMALL,
        "inception_v3": (160, 2),
        "mobilenet_v3_small": (64, 4),
        "mobilenet_v3_large": (64, 4),
    }
    if FULL
    else {"resnet18": (32, 2), "mobilenet_v2": (64, 2)}
)


@pytest.mark.parametrize("name", sorted(F64_CASES))
def test_torchvision_float64(name):
    if not torch.ocl.get_device_properties(torch.ocl.current_device()).supports_fp64:
        pytest.skip("the device has no float64 (cl_khr_fp64)")
    size, batch = F64_CASES[name]
    model = _no_dropout(_torchvision_model(name, size)).train().double()
    ref = copy.deepcopy(model)
    dev_model = model.to(DEVICE)
    x, y = _images(batch, size, seed=3)
    x = x.double()
    loss, grads, params = _one_step(
        dev_model, (x.to(DEVICE), y.to(DEVICE)), _classification_loss, 0.01
    )
    ref_loss, ref_grads, ref_params = _one_step(ref, (x, y), _classification_loss, 0.01)
    assert _rel_err(loss, ref_loss) <= F64_TOL
    assert grads.keys() == ref_grads.keys()
    floor = 1e-3 * max(r.norm().item() for r in ref_grads.values())
    bad = [
        f"{what} {n}: {err:.2e}"
        for what, got, want, fl in (
            ("gradient", grads, ref_grads, floor),
            ("parameter", params, ref_params, 0.01 * floor),
        )
        for n in want
        if (err := _rel_err(got[n], want[n], fl)) > F64_TOL
    ]
    assert not bad, "relative errors above 1e-9 in float64:\n" + "\n".join(bad)


# --------------------------------------------------------------------------------------------
# timm (pure-Python models built from their configs with random weights, nothing downloaded;
# timm imports torchvision, whose C++ registrations tests/conftest.py stubs). Inputs of 64 where
# a 32x32 input leaves the last stage a 1x1 map (batch norm over 2 values: see SMALL above).

try:
    import timm
except ImportError:  # .ci/run and `nox -s models` install it
    timm = None

# name -> (input size, create_model keywords[, batch]). Batch norm over 2 values per channel is
# ill-conditioned (see SMALL above): networks that reach a 1x1 map at 32x32 run at 64x64 batch 4.
TIMM_SMALL = {
    "resnet10t": (32, {}),
    "convnext_atto": (32, {}),
    "vit_tiny_patch16_224": (32, {"img_size": 32, "patch_size": 8}),
    "mobilevitv2_050": (64, {}),
}
TIMM_FULL = {
    **TIMM_SMALL,
    "efficientvit_b0": (32, {}),
    "regnety_002": (64, {}),
    "levit_128s": (64, {"img_size": 64}),
    # shifted windows (roll, masks), relative position tables, DropPath (0.1 by default)
    "swin_tiny_patch4_window7_224": (
        64,
        {"img_size": 64, "window_size": 4, "embed_dim": 24, "depths": (1, 1), "num_heads": (2, 4)},
    ),
    "deit_tiny_distilled_patch16_224": (32, {"img_size": 32, "patch_size": 8}),
    "maxvit_pico_rw_256": (64, {"img_size": 64}),
    "coatnet_nano_rw_224": (64, {"img_size": 64}),
    "beit_base_patch16_224": (
        32,
        {"img_size": 32, "patch_size": 8, "embed_dim": 32, "depth": 2, "num_heads": 4},
    ),
    "cait_xxs24_224": (32, {"img_size": 32, "patch_size": 8, "depth": 2}),
    "eva02_tiny_patch14_224": (28, {"img_size": 28, "patch_size": 7, "depth": 2}),
    "poolformer_s12": (32, {}),
    "ghostnet_050": (32, {}),
    "dla34": (32, {}),
    "lcnet_050": (32, {}),
    "pvt_v2_b0": (32, {}),
    "edgenext_xx_small": (64, {}),
    "fastvit_t8": (64, {}),
    "nfnet_l0": (32, {}),
    "repvgg_a0": (32, {}),
    "sequencer2d_s": (32, {"layers": (1, 1, 1, 1)}),  # LSTMs over rows and columns
    "hrnet_w18_small": (64, {}, 4),
    "efficientnet_b0": (64, {}, 4),
    "rexnet_100": (64, {}, 4),
    "convmixer_768_32": (64, {}, 4),
}


@pytest.mark.skipif(timm is None, reason="timm is not installed (pip install timm)")
@pytest.mark.parametrize("name", sorted(TIMM_FULL if FULL else TIMM_SMALL))
def test_timm(name):
    size, kwargs, *batch = (TIMM_FULL if FULL else TIMM_SMALL)[name]
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)
    x, y = _images(batch[0] if batch else 2, size, seed=3)
    _check_step(model, (x, y), _classification_loss)
