"""Score torchup on the support-window corpus (bench/window/manifest.json): real projects with a torch floor.

    python3 bench/window/materialize.py --mirrors DIR     # once: re-create the trees (DIR: fetched git mirrors)
    python3 bench/window/score.py                         # trees: ~/.cache/torchup/window ($TORCHUP_WINDOW)
    python3 bench/window/score.py --trees DIR --fix       # also fix a copy of each tree and list what changed
    python3 bench/window/score.py --json results.json     # everything, machine-readable
    python3 bench/window/score.py --write-results         # also append (or replace) the section of bench/RESULTS.md

torchup runs as a user runs it, once per tree with the working directory at the tree's root:
`python -m torchup check . --output-format json --no-cache --exit-zero`, default options otherwise (no
--select, no floor given: torchup reads it from the tree's requirement files). This checkout's torchup is
used (PYTHONPATH is set to the repository root). Per tree and in total it reports:

- recall of `report` labels: a finding of any code on the label's line counts (the misses are listed);
- `old-torch-only` lines with a finding (the window says these must be 0);
- `lookalike` lines with a finding;
- findings inside a gate's old branch (`old_lines`), labelled or not;
- the floor torchup stated: the JSON output's top-level `floor` where it has one, else the `floor` (or,
  in older checkouts, `from-version`) line of `torchup check --show-settings .`; beside it the floor the
  requirement lines say (the lowest, when there are several);
- with --fix, a copy of each tree fixed by `python -m torchup fix .` (default options): whether every fixed
  Python file still parses, and the lines the fix changed (the scorer cannot run old torch: it records them),
  with those on `old-torch-only` lines or inside a gate's old branch counted apart: in live old code (the
  floor is below the gate's release, or the gate names none) and in dead old code (the floor is at or above it,
  so removing the branch is what the window allows).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _window_materialize() -> ModuleType:
    """bench/window/materialize.py under a name of its own (bench/corpus has a materialize.py too)."""
    name = "torchup_bench_window_materialize"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "materialize.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_materialize = _window_materialize()
DEFAULT_OUT: Path = _materialize.DEFAULT_OUT
MANIFEST: Path = _materialize.MANIFEST
entry_paths = _materialize.entry_paths
load_manifest = _materialize.load_manifest
tree_name = _materialize.tree_name

RESULTS = ROOT / "bench" / "RESULTS.md"
START, END = "<!-- window:start -->", "<!-- window:end -->"
HEADING = "## Support window on real projects (floors from their requirements)"
CHECK_ARGS = ("check", ".", "--output-format", "json", "--no-cache", "--exit-zero")
EXPECTS = ("report", "old-torch-only", "lookalike")
OLD_PLACES = ("body", "orelse", "after", "except", "raise", "none")
SHA = re.compile(r"^[0-9a-f]{40}$")
RELEASE = re.compile(r"^\d+\.\d+(\.\d+)?$")
ENTRY_KEYS = {"repo", "commit", "date", "requirements", "files"}
OPTIONAL_ENTRY_KEYS = {"no_floor", "note"}
USE_KEYS = {"line", "api", "expect", "gate", "note"}
GATE_KEYS = {"line", "kind", "form", "release", "old", "old_lines", "note"}
REQUIREMENT_KEYS = {"path", "line", "text", "floor"}

Where = tuple[str, int]  # (path relative to the tree, line)


# --- the manifest ------------------------------------------------------------------------------------


def _validate_label(label: Any, where: str, gate_lines: set[int]) -> list[str]:
    if not isinstance(label, dict) or not isinstance(label.get("line"), int) or label["line"] < 1:
        return [f"{where}: a label needs a positive int `line`"]
    where = f"{where}:{label['line']}"
    if label.get("kind") == "gate":
        errors = [f"{where}: gate keys must be within {sorted(GATE_KEYS)}"] if not set(label) <= GATE_KEYS else []
        if not {"form", "release", "old", "old_lines"} <= set(label) or not isinstance(label.get("form"), str):
            errors.append(f"{where}: a gate needs form (str), release, old and old_lines")
        release = label.get("release")
        if release is not None and not (isinstance(release, str) and RELEASE.match(release)):
            errors.append(f"{where}: release must be null or X.Y[.Z], not {release!r}")
        if label.get("old") not in OLD_PLACES:
            errors.append(f"{where}: old must be one of {OLD_PLACES}")
        span = label.get("old_lines")
        if label.get("old") == "none":
            if span is not None:
                errors.append(f"{where}: old `none` has old_lines null")
        elif not (isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) for n in span)) or not (
            1 <= span[0] <= span[1]
        ):
            errors.append(f"{where}: old_lines must be [first, last]")
        return errors
    errors = []
    if "kind" in label or not set(label) <= USE_KEYS or not {"api", "expect"} <= set(label):
        errors.append(f"{where}: a use label has {sorted(USE_KEYS)} (line, api and expect required)")
    if label.get("expect") not in EXPECTS:
        errors.append(f"{where}: expect must be one of {EXPECTS}")
    if not isinstance(label.get("api"), str) or not label.get("api"):
        errors.append(f"{where}: api must be a non-empty string")
    if label.get("expect") == "old-torch-only" and label.get("gate") not in gate_lines:
        errors.append(f"{where}: an old-torch-only use names its gate (the line of a gate label in the file)")
    if "gate" in label and label["gate"] not in gate_lines:
        errors.append(f"{where}: gate {label.get('gate')} is not a gate label of the file")
    return errors


def validate_manifest(manifest: Any) -> list[str]:
    """What is wrong with the manifest (empty when nothing is)."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("entries"), list) or not manifest["entries"]:
        return ["manifest: no `entries` list"]
    errors: list[str] = []
    for key in ("about", "conventions"):
        if not manifest.get(key):
            errors.append(f"manifest: no `{key}`")
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(manifest["entries"]):
        where = f"entries[{index}]"
        if not isinstance(entry, dict) or not ENTRY_KEYS <= set(entry) <= ENTRY_KEYS | OPTIONAL_ENTRY_KEYS:
            errors.append(f"{where}: keys must be {sorted(ENTRY_KEYS)} (and {sorted(OPTIONAL_ENTRY_KEYS)})")
            continue
        if not isinstance(entry["repo"], str) or entry["repo"].count("/") != 1:
            errors.append(f"{where}: repo must be owner/name")
        if not isinstance(entry["commit"], str) or not SHA.match(entry["commit"]):
            errors.append(f"{where}: commit must be 40 lowercase hex digits")
            continue
        where = f"{entry['repo']}@{entry['commit'][:12]}"
        if (entry["repo"], entry["commit"]) in seen:
            errors.append(f"{where}: listed twice")
        seen.add((entry["repo"], entry["commit"]))
        if not entry["requirements"] and not entry.get("no_floor"):
            errors.append(f"{where}: no requirement line; say why in `no_floor`")
        for requirement in entry["requirements"]:
            if not isinstance(requirement, dict) or set(requirement) != REQUIREMENT_KEYS:
                errors.append(f"{where}: a requirement has exactly {sorted(REQUIREMENT_KEYS)}")
            elif "torch" not in requirement["text"] or not isinstance(requirement["line"], int):
                errors.append(f"{where}: {requirement['path']}:{requirement['line']} does not name torch")
        if not isinstance(entry["files"], list) or not entry["files"]:
            errors.append(f"{where}: no files")
            continue
        paths: set[str] = set()
        for labelled in entry["files"]:
            if not isinstance(labelled, dict) or set(labelled) != {"path", "labels"} or not labelled["labels"]:
                errors.append(f"{where}: a file has path and a non-empty labels list")
                continue
            if labelled["path"] in paths:
                errors.append(f"{where}: {labelled['path']} listed twice")
            paths.add(labelled["path"])
            file_where = f"{where}:{labelled['path']}"
            gate_lines = {
                label["line"] for label in labelled["labels"] if isinstance(label, dict) and label.get("kind") == "gate"
            }
            use_lines: set[int] = set()
            for label in labelled["labels"]:
                errors.extend(_validate_label(label, file_where, gate_lines))
                if isinstance(label, dict) and label.get("kind") != "gate" and isinstance(label.get("line"), int):
                    if label["line"] in use_lines:
                        errors.append(f"{file_where}:{label['line']}: two use labels on one line")
                    use_lines.add(label["line"])
    return errors


def label_counts(manifest: dict[str, Any]) -> dict[str, int]:
    """How many labels of each kind (gate, report, old-torch-only, lookalike) the manifest holds."""
    counts = {"gate": 0, **{expect: 0 for expect in EXPECTS}}
    for entry in manifest["entries"]:
        for labelled in entry["files"]:
            for label in labelled["labels"]:
                counts["gate" if label.get("kind") == "gate" else label["expect"]] += 1
    return counts


# --- running torchup ---------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_torchup(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m torchup ARGS` with the working directory at `tree`, this checkout's torchup first."""
    return subprocess.run(
        [sys.executable, "-m", "torchup", *args], cwd=tree, capture_output=True, text=True, env=_env()
    )


def parse_check_output(stdout: str) -> tuple[list[dict[str, Any]], str | None]:
    """The findings and the top-level `floor` (None when the output has none) of `check --output-format json`."""
    data = json.loads(stdout) if stdout.strip() else []
    if isinstance(data, dict):
        findings = data.get("findings", data.get("diagnostics", []))
        floor = data.get("floor")
        if isinstance(floor, dict):
            floor = floor.get("release")
        return list(findings), (str(floor) if floor is not None else None)
    return list(data), None


def parse_settings_floor(text: str) -> str | None:
    """The floor in `check --show-settings` output: its `floor = "X.Y"` (or older `from-version = ...`) line."""
    for line in text.splitlines():
        match = re.match(r'\s*(?:floor|from-version)\s*=\s*"?([0-9][0-9.]*)"?', line)
        if match:
            return match.group(1)
    return None


def finding_where(finding: dict[str, Any], tree: Path) -> Where:
    path = Path(str(finding.get("path") or finding.get("filename") or ""))
    if path.is_absolute():
        with contextlib.suppress(ValueError):
            path = path.resolve().relative_to(tree.resolve())
    line = finding.get("line")
    if line is None:
        line = (finding.get("location") or {}).get("row", 0)
    return path.as_posix(), int(line)


# --- scoring -----------------------------------------------------------------------------------------


@dataclass
class TreeScore:
    name: str
    repo: str
    commit: str
    required_floor: str | None
    stated_floor: str | None = None
    findings: int = 0
    report_total: int = 0
    report_found: int = 0
    misses: list[str] = field(default_factory=list)
    old_reported: list[str] = field(default_factory=list)
    old_total: int = 0
    lookalike_reported: list[str] = field(default_factory=list)
    lookalike_total: int = 0
    in_old_branch: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    fixed_lines: list[str] = field(default_factory=list)
    fixed_unparsable: list[str] = field(default_factory=list)
    fixed_old_only: list[str] = field(default_factory=list)
    fixed_in_old_branch: list[str] = field(default_factory=list)
    fixed_dead: list[str] = field(default_factory=list)
    fixed: bool = False
    # `report` labels by what the target does to the code (the rule's change: "raises", "warns",
    # "behaves differently", "moved"): [found, total]. The recall bar counts raises and warns.
    by_change: dict[str, list[int]] = field(default_factory=dict)


def change_of(api: str) -> str:
    """What the target does to a use of ``api``: the change of the rule of this checkout that looks for it
    (by name, module or renamed name, or a module above or below it); "unknown" when none does."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from torchup.rules import all_rules

    # (the rules on by default first: TU612 before TU504's `nccl2` hint for `init_process_group`)
    for rule in sorted(all_rules(), key=lambda r: not r.enabled_by_default):
        names = (*rule.looks_for.names, *rule.looks_for.modules, *rule.renames)
        if any(api == name or api.startswith(name + ".") or name.startswith(api + ".") for name in names):
            return rule.change.value
    return "unknown"


def change_recall(scores: list[TreeScore]) -> str:
    """`report` labels found, by what the target does: raises and warns (the issue's bar), then the rest."""
    totals: dict[str, list[int]] = {}
    for score in scores:
        for change, (found, total) in score.by_change.items():
            kept = totals.setdefault(change, [0, 0])
            kept[0] += found
            kept[1] += total
    loud = [sum(totals.get(c, [0, 0])[i] for c in ("raises", "warns")) for i in (0, 1)]
    parts = [f"raises or warns {loud[0]}/{loud[1]} ({_pct(loud[0], loud[1])})"]
    parts += [f"{change} {found}/{total}" for change, (found, total) in sorted(totals.items())
              if change not in ("raises", "warns")]
    return "Report labels found, by what the target does to the code: " + "; ".join(parts) + "."


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def required_floor(entry: dict[str, Any]) -> str | None:
    floors = [r["floor"] for r in entry.get("requirements", []) if r.get("floor")]
    return min(floors, key=_release_key) if floors else None


def _old_spans(labels: Iterable[dict[str, Any]]) -> list[tuple[int, int, int, str | None]]:
    """(first, last, gate line, gate release) of every gate's old branch."""
    return [
        (label["old_lines"][0], label["old_lines"][1], label["line"], label.get("release"))
        for label in labels
        if label.get("kind") == "gate" and label.get("old_lines")
    ]


def is_dead(release: str | None, floor: str | None) -> bool:
    """Whether a gate's old branch is dead code: the floor is at or above the release the gate names."""
    return release is not None and floor is not None and _release_key(floor) >= _release_key(release)


def score_findings(entry: dict[str, Any], findings: list[dict[str, Any]], tree: Path) -> TreeScore:
    """Match the findings of one tree (paths relative to its root) to the entry's labels."""
    score = TreeScore(tree_name(entry["repo"], entry["commit"]), entry["repo"], entry["commit"], required_floor(entry))
    score.findings = len(findings)
    found: dict[Where, set[str]] = {}
    for finding in findings:
        found.setdefault(finding_where(finding, tree), set()).add(str(finding.get("code", "?")))
    for labelled in entry["files"]:
        path = labelled["path"]
        for label in labelled["labels"]:
            if label.get("kind") == "gate":
                continue
            where = f"{path}:{label['line']}"
            codes = found.get((path, label["line"]), set())
            described = f"{where} {label['api']}" + (f" [{', '.join(sorted(codes))}]" if codes else "")
            if label["expect"] == "report":
                score.report_total += 1
                tally = score.by_change.setdefault(change_of(label["api"]), [0, 0])
                tally[1] += 1
                if codes:
                    score.report_found += 1
                    tally[0] += 1
                else:
                    score.misses.append(described)
            elif label["expect"] == "old-torch-only":
                score.old_total += 1
                if codes:
                    score.old_reported.append(described)
            else:
                score.lookalike_total += 1
                if codes:
                    score.lookalike_reported.append(described)
        spans = _old_spans(labelled["labels"])
        for (fpath, line), codes in sorted(found.items()):
            if fpath != path:
                continue
            for first, last, gate, _ in spans:
                if first <= line <= last:
                    score.in_old_branch.append(f"{path}:{line} [{', '.join(sorted(codes))}] (gate {gate})")
                    break
    return score


def changed_lines(before: str, after: str) -> list[int]:
    """The lines of `before` a fix replaced or deleted, and those an insertion follows."""
    lines: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, first, last, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            lines.update(range(first + 1, last + 1))
        elif tag == "insert":
            lines.add(max(first, 1))
    return sorted(lines)


def fix_tree(entry: dict[str, Any], tree: Path, score: TreeScore, scratch: Path) -> None:
    """Fix a copy of `tree` with `torchup fix .`; record what changed and whether it still parses."""
    copy = scratch / tree.name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy)
    done = run_torchup(copy, "fix", ".", "--no-cache")
    if done.returncode not in (0, 1):
        score.errors.append(f"fix exited {done.returncode}: {done.stderr.strip()[-300:]}")
    score.fixed = True
    labels = {labelled["path"]: labelled["labels"] for labelled in entry["files"]}
    for path in entry_paths(entry):
        if not path.endswith(".py") or not (tree / path).is_file():
            continue
        before = (tree / path).read_text(encoding="utf-8", errors="replace")
        after = (copy / path).read_text(encoding="utf-8", errors="replace")
        if before == after:
            continue
        try:
            ast.parse(after, filename=path)
        except SyntaxError as error:
            score.fixed_unparsable.append(f"{path}:{error.lineno}: {error.msg}")
        floor = score.stated_floor or score.required_floor
        spans = _old_spans(labels.get(path, []))
        live = [(first, last) for first, last, _, release in spans if not is_dead(release, floor)]
        gates = {label["line"]: label.get("release") for label in labels.get(path, []) if label.get("kind") == "gate"}
        old_only = {
            label["line"]
            for label in labels.get(path, [])
            if label.get("expect") == "old-torch-only" and not is_dead(gates.get(label["gate"]), floor)
        }
        for line in changed_lines(before, after):
            score.fixed_lines.append(f"{path}:{line}")
            if line in old_only:
                score.fixed_old_only.append(f"{path}:{line}")
            if any(first <= line <= last for first, last in live):
                score.fixed_in_old_branch.append(f"{path}:{line}")
            elif any(first <= line <= last for first, last, _, _ in spans):
                score.fixed_dead.append(f"{path}:{line}")


def score_tree(entry: dict[str, Any], trees: Path, fix: bool, scratch: Path | None) -> TreeScore:
    tree = trees / tree_name(entry["repo"], entry["commit"])
    if not tree.is_dir():
        score = TreeScore(tree.name, entry["repo"], entry["commit"], required_floor(entry))
        score.errors.append(f"no tree {tree} (run bench/window/materialize.py)")
        return score
    done = run_torchup(tree, *CHECK_ARGS)
    try:
        findings, floor = parse_check_output(done.stdout)
    except json.JSONDecodeError:
        findings, floor = [], None
        score = score_findings(entry, findings, tree)
        score.errors.append(f"check exited {done.returncode} without JSON: {done.stderr.strip()[-300:]}")
    else:
        score = score_findings(entry, findings, tree)
    if floor is None:
        settings = run_torchup(tree, "check", "--show-settings", ".")
        floor = parse_settings_floor(settings.stdout)
    score.stated_floor = floor
    if fix and scratch is not None:
        fix_tree(entry, tree, score, scratch)
    return score


# --- reporting ---------------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def table(scores: list[TreeScore], fix: bool) -> list[str]:
    head = (
        "| tree | floor: requirement / torchup | findings | report found | old-torch-only reported"
        " | lookalike reported | in old branches |"
    )
    rule = "|---|---|---:|---:|---:|---:|---:|"
    if fix:
        head += " fixed lines | fixed in live old code | in dead old code | unparsable |"
        rule += "---:|---:|---:|---:|"
    rows = [head, rule]
    total = TreeScore("total", "", "", None)
    for s in scores:
        cells = [
            f"`{s.name}`",
            f"{s.required_floor or 'none'} / {s.stated_floor or '?'}",
            str(s.findings),
            f"{s.report_found}/{s.report_total}",
            f"{len(s.old_reported)}/{s.old_total}",
            f"{len(s.lookalike_reported)}/{s.lookalike_total}",
            str(len(s.in_old_branch)),
        ]
        if fix:
            in_old = set(s.fixed_old_only) | set(s.fixed_in_old_branch)
            cells += [str(len(s.fixed_lines)), str(len(in_old)), str(len(s.fixed_dead)), str(len(s.fixed_unparsable))]
        rows.append("| " + " | ".join(cells) + " |")
        total.findings += s.findings
        total.report_found += s.report_found
        total.report_total += s.report_total
        total.old_reported += s.old_reported
        total.old_total += s.old_total
        total.lookalike_reported += s.lookalike_reported
        total.lookalike_total += s.lookalike_total
        total.in_old_branch += s.in_old_branch
        total.fixed_lines += s.fixed_lines
        total.fixed_old_only += s.fixed_old_only
        total.fixed_in_old_branch += s.fixed_in_old_branch
        total.fixed_dead += s.fixed_dead
        total.fixed_unparsable += s.fixed_unparsable
    cells = [
        "**total**",
        "",
        str(total.findings),
        f"{total.report_found}/{total.report_total} ({_pct(total.report_found, total.report_total)})",
        f"{len(total.old_reported)}/{total.old_total}",
        f"{len(total.lookalike_reported)}/{total.lookalike_total}",
        str(len(total.in_old_branch)),
    ]
    if fix:
        old_fixed = sum(len(set(s.fixed_old_only) | set(s.fixed_in_old_branch)) for s in scores)
        cells += [
            str(len(total.fixed_lines)),
            str(old_fixed),
            str(len(total.fixed_dead)),
            str(len(total.fixed_unparsable)),
        ]
    rows.append("| " + " | ".join(cells) + " |")
    return rows


def details(scores: list[TreeScore], fix: bool) -> list[str]:
    lines: list[str] = []
    for s in scores:
        parts = [
            ("errors", s.errors),
            ("missed report labels", s.misses),
            ("old-torch-only lines reported", s.old_reported),
            ("lookalike lines reported", s.lookalike_reported),
            ("findings in old branches", s.in_old_branch),
        ]
        if fix:
            parts += [
                ("fixed files that do not parse", s.fixed_unparsable),
                ("fixed lines in live old-torch code", sorted(set(s.fixed_old_only) | set(s.fixed_in_old_branch))),
                ("fixed lines in dead old-torch code (floor at or above the gate)", s.fixed_dead),
                ("fixed lines", s.fixed_lines),
            ]
        shown = [(title, items) for title, items in parts if items]
        if not shown:
            continue
        lines.append(f"- `{s.name}` ({s.repo}@{s.commit[:12]})")
        for title, items in shown:
            lines.append(f"  - {title}: " + "; ".join(items))
    return lines


def write_results(text: str, path: Path = RESULTS) -> None:
    """Replace the window section of bench/RESULTS.md, or append it when there is none."""
    section = f"{START}\n{text.rstrip()}\n{END}\n"
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in current and END in current:
        before, rest = current.split(START, 1)
        after = rest.split(END, 1)[1].lstrip("\n")
        updated = before + section + ("\n" + after if after else "")
    else:
        updated = current.rstrip("\n") + ("\n\n" if current else "") + section
    path.write_text(updated, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--trees", type=Path, default=DEFAULT_OUT, help=f"materialized trees (default {DEFAULT_OUT})")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--repo", action="append", default=[], help="only this owner/name (repeatable)")
    parser.add_argument("--fix", action="store_true", help="also fix a copy of each tree and record what changed")
    parser.add_argument("--json", type=Path, help="write every result to this JSON file")
    parser.add_argument("--write-results", action="store_true", help="append/replace the section of bench/RESULTS.md")
    args = parser.parse_args(argv)
    manifest = load_manifest(args.manifest)
    problems = validate_manifest(manifest)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    entries = [e for e in manifest["entries"] if not args.repo or e["repo"] in args.repo]
    with tempfile.TemporaryDirectory(prefix="torchup-window-fix-") as scratch:
        scores = [score_tree(entry, args.trees, args.fix, Path(scratch)) for entry in entries]
    counts = label_counts({"entries": entries})
    summary = f"{len({e['repo'] for e in entries})} repositories, {len(entries)} trees; labels: " + ", ".join(
        f"{counts[k]} {k}" for k in counts
    )
    text = "\n".join([HEADING, "", summary + ".", "", *table(scores, args.fix), "", change_recall(scores), "",
                      *details(scores, args.fix)])
    print(text)
    if args.json:
        args.json.write_text(json.dumps([vars(s) for s in scores], indent=1) + "\n", encoding="utf-8")
    if args.write_results:
        write_results(text)
    return 1 if any(s.errors for s in scores) else 0


if __name__ == "__main__":
    sys.exit(main())
