"""Starts the ranks of a test scenario as separate Python processes and collects their reports.

Each rank runs ``python ranks.py SCENARIO RANK WORLD INIT_FILE REPORT_FILE`` (ranks.py, or
another script of this folder with the same arguments); a rank writes a JSON report, or a
traceback, to its REPORT_FILE. `run` returns the list of reports and fails with every rank's
output when a rank fails or the whole run outlives `timeout`.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from ocl_testing import child_python_env

HERE = pathlib.Path(__file__).resolve().parent


def child_env(extra: dict | None = None) -> dict:
    env = child_python_env()
    env.setdefault("TORCH_OCL_FALLBACK", "error")
    env.update(extra or {})
    return env


def run_raw(scenario: str, world: int = 2, *, timeout: float = 240, env: dict | None = None,
            args: tuple[str, ...] = (), script: str = "ranks.py",
            ) -> tuple[list, list[str], list[dict | None]]:  # fmt: skip
    """Runs `scenario` of `script` (a file of this folder, ranks.py unless told) on `world`
    ranks: (exit codes (None: killed at the timeout), outputs, reports (None where a rank wrote
    none))."""
    with tempfile.TemporaryDirectory(prefix="torch_ocl_dist_") as tmp:
        init_file = os.path.join(tmp, "init")
        procs, outputs, reports = [], [], []
        for rank in range(world):
            report = os.path.join(tmp, f"report{rank}.json")
            out = open(os.path.join(tmp, f"out{rank}.txt"), "w+")
            cmd = [
                sys.executable,
                str(HERE / script),
                scenario,
                str(rank),
                str(world),
                init_file,
                report,
            ]
            procs.append(
                subprocess.Popen(
                    [*cmd, *args], stdout=out, stderr=subprocess.STDOUT, env=child_env(env)
                )
            )
            outputs.append(out)
            reports.append(report)
        deadline = time.monotonic() + timeout
        codes = []
        for p in procs:
            try:
                codes.append(p.wait(timeout=max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                codes.append(None)
        texts = []
        for out in outputs:
            out.seek(0)
            texts.append(out.read())
            out.close()
        data = [
            json.loads(pathlib.Path(path).read_text()) if os.path.exists(path) else None
            for path in reports
        ]
        return codes, texts, data


def run(scenario: str, world: int = 2, *, timeout: float = 240, expect_exit: dict | None = None,
        env: dict | None = None, args: tuple[str, ...] = (), script: str = "ranks.py",
        ) -> list[dict]:  # fmt: skip
    """Runs `scenario` on `world` ranks and returns their reports. `expect_exit` maps ranks to
    the exit codes they are meant to end with (a rank that kills itself; its report is {});
    every other rank must exit 0 with a report."""
    expect_exit = expect_exit or {}
    codes, texts, data = run_raw(
        scenario, world, timeout=timeout, env=env, args=args, script=script
    )
    results = []
    for rank, (code, report) in enumerate(zip(codes, data, strict=True)):
        wanted = expect_exit.get(rank, 0)
        if code != wanted or (wanted == 0 and report is None):
            dump = "\n".join(
                f"--- rank {r} (exit {c}):\n{t[-6000:]}"
                for r, (c, t) in enumerate(zip(codes, texts, strict=True))
            )
            raise AssertionError(
                f"scenario {scenario}: rank {rank} exited with {code}, expected {wanted}\n{dump}"
            )
        results.append(report if wanted == 0 else {})
    return results
