"""Recall and precision of torchup per rule family on the hand-labelled corpus of real code (issues 21, 22).

    python3 bench/corpus/materialize.py --mirrors DIR      # once: re-create the files (DIR: fetched git mirrors)
    python3 bench/corpus/score.py                                     # corpus: ~/.cache/torchup/corpus
    python3 bench/corpus/score.py --family methods --family profiler-use-cuda   # only these families
    python3 bench/corpus/score.py --corpus DIR --write-results        # also replace the section of bench/RESULTS.md

torchup runs over the manifest's files (`check --select ALL --from-version 2.0 --output-format json
--no-cache --isolated`; a flag this checkout's `check --help` lacks is left out, and the report says so), once
per repository tree, as a user runs it on one project at a time.
A finding matches a label when its path and line are the label's and its code is one of the family's
codes (FAMILIES). Per family:

- recall: labelled `report` lines with a finding of the family / labelled `report` lines;
- false positives: `lookalike` lines with a finding of the family, and unlabelled lines with one (both
  listed for review);
- precision: `report` lines found / (those + false-positive lines), counted by line, so two findings of
  one family on one line count once;
- `old-torch-only` lines (a branch only old torch takes) are counted apart, reported or not;
- per confidence: a finding's `confidence` (`certain`, `likely`, `possible`; absent: `certain`) is its line's,
  and a line (a label's span) takes its most confident finding of the family. True and false positives are
  counted at each level, and recall and precision cumulatively: certain only, certain + likely, all;
- per receiver kind (labels with a `receiver`, the `methods` family): how many labels of each kind were reported.

A file with `families` is labelled completely for those families only: findings of other families' codes in
it are neither hits nor false positives. A file without it is labelled completely for every family.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from materialize import DEFAULT_OUT, MANIFEST, corpus_path, load_manifest  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
START, END = "<!-- corpus:start -->", "<!-- corpus:end -->"
HEADING = "## Recall and precision on real code (issues 21, 22)"
HEADING_PREFIX = "## Recall and precision on real code"  # what earlier headings of the section began with

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
    "dtensor": ("TU622", "TU634"),
    "quantization": ("TU635",),
    "nccl-timeout": ("TU612",),
    "ddp-broadcast-buffers": ("TU613",),
    "argument-kinds": ("TU614",),
    "sampler-init": ("TU615",),
    "hub-trust": ("TU616",),
    "onnx-removed": ("TU636", "TU637"),
    "has-flags": ("TU640",),
    "elastic-logs": ("TU617",),
    "cpp-extension": ("TU618",),
    "sdpa-params": ("TU619",),
    "export-strict": ("TU643",),
    "pytree": ("TU623",),
    "old-linalg": ("TU624", "TU625", "TU626", "TU627", "TU628"),
    "torchscript": ("TU173",),
    "methods": ("TU102", "TU104", "TU105"),
    "profiler-use-cuda": ("TU110",),
}
EXPECTS = ("report", "lookalike", "old-torch-only")
CODE_FAMILY = {code: family for family, codes in FAMILIES.items() for code in codes}
# A finding's `confidence`, most confident first; a finding without one counts as the first.
CONFIDENCES = ("certain", "likely", "possible")
CUMULATIVE = (("certain only", 1), ("certain + likely", 2), ("all", 3))  # (name, how many levels it takes)
# The families whose labels say why the receiver is or is not a tensor (`receiver`: "KIND: why").
RECEIVER_FAMILIES = frozenset({"methods"})
TENSOR_KINDS = ("evident", "parameter", "attribute", "subscript", "loop", "call", "container", "global", "load")
OTHER_KINDS = ("lazy-tensor", "numpy", "scipy", "sympy", "cupy", "jax", "tensorflow", "solver", "own-class", "module")
RECEIVER_KINDS = (*TENSOR_KINDS, "function", *OTHER_KINDS)  # function: torch.NAME(...), no receiver
SHA = re.compile(r"^[0-9a-f]{40}$")
FILE_KEYS = {"repo", "commit", "path", "labels"}
OPTIONAL_FILE_KEYS = {"families", "context"}
LABEL_KEYS = {"line", "end_line", "api", "family", "expect", "receiver", "note"}

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
        if not isinstance(entry, dict) or not FILE_KEYS <= set(entry) <= FILE_KEYS | OPTIONAL_FILE_KEYS:
            errors.append(f"{where}: keys must be {sorted(FILE_KEYS)} (and {sorted(OPTIONAL_FILE_KEYS)})")
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
        if not isinstance(entry["labels"], list) or (not entry["labels"] and "context" not in entry):
            errors.append(f"{where}: no labels (a file with no use to label says why it is listed: `context`)")
            continue
        families = entry.get("families")
        if "families" in entry and (not isinstance(families, list) or not families
                                    or len(set(families)) != len(families)
                                    or not all(family in FAMILIES for family in families)):
            errors.append(f"{where}: families must be a list of distinct known families")
            families = None
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
            elif families is not None and label["family"] not in families:
                errors.append(f"{where}:{label['line']}: family {label['family']} is not in the file's families")
            errors.extend(f"{where}:{label['line']}: {problem}" for problem in _receiver_problems(label))
            if label["expect"] not in EXPECTS:
                errors.append(f"{where}:{label['line']}: expect must be one of {EXPECTS}")
            if not isinstance(label["api"], str) or not label["api"]:
                errors.append(f"{where}:{label['line']}: api must be a non-empty string")
            pair = (label["line"], label["family"])
            if pair in seen_labels:
                errors.append(f"{where}:{label['line']}: two labels of family {label['family']}")
            seen_labels.add(pair)
    return errors


def receiver_kind(label: dict) -> str | None:
    """The kind a label's `receiver` names ("parameter: m, ..." -> "parameter"), or None."""
    receiver = label.get("receiver")
    return receiver.split(":", 1)[0].strip() if isinstance(receiver, str) else None


def _receiver_problems(label: dict) -> list[str]:
    receiver = label.get("receiver")
    if label["family"] not in RECEIVER_FAMILIES:
        return [] if receiver is None else [f"receiver is for the {sorted(RECEIVER_FAMILIES)} families only"]
    if not isinstance(receiver, str) or ":" not in receiver or not receiver.split(":", 1)[1].strip():
        return ["receiver must be 'KIND: why' (why the receiver is or is not a tensor)"]
    kind = receiver_kind(label)
    if kind not in RECEIVER_KINDS:
        return [f"receiver kind {kind!r} is not one of {RECEIVER_KINDS}"]
    tensor = kind in TENSOR_KINDS or kind == "function"
    if label["expect"] == "lookalike" and tensor:
        return [f"a lookalike's receiver cannot be a tensor ({kind})"]
    if label["expect"] != "lookalike" and not tensor:
        return [f"a {label['expect']} label's receiver must be a tensor or `function`, not {kind}"]
    return []


def labelled_families(entry: dict) -> frozenset[str]:
    """The families a manifest file is labelled completely for."""
    return frozenset(entry.get("families") or FAMILIES)


def select(manifest: dict, families: list[str] | tuple[str, ...]) -> dict:
    """The part of the manifest that scores only `families`: the files labelled for one of them, with their
    labels of those families (a file may keep no label: its lines still count for false positives)."""
    wanted = set(families)
    files = []
    for entry in manifest["files"]:
        if labelled_families(entry) & wanted:
            files.append({**entry, "labels": [label for label in entry["labels"] if label["family"] in wanted]})
    return {**manifest, "files": files}


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


def hard_positive(label: dict) -> bool:
    """A `report` whose receiver is a tensor that no single line shows (a parameter, a loop variable, ...)."""
    return label["expect"] == "report" and receiver_kind(label) in TENSOR_KINDS and receiver_kind(label) != "evident"


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
    # the confidence of every hit above (found, look-alike, unlabelled, old-torch-only): its most confident finding
    confidence: dict[Where, str] = field(default_factory=dict)
    # receiver kind -> [labels, of which reported], for `report` and `lookalike` labels with a receiver
    receivers: dict[tuple[str, str], list[int]] = field(default_factory=dict)

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

    def true_positives_at(self, level: str) -> int:
        return sum(self.confidence[where] == level for where in self.found)

    def false_positives_at(self, level: str) -> int:
        return sum(self.confidence[where] == level for where in (*self.lookalike_hits, *self.unlabelled_hits))

    def cumulative(self, levels: int) -> tuple[float | None, float | None]:
        """Recall and precision counting only findings of the `levels` most confident levels."""
        kept = CONFIDENCES[:levels]
        found = sum(self.true_positives_at(level) for level in kept)
        flagged = found + sum(self.false_positives_at(level) for level in kept)
        return (found / self.report if self.report else None), (found / flagged if flagged else None)


def finding_confidence(finding: dict) -> str:
    """A finding's confidence; one without the field (rules that do not grade theirs) is certain."""
    confidence = finding.get("confidence") or CONFIDENCES[0]
    if confidence not in CONFIDENCES:
        raise ValueError(f"finding {finding.get('code')} at {finding.get('path')}:{finding.get('line')}: "
                         f"unknown confidence {confidence!r} (expected one of {CONFIDENCES})")
    return confidence


def score(manifest: dict, findings: list[dict], families: tuple[str, ...] | list[str] | None = None,
          ) -> dict[str, FamilyScore]:
    """Per family, how the findings (dicts with path relative to the corpus, line, code and maybe confidence)
    meet the labels. `families`: the families to score (default: all)."""
    wanted = tuple(families or FAMILIES)
    # family -> line with a finding of its codes -> the most confident of them
    flagged: dict[str, dict[Where, str]] = defaultdict(dict)
    for finding in findings:
        family = CODE_FAMILY.get(finding["code"])
        if family is None or family not in wanted:
            continue
        where = (Path(finding["path"]).as_posix(), int(finding["line"]))
        confidence = finding_confidence(finding)
        known = flagged[family].get(where)
        if known is None or CONFIDENCES.index(confidence) < CONFIDENCES.index(known):
            flagged[family][where] = confidence
    scores = {family: FamilyScore(family) for family in wanted}
    labelled: dict[str, set[Where]] = defaultdict(set)
    scored_paths: dict[str, set[str]] = defaultdict(set)  # family -> files labelled completely for it
    for entry in manifest["files"]:
        path = corpus_path(entry)
        for family in labelled_families(entry):
            scored_paths[family].add(path)
        for label in entry["labels"]:
            if label["family"] not in scores:
                continue
            where = (path, label["line"])
            family, result = label["family"], scores[label["family"]]
            span = [(path, line) for line in range(label["line"], label.get("end_line", label["line"]) + 1)]
            labelled[family].update(span)
            levels = [flagged[family][line] for line in span if line in flagged[family]]
            hit = bool(levels)
            if hit:
                result.confidence[where] = min(levels, key=CONFIDENCES.index)
            if label["expect"] == "report":
                result.report += 1
                (result.found if hit else result.missed).append(where)
            elif label["expect"] == "lookalike":
                if hit:
                    result.lookalike_hits.append(where)
            else:
                result.old += 1
                (result.old_reported if hit else result.old_silent).append(where)
            kind = receiver_kind(label)
            if kind is not None and label["expect"] in ("report", "lookalike"):
                counts = result.receivers.setdefault((label["expect"], kind), [0, 0])
                counts[0] += 1
                counts[1] += hit
    for family, lines in flagged.items():
        unlabelled = sorted(where for where in lines.keys() - labelled[family] if where[0] in scored_paths[family])
        scores[family].unlabelled_hits = unlabelled
        scores[family].confidence.update((where, lines[where]) for where in unlabelled)
    # (a finding on a later line of a labelled span is part of that label, neither a hit of its own nor a FP;
    # a finding in a file not labelled for the family, or outside the manifest's files, is not scored)
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
    """torchup's findings over the corpus files (paths relative to the corpus), one run per repository tree
    (`owner+name@commit`): what a project's own classes define (a `cholesky` method, say) bears on how torchup
    reads the project's receivers, so trees of different projects are not checked as one."""
    trees: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        trees[path.split("/", 1)[0]].append(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout first, ahead of any installed copy

    def run(tree_paths: list[str]) -> list[dict]:
        command = [sys.executable, "-m", "torchup", "check", *flags, *tree_paths]
        done = subprocess.run(command, cwd=corpus, capture_output=True, text=True, env=env)
        if done.returncode not in (0, 1):
            raise SystemExit(f"torchup failed ({done.returncode}) on {tree_paths[0]}, ...:\n{done.stderr[-4000:]}")
        return json.loads(done.stdout or "[]")

    with ThreadPoolExecutor(max_workers=min(len(trees), os.cpu_count() or 1) or 1) as pool:
        findings = [finding for found in pool.map(run, trees.values()) for finding in found]
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
               f"--isolated` over the {info['files']} files of `bench/corpus/manifest.json`, one run per repository "
               f"tree ({len(findings)} findings in all).")
    if missing_flags:
        out.append(f"This checkout's `torchup check` has no {', '.join(missing_flags)}: left out.")
    if set(scores) != set(FAMILIES):
        out.append(f"Only the families {', '.join(scores)} are scored (`--family`), over the files labelled for them.")
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

    out += ["", "By confidence: true positives (found `report` labels) and false positives at each level, and "
            "recall / precision counting the findings of the most confident levels only. A finding without "
            "`confidence` counts as certain; a line takes its most confident finding of the family.", "",
            "| family | TP certain | TP likely | TP possible | FP certain | FP likely | FP possible | "
            + " | ".join(f"{name}: recall / precision" for name, _ in CUMULATIVE) + " |",
            "|---|" + "---:|" * (6 + len(CUMULATIVE))]
    for family, result in scores.items():
        if not result.report and not result.false_positives:
            continue
        cells = [str(result.true_positives_at(level)) for level in CONFIDENCES]
        cells += [str(result.false_positives_at(level)) for level in CONFIDENCES]
        cells += [" / ".join(_pct(value) for value in result.cumulative(levels)) for _, levels in CUMULATIVE]
        out.append(f"| {family} | " + " | ".join(cells) + " |")

    kinds = [(family, key, counts) for family, result in scores.items()
             for key, counts in sorted(result.receivers.items(), key=lambda item: (item[0][0] != "report",
                                                                                   RECEIVER_KINDS.index(item[0][1])))]
    if kinds:
        out += ["", "By receiver (labels that say why the receiver is or is not a tensor): how many were reported.", "",
                "| family | expect | receiver | labels | reported | share |", "|---|---|---|---:|---:|---:|"]
        out += [f"| {family} | {expect} | {kind} | {counts[0]} | {counts[1]} | {_pct(counts[1] / counts[0])} |"
                for family, (expect, kind), counts in kinds]

    receivers = {(label["family"], corpus_path(entry), label["line"]): receiver_kind(label)
                 for entry in manifest["files"] for label in entry["labels"] if receiver_kind(label)}

    def listing(title: str, rows: list[tuple[str, Where]], tag: Callable[[str, Where], str]) -> None:
        if rows:
            out.extend(["", f"{title}:", "", "```"])
            out.extend(f"{family:<18} {tag(family, where):<12} {where[0]}:{where[1]}: "
                       f"{_source_line(corpus, where)[:110]}" for family, where in rows)
            out.append("```")

    def level(family: str, where: Where) -> str:
        return scores[family].confidence.get(where, "")

    def kind(family: str, where: Where) -> str:
        return receivers.get((family, *where)) or ""

    listing("False positives on look-alike labels (confidence)",
            [(f, w) for f, r in scores.items() for w in r.lookalike_hits], level)
    listing("Findings of a family's codes on unlabelled lines (false positives; review them) (confidence)",
            [(f, w) for f, r in scores.items() for w in r.unlabelled_hits], level)
    listing("old-torch-only labels torchup reports (confidence)",
            [(f, w) for f, r in scores.items() for w in r.old_reported], level)
    listing("old-torch-only labels torchup does not report",
            [(f, w) for f, r in scores.items() for w in r.old_silent], kind)
    listing("Missed `report` labels (receiver kind, where labelled)",
            [(f, w) for f, r in scores.items() for w in r.missed], kind)
    out += ["", "Reproduce: `python3 bench/corpus/materialize.py --mirrors DIR` (fetch the repositories "
            "above first), then `python3 bench/corpus/score.py --write-results`.", "", END]
    return "\n".join(out)


def write_results(section: str, results: Path = RESULTS) -> None:
    """Replace the marked section of RESULTS.md (heading included), or append it."""
    text = results.read_text(encoding="utf-8")
    if START in text and END in text:
        begin = text.index(START)
        heading_at = text.rfind(HEADING_PREFIX, 0, begin)  # this heading, or an earlier wording of it
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
    parser.add_argument("--family", action="append", choices=list(FAMILIES), metavar="NAME",
                        help="score only this family (repeatable; default: all): " + ", ".join(FAMILIES))
    parser.add_argument("--write-results", action="store_true", help="replace the corpus section of bench/RESULTS.md")
    args = parser.parse_args(argv)
    if args.family and args.write_results:
        parser.error("--write-results replaces the section that scores every family: leave out --family")
    manifest = load_manifest(args.manifest)
    errors = validate_manifest(manifest)
    if errors:
        raise SystemExit("manifest errors:\n" + "\n".join(errors))
    families = tuple(dict.fromkeys(args.family)) if args.family else tuple(FAMILIES)
    if args.family:
        manifest = select(manifest, families)
    paths = [corpus_path(entry) for entry in manifest["files"]]
    absent = [path for path in paths if not (args.corpus / path).is_file()]
    if absent:
        raise SystemExit(f"{len(absent)} files are not under {args.corpus} (first: {absent[0]}); "
                         "run bench/corpus/materialize.py first")
    flags, missing = check_flags()
    findings = run_torchup(args.corpus, paths, flags)
    version = subprocess.run([sys.executable, "-m", "torchup", "--version"], capture_output=True, text=True,
                             cwd=ROOT).stdout.strip()
    section = render(manifest, score(manifest, findings, families), args.corpus, missing, findings, version)
    print(section)
    if args.write_results:
        write_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
