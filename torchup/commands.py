"""What each sub-command does, behind the argument parsing of ``cli``."""

from __future__ import annotations

import argparse
import sys

from torchup.checker import Checker
from torchup.discovery import DEFAULT_EXCLUDE, Discovery
from torchup.output import Style, use_colour, write_report
from torchup.python_target import parse_version
from torchup.rules import all_rules, rule_by_code
from torchup.runner import RunOptions, RunResult, run
from torchup.selection import SelectionError, select_rules, split_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def run_check(args: argparse.Namespace, *, fix: bool) -> int:
    try:
        rules = select_rules(
            all_rules(),
            split_codes(args.select) or None,
            split_codes(args.extend_select),
            split_codes(args.ignore),
        )
    except SelectionError as exc:
        sys.stderr.write(f"torchup: error: {exc}\n")
        return EXIT_ERROR
    if args.target_python is not None:
        try:
            parse_version(args.target_python)
        except ValueError as exc:
            sys.stderr.write(f"torchup: error: --target-python: {exc}\n")
            return EXIT_ERROR
    checker = Checker(rules, prefilter=not args.no_prefilter, target_python=args.target_python)
    discovery = Discovery(
        exclude=tuple(split_codes(args.exclude)) if args.exclude else DEFAULT_EXCLUDE,
        extend_exclude=tuple(split_codes(args.extend_exclude)),
        respect_gitignore=not args.no_respect_gitignore,
    )
    options = RunOptions(fix=fix, unsafe_fixes=args.unsafe_fixes, diff=args.diff)
    result = run(args.paths, checker, discovery, options)
    selected = {rule.code for rule in rules}
    diagnostics = [d for d in result.diagnostics if d.code in selected]
    if args.diff:
        sys.stdout.write("".join(result.diffs))
    else:
        write_report(diagnostics, result.sources.get, args.output_format)
    if not args.quiet and args.output_format != "json":
        _summary(result, diagnostics, fix=fix, diff=args.diff, unsafe=args.unsafe_fixes)
    if result.files_checked == 0 and result.files_failed > 0:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if result.diffs else EXIT_CLEAN
    return EXIT_FINDINGS if diagnostics else EXIT_CLEAN


def _summary(result: RunResult, diagnostics: list, *, fix: bool, diff: bool, unsafe: bool) -> None:
    stream = sys.stderr if diff else sys.stdout
    style = Style(use_colour(stream))
    files = f"{result.files_checked} file{'s' * (result.files_checked != 1)} checked"
    lines = []
    if fix and result.fixed:
        verb = "Would fix" if diff else "Fixed"
        lines.append(f"{verb} {result.fixed} finding{'s' * (result.fixed != 1)} in {result.files_fixed} "
                     f"file{'s' * (result.files_fixed != 1)}.")
    if diagnostics:
        safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "safe")
        unsafe_count = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "unsafe")
        remain = "remaining" if fix else "found"
        text = f"{len(diagnostics)} finding{'s' * (len(diagnostics) != 1)} {remain} ({files})."
        hints = []
        if safe and not (fix and not diff):
            hints.append(f"{safe} fixable with `torchup fix`")
        if unsafe_count and not (unsafe and fix and not diff):
            hints.append(f"{unsafe_count} more with `torchup fix --unsafe-fixes`")
        if hints:
            text += " " + "; ".join(hints) + "."
        lines.append(style.bold(text))
    elif not (fix and result.fixed):
        lines.append(f"All checks passed ({files}).")
    else:
        lines.append(f"Nothing left to report ({files}).")
    stream.write("\n".join(lines) + "\n")


def show_rule(code: str) -> int:
    rule = rule_by_code(code)
    if rule is None:
        known = ", ".join(r.code for r in all_rules())
        sys.stderr.write(f"torchup: error: no rule {code!r}; known codes: {known}\n")
        return EXIT_ERROR
    sys.stdout.write(rule.render_docs())
    return EXIT_CLEAN


def list_rules() -> int:
    rows = [("CODE", "NAME", "FIX", "DEFAULT", "SUMMARY")]
    for rule in all_rules():
        rows.append(
            (
                rule.code,
                rule.name,
                rule.fix_availability.value,
                "on" if rule.enabled_by_default else "off",
                rule.summary,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        sys.stdout.write("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] + "\n")
    return EXIT_CLEAN
