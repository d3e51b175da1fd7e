"""Cold and warm `torchup check` of two checkouts, and ruff (NPY201), interleaved on one machine.

    python3 bench/compare_revisions.py BEFORE_CHECKOUT AFTER_CHECKOUT CORPUS_DIR ROUNDS

Each checkout runs from its own directory (PYTHONPATH) on its own copy of the corpus. Cold is
`--no-cache`; warm is a run after two untimed ones have filled the cache and the replay. A benchmark,
not a test: standard library only.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLAGS = ["--output-format", "concise", "--quiet", "--no-respect-gitignore", "--isolated"]


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def torchup(checkout: str, corpus: Path, cache: bool) -> tuple[list[str], dict[str, str]]:
    command = [sys.executable, "-m", "torchup", "check", *FLAGS, *([] if cache else ["--no-cache"]), str(corpus)]
    return command, {**os.environ, "PYTHONPATH": checkout}


def main() -> None:
    before, after, corpus, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    checkouts = {"before": before, "after": after}
    work = Path(tempfile.mkdtemp(prefix="torchup-compare-"))
    copies = {name: work / name for name in ("before", "after", "ruff")}
    for copy in copies.values():
        shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("__pycache__"))
    time.sleep(3)  # (files just written are racy for the replay: let them settle, as a user's tree has)
    ruff = [shutil.which("ruff") or "ruff", "check", "--select", "NPY201", "--no-cache", "--isolated",
            "--no-respect-gitignore", "--output-format", "concise", str(copies["ruff"])]
    keys = ("before cold", "after cold", "ruff", "before warm", "after warm")
    times: dict[str, list[float]] = {key: [] for key in keys}
    for _ in range(rounds):
        for name, checkout in checkouts.items():
            times[f"{name} cold"].append(timed(*torchup(checkout, copies[name], cache=False)))
        times["ruff"].append(timed(ruff))
    for name, checkout in checkouts.items():
        for _ in range(2):
            timed(*torchup(checkout, copies[name], cache=True))
            time.sleep(2.5)
    for _ in range(rounds):
        for name, checkout in checkouts.items():
            times[f"{name} warm"].append(timed(*torchup(checkout, copies[name], cache=True)))
    medians = {key: statistics.median(values) for key, values in times.items()}
    for key, values in times.items():
        print(f"{key}: median {medians[key]:.3f} s, min {min(values):.3f} s ({len(values)} runs)")
    for name in checkouts:
        print(f"{name}: cold / ruff {medians[f'{name} cold'] / medians['ruff']:.2f}x, "
              f"warm / cold {medians[f'{name} warm'] / medians[f'{name} cold']:.1%}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
