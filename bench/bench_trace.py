"""Overhead of ``torchup trace`` on a CPU training loop of a small MLP (a benchmark, not a test).

Runs ``tests/trace_programs/train_mlp.py`` plainly and under ``python -m torchup.trace`` in the
torch virtualenvs the tests use, alternating runs, and prints the median wall times and their
ratio per torch version. ``--write-results`` appends the table to ``bench/RESULTS.md``.

    python3 bench/bench_trace.py [--runs 5] [--steps 300] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
PROGRAM = ROOT / "tests" / "trace_programs" / "train_mlp.py"
sys.path.insert(0, str(ROOT / "tests"))

from results import publish  # noqa: E402

from differential.envs import TORCH_VERSIONS, ensure_env  # noqa: E402


def timed(command: list[str]) -> tuple[float, float]:
    """(whole-process wall seconds, training-loop seconds as the program reports them)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=PROGRAM.parent, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{completed.stderr[-2000:]}")
    loop = next(float(line.split()[1]) for line in completed.stderr.splitlines() if line.startswith("loop_seconds"))
    return elapsed, loop


def measure(version: str, runs: int, steps: int) -> tuple[float, float, float, float]:
    python = str(ensure_env(version))
    plain, traced = [], []
    for _ in range(runs):  # alternate, so drifting machine load hits both alike
        plain.append(timed([python, PROGRAM.name, str(steps)]))
        traced.append(timed([python, "-m", "torchup.trace", PROGRAM.name, str(steps)]))
    return (
        statistics.median(p[0] for p in plain),
        statistics.median(t[0] for t in traced),
        statistics.median(p[1] for p in plain),
        statistics.median(t[1] for t in traced),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    rows = [
        "| torch | loop plain s | loop traced s | loop ratio | process plain s | process traced s | process ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for version in TORCH_VERSIONS:
        plain, traced, loop_plain, loop_traced = measure(version, args.runs, args.steps)
        rows.append(
            f"| {version} | {loop_plain:.2f} | {loop_traced:.2f} | {loop_traced / loop_plain:.2f}x "
            f"| {plain:.2f} | {traced:.2f} | {traced / plain:.2f}x |"
        )
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = platform.processor() or platform.machine()
    machine = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = "\n".join(
        [
            f"## torchup trace overhead, {stamp}",
            "",
            f"Machine: {machine}. Program: `tests/trace_programs/train_mlp.py {args.steps}` (MLP 16-64-4, "
            f"batch 256, SGD, a clamp on the logits): whole-process wall time including interpreter and torch "
            f"start-up, and the training loop alone as the program times it; OMP_NUM_THREADS=1, medians of "
            f"{args.runs} alternating runs. Target: at most 1.5x.",
            "",
            *rows,
            "",
        ]
    )
    publish(text, args.write_results)


if __name__ == "__main__":
    main()
