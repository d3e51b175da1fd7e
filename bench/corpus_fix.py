"""Whole-corpus fixer run (issue 8): `fix --unsafe-fixes` over real code, writing nothing.

For every .py file of each corpus: run the fixer in memory with unsafe fixes, then require that
the result compiles, that fixing it again changes nothing, and that nothing crashed. Also times the
CLI's `fix --unsafe-fixes --diff --no-cache` over the corpus and checks it ends without an internal
error. Corpora: the torch packages of the test virtualenvs (2.13.0, 2.14.1) and, when the peer
benchmark has downloaded it, transformers.

    python3 bench/corpus_fix.py [--write-results]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402

from torchup.api import fix_source  # noqa: E402

ENVS = Path(os.environ.get("TORCHUP_TORCH_ENVS", Path.home() / ".cache" / "torchup" / "envs"))
TRANSFORMERS_CACHE = Path.home() / ".cache" / "torchup" / "bench"


def corpora() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for version in ("2.13.0", "2.14.1"):
        site = ENVS / f"torch-{version}" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
        torch_dir = site / "site-packages" / "torch"
        if torch_dir.is_dir():
            found[f"torch {version}"] = torch_dir
    candidates = sorted(TRANSFORMERS_CACHE.glob("**/transformers/__init__.py")) if TRANSFORMERS_CACHE.is_dir() else []
    if candidates:
        found["transformers"] = candidates[0].parent
    elif importlib.util.find_spec("transformers") is not None:
        found["transformers"] = Path(importlib.util.find_spec("transformers").origin).parent  # type: ignore[arg-type]
    return found


def check_corpus(directory: Path) -> dict[str, object]:
    files = sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)
    fixed = failures = crashes = 0
    problems: list[str] = []
    start = time.perf_counter()
    for path in files:
        raw = path.read_bytes()
        try:
            first = fix_source(raw, path=str(path), unsafe_fixes=True)
            if first.source == raw.decode("utf-8", "replace") or not first.fixed:
                continue
            fixed += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(first.source, str(path), "exec", dont_inherit=True)
            again = fix_source(first.source, path=str(path), unsafe_fixes=True)
            if again.source != first.source:
                failures += 1
                problems.append(f"{path}: a second fix changed the file again")
        except SyntaxError as exc:
            failures += 1
            problems.append(f"{path}: the fixed file does not compile: {exc}")
        except Exception as exc:
            crashes += 1
            problems.append(f"{path}: crash: {type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    cli_start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "torchup", "fix", "--unsafe-fixes", "--diff", "--no-cache", "-q",
         "--no-respect-gitignore", str(directory)],
        cwd=ROOT, capture_output=True, text=True,
    )
    cli_seconds = time.perf_counter() - cli_start
    if completed.returncode not in (0, 1) or "internal error" in completed.stderr or "Traceback" in completed.stderr:
        crashes += 1
        problems.append(f"CLI run failed (exit {completed.returncode}): {completed.stderr[-500:]}")
    hunks = completed.stdout.count("\n@@ ") + completed.stdout.startswith("@@ ")
    return {
        "files": len(files),
        "fixed": fixed,
        "failures": failures,
        "crashes": crashes,
        "seconds": seconds,
        "cli_seconds": cli_seconds,
        "hunks": hunks,
        "problems": problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    rows = [
        "| corpus | .py files | files fixed | not compiling / not idempotent | crashes | in-memory s | CLI --diff s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    for name, directory in corpora().items():
        result = check_corpus(directory)
        rows.append(
            f"| {name} | {result['files']:,} | {result['fixed']} | {result['failures']} | {result['crashes']} "
            f"| {result['seconds']:.1f} | {result['cli_seconds']:.1f} |"
        )
        notes += [f"- {name}: {problem}" for problem in result["problems"]]  # type: ignore[union-attr]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            f"## Whole-corpus `fix --unsafe-fixes` run, {stamp}",
            "",
            f"Python {sys.version.split()[0]}, {os.cpu_count()} cores. Every fixed file must compile and be a "
            "fixed point of a second fix; the CLI run must end without an internal error.",
            "",
            *rows,
            "",
            *(notes or ["- no failures and no crashes"]),
            "",
        ]
    )
    publish(text, args.write_results)


if __name__ == "__main__":
    main()
