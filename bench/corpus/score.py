"""Recall and precision of torchup per rule family on the hand-labelled corpus of real code (issue 21).

    python3 bench/corpus/materialize.py --mirrors DIR      # once: re-create the files (DIR: fetched git mirrors)
    python3 bench/corpus/score.py                                     # corpus: ~/.cache/torchup/corpus
    python3 bench/corpus/score.py --corpus DIR --write-results        # also replace the section of bench/RESULTS.md

torchup runs once over the manifest's files (`check --select ALL --from-version 2.0 --output-format json
--no-cache --isolated`; a flag this checkout's `check --help` lacks is left out, and the report says so).
A finding matches a label when its path and line are the label's and its code is one of the family's
codes (FAMILIES). Per family:

- recall: labelled `report` lines with a finding of the family / labelled `report` lines;
- false positives: `lookalike` lines with a finding of the family, and unlabelled lines with one (both
  listed for review);
- precision: `report` lines found / (those + false-positive lines), counted by line, so two findings of
  one family on one line count once;
- `old-torch-only` lines (a branch only old torch takes) are counted apart, reported or not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from materialize import DEFAULT_OUT, MANIFEST, corpus_path, load_manifest  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
START, END = "<!-- corpus:start -->", "<!-- corpus:end -->"
HEADING = "## Recall and precision on real code (issue 21)"

# The rule family of each label and the codes whose findings count for it: the one place this mapping lives.
FAMILIES: dict[str, tuple[str, ...]] = {
    "load": ("TU601",),
    "amp": ("TU602", "TU611"),
    "sdpa": ("TU603",),
    "checkpoint": ("TU604",),
    "default-tensor-type": ("TU605",),
    "onnx": ("TU606",),
    "weight-norm": ("TU607",),
    "assert-allclose": ("TU608",),
    "lr-verbose": ("TU609",),
    "upsample": ("TU610",),
    "functorch": ("TU620",),
    "six": ("TU621",),
    "dtensor": ("TU622",),
    "pytree": ("TU623",),
    "old-linalg": ("TU624", "TU625", "TU626", "TU627", "TU628"),
    "torchscript": ("TU173",),
}
EXPECTS = ("report", "lookalike", "old-torch-only")
CODE_FAMILY = {code: family for family, codes in FAMILIES.items() for code in codes}
SHA = re.compile(r"^[0-9a-f]{40}$")
FILE_KEYS = {"repo", "commit", "path", "labels"}
LABEL_KEYS = {"line", "end_line", "api", "family", "expect", "note"}

Where = tuple[str, int]  # (corpus path, line)


# --- the manifest ------------------------------------------------------------------------------------


def validate_manifest(manifest: dict) -> list[str]:
    """What is wrong with the manifest (empty when nothing is)."""
    errors: list[str] = []
    files = manifest.get("files")
    if not isinstance(files, list) or not files:
        return ["manifest: no `files` list"]
    seen_files: set[tuple[str, str, str]] = set()
    for index, entry in enumerate(files):
        where = f"files[{index}]"
        if not isinstance(entry, dict) or set(entry) != FILE_KEYS:
            errors.append(f"{where}: keys must be {sorted(FILE_KEYS)}")
            continue
        where = f"{entry['repo']}@{str(entry['commit'])[:12]}:{entry['path']}"
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", str(entry["repo"])):
            errors.append(f"{where}: repo must be owner/name")
        if not SHA.match(str(entry["commit"])):
            errors.append(f"{where}: commit must be a full 40-hex sha")
        path = str(entry["path"])
        if not path.endswith(".py") or path.startswith("/") or ".." in Path(path).parts:
            errors.append(f"{where}: path must be a relative .py path")
        key = (entry["repo"], entry["commit"], path)
        if key in seen_files:
            errors.append(f"{where}: listed twice")
        seen_files.add(key)
        if not isinstance(entry["labels"], list) or not entry["labels"]:
            errors.append(f"{where}: no labels")
            continue
        seen_labels: set[tuple[int, str]] = set()
        for label in entry["labels"]:
            required = {"line", "api", "family", "expect"}
            if not isinstance(label, dict) or not required <= set(label) or set(label) - LABEL_KEYS:
                errors.append(f"{where}: label {label!r}: keys must be line, api, family, expect (end_line, note)")
                continue
            end = label.get("end_line", label["line"])
            if not isinstance(end, int) or isinstance(end, bool) or end < label["line"]:
                errors.append(f"{where}: label {label!r}: end_line must be an int, at least line")
            if not isinstance(label["line"], int) or isinstance(label["line"], bool) or label["line"] < 1:
                errors.append(f"{where}: label {label!r}: line must be a positive int")
            if label["family"] not in FAMILIES:
                errors.append(f"{where}:{label['line']}: unknown family {label['family']!r}")
            if label["expect"] not in EXPECTS:
                errors.append(f"{where}:{label['line']}: expect must be one of {EXPECTS}")
            if not isinstance(label["api"], str) or not label["api"]:
                errors.append(f"{where}:{label['line']}: api must be a non-empty string")
            pair = (label["line"], label["family"])
            if pair in seen_labels:
                errors.append(f"{where}:{label['line']}: two labels of family {label['family']}")
            seen_labels.add(pair)
    return errors


def summary(manifest: dict) -> dict:
    """Repositories with their commits, and counts of files and labels."""
    commits: dict[str, set[str]] = defaultdict(set)
    files_per_repo: Counter[str] = Counter()
    per: Counter[tuple[str, str]] = Counter()
    for entry in manifest["files"]:
        commits[entry["repo"]].add(entry["commit"])
        files_per_repo[entry["repo"]] += 1
        for label in entry["labels"]:
            per[(label["family"], label["expect"])] += 1
    return {"commits": commits, "files_per_repo": files_per_repo, "per": per,
            "files": len(manifest["files"]), "labels": sum(per.values())}


# --- scoring -----------------------------------------------------------------------------------------


@dataclass
class FamilyScore:
    family: str
    report: int = 0  # labelled `report` lines
    found: list[Where] = field(default_factory=list)
    missed: list[Where] = field(default_factory=list)
    lookalike_hits: list[Where] = field(default_factory=list)
    unlabelled_hits: list[Where] = field(default_factory=list)
    old: int = 0  # labelled `old-torch-only` lines
    old_reported: list[Where] = field(default_factory=list)
    old_silent: list[Where] = field(default_factory=list)

    @property
    def false_positives(self) -> int:
        return len(self.lookalike_hits) + len(self.unlabelled_hits)

    @property
    def recall(self) -> float | None:
        return len(self.found) / self.report if self.report else None

    @property
    def precision(self) -> float | None:
        flagged = len(self.found) + self.false_positives
        return len(self.found) / flagged if flagged else None


def score(manifest: dict, findings: list[dict]) -> dict[str, FamilyScore]:
    """Per family, how the findings (dicts with path relative to the corpus, line, code) meet the labels."""
    flagged: dict[str, set[Where]] = defaultdict(set)  # family -> lines with a finding of its codes
    for finding in findings:
        family = CODE_FAMILY.get(finding["code"])
        if family is not None:
            flagged[family].add((Path(finding["path"]).as_posix(), int(finding["line"])))
    scores = {family: FamilyScore(family) for family in FAMILIES}
    labelled: dict[str, set[Where]] = defaultdict(set)
    for entry in manifest["files"]:
        path = corpus_path(entry)
        for label in entry["labels"]:
            where = (path, label["line"])
            family, result = label["family"], scores[label["family"]]
            span = {(path, line) for line in range(label["line"], label.get("end_line", label["line"]) + 1)}
            labelled[family] |= span
            hit = bool(span & flagged[family])
            if label["expect"] == "report":
                result.report += 1
                (result.found if hit else result.missed).append(where)
            elif label["expect"] == "lookalike":
                if hit:
                    result.lookalike_hits.append(where)
            else:
                result.old += 1
                (result.old_reported if hit else result.old_silent).append(where)
    for family, lines in flagged.items():
        scores[family].unlabelled_hits = sorted(lines - labelled[family])
    # (a finding on a later line of a labelled span is part of that label, neither a hit of its own nor a FP)
    return scores


# --- running torchup ---------------------------------------------------------------------------------


def check_flags() -> tuple[list[str], list[str]]:
    """The flags to pass to `torchup check`, and those this checkout lacks."""
    wanted = [["--select", "ALL"], ["--from-version", "2.0"], ["--output-format", "json"], ["--no-cache"],
              ["--isolated"], ["--no-respect-gitignore"], ["--exit-zero"]]
    helptext = subprocess.run([sys.executable, "-m", "torchup", "check", "--help"], capture_output=True, text=True,
                              cwd=ROOT).stdout
    flags, missing = [], []
    for flag in wanted:
        (flags.extend(flag) if re.search(rf"(^|\s){re.escape(flag[0])}\b", helptext) else missing.append(flag[0]))
    return flags, missing


def run_torchup(corpus: Path, paths: list[str], flags: list[str]) -> list[dict]:
    """torchup's findings over the corpus files (paths relative to the corpus)."""
    command = [sys.executable, "-m", "torchup", "check", *flags, *paths]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout first, ahead of any installed copy
    done = subprocess.run(command, cwd=corpus, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"torchup failed ({done.returncode}):\n{done.stderr[-4000:]}")
    findings = json.loads(done.stdout or "[]")
    for finding in findings:
        path = Path(finding["path"])
        if path.is_absolute():
            finding["path"] = path.resolve().relative_to(corpus.resolve()).as_posix()
    return findings


# --- the report --------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _source_line(corpus: Path, where: Where) -> str:
    try:
        return (corpus / where[0]).read_text(encoding="utf-8", errors="replace").splitlines()[where[1] - 1].strip()
    except (OSError, IndexError):
        return ""


def render(manifest: dict, scores: dict[str, FamilyScore], corpus: Path, missing_flags: list[str],
           findings: list[dict], version: str) -> str:
    info = summary(manifest)
    out = [HEADING, "", START, ""]
    out.append(f"torchup {version}; `torchup check --select ALL --from-version 2.0 --output-format json --no-cache "
               f"--isolated` over the {info['files']} files of `bench/corpus/manifest.json` "
               f"({len(findings)} findings in all).")
    if missing_flags:
        out.append(f"This checkout's `torchup check` has no {', '.join(missing_flags)}: left out.")
    out += ["", f"Corpus: {len(info['commits'])} repositories, {info['files']} files, {info['labels']} labels "
            "(labelled by reading the code; re-created by `bench/corpus/materialize.py` from git mirrors).", "",
            "| repository | commit(s) | files |", "|---|---|---:|"]
    for repo in sorted(info["commits"], key=str.lower):
        shas = ", ".join(f"`{sha[:12]}`" for sha in sorted(info["commits"][repo]))
        out.append(f"| {repo} | {shas} | {info['files_per_repo'][repo]} |")
    out += ["", "| family | codes | report labels | found | recall | look-alike labels | FP on look-alikes "
            "| FP on unlabelled lines | precision | old-torch-only (reported) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    totals = FamilyScore("all")
    lookalikes = Counter(label["family"] for entry in manifest["files"] for label in entry["labels"]
                         if label["expect"] == "lookalike")
    for family, result in scores.items():
        out.append(f"| {family} | {', '.join(FAMILIES[family])} | {result.report} | {len(result.found)} | "
                   f"{_pct(result.recall)} | {lookalikes[family]} | {len(result.lookalike_hits)} | "
                   f"{len(result.unlabelled_hits)} | {_pct(result.precision)} | {result.old} "
                   f"({len(result.old_reported)}) |")
        totals.report += result.report
        totals.found += result.found
        totals.lookalike_hits += result.lookalike_hits
        totals.unlabelled_hits += result.unlabelled_hits
        totals.old += result.old
        totals.old_reported += result.old_reported
    out.append(f"| **all** | | {totals.report} | {len(totals.found)} | {_pct(totals.recall)} | "
               f"{sum(lookalikes.values())} | {len(totals.lookalike_hits)} | {len(totals.unlabelled_hits)} | "
               f"{_pct(totals.precision)} | {totals.old} ({len(totals.old_reported)}) |")

    def listing(title: str, rows: list[tuple[str, Where]]) -> None:
        if rows:
            out.extend(["", f"{title}:", "", "```"])
            out.extend(f"{family:<20} {where[0]}:{where[1]}: {_source_line(corpus, where)[:110]}"
                       for family, where in rows)
            out.append("```")

    listing("False positives on look-alike labels",
            [(f, w) for f, r in scores.items() for w in r.lookalike_hits])
    listing("Findings of a family's codes on unlabelled lines (false positives; review them)",
            [(f, w) for f, r in scores.items() for w in r.unlabelled_hits])
    listing("old-torch-only labels torchup reports", [(f, w) for f, r in scores.items() for w in r.old_reported])
    listing("old-torch-only labels torchup does not report", [(f, w) for f, r in scores.items() for w in r.old_silent])
    listing("Missed `report` labels", [(f, w) for f, r in scores.items() for w in r.missed])
    out += ["", "Reproduce: `python3 bench/corpus/materialize.py --mirrors DIR` (fetch the repositories "
            "above first), then `python3 bench/corpus/score.py --write-results`.", "", END]
    return "\n".join(out)


def write_results(section: str, results: Path = RESULTS) -> None:
    """Replace the marked section of RESULTS.md (heading included), or append it."""
    text = results.read_text(encoding="utf-8")
    if START in text and END in text:
        begin = text.index(START)
        heading_at = text.rfind(HEADING, 0, begin)
        begin = heading_at if heading_at != -1 else begin
        end = text.index(END) + len(END)
        text = text[:begin] + section + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    results.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_OUT, help=f"materialized files (default {DEFAULT_OUT})")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--write-results", action="store_true", help="replace the corpus section of bench/RESULTS.md")
    args = parser.parse_args(argv)
    manifest = load_manifest(args.manifest)
    errors = validate_manifest(manifest)
    if errors:
        raise SystemExit("manifest errors:\n" + "\n".join(errors))
    paths = [corpus_path(entry) for entry in manifest["files"]]
    absent = [path for path in paths if not (args.corpus / path).is_file()]
    if absent:
        raise SystemExit(f"{len(absent)} files are not under {args.corpus} (first: {absent[0]}); "
                         "run bench/corpus/materialize.py first")
    flags, missing = check_flags()
    findings = run_torchup(args.corpus, paths, flags)
    version = subprocess.run([sys.executable, "-m", "torchup", "--version"], capture_output=True, text=True,
                             cwd=ROOT).stdout.strip()
    section = render(manifest, score(manifest, findings), args.corpus, missing, findings, version)
    print(section)
    if args.write_results:
        write_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
