"""Check one source text: pre-filter, parse once, resolve names, dispatch rules, apply ``# noqa``."""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.importer import import_edits
from torchup.analysis.patch_targets import report_patch_targets
from torchup.analysis.project import MethodDefinition, ProjectView, defined_methods, defined_methods_in_text
from torchup.analysis.receivers import receiver_focus_lines
from torchup.analysis.resolver import Focus, Resolver
from torchup.analysis.rule import Rule
from torchup.check.suppressions import UNUSED_NOQA, apply_suppressions, mentions_noqa
from torchup.core.diagnostics import Confidence, Diagnostic, Severity
from torchup.core.packages import top_package
from torchup.core.python_target import resolve_target
from torchup.core.source import DecodeError, SourceFile
from torchup.prefilter.requirements import mentions_star_import
from torchup.prefilter.words import STRING, Occurrences, TriggerPattern
from torchup.rules import all_rules

if TYPE_CHECKING:
    from torchup.prefilter.skeleton import Skeleton

# What decides the rules for one file: its selection (by identity), target Pythons, target release, package,
# and whether a floor is known (``Rule.needs_floor``).
_RulesKey = tuple[int, frozenset[tuple[int, int]], "str | None", "str | None", bool]


class RuleSet:
    """The rules that can fire on some files, with what the pre-filter asks of them again and
    again worked out once: a file's words name its candidate rules (an index by word) instead of
    a test of every rule for every file (90,100 tests on transformers' 2,951 files; -8% CPU with
    `--jobs 1` there, -3% on torch's sources: bench/RESULTS.md, session 10)."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = tuple(rules)
        self.words = frozenset(word for rule in rules for word in rule.triggers)
        # What the project's classes may define that explains a receiver's finding.
        self.method_words = frozenset(
            word for rule in rules for word in (*rule.looks_for.methods, *rule.instance_attributes)
        )
        self.path_words = frozenset(word for rule in rules for word in rule.path_words)
        by_word: dict[str, list[Rule]] = {}
        for rule in rules:
            for word in rule.triggers:
                by_word.setdefault(word, []).append(rule)
        self._by_word = by_word
        self._order = {id(rule): index for index, rule in enumerate(rules)}

    def touched(self, present: frozenset[str]) -> list[Rule]:
        """The rules with at least one of the words ``present``, in their order."""
        found: dict[int, Rule] = {}
        for word in present:
            for rule in self._by_word.get(word, ()):
                found[id(rule)] = rule
        rules = list(found.values())
        return sorted(rules, key=lambda rule: self._order[id(rule)]) if len(rules) > 1 else rules

    def triggered(self, present: frozenset[str]) -> list[Rule]:
        """The rules a file spelling the words ``present`` can hold a finding of
        (``Rule.triggered_by``: all their words, for those that need them together), in their order."""
        return [rule for rule in self.touched(present) if not rule.needs_every_trigger or rule.triggered_by(present)]


SYNTAX_ERROR = "TU001"
IO_ERROR = "TU000"


# Encodings whose bytes a byte-level scan reads as the text: UTF-8 (the default) and ASCII.
_BYTES_AS_TEXT = frozenset({"utf-8", "utf-8-sig", "ascii"})


@dataclass(frozen=True)
class Prescan:
    """The pre-filter's answer for one file's bytes."""

    could_match: bool
    found: Occurrences | None = None  # None: no trigger words to look for (see ``Checker._filter``)


@dataclass
class Analysis:
    """One parse of one text: the findings and, when it parsed, what fixes need."""

    source: SourceFile
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tree: ast.Module | None = None
    resolver: Resolver | None = None
    parsed: bool = False  # False: the pre-filter ruled the file out, or it did not parse
    methods: list[MethodDefinition] = field(default_factory=list)  # for torchup.analysis.project
    torchfix_noqa: set[str] = field(default_factory=set)  # TorchFix codes whose noqa comment silenced a finding


# The settings that decide what runs on one file (from the nearest config and the command line).
SettingsFor = Callable[[str], "FileSettings"]


@dataclass(frozen=True)
class FileSettings:
    """The rules and targets that apply to one file."""

    rules: tuple[Rule, ...]  # selected, after per-file ignores, engine rules included
    target_python: str | None = None
    target_version: str | None = None
    # The release the code runs on today, which chose the rules on by default (None: not known;
    # the rules were chosen without it). Part of the fingerprint: findings made for one
    # from-version are never taken for another's (the findings cache, the replay).
    from_version: str | None = None
    # The least sure findings of method rules reported (``--min-confidence``; torchup.analysis.receivers).
    min_confidence: Confidence = Confidence.POSSIBLE
    # The floor as findings name it (`1.7 (requirements.txt:16 `torch>=1.7`)`): a fix that needs a newer
    # torch says so (torchup.analysis.fix_window). With ``raise_floor`` such fixes are kept, each
    # saying the release it needs, and `fix --raise-floor` raises the requirement. With
    # ``floor_known`` False (nothing names a floor: its default chose the rules), no fix is held to it.
    floor_text: str | None = None
    floor_known: bool = True
    raise_floor: bool = False


class Checker:
    def __init__(
        self,
        rules: list[Rule],
        *,
        prefilter: bool = True,
        target_python: str | None = None,
        settings_for: SettingsFor | None = None,
    ) -> None:
        """``rules``: the selection for every file; ``settings_for``, when given, decides per file."""
        self.target_python = target_python
        self.engine_codes = {rule.code for rule in rules if rule.engine_emitted}
        self.rules = [rule for rule in rules if not rule.engine_emitted]
        self.names = {rule.code: rule.name for rule in all_rules()}
        self.prefilter = prefilter
        self.settings_for = settings_for
        self._codes: dict[int, tuple[tuple[Rule, ...], frozenset[str]]] = {}
        self._fingerprints: dict[tuple[int, frozenset[tuple[int, int]], str | None], tuple[FileSettings, str]] = {}
        self._fingerprint_in: dict[tuple[int, str], tuple[FileSettings, str]] = {}  # by (settings, directory)
        self._filter_in: dict[tuple[int, str], tuple[FileSettings, TriggerPattern | bool]] = {}
        self._rules_for: dict[_RulesKey, tuple[tuple[Rule, ...], RuleSet]] = {}
        self._rule_set_in: dict[tuple[int, str], tuple[FileSettings, RuleSet]] = {}  # by (settings, directory)
        self._patterns: dict[tuple[str, ...], TriggerPattern | None] = {}
        # What the rest of the project decides about a file's findings (set for a fix's second
        # phase: torchup.run.runner); a check run applies it to all findings at its end instead.
        self.project: ProjectView | None = None

    def file_settings(self, path: str) -> FileSettings:
        if self.settings_for is not None:
            return self.settings_for(path)
        return FileSettings((*self.rules, *(r for r in all_rules() if r.code in self.engine_codes)), self.target_python)

    def fingerprint(self, path: str) -> str:
        """Everything about the settings that decides this file's findings (the cache key's half)."""
        settings = self.file_settings(path)
        directory = os.path.dirname(path)  # (its files share a target Python: one lookup per directory)
        known = self._fingerprint_in.get((id(settings), directory))
        if known is not None and known[0] is settings:
            return known[1]
        target = resolve_target(settings.target_python, path)
        package = top_package(path)  # (``Rule.not_in_package``)
        key = (id(settings), target.versions, package)
        cached = self._fingerprints.get(key)
        if cached is None or cached[0] is not settings:  # (the identity check guards id reuse)
            codes = ",".join(sorted(rule.code for rule in settings.rules))
            versions = ",".join(f"{a}.{b}" for a, b in sorted(target.versions))
            text = f"{codes}|{versions}|{settings.target_version}|{settings.from_version}|{int(self.prefilter)}" \
                f"|{settings.min_confidence.value}|{package}|{settings.floor_text}|{int(settings.raise_floor)}"
            cached = self._fingerprints[key] = (settings, text)
        self._fingerprint_in[(id(settings), directory)] = cached
        return cached[1]

    def reports(self, code: str, path: str) -> bool:
        """Is ``code`` selected for this file (engine findings are filtered with this)?"""
        rules = self.file_settings(path).rules
        cached = self._codes.get(id(rules))
        if cached is None or cached[0] is not rules:  # (the identity check guards id reuse)
            cached = self._codes[id(rules)] = (rules, frozenset(rule.code for rule in rules))
        return code in cached[1]

    def rules_for(self, path: str) -> list[Rule]:
        """The selected rules that can fire on this file (its target Python and torch release)."""
        return list(self.rule_set(path).rules)

    def rule_set(self, path: str) -> RuleSet:
        """``rules_for``, with the questions the pre-filter asks of them (see ``RuleSet``)."""
        settings = self.file_settings(path)
        directory = os.path.dirname(path)  # (its files share a target Python and a package)
        known = self._rule_set_in.get((id(settings), directory))
        if known is not None and known[0] is settings:
            return known[1]
        target = resolve_target(settings.target_python, path)
        package = top_package(path)
        floor = settings.from_version is not None and settings.floor_known
        key = (id(settings.rules), target.versions, settings.target_version, package, floor)
        cached = self._rules_for.get(key)
        if cached is None or cached[0] is not settings.rules:  # (the identity check guards id reuse)
            rules = [
                rule
                for rule in settings.rules
                if not rule.engine_emitted
                and rule.applies_to(target)
                and applies_to_release(rule, settings.target_version)
                and (rule.not_in_package is None or rule.not_in_package != package)
                and (floor or not rule.needs_floor)
            ]
            cached = self._rules_for[key] = (settings.rules, RuleSet(rules))
        self._rule_set_in[(id(settings), directory)] = (settings, cached[1])
        return cached[1]

    def _pattern(self, rules: list[Rule]) -> TriggerPattern | None:
        key = tuple(rule.code for rule in rules)
        if key not in self._patterns:
            words = [word for rule in rules for word in rule.triggers]
            loose = {word for rule in rules for word in rule.string_words}
            paths = {word for rule in rules for word in rule.path_words}
            strict = frozenset(words) - loose
            roles = _word_roles(rules, strict)
            renamed = _renamed_paths(rules)
            self._patterns[key] = TriggerPattern(words, strict, strict - paths, roles, renamed) if words else None
        return self._patterns[key]

    def _filter(self, path: str) -> TriggerPattern | bool:
        """What the pre-filter asks of this file: a pattern to find, True (read it whatever it
        says: no pre-filter, only the engine's checks, or a rule without trigger words), or False
        (no rule can fire on it)."""
        settings = self.file_settings(path)
        key = (id(settings), os.path.dirname(path))  # (it depends on the directory's target Python)
        known = self._filter_in.get(key)
        if known is not None and known[0] is settings:
            return known[1]
        found: TriggerPattern | bool
        if not self.prefilter or all(rule.engine_emitted for rule in settings.rules):
            found = True
        else:
            rules = list(self.rule_set(path).rules)
            if not rules:
                found = False
            elif any(not rule.triggers for rule in rules):
                found = True
            else:
                found = self._pattern(rules) or True
        self._filter_in[key] = (settings, found)
        return found

    def scan_pattern(self, path: str) -> TriggerPattern | None:
        """The words stage 1 of the pre-filter looks for in this file, when finding none of them
        (nor `noqa`, where ``reports_unused_noqa``) settles it; None when ``_filter`` says read it."""
        found = self._filter(path)
        return found if isinstance(found, TriggerPattern) else None

    def reports_unused_noqa(self, path: str) -> bool:
        """Is TU002 reported here: then a file that spells `noqa` is read, trigger words or not."""
        return self.reports(UNUSED_NOQA, path)

    def could_match(self, text: str, path: str) -> bool:
        """The pre-filter: no trigger word, no possible finding (a reference spells its name)."""
        return self._could_match(text, path)

    def could_match_json(self, raw: bytes, path: str) -> bool:
        """The pre-filter on a notebook's JSON text, where the code stands in strings."""
        return self._could_match(raw, path, code_in_strings=True)

    def _could_match(
        self, content: str | bytes, path: str, found: Occurrences | None = None, code_in_strings: bool = False
    ) -> bool:
        pattern = self._filter(path)
        if pattern is True:
            return True
        if self.reports(UNUSED_NOQA, path) and mentions_noqa(content):
            return True  # an unused noqa comment is a finding even where no rule's trigger word appears
        if pattern is False:
            return False
        return found.in_code if found is not None else pattern.could_match(content, code_in_strings)

    def prescan(self, raw: bytes, path: str, lines: tuple[tuple[int, int], ...] | None = None) -> Prescan:
        """The pre-filter on a file's bytes, with what ``analyze`` can reuse when the text is UTF-8;
        ``lines``: every line that holds one of this file's trigger words or a scope word, as
        (number, offset), when grep said (the scan then reads only those)."""
        scan = self._filter(path)
        if isinstance(scan, TriggerPattern) and lines is not None and self._names_not_referred(path, raw, lines, scan):
            return Prescan(self.reports(UNUSED_NOQA, path) and mentions_noqa(raw), None)
        found = scan.scan(raw, lines) if isinstance(scan, TriggerPattern) else None
        return Prescan(self._could_match(raw, path, found), found)

    def _names_not_referred(
        self, path: str, raw: bytes, lines: tuple[tuple[int, int], ...], pattern: TriggerPattern
    ) -> bool:
        """Whether every rule with a word on grep's lines finds only qualified names, none of whose
        modules this file spells (``Rule.name_requirements``): then no rule can report, and the
        word scan, the costliest step for common words (`checkpoint` stands in 887 of transformers'
        2,912 files, nearly all in prose), is skipped. The same answer ``may_report`` would give
        after the scan."""
        present = pattern.words_on_lines(raw, lines)
        candidates = self.rule_set(path).triggered(present)
        if not candidates:
            return True  # (a rule that needs its words together finds some of them only)
        if any(rule.name_requirements is None for rule in candidates):
            return False
        # First from grep's lines alone: no word where a name's last word can stand, no star import
        # (transformers: 1,360 files get here, most for `checkpoint` or `load` in their own code).
        if all(not rule.name_requirements.words for rule in candidates):  # type: ignore[union-attr]
            referring = pattern.words_referring(raw, lines)
            if all(referring.isdisjoint(rule.triggers) for rule in candidates) and not mentions_star_import(raw):
                return True
        text = raw.decode("utf-8", "replace")
        return not any(rule.name_requirements.could_refer(text) for rule in candidates)  # type: ignore[union-attr]

    def analyze(self, source: SourceFile, prescan: Prescan | None = None) -> Analysis:
        """Check one text; ``prescan``: ``self.prescan`` of its bytes, if taken (spares a scan)."""
        with collector_paused():
            return self._analyze(source, prescan)

    def analyze_alone(self, source: SourceFile) -> Analysis:
        """``analyze`` of a text that is the whole project (the library API, stdin): what the
        project decides about its findings (torchup.analysis.project) comes from this text alone."""
        analysis = self.analyze(source)
        if self.project is None:
            ProjectView(analysis.diagnostics, analysis.methods).adjust(analysis.diagnostics)
        return analysis

    def _analyze(self, source: SourceFile, prescan: Prescan | None) -> Analysis:
        analysis = Analysis(source)
        rule_set = self.rule_set(source.path)
        rules = list(rule_set.rules)
        scan = self._filter(source.path)
        # A focus only where every rule has trigger words (a rule without them must see all code).
        found = None
        if isinstance(scan, TriggerPattern):
            reusable = prescan is not None and prescan.found is not None and source.encoding in _BYTES_AS_TEXT
            found = prescan.found if reusable else scan.scan(source.text)  # type: ignore[union-attr]
        if not self.file_settings(source.path).rules or not self._could_match(source.text, source.path, found):
            return analysis
        focus = None
        if found is not None:
            present = self._reportable(found, rule_set, source)
            if not present and not (self.reports(UNUSED_NOQA, source.path) and mentions_noqa(source.text)):
                return analysis  # (no rule can report here: no parse)
            focus = self._focus(found, present, rule_set, source)
        skeleton = self._skeleton(source, rules, focus, found)
        if skeleton is not None and focus is not None and found is not None:
            narrower = self._kept_code_reportable(skeleton, focus, rules)
            if narrower is not None:
                if not narrower and not (self.reports(UNUSED_NOQA, source.path) and mentions_noqa(source.text)):
                    return analysis
                focus = self._focus(found, narrower, rule_set, source)
                skeleton = self._skeleton(source, rules, focus, found)
        try:
            tree, skeletal = parse(source, skeleton)
        except SyntaxError as exc:
            analysis.diagnostics.append(self.syntax_error(source, exc))
            return analysis
        except (RecursionError, MemoryError, ValueError) as exc:
            if isinstance(exc, (RecursionError, MemoryError)):  # CPython's parser: MemoryError when its stack overflows
                message = f"the parser gave up: the code is nested too deeply ({type(exc).__name__})"
            else:
                message = f"the parser failed: {exc or type(exc).__name__}"
            analysis.diagnostics.append(self.engine_diagnostic(SYNTAX_ERROR, source.path, message, 1, 1))
            return analysis
        try:
            resolver = Resolver(tree, focus, whole_tree(source) if skeletal else None)
            tree = resolver.tree
            settings = self.file_settings(source.path)
            ctx = Context(source, tree, resolver, target_python_option=settings.target_python,
                          target_version=settings.target_version,
                          floor=settings.from_version if settings.floor_known else None,
                          floor_text=settings.floor_text, raise_floor=settings.raise_floor)
            for rule in rules:
                if _runs(rule, focus):
                    ctx.rule = rule
                    rule.check(ctx)
                    if rule.renames:
                        report_patch_targets(ctx, rule.renames)
            # Only the methods rules look for on receivers can matter (a `def` of another word never
            # decides a fix): most files define none, and are then not walked again.
            words = rule_set.method_words & (focus.present if focus is not None else rule_set.words)
            analysis.methods = defined_methods(tree, resolver.focus, words, source.path, source.text) if words else []
            # A rule that cannot report here (``Rule.may_report``) leaves its methods out of the
            # focus, and so perhaps out of the tree: what the file defines of them comes from its text.
            ruled_out = rule_set.method_words & found.present - words if found is not None else None
            if ruled_out:
                analysis.methods += defined_methods_in_text(source.text, ruled_out, source.path)
        except SyntaxError as exc:  # in a body the skeleton left out, parsed for a resolver that needs it
            analysis.diagnostics.append(self.syntax_error(source, exc))
            return analysis
        except RecursionError:
            # Python parsed it, but walking it recursed too deep: say the file was not checked.
            message = f"{source.path} is nested too deeply to check (RecursionError); skipped"
            analysis.diagnostics.append(self.engine_diagnostic(IO_ERROR, source.path, message))
            return analysis
        analysis.tree, analysis.resolver, analysis.parsed = tree, resolver, True
        # Suppression comments; TU002 judges only the codes of rules that ran on this file.
        engine = {rule.code for rule in self.file_settings(source.path).rules if rule.engine_emitted}
        least = self.file_settings(source.path).min_confidence.rank
        analysis.diagnostics = apply_suppressions(
            source,
            [d for d in ctx.diagnostics if d.confidence.rank <= least],
            ran={rule.code for rule in rules} | engine,
            report_unused=UNUSED_NOQA in engine,
            unused_name=self.names.get(UNUSED_NOQA, UNUSED_NOQA),
            torchfix_silencers=analysis.torchfix_noqa,
        )
        for diagnostic in analysis.diagnostics:
            fix = diagnostic.fix
            if fix is not None and (fix.imports or fix.released_names):
                released = set(fix.released_names)
                fix.import_edits = tuple(import_edits(source, tree, resolver, fix.imports, released))
        if self.project is not None:
            self.project.adjust(analysis.diagnostics)
        analysis.diagnostics.sort(key=Diagnostic.sort_key)
        return analysis

    def _skeleton(
        self, source: SourceFile, rules: list[Rule], focus: Focus | None, found: Occurrences | None
    ) -> Skeleton | None:
        """The text to parse without the bodies no rule that runs here reads (see skeleton.py)."""
        if focus is None or found is None:
            return None
        if any(rule.reads_unfocused_bodies for rule in rules if _runs(rule, focus)):
            return None
        from torchup.prefilter.skeleton import (  # (here: a run that finds everything cached never needs it)
            cut,
            may_hide_a_word,
        )

        if may_hide_a_word(source.text, focus.words, focus.path_words):
            return None
        spans = found.spans
        if spans is not None and spans.text is not source.text:  # the bytes': offsets agree if all are ASCII
            spans = spans if len(spans.text) == len(source.text) and source.text.isascii() else None
        return cut(source.text, focus.lines, spans)

    def _reportable(self, found: Occurrences, rule_set: RuleSet, source: SourceFile) -> frozenset[str]:
        """The trigger words ``found`` in code, less those of rules that cannot report in this text
        (``Rule.may_report``), which then do not run."""
        spans = found.spans
        ruled_out = []
        for rule in rule_set.touched(found.present):
            if not rule.triggered_by(found.present):
                ruled_out.append(rule)  # (some of the words it needs together, not all)
                continue
            if spans is None:
                from torchup.core.lexing import spans_of

                spans = spans_of(source.text)
                if spans is None:
                    return found.present  # (unsure: every rule runs)
            if not rule.may_report(spans):
                ruled_out.append(rule)
        return _without_rules(found.present, list(rule_set.rules), ruled_out)

    def _focus(self, found: Occurrences, present: frozenset[str], rule_set: RuleSet, source: SourceFile) -> Focus:
        """Where the rules that run (those with a word ``present``) look: the lines of those
        words, of `global`/`nonlocal`, and the rules' own (``Rule.focus_lines``)."""
        running = rule_set.triggered(present)
        more = {line for rule in running for line in rule.focus_lines(source.text)}
        methods = frozenset(method for rule in running for method in rule.looks_for.methods)
        more |= receiver_focus_lines(source.text, methods)  # (what a receiver's evidence reads)
        lines = found.lines_of(present)
        lines = tuple(sorted(more.union(lines))) if more else lines
        return Focus(lines, rule_set.words, present, rule_set.path_words, found.declaring)

    def _kept_code_reportable(self, skeleton: Skeleton, focus: Focus, rules: list[Rule]) -> frozenset[str] | None:
        """The words of ``focus`` less those only of rules that cannot report from the code the
        skeleton keeps (``Rule.reports_from_kept_code``); None if every rule still can."""
        asked = [rule for rule in rules if rule.reports_from_kept_code and _runs(rule, focus)]
        kept = skeleton.kept_code() if asked else None
        if kept is None:
            return None
        present = _without_rules(focus.present, rules, [rule for rule in asked if not rule.may_report(kept)])
        return present if present != focus.present else None

    def methods_in_text(
        self, text: str | bytes, path: str, lines: tuple[tuple[int, int], ...] | None = None
    ) -> list[MethodDefinition]:
        """The methods rules look for on receivers that a file the pre-filter did not parse defines
        (torchup.analysis.project: a class of the project's explains a receiver's call); ``lines``:
        grep's lines of the file's bytes, when it ran (``prescan``'s)."""
        return defined_methods_in_text(text, self.rule_set(path).method_words, path, lines)

    def syntax_error(self, source: SourceFile, exc: SyntaxError) -> Diagnostic:
        line = exc.lineno or 1
        # SyntaxError offsets are 1-based character columns of the line.
        column = max(exc.offset or 1, 1)
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        message = (
            f"invalid syntax: {exc.msg}; torchup parses with the Python running it ({version}): "
            "fix the file, or run torchup on the Python version the code is written for"
        )
        return self.engine_diagnostic(SYNTAX_ERROR, source.path, message, line, column)

    def decode_error(self, path: str, exc: DecodeError) -> Diagnostic:
        message = f"cannot decode the file: {exc.message}"
        return self.engine_diagnostic(SYNTAX_ERROR, path, message, exc.line, exc.column)

    def engine_diagnostic(self, code: str, path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
        return Diagnostic(
            code=code,
            name=self.names.get(code, code),
            message=message,
            path=path,
            line=line,
            column=column,
            end_line=line,
            end_column=column,
            severity=Severity.ERROR,
        )


def _without_rules(present: frozenset[str], rules: list[Rule], ruled_out: list[Rule]) -> frozenset[str]:
    """The words ``present`` that a rule not ``ruled_out`` still has."""
    if not ruled_out:
        return present
    running = [rule for rule in rules if rule not in ruled_out]
    return frozenset(word for word in present if any(word in rule.triggers for rule in running))


def _renamed_paths(rules: list[Rule]) -> dict[str, tuple[str, ...]]:
    """For each last part of a name the rules rename, what stands before it (`torch.` for
    `torch.cholesky`): a patch target names it in a string (prefilter.TriggerPattern)."""
    paths: dict[str, set[str]] = {}
    for rule in rules:
        for old in rule.renames:
            prefix, _, word = old.rpartition(".")
            paths.setdefault(word, set()).add(prefix + ".")
    return {word: tuple(sorted(prefixes)) for word, prefixes in paths.items()}


def _word_roles(rules: list[Rule], words: frozenset[str]) -> dict[str, frozenset[str]]:
    """Of ``words``, those every rule that has it matches in some places only, and which
    (``Rule.word_roles``): a word one rule matches anywhere counts anywhere."""
    roles: dict[str, frozenset[str]] = {}
    anywhere: set[str] = set()
    for rule in rules:
        for word in rule.triggers:
            if word not in words or word in anywhere:
                continue
            kinds = rule.word_roles.get(word)
            if kinds is not None and any(old.rpartition(".")[2] == word for old in rule.renames):
                kinds = kinds | {STRING}  # a patch target: `patch.object(torch, "cholesky")`, `"torch.cholesky"`
            if kinds is None:
                anywhere.add(word)
                roles.pop(word, None)
            else:
                roles[word] = roles.get(word, frozenset()) | kinds
    return roles


def _runs(rule: Rule, focus: Focus | None) -> bool:
    """None of its words in the file: a rule cannot find anything (the file has another rule's)."""
    return focus is None or not rule.triggers or rule.triggered_by(focus.present)


def parse(source: SourceFile, skeleton: Skeleton | None = None) -> tuple[ast.Module, bool]:
    """The tree of ``skeleton`` if it parses as it claims (True), else of the whole text (False)."""
    if skeleton is not None:
        try:
            tree = ast.parse(skeleton.text, filename=source.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # the whole text tells what is wrong (or the cut was: then it parses)
        else:
            if skeleton.matches(tree):
                return tree, True
            del tree
    return ast.parse(source.text, filename=source.path), False


def whole_tree(source: SourceFile) -> Callable[[], ast.Module]:
    """The whole text's tree, on demand (for a resolver given a skeleton's)."""
    return lambda: ast.parse(source.text, filename=source.path)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector while one file is parsed and analysed. A syntax tree is
    hundreds of thousands of objects in no cycle, yet the collector traverses it again and again as
    it grows (a tenth of the time on torch's sources). The analysis makes no cycles that hold the
    tree (see ``resolver.Binding``), so the tree is freed as soon as the caller drops it; a caller
    that drops it within its own pause spares the collector even one traversal."""
    if not gc.isenabled():
        yield  # paused already (an analysis within one, or by the embedding program)
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def applies_to_release(rule: Rule, target_version: str | None) -> bool:
    """Does ``rule`` report a change that a migration to ``target_version`` meets (None: any)?"""
    if target_version is None:
        return True
    target = _release(target_version)
    return _release(rule.since) <= target and (rule.until is None or target < _release(rule.until))


def _release(version: str | None) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")) if version else ()

