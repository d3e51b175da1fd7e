"""What a rule is: identity, the release it belongs to, docs, examples, and a ``check``.

A rule is one module under ``torchup/rules`` that defines ``RULE``; the registry there lists the
modules. The engine never names a rule.
"""

from __future__ import annotations

import enum
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from torchup.core.diagnostics import Severity
from torchup.prefilter.requirements import NameRequirements, may_patch
from torchup.prefilter.words import ATTRIBUTE, CODE, KEYWORD, REFERENCE, STRING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from collections.abc import Set as AbstractSet

    from torchup.analysis.context import Context
    from torchup.core.lexing import Spans
    from torchup.core.python_target import PythonTarget


class FixAvailability(enum.Enum):
    SAFE = "safe"  # every finding gets a safe fix
    UNSAFE = "unsafe"  # fixes exist but may change behaviour
    SOMETIMES = "safe/unsafe"  # safe or unsafe depending on the code, or no fix
    NONE = "none"


class Change(enum.Enum):
    """What the wheel of release ``since`` does to code written for an older release."""

    RAISES = "raises"  # removed, renamed, moved or rejected: the old code fails
    BEHAVES = "behaves differently"  # same code, another result, default or output
    WARNS = "warns"  # deprecated: still works, with a warning
    MOVED = "moved"  # a new home; the old path still works, without a warning, for now
    ADOPT = "new feature"  # nothing breaks: something new worth adopting (a hint)
    MISTAKE = "mistake"  # on every release: the code does not do what it says (TorchFix's TOR002)


# What the target raises on or warns about: reported whatever the project's floor (Rule.on_by_default).
_REPORTED_ON_ANY_FLOOR = frozenset({Change.RAISES, Change.WARNS, Change.MISTAKE})


def release_tuple(release: str) -> tuple[int, ...]:
    """``"2.6"`` -> (2, 6); ``"2.14.1"`` -> (2, 14, 1)."""
    return tuple(int(part) for part in release.split("."))


@dataclass(frozen=True)
class Example:
    """A snippet and what the rule does to it; run as a test and printed by ``torchup rule``.

    ``fixed`` is the expected text after ``fix`` (``--unsafe-fixes`` when ``unsafe``); None means
    the file is left as it is. Fixed examples are also executed: the original under torch 2.13, the
    fixed code under 2.14, with inputs from the differential harness (``A``, ``B``, ``x``, ...).
    """

    title: str
    source: str
    findings: int = 1
    fixed: str | None = None
    unsafe: bool = False
    executable: bool = True  # False for snippets that need a GPU or cannot run stand-alone
    bit_exact: bool = True  # False: the docs say results differ in the last bits (compared with a tolerance)
    # The releases the differential harness runs the original and the fixed code on: the release
    # before the change (or an older one) and the target. CI has 2.13 and 2.14 only; the others run
    # by the maintainer command (tools/run_examples.py).
    versions: tuple[str, str] = ("2.13", "2.14")
    # The project's floor the example is checked with (``--from-version``; None: not known).
    floor: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", textwrap.dedent(self.source).lstrip("\n"))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", textwrap.dedent(self.fixed).lstrip("\n"))


@dataclass(frozen=True)
class RuleDocs:
    """A rule's documentation, as `torchup rule CODE` prints it."""

    what: str
    why: str
    fix: str
    fix_safety: str
    wheels_vs_notes: str = ""


@dataclass(frozen=True)
class LooksFor:
    """What a rule's findings refer to, as a rule author states it. A finding may only come from
    these: the pre-filter reads a file, and a function body, only where one of them is spelled in a
    place it can stand, so a use the declaration leaves out is a finding lost (the examples and the
    sample project are checked with and without the pre-filter: tests/test_sample_project.py)."""

    names: tuple[str, ...] = ()  # qualified names resolved through any import form: `torch.cholesky`
    methods: tuple[str, ...] = ()  # methods called on a receiver, `x.cholesky()` (and a class's own `def`)
    attributes: tuple[str, ...] = ()  # attributes read, `prof.key_averages`
    keywords: tuple[str, ...] = ()  # keyword arguments, `use_cuda=` (also a `**{"use_cuda": ...}` key)
    strings: tuple[str, ...] = ()  # string values matched whole: `acc_policy="balanced"`
    in_strings: tuple[str, ...] = ()  # words matched inside longer strings too: `"max-autotune"`, mock paths
    words: tuple[str, ...] = ()  # words matched anywhere in code (a rule whose uses no other kind covers)
    # Modules whose imports the rule reports (`import functorch`, `from torch._six import inf`): each
    # is looked for by its rarest word, a private part (`_six`) or else its last, which then also
    # counts in the module of a `from` import (``Rule.path_words``).
    modules: tuple[str, ...] = ()
    # A finding needs every one of ``names`` referred to (TU713: `torch.log(torch.sum(torch.exp(x)))`):
    # a file that spells only some of their words is not read further.
    together: bool = False

    def __post_init__(self) -> None:
        others = (self.methods, self.attributes, self.keywords, self.strings, self.in_strings, self.words, self.modules)
        if self.together and (len(self.names) < 2 or any(others)):
            raise ValueError("LooksFor(together=True) takes two or more names and nothing else")

    def name_requirements(self) -> NameRequirements | None:
        """What a file must spell besides a trigger word, when the findings come from qualified
        names only (torchup/prefilter/requirements.py); None when other kinds of use count too."""
        if not (self.names or self.modules) or self.attributes or self.keywords or self.strings:
            return None
        if self.in_strings:
            return None
        # (an import of a module spells its path as a reference to one of its names would)
        return NameRequirements((*self.names, *self.modules), self.words, self.methods, every=self.together)

    def derive(self) -> tuple[tuple[str, ...], dict[str, frozenset[str]], tuple[str, ...], frozenset[str]]:
        """The pre-filter's view: trigger words, where each counts, path words, words in strings."""
        places: dict[str, set[str] | None] = {}  # None: anywhere

        def add(word: str, roles: set[str] | None) -> None:
            if word in places and (places[word] is None or roles is None):
                places[word] = None
            else:
                places[word] = places.get(word, set()) | (roles or set()) if roles is not None else None

        for name in self.names:
            add(name.rpartition(".")[2], {REFERENCE})
        for word in self.methods:
            add(word, {CODE})  # (a class's own `def word` decides whether a receiver's call is torch's)
        for word in self.attributes:
            add(word, {ATTRIBUTE})
        for word in self.keywords:
            add(word, {KEYWORD, STRING})
        for word in self.strings:
            add(word, {STRING})
        for word in (*self.in_strings, *self.words):
            add(word, None)
        paths = tuple(sorted({module_word(module) for module in self.modules}))
        for word in paths:
            add(word, None)
        roles = {word: frozenset(kinds) for word, kinds in places.items() if kinds is not None}
        return tuple(places), roles, paths, frozenset(self.in_strings)


def module_word(module: str) -> str:
    """The word a module is looked for by: its first private part (`_tensor` in
    `torch.distributed._tensor`), the rarest, else its last (`functorch`)."""
    parts = module.split(".")
    return next((part for part in parts if part.startswith("_")), parts[-1])


@dataclass
class Rule:
    """A rule: its code, name, docs and examples, the versions it applies to, its check and its fix."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `torchup rules`
    since: ClassVar[str | None] = "2.14"  # the torch release whose change the rule reports
    # The first release where the reported behaviour is gone again (a warning 2.15 dropped): a
    # target of that release or later does not run the rule. None: still applies today.
    until: ClassVar[str | None] = None
    # What code written for an older release meets in release ``since``. With ``enabled_by_default``
    # it decides whether the rule runs by default for a project's from-version (``on_by_default``).
    change: ClassVar[Change] = Change.RAISES
    enabled_by_default: ClassVar[bool] = True
    severity: ClassVar[Severity] = Severity.ERROR
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    # What the rule's findings refer to (see ``LooksFor``): the engine derives from it the words the
    # pre-filter looks for and where each counts (the derived attributes below; torchup/prefilter/words.py).
    looks_for: ClassVar[LooksFor] = LooksFor()
    # -- derived from ``looks_for`` (never set by hand) --
    # Whole words at least one of which any file this rule can flag spells: the pre-filter skips
    # files with none, the resolver bodies that spell none (resolver.Focus). Sound: a reference,
    # even through an alias or a star import, spells the name it refers to somewhere in the file.
    # (A dict key written with escapes, `**{"use\\u005fcuda": ...}`, and a name in compatibility
    # characters Python folds to ASCII, `torch.\uff51\uff52`, are the exceptions; `--no-prefilter`.)
    triggers: ClassVar[tuple[str, ...]] = ()
    # Where each word counts (prefilter's roles); a word missing here counts anywhere.
    word_roles: ClassVar[dict[str, frozenset[str]]] = {}
    # The words of the modules the rule reports by import (``LooksFor.modules``): they count in the
    # module of a `from` import, and `from m._six import f` then makes the resolver read every body.
    # (A word inside a name the rule resolves needs neither: `from torch.utils.checkpoint import f`
    # binds `f` to `torch.utils.checkpoint.f`, which reaches a rule's name only where a use spells
    # the name's last word, `f.checkpoint`, or `f` is that word.)
    path_words: ClassVar[tuple[str, ...]] = ()
    # Words matched inside longer strings (``LooksFor.in_strings``): elsewhere a word in a one-line
    # string counts only as its whole value.
    string_words: ClassVar[frozenset[str]] = frozenset()
    # Whether the rule finds anything only where every trigger word is spelled (``LooksFor.together``).
    needs_every_trigger: ClassVar[bool] = False
    # For a rule whose findings come from qualified names only: the module words a file must also
    # spell (``may_report`` asks it; torchup/prefilter/requirements.py). Derived like the others,
    # unless the rule states a narrower one in its class (TU614: a keyword for `torch.is_tensor`).
    name_requirements: ClassVar[NameRequirements | None] = None
    # Whether the rule reads code in bodies that spell none of its words or keep words: a local
    # function passed to the call it looks at, every string in the file. Files it runs on are then
    # parsed whole; otherwise such bodies are left out of the parse (torchup/prefilter/skeleton.py).
    reads_unfocused_bodies: ClassVar[bool] = False
    # Whether what ``may_report`` looks for can lead to a finding only from code the analysis
    # reads: module level and the bodies around the lines of the rule's words, not another
    # function's body (TU160: a set reaches an optimizer's call only through the call's own scopes).
    # The engine then asks again of the code the skeleton keeps (torchup/prefilter/skeleton.py); False there,
    # and the rule does not run, nor do its words hold bodies in the parse.
    reports_from_kept_code: ClassVar[bool] = False
    # Functions the rule's fixes replace by another (`{"torch.cholesky": "torch.linalg.cholesky"}`),
    # each fix saying so (``Fix.replaces``). The engine then also finds mocks and patches of the old
    # name anywhere in the project (`mock.patch("torch.cholesky")`, `patch.object(torch, "cholesky")`,
    # `wraps=torch.cholesky`: torchup/analysis/patch_targets.py), reports them under the rule's code, and
    # fixes them together with the calls, or neither (torchup/analysis/project.py).
    renames: ClassVar[dict[str, str]] = {}
    # Attributes a class of the project may give its own instances under a word the rule looks for
    # (`self.require_grad = ...` for TU701), besides ``LooksFor.methods``: the project's definitions
    # of either explain a finding on a receiver of unknown type, which is then dropped
    # (``receiver_method``; torchup/analysis/project.py).
    instance_attributes: ClassVar[tuple[str, ...]] = ()
    # The kinds of API change (torchup/data/api_changes.json: "parameter-kind-changed", ...) the rule
    # handles for the names it looks for; empty: every kind its names and docs spell (tools/coverage.py).
    api_change_kinds: ClassVar[tuple[str, ...]] = ()
    # Qualified names the rule reports that ``looks_for`` reaches through a word rather than by
    # name (TU616's `torch.hub.list`, through `hub`): the API changes of these are the rule's too.
    reported_names: ClassVar[tuple[str, ...]] = ()
    # A package whose own files the rule does not check: what the rule says of the package's private
    # parts does not hold inside it (TU705: torch's own modules import from `torch._C`). A file is the
    # package's when every directory from it up to the package's holds an `__init__`
    # (torchup/core/packages.py); like ``applies_to``, decided before the pre-filter.
    not_in_package: ClassVar[str | None] = None
    # Whether the rule reports only against a floor something names (TU801's dead version gates): where
    # only the default gives one, the rule costs nothing, not even its trigger words.
    needs_floor: ClassVar[bool] = False
    docs: ClassVar[RuleDocs]
    examples: ClassVar[tuple[Example, ...]] = ()
    engine_emitted: ClassVar[bool] = False  # findings made by the engine itself (TU0xx)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "looks_for" in cls.__dict__:
            cls.triggers, cls.word_roles, cls.path_words, cls.string_words = cls.looks_for.derive()
            if "name_requirements" not in cls.__dict__:
                cls.name_requirements = cls.looks_for.name_requirements()
            cls.needs_every_trigger = cls.looks_for.together

    @classmethod
    def triggered_by(cls, present: AbstractSet[str]) -> bool:
        """Can a file whose text spells the words ``present`` hold a finding of this rule: one of
        its trigger words is there, or each of them where it needs its names together
        (``LooksFor.together``)?"""
        if cls.needs_every_trigger:
            return all(word in present for word in cls.triggers)
        return not present.isdisjoint(cls.triggers)

    def check(self, ctx: Context) -> None:
        """Report findings through ``ctx.report``."""

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        """Can the text of ``spans`` (the file's, or its bytes', lexed: torchup/core/lexing.py) hold a
        finding at all? A rule whose findings need more than one of its words, which text can show
        cheaply (TU160: a set), says False where that is missing: unless another rule runs on the
        file, it is then not parsed. Asked only where the pre-filter runs, and only of a text that
        spells one of the rule's words in code (with ``reports_from_kept_code``, also of the code
        the skeleton keeps: a ``skeleton.KeptCode``). False must be sure; True when unsure.
        By default: a rule whose findings come from qualified names only needs their modules
        spelled too (``name_requirements``)."""
        if self.name_requirements is None:
            return True
        # (a patch of a name the rule renames, `mock.patch("torch.cholesky")`, is reported with it:
        # torchup/analysis/patch_targets.py)
        if self.renames and may_patch(spans, [old.rpartition(".")[2] for old in self.renames]):
            return True
        return self.name_requirements.could_refer(spans.text, spans)

    def focus_lines(self, text: str) -> Iterable[int]:
        """More lines to analyse like those of the trigger words in a file this rule runs on: the
        bodies that span them are parsed (torchup/prefilter/skeleton.py) and walked (resolver.Focus). A rule
        that reads code spelling none of its words names it here: TU160, the `__init__` and the
        uses of the optimizer subclasses a file defines."""
        return ()

    def applies_to(self, python: PythonTarget) -> bool:
        """Whether the rule can fire on code for these Python versions. Decided before the
        pre-filter, so a rule that cannot apply costs nothing (not even its trigger words)."""
        return True

    def on_by_default(self, from_version: str | None) -> bool:
        """Whether the rule runs without ``--select`` for a project whose floor (the oldest release
        it must run on) is ``from_version`` (None: unknown, as old as can be). What the target raises
        on or warns about is reported whatever the floor: a break is there on every release since
        (old code keeps calls on paths nobody ran), and a deprecation that already warned at the floor
        still has to be changed (the targets a warning is gone from do not run the rule: ``until``).
        A silent change (of behaviour, a move, a new feature) only when it is newer than the floor:
        code that already runs on that release lives with it."""
        if not self.enabled_by_default:
            return False
        if self.change in _REPORTED_ON_ANY_FLOOR or from_version is None or self.since is None:
            return True
        return release_tuple(from_version) < release_tuple(self.since)

    def describe_change(self) -> str:
        """``since torch 2.6: raises`` — what a finding of this rule says about its release."""
        if self.since is None:
            return self.change.value
        return f"since torch {self.since}: {self.change.value}"

    def _default_in_words(self) -> str:
        if not self.enabled_by_default:
            return "no (`--select`)"
        if self.change in _REPORTED_ON_ANY_FLOOR or self.since is None:
            return "yes"
        return f"for a project whose floor is before {self.since} (`--select` otherwise)"

    def render_docs(self) -> str:
        lines = [f"# {self.code} {self.name}", "", self.summary, ""]
        if self.since and self.until:
            lines += [f"Applies to: upgrading to torch {self.since} (not {self.until} or later).", ""]
        elif self.since:
            lines += [f"Applies to: upgrading to torch {self.since} or later.", ""]
        lines += [f"Change: {self.describe_change()}.", ""]
        lines += [
            f"Fix: {self.fix_availability.value}. On by default: {self._default_in_words()}.",
            "",
        ]
        sections = [
            ("What it does", self.docs.what),
            ("Why", self.docs.why),
            ("Fix", self.docs.fix),
            ("Fix safety", self.docs.fix_safety),
            ("Where the wheels differ from the release notes", self.docs.wheels_vs_notes),
        ]
        for title, body in sections:
            if body:
                lines += [f"## {title}", textwrap.dedent(body).strip(), ""]
        if self.examples:
            lines.append("## Examples")
            for example in self.examples:
                lines += ["", f"### {example.title}", "```python", example.source.rstrip("\n"), "```"]
                if example.fixed is not None:
                    how = "torchup fix --unsafe-fixes" if example.unsafe else "torchup fix"
                    lines += [f"After `{how}`:", "```python", example.fixed.rstrip("\n"), "```"]
                elif example.findings == 0:
                    lines.append("Not reported.")
                else:
                    lines.append("Reported; no automatic fix.")
        return "\n".join(lines).rstrip("\n") + "\n"
