"""What each sub-command does, behind the argument parsing of ``cli``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchup.analysis.rule import release_tuple
from torchup.check.checker import Checker, applies_to_release
from torchup.cli.progress import Progress
from torchup.core import torchfix
from torchup.core.python_target import parse_version
from torchup.core.source import DecodeError, SourceFile, is_notebook
from torchup.discover.discovery import DEFAULT_EXCLUDE, Discovery
from torchup.fix.fixer import fix_source
from torchup.report.formats import RunCounts, SupportWindow, render, render_fixes, render_statistics
from torchup.report.output import Style, use_colour, write_report
from torchup.rules import all_rules, rule_by_code
from torchup.run.cache import Cache
from torchup.run.replay import CACHE_DIR_NAME
from torchup.run.runner import RunOptions, RunResult, run
from torchup.settings.config import KNOWN_RELEASES, ConfigError, Settings
from torchup.settings.provider import SettingsProvider
from torchup.settings.selection import split_codes
from torchup.settings.torch_requirement import PROJECT_FILES

if TYPE_CHECKING:
    from torchup.core.diagnostics import Diagnostic
    from torchup.run.replay import Recorder

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
WindowFor = Callable[[str], SupportWindow]
_PACKAGE = __name__.partition(".")[0]  # a fix that imports from torchup makes the fixed code depend on it


def settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """What the command line of `check`/`fix` sets, for ``SettingsProvider`` (None: not given)."""
    return {
        "select": tuple(split_codes(args.select)) or None,
        "extend_select": tuple(split_codes(args.extend_select)) or None,
        "ignore": tuple(split_codes(args.ignore)) or None,
        "exclude": tuple(split_codes(args.exclude)) or None,
        "extend_exclude": tuple(split_codes(args.extend_exclude)) or None,
        "target_python": args.target_python,
        "target_version": args.target_version,
        "from_version": args.from_version,
        "raise_floor": getattr(args, "raise_floor", False) or None,
        "unsafe_fixes": True if args.unsafe_fixes else None,
        "min_confidence": args.min_confidence,
        "output_format": args.output_format,
    }


def run_check(args: argparse.Namespace, *, fix: bool, recorder: Recorder | None = None) -> int:
    """``recorder``: told what the run read, once its report is out (torchup.run.replay)."""
    if args.target_python is not None:
        try:
            parse_version(args.target_python)
        except ValueError as exc:
            sys.stderr.write(f"torchup: error: --target-python: {exc}\n")
            return EXIT_ERROR
    overrides = settings_overrides(args)
    provider = SettingsProvider(overrides, config=args.config, isolated=args.isolated)
    try:
        # The settings of the first path (or the working directory) decide discovery and output;
        # resolving them validates the rule codes of that configuration. (Not `provider(path)`: it
        # takes a file, and a directory's "." would stand for the files directly in the cwd.)
        settings = provider.settings(args.paths[0] if args.paths else ".")
    except ConfigError as exc:
        sys.stderr.write(f"torchup: error: {exc}\n")
        return EXIT_ERROR
    if settings.from_version and settings.target_version and (
        release_tuple(settings.from_version) > release_tuple(settings.target_version)
    ):
        sys.stderr.write(
            f"torchup: error: from-version {settings.from_version} is newer than target-version "
            f"{settings.target_version}: torchup checks an upgrade, from the release the code runs on to a newer "
            f"one; give a target of {settings.from_version} or later (--target-version)\n"
        )
        return EXIT_ERROR
    if args.show_settings:  # (with the from-version of the first path, and where it was found)
        first = args.paths[0] if args.paths else "."
        sys.stdout.write(settings.describe(provider.from_version(first)))
        if Path(first).is_dir():
            sys.stdout.write(_projects_below(provider, first))
        return EXIT_CLEAN
    # TorchFix's codes stand for torchup's: say which (torchup.core.torchfix), and where they came from.
    for line in settings.notes:
        sys.stderr.write(f"torchup: note: {line}\n")
    ignored_per_file = [code for _, codes in settings.per_file_ignores for code in codes]
    selectors = [*(settings.select or ()), *settings.extend_select, *settings.ignore, *ignored_per_file]
    for line in torchfix.notes(list(dict.fromkeys(selectors))):
        sys.stderr.write(f"torchup: note: {line}\n")
    checker = Checker([], prefilter=not args.no_prefilter, settings_for=provider)
    if args.paths == ["-"]:
        return _run_stdin(args, checker, settings, fix=fix)
    discovery = Discovery(
        exclude=settings.exclude if settings.exclude is not None else DEFAULT_EXCLUDE,
        extend_exclude=settings.extend_exclude,
        respect_gitignore=not args.no_respect_gitignore,
        follow_links=args.follow_links,
    )
    if args.add_noqa:
        from torchup.cli.add_noqa import add_noqa

        added, left = add_noqa(checker, args.paths, discovery)
        write_report(left, lambda _: None, settings.output_format)
        sys.stdout.write(f"Added {added} noqa directive{'s' * (added != 1)}.\n")
        return EXIT_FINDINGS if left and not args.exit_zero else EXIT_CLEAN
    options = RunOptions(
        fix=fix,
        unsafe_fixes=settings.unsafe_fixes,
        diff=args.diff,
        cache=None if args.no_cache else Cache.open(settings.root),
        jobs=max(1, args.jobs),
        progress=Progress.for_run(args.quiet),
        verbose=args.verbose,
    )
    try:
        result = run(args.paths, checker, discovery, options)
    except ConfigError as exc:  # a file deeper in the tree with a broken config
        sys.stderr.write(f"torchup: error: {exc}\n")
        return EXIT_ERROR
    diagnostics = [d for d in result.diagnostics if checker.reports(d.code, d.path)]
    window_for = _windows(provider, settings, args)
    window = window_for(args.paths[0] if args.paths else ".")
    for line in torchfix.noqa_notes(result.torchfix_noqa):
        sys.stderr.write(f"torchup: note: {line}\n")
    output_format = settings.output_format
    raised = None
    if fix and getattr(args, "raise_floor", False):
        from torchup.run.floor_raise import raise_floors

        raised = raise_floors(result.fixed_diagnostics, provider.detector, diff=args.diff)
        result.diffs.extend(raised.diffs)
        for line in raised.lines:
            (sys.stderr if args.diff or args.quiet or output_format not in ("full", "concise") else sys.stdout).write(
                f"torchup: {line}\n")
    if args.diff:
        sys.stdout.write("".join(result.diffs))
    elif args.statistics:
        _emit(args, render_statistics(diagnostics, unsafe_fixes=settings.unsafe_fixes,
                                      output_format="json" if output_format == "json" else "text"))
    elif output_format in ("full", "concise") and not args.output_file:
        write_report(diagnostics, result.sources.get, output_format)  # colour on a terminal
    else:
        counts = RunCounts(result.files_checked, result.files_not_parsed, result.files_failed, window, window_for)
        _emit(args, render(output_format, diagnostics, result.sources.get, root=project_root(), counts=counts))
    if args.show_fixes and fix and result.fixed_diagnostics:
        sys.stdout.write(render_fixes(result.fixed_diagnostics, root=project_root()))
    if not args.quiet and output_format in ("full", "concise") and not args.statistics:
        _summary(result, diagnostics, fix=fix, diff=args.diff, unsafe=settings.unsafe_fixes, window=window)
    if recorder is not None:
        wrote = fix and not args.diff and bool(result.changed)
        recorder.completed(settings.root, discovery, result.targets, wrote=wrote, cache=options.cache, checker=checker)
    if result.files_checked == 0 and result.files_failed > 0:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if result.diffs else EXIT_CLEAN
    return EXIT_FINDINGS if diagnostics else EXIT_CLEAN


def _emit(args: argparse.Namespace, text: str) -> None:
    if args.output_file:
        Path(args.output_file).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def project_root() -> Path:
    """Where report paths are relative to (SARIF's %SRCROOT%): the git work tree, else the cwd."""
    current = Path.cwd()
    for directory in (current, *current.parents):
        if (directory / ".git").exists():
            return directory
    return current


def _run_stdin(args: argparse.Namespace, checker: Checker, settings: Settings, *, fix: bool) -> int:
    """``torchup check -``: findings for stdin; ``torchup fix -``: the fixed source on stdout."""
    name = args.stdin_filename or "<stdin>"
    raw = sys.stdin.buffer.read()
    if is_notebook(name):
        return _run_stdin_notebook(args, checker, settings, name, raw, fix=fix and not args.diff)
    try:
        source = SourceFile.from_bytes(name, raw)
    except DecodeError as exc:
        write_report([checker.decode_error(name, exc)], lambda _: None, settings.output_format, sys.stderr)
        if fix:
            sys.stdout.buffer.write(raw)
        return EXIT_FINDINGS
    if fix and not args.diff:
        outcome = fix_source(checker, source, unsafe=settings.unsafe_fixes)
        sys.stdout.buffer.write(source.encode(outcome.text))
        fixed = SourceFile(name, source.encode(outcome.text), outcome.text, source.encoding)
        write_report(outcome.remaining, {name: fixed}.get, settings.output_format, sys.stderr)
        return EXIT_FINDINGS if outcome.remaining and not args.exit_zero else EXIT_CLEAN
    diagnostics = checker.analyze_alone(source).diagnostics
    write_report(diagnostics, {name: source}.get, settings.output_format)
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _run_stdin_notebook(
    args: argparse.Namespace, checker: Checker, settings: Settings, name: str, raw: bytes, *, fix: bool
) -> int:
    """A notebook on stdin (``--stdin-filename x.ipynb``): its code cells, as for a notebook file."""
    from torchup.run.notebook import process as process_notebook

    outcome = process_notebook(checker, name, raw, fix=fix, unsafe=settings.unsafe_fixes)
    sources = {name: outcome.source}.get if outcome.source is not None else (lambda _: None)
    if fix:
        sys.stdout.buffer.write(outcome.data if outcome.data is not None else raw)
        write_report(outcome.diagnostics, sources, settings.output_format, sys.stderr)
    else:
        write_report(outcome.diagnostics, sources, settings.output_format)
    return EXIT_FINDINGS if outcome.diagnostics and not args.exit_zero else EXIT_CLEAN


def _windows(provider: SettingsProvider, settings: Settings, args: argparse.Namespace) -> WindowFor:
    """The support window of a path (memoised per directory: its files share a floor)."""
    if args.target_version is not None:
        target_source = "--target-version"
    elif settings.target_version != KNOWN_RELEASES[-1]:
        target_source = f"target-version in {settings.config_file}"
    else:
        target_source = "default: the newest release torchup knows"
    by_directory: dict[str, SupportWindow] = {}

    def window_for(path: str) -> SupportWindow:
        directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        window = by_directory.get(directory)
        if window is None:
            floor = provider.from_version(path)
            source = floor.explained()
            target = provider.settings(path).target_version
            window = by_directory[directory] = SupportWindow(floor.release, source, target, target_source)
        return window

    return window_for


def _summary(
    result: RunResult, diagnostics: list, *, fix: bool, diff: bool, unsafe: bool, window: SupportWindow | None = None
) -> None:
    stream = sys.stderr if diff else sys.stdout
    style = Style(use_colour(stream))
    files = f"{result.files_checked} file{'s' * (result.files_checked != 1)} checked"
    # What the count covers, where less than a parse: no more may be claimed than was done (findings
    # from the cache count as the run that made them did, so a re-run prints what a cold run would).
    if result.files_not_parsed:
        files += f"; {result.files_not_parsed} without a trigger word, not parsed"
    lines = [f"Support window: {window.text()}."] if window is not None else []
    if fix and result.fixed:
        verb = "Would fix" if diff else "Fixed"
        lines.append(f"{verb} {result.fixed} finding{'s' * (result.fixed != 1)} in {result.files_fixed} "
                     f"file{'s' * (result.files_fixed != 1)}.")
        lines.extend(_new_dependencies(result.fixed_diagnostics, diff=diff))
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


def _new_dependencies(fixed: list[Diagnostic], *, diff: bool) -> list[str]:
    """A line for each import of torchup itself that fixes added (whatever the rule): the fixed files
    now need torchup installed to run."""
    paths: dict[str, list[str]] = {}  # import statement -> the path of each fix that needs it
    for diagnostic in fixed:
        for request in set(diagnostic.fix.imports if diagnostic.fix else ()):
            if request.module.partition(".")[0] == _PACKAGE:
                name = f"from {request.module} import {request.name}" if request.name else f"import {request.module}"
                paths.setdefault(name, []).append(diagnostic.path)
    added, now = ("would add", "would become") if diff else ("added", "is now")
    lines = []
    for statement, found in sorted(paths.items()):
        files = sorted(set(found))
        more = f" and {len(files) - 5} more" if len(files) > 5 else ""
        lines.append(f"{len(found)} fix{'es' * (len(found) != 1)} {added} `{statement}`: {_PACKAGE} {now} a "
                     f"run-time dependency of {', '.join(files[:5])}{more}.")
    return lines


_SHOWN_PROJECTS = 20


def _projects_below(provider: SettingsProvider, root: str) -> str:
    """For ``--show-settings`` of a directory: the from-version of each project below it whose own
    files decide it differently (each file is checked with its nearest project's from-version)."""
    here = provider.from_version(root)
    lines = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith(".") and d not in DEFAULT_EXCLUDE)
        if directory == root or not any(f in PROJECT_FILES or f.startswith("requirements") for f in files):
            continue
        found = provider.from_version(directory)
        if found != here:
            lines.append(f"  {os.path.relpath(directory, root)}: floor = \"{found.release}\" ({found.source})")
    if not lines:
        return ""
    more = f"\n  ... and {len(lines) - _SHOWN_PROJECTS} more" if len(lines) > _SHOWN_PROJECTS else ""
    return ("# projects below it, whose files are checked with their own floor:\n"
            + "\n".join(lines[:_SHOWN_PROJECTS]) + more + "\n")


def show_rule(code: str) -> int:
    """``torchup rule CODE``: a rule's docs; for a TorchFix code (`TOR102`), those of the torchup
    rules that report what it did, after a line naming them."""
    rules = [rule_by_code(code)]
    if rules[0] is None and torchfix.is_torchfix(code) and code.strip().upper() in torchfix.table():
        mapped = torchfix.torchup_codes(code)
        rules = [rule_by_code(mapped_code) for mapped_code in mapped]
        sys.stdout.write(f"TorchFix's {code.strip().upper()} is torchup's {', '.join(mapped)} (docs/torchfix.md)\n\n")
    if not rules or any(rule is None for rule in rules):
        known = ", ".join(r.code for r in all_rules())
        sys.stderr.write(f"torchup: error: no rule {code!r}; known codes: {known}, and TorchFix's TOR codes\n")
        return EXIT_ERROR
    sys.stdout.write("\n".join(rule.render_docs() for rule in rules if rule is not None))
    return EXIT_CLEAN


def clean() -> int:
    """``torchup clean``: remove the cache of the project here (the config's directory, or cwd)."""
    from torchup.settings.provider import SettingsProvider

    root = SettingsProvider({}).settings(".").root
    directory = root / CACHE_DIR_NAME
    if (directory / "CACHEDIR.TAG").is_file():  # only ever delete a directory torchup made
        import shutil  # (here: shutil imports the compression modules, which a check never needs)

        shutil.rmtree(directory)
        sys.stdout.write(f"Removed {directory}\n")
    else:
        sys.stdout.write(f"No cache at {directory}\n")
    return EXIT_CLEAN


def list_rules(since: str | None = None, target_version: str | None = None) -> int:
    """``torchup rules``: every rule, with the releases it applies to and what its release changed.
    ``since``: only the rules that run by default for code on that release migrating to
    ``target_version`` (the newest known by default): the changes after it, and the breaks
    (``Rule.on_by_default``, ``applies_to_release``)."""
    target = target_version or KNOWN_RELEASES[-1]
    rows = [("CODE", "NAME", "FIX", "DEFAULT", "RELEASE", "CHANGE", "SUMMARY")]
    for rule in all_rules():
        if since is not None and not (rule.on_by_default(since) and applies_to_release(rule, target)):
            continue
        # The targets the rule runs for, as a version specifier: >=2.14, >=2.14,<2.15, <2.15, any.
        release = ",".join([*([f">={rule.since}"] if rule.since else []), *([f"<{rule.until}"] if rule.until else [])])
        rows.append(
            (
                rule.code,
                rule.name,
                rule.fix_availability.value,
                "on" if rule.enabled_by_default else "off",
                release or "any",
                "-" if rule.engine_emitted else rule.change.value.replace(" ", "-"),
                rule.summary,
            )
        )
    columns = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(columns)]
    for row in rows:
        cells = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:columns]))
        sys.stdout.write(f"{cells}  {row[columns]}\n")
    return EXIT_CLEAN
