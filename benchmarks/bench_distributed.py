"""torch.distributed on ocl tensors against Gloo on CPU tensors, in one run on this machine.

    python benchmarks/bench_distributed.py [--sizes-mb 1 4 16 64 256] [--out benchmarks/results]

(a) all_reduce (sum, float32) bandwidth on 2 ranks for each size: ocl tensors against CPU
    tensors (Gloo alone), in the same processes and group, taking turns within each repeat;
    bandwidth = bytes / time of the call (the ocl time includes the end of the transfer: the
    device is synchronised after each call). ocl tensors are handed to Gloo three ways:
    "map" (the device memory mapped into the host, Gloo works on it in place; the default on
    devices whose memory is the host's), "copy" (staged through pinned host memory, the default
    elsewhere), and "copy, N chunks" (the tensor all-reduced as N chunks with async_op=True: the
    copy of chunk i+1 overlaps Gloo's reduction of chunk i - the pipelining a staged transfer
    could do inside one call). The ratio CPU time / ocl time is what the transfer leaves of
    Gloo's speed (1.0 = free).
(b) DDP training step (the demo CNN of examples/train_cnn.py, batch 64 per rank, SGD, DDP's
    buckets of --bucket-cap-mb) on 2 ranks against 1 rank (same per-rank batch): median step
    time (each step ends with the device idle) and images/s over all ranks. On 2 ranks three
    ways: transfer "map" (where the device maps for free) with the bucket's wait for the device
    on the issuer's thread (the default), the same with that overlap off
    (TORCH_OCL_DISTRIBUTED_OVERLAP=0: the wait holds up autograd's thread), and transfer "copy".
    Both ranks share this machine's device and CPU cores, so this measures the overhead of the
    data-parallel step, not a speed-up.

Writes bench_distributed.json and bench_distributed.png to --out and prints progress and a table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torch_ocl.distributed import _issuer, _transfer

HERE = os.path.dirname(os.path.abspath(__file__))


def _init(rank, world, init_file):
    dist.init_process_group(
        "cpu:gloo,ocl:oclgloo",
        init_method=f"file://{init_file}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=600),
    )


def _say(rank, text):
    if rank == 0:
        print(text, flush=True)


def _chunked_all_reduce(t, chunks):
    works = [dist.all_reduce(c, async_op=True) for c in t.chunk(chunks)]
    for w in works:
        w.wait()


def bench_all_reduce(rank, sizes_mb, repeats, chunks):
    maps = _transfer.maps(torch.device("ocl", 0))
    kinds = ["cpu", "map", "copy", "chunks"] if maps else ["cpu", "copy", "chunks"]
    rows = []
    for mb in sizes_mb:
        numel = int(mb * 2**20) // 4
        cpu = torch.ones(numel)
        ocl = torch.ones(numel, device="ocl")
        times = {k: [] for k in kinds}
        for rep in range(repeats + 1):  # the first round warms up (buffers, connections)
            for kind in kinds:
                t = cpu if kind == "cpu" else ocl
                _transfer.set_transfer_mode("map" if kind == "map" else "copy")
                dist.barrier()
                if kind != "cpu":
                    torch.ocl.synchronize()
                start = time.perf_counter()
                if kind == "chunks":
                    _chunked_all_reduce(t, chunks)
                else:
                    dist.all_reduce(t)
                if kind != "cpu":
                    torch.ocl.synchronize()  # the unmap or the copy back has run
                if rep:
                    times[kind].append(time.perf_counter() - start)
                t.fill_(1.0)
        _transfer.set_transfer_mode("auto")
        best = {k: statistics.median(v) for k, v in times.items()}
        # The staging's share: the device-to-host and host-to-device copies alone (no Gloo).
        host = torch.empty(numel, pin_memory=True)
        copies = []
        for _ in range(repeats):
            torch.ocl.synchronize()
            start = time.perf_counter()
            host.copy_(ocl, non_blocking=True)
            torch.ocl.synchronize()
            ocl.copy_(host, non_blocking=True)
            torch.ocl.synchronize()
            copies.append(time.perf_counter() - start)
        del host
        row = {
            "size_mb": mb,
            "cpu_s": best["cpu"],
            "cpu_gb_s": numel * 4 / best["cpu"] / 1e9,
            "staging_copies_s": statistics.median(copies),
            "copy_gb_s": 2 * numel * 4 / statistics.median(copies) / 1e9,
            "chunks": chunks,
        }
        for kind in kinds[1:]:
            row[f"{kind}_s"] = best[kind]
            row[f"{kind}_gb_s"] = numel * 4 / best[kind] / 1e9
            row[f"{kind}_ratio"] = best["cpu"] / best[kind]
        default = "map" if maps else "copy"
        row["default"] = default
        row["ratio"] = row[f"{default}_ratio"]  # the default transfer's
        rows.append(row)
        _say(
            rank,
            f"  all_reduce {mb:6.1f} MB: Gloo on CPU tensors {row['cpu_gb_s']:6.2f} GB/s; ocl "
            + ", ".join(
                f"{k} {row[f'{k}_gb_s']:.2f} GB/s ({row[f'{k}_ratio']:.2f})" for k in kinds[1:]
            )
            + f"; the two staging copies alone {row['staging_copies_s'] * 1e3:.1f} ms",
        )
        del cpu, ocl
    return rows


def bench_ddp_step(rank, world, steps, batch, bucket_cap_mb):
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    from torch.nn.parallel import DistributedDataParallel as DDP
    from train_cnn import make_model

    torch.manual_seed(0)
    model = DDP(make_model().to("ocl"), bucket_cap_mb=bucket_cap_mb)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, 1, 8, 8, generator=g).to("ocl")
    y = torch.randint(0, 10, (batch,), generator=g).to("ocl")

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    torch.ocl.synchronize()
    dist.barrier()
    times = []
    for _ in range(steps):  # each step ends with the device idle: its time is the median's
        start = time.perf_counter()
        step()
        torch.ocl.synchronize()
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"world": world, "step_s": seconds, "images_s": world * batch / seconds}


# DDP runs on 2 ranks: (name, transfer mode, overlap on the issuer's thread)
DDP_RUNS = [("map", "map", True), ("map, overlap off", "map", False), ("copy", "copy", True)]


def _rank(rank, world, init_file, args, out_file):
    _init(rank, world, init_file)
    result = {}
    if world == 2 and not args.skip_all_reduce:
        _say(rank, f"(a) all_reduce, {world} ranks, median of {args.repeats}")
        result["all_reduce"] = bench_all_reduce(rank, args.sizes_mb, args.repeats, args.chunks)
    runs = [("auto", "auto", True)] if world == 1 else DDP_RUNS
    if not _transfer.maps(torch.device("ocl", 0)):
        runs = [r for r in runs if r[1] != "map"] or [("auto", "auto", True)]
    for name, mode, overlap in runs:
        _transfer.set_transfer_mode(mode)
        _issuer.set_enabled(overlap)
        _say(rank, f"(b) DDP step on {world} rank(s), {args.steps} steps, transfer {name}")
        result[f"ddp {name}"] = bench_ddp_step(
            rank, world, args.steps, args.batch, args.bucket_cap_mb
        )
        _say(rank, f"  {result[f'ddp {name}']['step_s'] * 1e3:.1f} ms per step (median)")
    _transfer.set_transfer_mode("auto")
    _issuer.set_enabled(True)
    result["ddp"] = result[f"ddp {runs[0][0]}"]
    if rank == 0:
        with open(out_file, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def _spawn(world, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rank0.json")
        mp.spawn(_rank, args=(world, os.path.join(tmp, "init"), args, out), nprocs=world)
        with open(out) as f:
            return json.load(f)


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    rows = results["all_reduce"]
    sizes = [r["size_mb"] for r in rows]
    ax1.plot(sizes, [r["cpu_gb_s"] for r in rows], "o-", label="Gloo, CPU tensors")
    labels = {
        "map": "ocl tensors, mapped (in place)",
        "copy": "ocl tensors, copied (pinned staging)",
        "chunks": f"ocl tensors, copied in {rows[0]['chunks']} pipelined chunks",
    }
    for kind, marker in (("map", "s-"), ("copy", "^-"), ("chunks", "v--")):
        if f"{kind}_gb_s" in rows[0]:
            ax1.plot(sizes, [r[f"{kind}_gb_s"] for r in rows], marker, label=labels[kind])
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("all_reduce size (MB, float32)")
    ax1.set_ylabel("GB/s (bytes / time of the call)")
    ax1.set_title("all_reduce, 2 ranks on one machine")
    ax1.legend()
    ax1.grid(alpha=0.3)
    runs = results.get("ddp_2_runs") or {"": results["ddp_2"]}
    ddp = [results["ddp_1"], *runs.values()]
    names = ["1 rank"] + [f"2 ranks\n{name}" for name in runs]
    ax2.bar(names, [d["step_s"] * 1e3 for d in ddp], color=[f"C{i}" for i in range(len(ddp))])
    ax2.set_ylabel("ms per step (per-rank batch 64)")
    ax2.set_title(f"DDP step, demo CNN on ocl, buckets of {results['bucket_cap_mb']:g} MB")
    ax2.set_ylim(0, max(d["step_s"] for d in ddp) * 1e3 * 1.15)
    for i, d in enumerate(ddp):
        ax2.text(i, d["step_s"] * 1e3, f"{d['images_s']:.0f} img/s", ha="center", va="bottom")
    fig.suptitle(results["meta"]["device_name"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1, 4, 16, 64, 256])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64, help="per rank")
    parser.add_argument("--chunks", type=int, default=4, help="of the pipelined 'copy' run")
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's bucket size")
    parser.add_argument("--skip-all-reduce", action="store_true")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    import torch_ocl  # noqa: F401

    results = {
        "meta": {
            "device_name": torch.ocl.get_device_name(0),
            "torch": torch.__version__,
            "torch_ocl": torch_ocl.__version__,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
    }
    print(f"device: {results['meta']['device_name']}", flush=True)
    two = _spawn(2, args)
    args.skip_all_reduce = True
    one = _spawn(1, args)
    results["all_reduce"] = two.get("all_reduce", [])
    results["ddp_1"], results["ddp_2"] = one["ddp"], two["ddp"]
    results["ddp_2_runs"] = {k[4:]: v for k, v in two.items() if k.startswith("ddp ")}
    results["bucket_cap_mb"] = args.bucket_cap_mb
    results["ddp_step_ratio_2_vs_1"] = two["ddp"]["step_s"] / one["ddp"]["step_s"]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_distributed.json"), "w") as f:
        json.dump(results, f, indent=1)
    if results["all_reduce"]:
        chart(results, os.path.join(args.out, "bench_distributed.png"))
    kinds = [
        k
        for k in ("map", "copy", "chunks")
        if results["all_reduce"] and f"{k}_s" in results["all_reduce"][0]
    ]
    print(
        "\nall_reduce   Gloo/CPU GB/s  "
        + "  ".join(f"{k:>6} GB/s (ratio)" for k in kinds)
        + "  copies ms"
    )
    for r in results["all_reduce"]:
        print(
            f"  {r['size_mb']:7.1f} MB  {r['cpu_gb_s']:9.2f}  "
            + "  ".join(f"{r[f'{k}_gb_s']:11.2f} ({r[f'{k}_ratio']:.2f})" for k in kinds)
            + f"  {r['staging_copies_s'] * 1e3:9.1f}"
        )
    one_ms, two_ms = one["ddp"]["step_s"] * 1e3, two["ddp"]["step_s"] * 1e3
    print(
        f"DDP step: 1 rank {one_ms:.1f} ms, 2 ranks {two_ms:.1f} ms "
        f"(x{results['ddp_step_ratio_2_vs_1']:.2f}); images/s {one['ddp']['images_s']:.0f} -> "
        f"{two['ddp']['images_s']:.0f}"
    )
    for name, run in results["ddp_2_runs"].items():
        print(f"DDP step on 2 ranks, transfer {name}: {run['step_s'] * 1e3:.1f} ms")
    print(f"wrote {args.out}/bench_distributed.json and .png")


if __name__ == "__main__":
    main()
