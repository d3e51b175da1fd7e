"""torchup against TorchFix on the same real files: the hand-labelled corpus (bench/corpus).

Both tools check every file of the corpus with all their rules (`torchfix --select ALL`,
`torchup check --select ALL --from-version 2.0`, one run per repository tree as score.py does).
A TorchFix finding and a torchup finding agree when they stand on the same line and the torchup
code is one of those that stand for the TorchFix code (torchup/data/torchfix.toml). Each line only
one tool reports is judged by the corpus's labels where it has one: `report` (a real use: the other
tool missed it), `lookalike` (not one: a false alarm), or unlabelled. Also the time each tool takes
over the same files (one cold run each).

    python3 bench/compare_torchfix.py --torchfix /path/to/venv/bin/torchfix
    python3 bench/compare_torchfix.py --torchfix ... --write-results   # also bench/RESULTS.md

TorchFix is installed by the maintainer (`pip install torchfix==0.7.0` in a venv of its own, as
bench/bench_peers.py does); nothing here downloads it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "corpus"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import score  # noqa: E402  (bench/corpus/score.py: the manifest, the files, torchup's run)
from results import replace_section  # noqa: E402  (bench/results.py)

from torchup.core.torchfix import table, torchup_codes  # noqa: E402

START, END = "<!-- torchfix-compare:start -->", "<!-- torchfix-compare:end -->"
_FINDING = re.compile(r"^(.+?):(\d+):\d+: (TOR\d+) (?:\[\*\] )?(.*)")
_SUBJECT = re.compile(r"`?(torch[\w.]*|functorch[\w.]*|\w+\.\w+)`?")
Where = tuple[str, int]


def run_torchfix(executable: str, corpus: Path, paths: list[str]) -> tuple[list[tuple[str, int, str, str]], float]:
    started = time.perf_counter()
    done = subprocess.run([executable, "--select", "ALL", *paths], cwd=corpus, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    found = []
    for row in done.stdout.splitlines():
        match = _FINDING.match(row)
        if match:
            found.append((Path(match.group(1)).as_posix(), int(match.group(2)), match.group(3), match.group(4)))
    return found, elapsed


def labels(manifest: dict) -> dict[Where, str]:
    """(path, line) -> `report`, `lookalike` or `old-torch-only`, for every line a label spans."""
    found = {}
    for entry in manifest["files"]:
        path = score.corpus_path(entry)
        for label in entry["labels"]:
            for line in range(label["line"], label.get("end_line", label["line"]) + 1):
                found[(path, line)] = label["expect"]
    return found


def compare(torchfix: list[tuple[str, int, str, str]], torchup: list[dict], labelled: dict[Where, str]) -> dict:
    mapped = {code: set(torchup_codes(code)) for code in table()}
    answers: dict[str, set[str]] = defaultdict(set)  # torchup code -> the TorchFix codes it stands for
    for code, codes in mapped.items():
        for own in codes:
            answers[own].add(code)
    ours: dict[Where, set[str]] = defaultdict(set)
    for finding in torchup:
        if finding["code"] in answers:
            ours[(Path(finding["path"]).as_posix(), int(finding["line"]))].add(finding["code"])
    theirs: dict[Where, set[str]] = defaultdict(set)
    subjects: dict[tuple[Where, str], str] = {}
    for path, line, code, message in torchfix:
        theirs[(path, line)].add(code)
        subject = _SUBJECT.search(message)
        subjects[((path, line), code)] = subject.group(1) if subject else message[:40]
    rows: dict[str, Counter] = defaultdict(Counter)
    for where, codes in theirs.items():
        for code in codes:
            agreed = bool(ours.get(where, set()) & mapped.get(code, set()))
            rows[code]["torchfix"] += 1
            rows[code]["both" if agreed else f"only torchfix: {labelled.get(where, 'unlabelled')}"] += 1
            if not agreed:
                rows[code][f"subject: {subjects[(where, code)]}"] += 1
    for where, codes in ours.items():
        for own in codes:
            # (under the TorchFix code reported on the line that it stands for, else its first)
            matching = [code for code in theirs.get(where, set()) if own in mapped.get(code, set())]
            code = min(matching or answers[own])
            rows[code]["torchup"] += 1
            if not matching:
                rows[code][f"only torchup: {labelled.get(where, 'unlabelled')}"] += 1
    return rows


def render(
    rows: dict[str, Counter], files: int, trees: int, times: tuple[float, float], versions: tuple[str, str]
) -> str:
    kinds = ("report", "lookalike", "old-torch-only", "unlabelled")
    lines = [
        START,
        f"The {files} files of the labelled corpus (bench/corpus), checked by both tools with all their rules "
        f"(`bench/compare_torchfix.py`; {versions[0]}, torchup {versions[1]}). A line only one tool reports is "
        "judged by the corpus's label there: `report` (a real use the other missed), `lookalike` (a false alarm), "
        "`old-torch-only` (code that runs only on old torch).",
        "",
        "| TorchFix code | TorchFix | torchup | both | only TorchFix: real / look-alike / old-torch-only / unlabelled "
        "| only torchup: real / look-alike / old-torch-only / unlabelled |",
        "|---|---:|---:|---:|---|---|",
    ]
    for code in sorted(rows):
        row = rows[code]
        theirs = " / ".join(str(row[f"only torchfix: {kind}"]) for kind in kinds)
        ours = " / ".join(str(row[f"only torchup: {kind}"]) for kind in kinds)
        lines.append(f"| {code} | {row['torchfix']} | {row['torchup']} | {row['both']} | {theirs} | {ours} |")
    lines += ["", "What TorchFix alone reports, by the name its message gives (most frequent first):", ""]
    for code in sorted(rows):
        prefix = "subject: "
        named = Counter({key.removeprefix(prefix): n for key, n in rows[code].items() if key.startswith(prefix)})
        if named:
            lines.append(f"- {code}: " + ", ".join(f"`{name}` {count}" for name, count in named.most_common(8)))
    lines += [
        "",
        f"Time over the same files (one cold run each, this machine): TorchFix {times[0]:.2f} s, "
        f"torchup {times[1]:.2f} s (one run per repository tree: {trees} start-ups, against one for TorchFix).",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torchfix", default="torchfix", help="the torchfix executable (default: on PATH)")
    parser.add_argument("--corpus", type=Path, default=score.DEFAULT_OUT)
    parser.add_argument("--write-results", action="store_true", help="replace the section in bench/RESULTS.md")
    args = parser.parse_args(argv)
    manifest = score.load_manifest(score.MANIFEST)
    paths = [score.corpus_path(entry) for entry in manifest["files"]]
    theirs, their_time = run_torchfix(args.torchfix, args.corpus, paths)
    flags, _ = score.check_flags()
    started = time.perf_counter()
    ours = score.run_torchup(args.corpus, paths, flags)
    our_time = time.perf_counter() - started
    versions = (
        "TorchFix " + subprocess.run([args.torchfix, "--version"], capture_output=True, text=True).stdout.strip(),
        subprocess.run([sys.executable, "-m", "torchup", "--version"], capture_output=True, text=True,
                       cwd=ROOT).stdout.strip(),
    )
    trees = len({path.split("/", 1)[0] for path in paths})
    section = render(compare(theirs, ours, labels(manifest)), len(paths), trees, (their_time, our_time), versions)
    print(section)
    if args.write_results:
        replace_section(section, START, END, "torchup vs TorchFix on the labelled corpus (issue 23)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
