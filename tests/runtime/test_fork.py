"""fork() after the parent initialised OpenCL: the child gets a clear error pointing at 'spawn',
fork-based DataLoader workers that stay on the CPU work, and the parent is unaffected."""

from __future__ import annotations

import multiprocessing as mp
import sys
import warnings

import pytest
import torch
from ocl_testing import DEVICE

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in mp.get_all_start_methods(),
    reason="the 'fork' start method is not available on this platform",
)


def _child_touches_device(conn):
    try:
        torch.ones(2, device="ocl")
    except RuntimeError as e:
        conn.send(("RuntimeError", str(e)))
    except BaseException as e:  # noqa: BLE001 - report anything else to the parent
        conn.send((type(e).__name__, str(e)))
    else:
        conn.send(("no error", ""))
    conn.close()


def _fork_context():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (Python 3.12+)
        return mp.get_context("fork")


def test_child_gets_error_mentioning_spawn():
    x = torch.ones(3, device=DEVICE) * 2  # the parent has initialised OpenCL
    torch.ocl.synchronize()
    ctx = _fork_context()
    parent_conn, child_conn = ctx.Pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        proc = ctx.Process(target=_child_touches_device, args=(child_conn,))
        proc.start()
    child_conn.close()
    assert parent_conn.poll(120), "the forked child did not answer"
    kind, message = parent_conn.recv()
    proc.join(60)
    assert proc.exitcode == 0
    assert kind == "RuntimeError", (kind, message)
    assert "spawn" in message
    # The parent keeps working.
    assert x.cpu().tolist() == [2.0, 2.0, 2.0]
    assert (torch.arange(4.0).to(DEVICE) + 1).cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert not torch.ocl._is_in_bad_fork()


def test_fork_dataloader_workers():
    torch.ones(1, device=DEVICE).cpu()  # initialised before forking
    data = torch.arange(200, dtype=torch.float32).reshape(100, 2)
    labels = torch.arange(100)
    dataset = torch.utils.data.TensorDataset(data, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loader = torch.utils.data.DataLoader(
            dataset, batch_size=16, num_workers=2, multiprocessing_context="fork"
        )
        seen = []
        total = torch.zeros(2, device=DEVICE)
        for xb, yb in loader:
            assert xb.device.type == "cpu"
            seen.append(yb)
            total = total + (xb.to(DEVICE) * 1.0)[0]
    assert torch.equal(torch.cat(seen), labels)
    expected = sum(data[i] for i in range(0, 100, 16))
    assert torch.equal(total.cpu(), expected)
    # The parent keeps working.
    assert (torch.ones(3, device=DEVICE) * 5).cpu().tolist() == [5.0, 5.0, 5.0]
