"""torch.save / torch.load of ocl tensors and of state_dicts, with and without map_location."""

from __future__ import annotations

import io

import pytest
import torch
from ocl_testing import DEVICE, make_cpu


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


@pytest.mark.parametrize("map_location", [None, "cpu", "ocl"], ids=["none", "cpu", "ocl"])
def test_tensor_round_trip(map_location):
    x_cpu = make_cpu((7, 13), torch.float32)
    x = x_cpu.to(DEVICE)
    loaded = _round_trip(x, map_location=map_location)
    want = "cpu" if map_location == "cpu" else "ocl"
    assert loaded.device.type == want
    assert loaded.dtype == x.dtype and loaded.shape == x.shape
    assert torch.equal(loaded.cpu(), x_cpu)


def test_cpu_tensor_loaded_onto_the_device():
    x = make_cpu((5,), torch.float32)
    loaded = _round_trip(x, map_location="ocl")
    assert loaded.device.type == "ocl"
    assert torch.equal(loaded.cpu(), x)
    loaded2 = _round_trip(x, map_location=torch.device("ocl", 0))
    assert loaded2.device == torch.device("ocl", 0)


def test_many_dtypes_and_views_keep_sharing():
    base = make_cpu((6, 4), torch.float32).to(DEVICE)
    obj = {
        "f16": make_cpu((3,), torch.float16).to(DEVICE),
        "i64": make_cpu((2, 2), torch.int64).to(DEVICE),
        "bool": make_cpu((5,), torch.bool).to(DEVICE),
        "base": base,
        "view": base[2:, 1:3],
        "t": base.t(),
    }
    loaded = _round_trip(obj)
    for key, value in obj.items():
        assert loaded[key].device.type == "ocl", key
        assert loaded[key].dtype == value.dtype and loaded[key].shape == value.shape
        assert loaded[key].stride() == value.stride()
        assert torch.equal(loaded[key].cpu(), value.cpu()), key
    # The views still share storage with the base after loading.
    loaded["view"].fill_(-1)
    assert torch.equal(loaded["base"][2:, 1:3].cpu(), torch.full((4, 2), -1.0))


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


@pytest.mark.parametrize("map_location", [None, "cpu", "ocl"], ids=["none", "cpu", "ocl"])
def test_state_dict_bytesio(map_location):
    model = _model().to(DEVICE)
    state = _round_trip(model.state_dict(), map_location=map_location)
    for key, value in model.state_dict().items():
        want = "cpu" if map_location == "cpu" else "ocl"
        assert state[key].device.type == want, key
        assert torch.equal(state[key].cpu(), value.cpu()), key
    fresh_cpu = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fresh_cpu.load_state_dict(state)
    fresh_dev = _model().to(DEVICE)
    with torch.no_grad():
        for p in fresh_dev.parameters():
            p.zero_()
    fresh_dev.load_state_dict(state)
    for a, b in zip(fresh_dev.parameters(), model.parameters(), strict=True):
        assert a.device.type == "ocl"
        assert torch.equal(a.detach().cpu(), b.detach().cpu())
    for a, b in zip(fresh_cpu.parameters(), model.parameters(), strict=True):
        assert a.device.type == "cpu"
        assert torch.equal(a.detach(), b.detach().cpu())


@pytest.mark.parametrize("map_location", [None, "cpu", "ocl"], ids=["none", "cpu", "ocl"])
def test_state_dict_file(tmp_path, map_location):
    model = _model().to(DEVICE)
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    assert path.stat().st_size > 0
    state = torch.load(path, map_location=map_location)
    want = "cpu" if map_location == "cpu" else "ocl"
    assert all(v.device.type == want for v in state.values())
    restored = _model()
    restored.load_state_dict(state)
    for a, b in zip(restored.parameters(), model.parameters(), strict=True):
        assert torch.equal(a.detach().cpu(), b.detach().cpu())
    # A whole tensor file, too.
    x = make_cpu((3, 3), torch.float32).to(DEVICE)
    torch.save(x, tmp_path / "x.pt")
    y = torch.load(tmp_path / "x.pt", map_location=map_location)
    assert y.device.type == want
    assert torch.equal(y.cpu(), x.cpu())
