"""How fast `torchup check` could be with a perfect pre-filter, beside ruff, interleaved on one machine.

    python3 bench/prefilter_floor.py CORPUS_DIR [ROUNDS] [-- TORCHUP_OPTIONS...]   # e.g. -- --select TOR

Three runs of the same cold check (`--no-cache --isolated`, the files named on the command line):

- every file of the corpus;
- the files a perfect pre-filter would pass on (those with a finding) and those without any of the
  run's trigger words (which grep settles today, unread by Python): the run's floor, whatever the
  pre-filter learns, as long as the analysis of the files with findings stays as it is;
- the files with a finding alone.

and `ruff check --select NPY201` over every file; and CPython's own parser over the files with
findings, in this process, its time divided among the machine's cores as if they shared it perfectly:
the floor of any analysis that parses whole each file it reports on (torchup's skeleton parses less
where the rules allow). Which files have a finding comes from a JSON run; which spell a trigger
word from torchup's own pre-filter (``Checker.scan_pattern``) on each file's bytes. A benchmark, not
a test: the standard library and the torchup of this checkout.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--output-format", "concise", "--quiet", "--no-respect-gitignore", "--isolated", "--no-cache"]


def sources(corpus: Path) -> list[str]:
    return sorted(
        str(path) for path in corpus.rglob("*")
        if path.suffix in (".py", ".pyi") and "__pycache__" not in path.parts and path.is_file()
    )


def torchup(files: list[str], extra: list[str], output: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "torchup", "check", *(output or FLAGS), *extra, *files]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def with_findings(files: list[str], extra: list[str]) -> set[str]:
    command = torchup(files, extra, ["--output-format", "json", "--no-respect-gitignore", "--isolated", "--no-cache"])
    done = subprocess.run(command, env=environment(), capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"torchup failed ({done.returncode}): {done.stderr.strip()}")
    return {os.path.abspath(finding["path"]) for finding in json.loads(done.stdout or "[]")}


def without_words(files: list[str], extra: list[str]) -> set[str]:
    """The files in which the run's pre-filter finds none of its trigger words."""
    sys.path.insert(0, str(ROOT))
    from torchup.check.checker import Checker
    from torchup.cli.commands import settings_overrides
    from torchup.cli.main import build_parser
    from torchup.settings.provider import SettingsProvider

    args = build_parser().parse_args(["check", "--isolated", *extra, "."])
    checker = Checker([], settings_for=SettingsProvider(settings_overrides(args), isolated=True))
    found = set()
    for path in files:
        pattern = checker.scan_pattern(path)
        if pattern is not None and pattern.bytes.search(Path(path).read_bytes()) is None:
            found.add(path)
    return found


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def parse_seconds(files: list[str]) -> float:
    """CPython's own parser (``ast.parse``) over ``files``, in this process: what any analysis that
    parses every file it reports on costs at least, before it reads a single node."""
    texts = [Path(path).read_bytes() for path in files]
    start = time.perf_counter()
    for text in texts:
        with contextlib.suppress(SyntaxError, ValueError):  # (reported by the check; timed all the same)
            ast.parse(text)
    return time.perf_counter() - start


def main() -> None:
    arguments = sys.argv[1:]
    extra = arguments[arguments.index("--") + 1:] if "--" in arguments else []
    positional = arguments[:arguments.index("--")] if "--" in arguments else arguments
    corpus, rounds = Path(positional[0]).resolve(), int(positional[1]) if len(positional) > 1 else 3
    files = sources(corpus)
    findings = with_findings(files, extra)
    wordless = without_words(files, extra)
    sets = {
        "every file": files,
        "perfect pre-filter": [path for path in files if path in findings or path in wordless],
        "files with findings": [path for path in files if path in findings],
    }
    ruff = [shutil.which("ruff") or "ruff", "check", "--select", "NPY201", "--no-cache", "--isolated",
            "--no-respect-gitignore", "--output-format", "concise", *files]
    parser = f"CPython's parser alone, files with findings, on {os.cpu_count()} cores"
    times: dict[str, list[float]] = {name: [] for name in [*sets, "ruff NPY201, every file", parser]}
    for _ in range(rounds):
        for name, chosen in sets.items():
            times[name].append(timed(torchup(chosen, extra), environment()))
        times["ruff NPY201, every file"].append(timed(ruff))
        times[parser].append(parse_seconds(sets["files with findings"]) / (os.cpu_count() or 1))
    print(f"{corpus}: {len(files)} files, {len(findings)} with findings, {len(wordless)} without a trigger word;"
          f" torchup options: {' '.join(extra) or '(defaults)'}")
    print("| run | files | median s | min s |\n|---|---:|---:|---:|")
    for name, values in times.items():
        count = len(sets.get(name, sets["files with findings"] if name == parser else files))
        print(f"| {name} | {count:,} | {statistics.median(values):.2f} | {min(values):.2f} |")


if __name__ == "__main__":
    main()
