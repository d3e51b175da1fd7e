"""Generate ``docs/coverage.md``: every change of a torch release → what in torchup handles it.

The items live in ``torchup/data/release_items.json`` (data, reviewed by hand); what a rule does
(its name, release, fix, default) comes from the rules themselves, so the matrix cannot drift
from the code. ``tests/test_coverage.py`` fails when the committed file is stale.

The API changes of torch 2.0 to 2.15 found in the wheels (``torchup/data/api_changes.json``) map
to the rules that look for their names (``rules_for``), else to a reason in
``torchup/data/coverage_reasons.json``; ``unmapped`` lists those with neither, and
``since_problems`` the rules whose ``since`` disagrees with the changes they handle.

    python3 tools/coverage.py            # rewrite docs/coverage.md
    python3 tools/coverage.py --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ITEMS = ROOT / "torchup" / "data" / "release_items.json"
OUTPUT = ROOT / "docs" / "coverage.md"
REMOVALS = ROOT / "docs" / "api-diff" / "removals.json"
API_CHANGES = ROOT / "torchup" / "data" / "api_changes.json"
REASONS = ROOT / "torchup" / "data" / "coverage_reasons.json"
# The kinds of change a rule's `since` is measured against (the first release a user meets it).
SINCE_KINDS = ("deprecated", "removed", "default-changed", "renamed")

# Handlers that are commands or modules rather than rules.
COMMANDS = {
    "trace": "`torchup trace` (run time)",
    "doctor": "`torchup doctor` (install)",
    "compat": "`torchup.compat` (2.13 behaviour on 2.14)",
}

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from torchup.analysis.rule import FixAvailability, Rule  # noqa: E402  (after the path is set)
from torchup.rules import all_rules  # noqa: E402


def load_items(path: Path = ITEMS) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def rules_by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}


def load_api(path: Path = API_CHANGES) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def load_reasons(path: Path = REASONS) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def change_key(change: dict[str, Any]) -> str:
    """``torch.qr``, or ``torch.compile(shapes_spec)`` for a parameter of it (as removals.json spells it)."""
    return removal_key(change)


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def _spelled_by(rule: Rule) -> str:
    """Everything a rule's author wrote about what it finds: its declared words and its docs."""
    docs = rule.docs
    looks = rule.looks_for
    parts = [rule.summary, docs.what, docs.why, docs.fix, docs.wheels_vs_notes,
             *looks.keywords, *looks.attributes, *looks.methods, *looks.strings, *looks.in_strings, *looks.words]
    return "\n".join(parts)


def rule_names(rule: Rule) -> frozenset[str]:
    """The qualified names a rule looks for: declared names, methods as ``torch.Tensor.<m>``, the
    functions it renames, and a catalogue entry's names and modules."""
    looks = rule.looks_for
    names = {*looks.names, *(f"torch.Tensor.{m}" for m in looks.methods), *rule.renames, *rule.reported_names}
    entry = getattr(rule, "entry", None)
    if entry is not None:
        names |= {*entry.names, *entry.modules, *entry.keywords}
    return frozenset(names)


def rules_for(change: dict[str, Any], rules: dict[str, Rule]) -> list[str]:
    """The rules that handle an API change, by what they look for.

    A rule handles a change when it looks for the changed name (or one of its aliases) itself.
    A deprecated module is handled by a rule that looks for names inside it. A change on a part
    of a name the rule looks for (a member: ``StepLR.__init__`` of
    ``StepLR``; a parameter: ``torch.load(weights_only)``) needs more: the rule must also spell
    that part (the parameter, or the member's last word) in its declared words or its docs, so
    that a rule which looks at ``torch.compile`` for another reason does not claim every change
    of ``torch.compile``'s parameters. A rule that names the kinds of change it handles
    (``Rule.api_change_kinds``) claims no other kind.
    """
    subjects = [change["name"], *change.get("aliases", ())]
    parameter = change.get("parameter")
    found = []
    for code, rule in rules.items():
        if rule.engine_emitted or (rule.api_change_kinds and change["kind"] not in rule.api_change_kinds):
            continue
        names = rule_names(rule)
        for subject in subjects:
            base = next((n for n in names if subject == n or subject.startswith(n + ".")), None)
            if base is None and change["kind"] == "module-deprecated":
                base = next((subject for n in names if n.startswith(subject + ".")), None)
            if base is None:
                continue
            words = [parameter] if parameter else []
            if subject != base and subject.rpartition(".")[2] != "__init__":
                words.append(subject.rpartition(".")[2])
            text = _spelled_by(rule)
            if all(re.search(rf"(?<![\w.]){re.escape(w)}(?!\w)", text) for w in words):
                found.append(code)
                break
    return found


def change_id(change: dict[str, Any]) -> str:
    """``2.13 parameter-removed torch.zeros(names)``: a change as a reason's ``covers`` lists it."""
    return f"{change['release']} {change['kind']} {change_key(change)}"


def is_pattern(match: str) -> bool:
    return any(character in match for character in "*?[")


def _fits(change: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Does a reason entry's pattern (and kinds, and release, when given) match the change?"""
    return (
        fnmatch.fnmatchcase(change["name"], entry["match"])
        and ("kinds" not in entry or change["kind"] in entry["kinds"])
        and ("release" not in entry or change["release"] == entry["release"])
    )


def reason_for(change: dict[str, Any], reasons: dict[str, Any]) -> dict[str, Any] | None:
    """The first reason entry that matches a change. A reason whose ``match`` is a pattern explains
    only the changes it lists (``covers``, by ``change_id``), those it was written for: a change
    the next diff finds must be read and mapped, not excused by a pattern that happens to fit it."""
    for entry in reasons.get("reasons", ()):
        if not _fits(change, entry):
            continue
        if is_pattern(entry["match"]) and change_id(change) not in entry.get("covers", ()):
            continue
        return entry
    return None


def _pattern_fitting(change: dict[str, Any], reasons: dict[str, Any]) -> str | None:
    """The pattern of the first reason that fits a change but does not list it, if any."""
    return next((e["match"] for e in reasons.get("reasons", ()) if is_pattern(e["match"]) and _fits(change, e)), None)


def classify(
    api: dict[str, Any], rules: dict[str, Rule], reasons: dict[str, Any], data: dict[str, Any] | None = None
) -> list[tuple[dict[str, Any], list[str], dict[str, Any] | None]]:
    """Each API change with its handlers (rules by name, else the release items that list it)
    and, when none, its reason. A reason that names rules in ``not_handled_by`` takes those
    rules off a change they look at but do not handle."""
    by_item: dict[str, list[str]] = {}
    for item in (data or {}).get("items", ()):
        for name in item.get("apis", ()):
            by_item.setdefault(name, []).extend(item.get("handled_by", ()))
    out = []
    for change in api["changes"]:
        reason = reason_for(change, reasons)
        handlers = rules_for(change, rules)
        if reason is not None and reason.get("not_handled_by"):
            handlers = [code for code in handlers if code not in reason["not_handled_by"]]
        if not handlers:
            handlers = list(dict.fromkeys(by_item.get(change_key(change), ())))
        out.append((change, handlers, None if handlers else reason))
    return out


def unmapped(api: dict[str, Any], rules: dict[str, Rule], reasons: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """API changes that no rule handles and no reason explains, each with what to do."""
    found = []
    for change, handlers, reason in classify(api, rules, reasons, data):
        if handlers or reason is not None:
            continue
        pattern = _pattern_fitting(change, reasons)
        listed = (f" (the reason for `{pattern}` fits it, but does not list it in its `covers`: if its text says"
                  " why this change is out of scope too, add the change there)") if pattern else ""
        found.append(f"{change_id(change)}: add a rule that looks for it, or a reason in "
                     f"{REASONS.relative_to(ROOT)}{listed}")
    return found


def stale_covers(api: dict[str, Any], reasons: dict[str, Any]) -> list[str]:
    """Changes a reason lists in ``covers`` that are no change of api_changes.json, or that its
    pattern does not fit: a list that says more than the data would hide nothing, but mislead."""
    changes = {change_id(change): change for change in api["changes"]}
    found = []
    for entry in reasons.get("reasons", ()):
        for listed in entry.get("covers", ()):
            change = changes.get(listed)
            if change is None or not _fits(change, entry):
                found.append(f"the reason for `{entry['match']}` lists `{listed}`, which "
                             + ("is no change of api_changes.json" if change is None else "its pattern does not fit"))
    return found


def since_problems(
    api: dict[str, Any], rules: dict[str, Rule], reasons: dict[str, Any], data: dict[str, Any]
) -> list[str]:
    """Rules whose ``since`` is not the release of the earliest change they handle (of the kinds
    in SINCE_KINDS), unless ``since_differs`` in the reasons file says why; and stale exceptions."""
    earliest: dict[str, str] = {}
    for change, handlers, _ in classify(api, rules, reasons, data):
        if change["kind"] not in SINCE_KINDS:
            continue
        for code in handlers:
            if code not in rules:
                continue
            if code not in earliest or _release_key(change["release"]) < _release_key(earliest[code]):
                earliest[code] = change["release"]
    excused = reasons.get("since_differs", {})
    found = []
    for code, release in sorted(earliest.items()):
        since = rules[code].since
        if since != release and code not in excused:
            found.append(f"{code}: since {since}, but the earliest change it handles is of {release}: "
                         f"set since, or explain in since_differs")
        if since == release and code in excused:
            found.append(f"{code}: since_differs explains a difference there is not")
    found += [f"{code}: since_differs names a rule that handles no change" for code in excused if code not in earliest]
    return found


def problems(
    data: dict[str, Any],
    rules: dict[str, Rule],
    api: dict[str, Any] | None = None,
    reasons: dict[str, Any] | None = None,
) -> list[str]:
    """What makes the data inconsistent with the rules (empty: consistent). A rule must handle a
    release item or an API change (``api``, read from api_changes.json when not given)."""
    found = []
    if api is None:
        api = load_api()
    if reasons is None:
        reasons = load_reasons()
    covered: set[str] = set()
    for index, item in enumerate(data["items"]):
        where = f"item {index + 1} ({item['change'][:50]!r})"
        handlers = item.get("handled_by", [])
        for handler in handlers:
            if handler not in rules and handler not in COMMANDS:
                found.append(f"{where}: unknown handler {handler!r}")
            covered.add(handler)
        if not handlers and not item.get("out_of_scope"):
            found.append(f"{where}: no handler and no out_of_scope reason")
        if item.get("release") not in data["releases"]:
            found.append(f"{where}: unknown release {item.get('release')!r}")
    for _, handlers, _ in classify(api, rules, reasons):
        covered.update(handlers)
    covered.update(reasons.get("handles_no_change", {}))
    for code, rule in rules.items():
        if not rule.engine_emitted and code not in covered:
            found.append(f"{code} handles no item and no API change: add it to an item's handled_by")
    return found


def uncovered_removals(data: dict[str, Any], removals: dict[str, Any]) -> list[str]:
    """Public removals the API diff found that no item names and no reason excuses."""
    named = {api for item in data["items"] for api in item.get("apis", [])}
    excused = set(data.get("not_covered", {}))
    missing = []
    for pair in removals.get("pairs", []):
        for entry in pair.get("removals", []):
            name = removal_key(entry)
            if name not in named and name not in excused:
                missing.append(f"{pair.get('old')} → {pair.get('new')}: {name} ({entry.get('change')})")
    return missing


def removal_key(entry: dict[str, Any]) -> str:
    """``torch.qr``, or ``torch.compile(shapes_spec)`` for a parameter of it."""
    parameter = entry.get("parameter")
    return f"{entry['name']}({parameter})" if parameter else entry["name"]


def render(data: dict[str, Any], rules: dict[str, Rule]) -> str:
    lines = [
        "# Coverage: every change of torch 2.0 to 2.15, and what handles it",
        "",
        "Generated by `python3 tools/coverage.py` from `torchup/data/release_items.json` and the rules'",
        "own metadata; `tests/test_coverage.py` fails when this file is stale. Sources: the release",
        "article (`article`), what we verified in the wheels and their sources (`wheels`), and the",
        "API diff of the real packages (`api-diff`, see `docs/api-diff/`). Where they disagree the",
        "wheels win, and the last column says how.",
        "",
        "Handlers: a rule code (`torchup check`; `fix` when it has one; `--select` when off by",
        "default), " + ", ".join(COMMANDS.values()) + ".",
        "",
    ]
    for release in data["releases"]:
        items = [item for item in data["items"] if item["release"] == release]
        lines += [f"## torch {release}", "", "| change | source | handled by | notes and where the wheels differ |"]
        lines.append("|---|---|---|---|")
        for item in items:
            handled = "<br>".join(_handler(h, rules) for h in item.get("handled_by", []))
            if not handled:
                handled = f"out of scope: {item['out_of_scope']}"
            notes = item.get("notes", "")
            lines.append(f"| {_cell(item['change'])} | {item['source']} | {handled} | {_cell(notes)} |")
        lines.append("")
    lines += ["## Rules", "", "| rule | release | fix | on by default |", "|---|---|---|---|"]
    for code, rule in sorted(rules.items()):
        if rule.engine_emitted:
            continue
        window = rule.since or "any"
        if rule.until:
            window += f" (not {rule.until}+)"
        default = "yes" if rule.enabled_by_default else "no (`--select`)"
        lines.append(f"| {code} `{rule.name}` | {window} | {rule.fix_availability.value} | {default} |")
    api, reasons = load_api(), load_reasons()
    lines += render_api(api, rules, reasons, data)
    excused = data.get("not_covered", {})
    if excused:
        lines += ["", "## Public API removals deliberately not covered", "", "| API | why |", "|---|---|"]
        lines += [f"| `{name}` | {_cell(reason)} |" for name, reason in sorted(excused.items())]
    return "\n".join(lines) + "\n"


def render_api(api: dict[str, Any], rules: dict[str, Rule], reasons: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """One section per release of the API diff: the changes rules handle, then the others by reason."""
    classified = classify(api, rules, reasons, data)
    lines = [
        "",
        "## API changes found in the wheels, torch 2.0 to 2.15",
        "",
        "Every public removal, rename, deprecation and default change that `tools/api_history.py` found",
        "(`torchup/data/api_changes.json`), by the first release that shows it: the rules that handle it",
        "(a rule handles a change when it looks for its name, `tools/coverage.py: rules_for`), else why it",
        "is out of scope (`torchup/data/coverage_reasons.json`; real-code use checked in the corpus mirrors). A",
        "reason written for a pattern of names lists the changes it explains: a change a later diff finds fails",
        "`tests/test_coverage.py` until it is mapped.",
        "",
        "| release | handled by rules | out of scope |",
        "|---|---|---|",
    ]
    releases = sorted({change["release"] for change, _, _ in classified}, key=_release_key)
    for release in releases:
        handled = sum(1 for change, h, _ in classified if change["release"] == release and h)
        other = sum(1 for change, h, _ in classified if change["release"] == release and not h)
        lines.append(f"| [{release}](#api-changes-of-torch-{release.replace('.', '')}) | {handled} | {other} |")
    for release in releases:
        rows = [(change, h, r) for change, h, r in classified if change["release"] == release]
        lines += ["", f"### API changes of torch {release}", ""]
        handled = [(change, h) for change, h, _ in rows if h]
        if handled:
            lines += ["| change | kind | evidence | handled by | fix |", "|---|---|---|---|---|"]
            for change, h in handled:
                fixes = sorted({rules[code].fix_availability.value for code in h if code in rules})
                lines.append(
                    f"| `{change_key(change)}` | {change['kind']} | {_evidence(change)} | "
                    f"{'<br>'.join(_handler(code, rules) for code in h)} | {', '.join(fixes) or 'none'} |"
                )
            lines.append("")
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for change, h, reason in rows:
            if not h and reason is not None:
                groups[reason["reason"]].append(change)
        if groups:
            lines += [f"Out of scope: {sum(len(g) for g in groups.values())} changes, by reason.", ""]
        for reason, changes in sorted(groups.items(), key=lambda item: -len(item[1])):
            names = ", ".join(f"`{change_key(c)}` ({c['kind']})" for c in changes)
            lines += [
                "<details>",
                f"<summary>{len(changes)}: {_cell(reason)}</summary>",
                "",
                names,
                "",
                "</details>",
                "",
            ]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _evidence(change: dict[str, Any]) -> str:
    evidence = change.get("evidence", {})
    where = evidence.get("wheel", "")
    if evidence.get("file"):
        where += f" `{evidence['file']}:{evidence.get('line', '?')}`"
    return where


def _handler(handler: str, rules: dict[str, Rule]) -> str:
    if handler in COMMANDS:
        return COMMANDS[handler]
    rule = rules.get(handler)
    if rule is None:
        return f"{handler} (unknown rule)"
    verbs = "check, fix" if rule.fix_availability is not FixAvailability.NONE else "check"
    off = "; `--select`" if not rule.enabled_by_default else ""
    return f"{handler} `{rule.name}` ({verbs}{off})"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/coverage.md is stale or inconsistent")
    args = parser.parse_args(argv)
    data, rules = load_items(), rules_by_code()
    api, reasons = load_api(), load_reasons()
    issues = problems(data, rules, api, reasons)
    issues += unmapped(api, rules, reasons, data) + since_problems(api, rules, reasons, data)
    issues += stale_covers(api, reasons)
    if REMOVALS.exists():
        issues += [f"not covered and not excused: {m}" for m in uncovered_removals(data, load_items(REMOVALS))]
    for issue in issues:
        print(f"{ITEMS.relative_to(ROOT)}: {issue}", file=sys.stderr)
    text = render(data, rules)
    if args.check:
        stale = not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text
        if stale:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run python3 tools/coverage.py", file=sys.stderr)
        return 1 if stale or issues else 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(data['items'])} items)")
    return 1 if issues else 0


if __name__ == "__main__":
    raise SystemExit(main())
