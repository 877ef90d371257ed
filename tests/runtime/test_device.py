"""Device management: count, properties, current device, the device() context, ocl:N indices,
tensors and modules on the device."""

from __future__ import annotations

import pytest
import torch
from ocl_testing import DEVICE

PROPERTY_FIELDS = {
    "name": str,
    "vendor": str,
    "platform": str,
    "driver_version": str,
    "opencl_version": str,
    "opencl_c_version": str,
    "extensions": tuple,
    "type": str,
    "total_memory": int,
    "max_alloc": int,
    "multi_processor_count": int,
    "max_work_group_size": int,
    "local_memory": int,
    "supports_fp16": bool,
    "supports_fp64": bool,
}


def test_available_and_count():
    assert torch.ocl.is_available()
    n = torch.ocl.device_count()
    assert isinstance(n, int) and n >= 1
    assert torch.ocl.why_unavailable() == ""
    torch.ocl.init()
    assert torch.ocl.is_initialized()


def test_properties_of_every_device():
    for i in range(torch.ocl.device_count()):
        props = torch.ocl.get_device_properties(i)
        for field, kind in PROPERTY_FIELDS.items():
            assert isinstance(getattr(props, field), kind), (field, getattr(props, field))
        assert props.name and props.name == torch.ocl.get_device_name(i)
        assert props.type in ("GPU", "ACCELERATOR", "CPU", "OTHER")
        assert props.total_memory > 0
        assert 0 < props.max_alloc <= props.total_memory
        assert props.multi_processor_count >= 1
        assert props.max_work_group_size >= 1
        assert props.local_memory > 0
        assert props.opencl_version.startswith("OpenCL ")
        assert props.opencl_c_version.startswith("OpenCL C ")
        assert all(isinstance(e, str) and e for e in props.extensions)
        if "cl_khr_fp64" in props.extensions:
            assert props.supports_fp64
        assert props.supports_fp16 == ("cl_khr_fp16" in props.extensions)


def test_properties_accept_device_forms():
    idx = torch.ocl.current_device()
    by_int = torch.ocl.get_device_properties(idx)
    assert torch.ocl.get_device_properties() == by_int
    assert torch.ocl.get_device_properties(f"ocl:{idx}") == by_int
    assert torch.ocl.get_device_properties(torch.device("ocl", idx)) == by_int
    assert torch.ocl.get_device_properties("ocl") == by_int
    assert torch.ocl.get_device_name() == by_int.name
    with pytest.raises(ValueError):
        torch.ocl.get_device_properties("cpu")


def test_current_device_and_set_device():
    start = torch.ocl.current_device()
    assert start == 0
    try:
        for i in range(torch.ocl.device_count()):
            torch.ocl.set_device(i)
            assert torch.ocl.current_device() == i
        torch.ocl.set_device(f"ocl:{start}")
        assert torch.ocl.current_device() == start
    finally:
        torch.ocl.set_device(start)


def test_device_context_manager():
    start = torch.ocl.current_device()
    last = torch.ocl.device_count() - 1
    with torch.ocl.device(last):
        assert torch.ocl.current_device() == last
    assert torch.ocl.current_device() == start
    with torch.ocl.device(torch.device("ocl", last)):
        assert torch.ocl.current_device() == last
    assert torch.ocl.current_device() == start
    with torch.ocl.device(None):
        assert torch.ocl.current_device() == start
    # Restored after an exception too.
    with pytest.raises(KeyError):
        with torch.ocl.device(last):
            raise KeyError("inside")
    assert torch.ocl.current_device() == start


def _assert_names_index_and_count(excinfo, index, count):
    msg = str(excinfo.value)
    assert f"ocl:{index}" in msg, msg
    assert str(count) in msg, msg


def test_invalid_index_raises_naming_index_and_count():
    n = torch.ocl.device_count()
    for bad in (n, n + 3):
        with pytest.raises((IndexError, RuntimeError)) as info:
            torch.empty(2, device=f"ocl:{bad}")
        _assert_names_index_and_count(info, bad, n)
        with pytest.raises((IndexError, RuntimeError)) as info:
            torch.ocl.set_device(bad)
        _assert_names_index_and_count(info, bad, n)
        with pytest.raises((IndexError, RuntimeError)) as info:
            torch.ocl.get_device_properties(bad)
        _assert_names_index_and_count(info, bad, n)
        with pytest.raises((IndexError, RuntimeError)) as info:
            torch.ones(3).to(f"ocl:{bad}")
        _assert_names_index_and_count(info, bad, n)
    assert torch.ocl.current_device() == 0


def test_tensors_on_the_device():
    t = torch.ones(2, 3, device="ocl")
    assert t.device.type == "ocl"
    assert t.device.index == torch.ocl.current_device()
    assert t.device == torch.device("ocl", torch.ocl.current_device())
    assert t.is_ocl and not t.is_cpu
    u = torch.zeros(4, device=torch.device("ocl"))
    assert u.is_ocl
    v = torch.tensor([1.0, 2.0]).to(torch.device("ocl", 0))
    assert v.device == torch.device("ocl", 0)
    assert str(v.device) == "ocl:0"


def test_tensor_ocl_method_and_is_ocl():
    c = torch.arange(6.0).reshape(2, 3)
    assert not c.is_ocl
    d = c.ocl()
    assert d.is_ocl and d.device.type == "ocl"
    assert torch.equal(d.cpu(), c)
    assert c.ocl(0).device == torch.device("ocl", 0)
    assert d.ocl() is d
    h = c.ocl(non_blocking=True)
    torch.ocl.synchronize()
    assert torch.equal(h.cpu(), c)
    # Storage methods.
    s = c.untyped_storage().ocl()
    assert s.device.type == "ocl" and s.is_ocl


def test_module_to_device():
    m = torch.nn.Linear(4, 3)
    w = m.weight.detach().clone()
    m.ocl()
    assert m.weight.is_ocl and m.bias.is_ocl
    assert torch.equal(m.weight.detach().cpu(), w)
    m.cpu()
    assert not m.weight.is_ocl
    m.to("ocl")
    assert m.weight.device.type == "ocl"
    m2 = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).to(DEVICE)
    assert all(p.is_ocl for p in m2.parameters())
    b = torch.nn.BatchNorm1d(4).ocl()
    assert all(buf.is_ocl for buf in b.buffers())
    assert m(torch.ones(2, 4, device=DEVICE)).device.type == "ocl"


def test_accelerator_api():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "ocl"
    assert torch.accelerator.device_count() == torch.ocl.device_count()
    assert torch.accelerator.current_device_index() == torch.ocl.current_device()
    torch.accelerator.synchronize()


def test_synchronize_forms():
    torch.ones(10, device=DEVICE).mul_(2)
    torch.ocl.synchronize()
    torch.ocl.synchronize(0)
    torch.ocl.synchronize("ocl:0")
    torch.ocl.synchronize(torch.device("ocl"))


def test_print_device_tensor():
    with torch.ocl.fallback_mode("silent"):
        text = repr(torch.tensor([1.5, -2.0, 3.25]).to(DEVICE))
    assert "device='ocl:0'" in text and "1.5000" in text


# Attributes torch may probe on torch.ocl and do without, each with what happens then.
_DEVICE_MODULE_ATTRIBUTES_NOT_PROVIDED = {
    "sparse": "no sparse tensors on ocl (Tensor.to reports it)",
    "_utils": "torch.load then takes the device index from the location string, which is right",
    "default_generators": "graph-safe RNG of torch.compile, which raises without it",
    "_get_generator": "graph-safe RNG of torch.compile, which raises without it",
    # torch 2.14: torch.accelerator._utils._lazy_call defers a callable until the device module
    # is initialised; without the name it runs the callable at once, which is right here (the
    # runtime initialises itself on first use).
    "_lazy_call": "torch.accelerator (2.14+) then runs the callable at once, which is right",
}


def test_device_module_has_what_torch_probes_for():
    """torch probes device modules with getattr(module, name, default) and hasattr and takes
    another path when a name is missing - silently, in torch.utils.checkpoint's case (its
    _initialized check: dropout masks were not replayed, gradients came out wrong). Every name
    torch's own Python code probes for is either on torch.ocl or listed above with the reason."""
    import pathlib
    import re

    probe = re.compile(r"(?:getattr|hasattr)\((?:device_mod\w*|device_module)\s*,\s*\"(\w+)\"")
    root = pathlib.Path(torch.__file__).parent
    names = set()
    for path in root.rglob("*.py"):
        if "testing" in path.parts:
            continue
        names.update(probe.findall(path.read_text(encoding="utf-8", errors="replace")))
    assert "_initialized" in names, "the scan no longer finds torch.utils.checkpoint's probe"
    missing = sorted(
        n
        for n in names
        if not hasattr(torch.ocl, n) and n not in _DEVICE_MODULE_ATTRIBUTES_NOT_PROVIDED
    )
    assert not missing, f"torch probes torch.ocl for {missing}"
