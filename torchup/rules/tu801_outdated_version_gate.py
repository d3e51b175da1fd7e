"""TU801: a version gate whose old branch the project's floor has left behind: dead code."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.old_torch import enclosing, exits, file_gate_facts
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs, release_tuple
from torchup.analysis.version_gates import Gate, evaluate_gate
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

# The words a gate spells: torch's version, the helpers that compare it, and the flags projects name
# for a release (Lightning's `_TORCH_GREATER_EQUAL_2_4`, `TORCH_GE_1_13`); a flag of another name
# imported from another module is out of reach of the pre-filter (and of the file's own facts).
_RELEASES = [f"1_{minor}" for minor in range(8, 14)] + [f"2_{minor}" for minor in range(13)]
FLAGS = tuple(
    f"{stem}_{release}"
    for stem in ("_TORCH_GREATER_EQUAL", "TORCH_GE", "_TORCH_GE", "is_torch_greater_or_equal_than")
    for release in _RELEASES
)
HELPERS = (
    "is_torch_version", "is_torch_greater_or_equal", "compare_version", "digit_version", "torch_version_at_least",
    "torch_version_geq", "parse_version", "torch_version", "TORCH_VERSION",
)
# Torch's version as text: `torch.__version__` (`import torch as th` is out of the pre-filter's reach),
# a name for it, `version("torch")`.
_TORCH_VERSION = (
    r"torch\.(?:version\.)?__version__|torch_version|TORCH_VERSION|version\([ \t]*['\"]torch['\"]"
    r"|compare_version\([ \t]*['\"]torch['\"]"
)
_WORDS = _TORCH_VERSION + r"|is_torch_version|is_torch_greater_or_equal|digit_version|_GREATER_EQUAL_\d|TORCH_GE_\d"
# What a file must spell for a gate with a known release (the `hasattr` probes have none) ...
GATE_WORDS = re.compile(_WORDS)
_ANCHORS = ("version", "VERSION", "greater_or_equal", "_GREATER_EQUAL_", "TORCH_GE_")  # (every word above holds one)
_IF = re.compile(r"\b(?:el)?if\b")
_VERSION = re.compile(_TORCH_VERSION)
# A module-level name the file derives from torch's version (`TORCH_MAJOR, TORCH_MINOR = ...`).
_DERIVED = re.compile(r"(\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*(?::[^=\n]*)?=(?!=)")


def spots(text: str) -> list[re.Match[str]]:
    """Where the text spells torch's version or a gate's word: found from a few literal anchors by
    ``str.find`` (a regular expression of alternatives over a whole file cost five times as much)."""
    found: dict[int, re.Match[str]] = {}
    for anchor in _ANCHORS:
        at = text.find(anchor)
        while at >= 0:
            match = GATE_WORDS.search(text, max(0, at - 40), at + 60)
            while match is not None and match.end() <= at:
                match = GATE_WORDS.search(text, match.end(), at + 60)
            if match is not None and match.start() <= at:
                found[match.start()] = match
            at = text.find(anchor, at + 1)
    return [found[start] for start in sorted(found)]


def _line(text: str, at: int) -> tuple[int, int]:
    end = text.find("\n", at)
    return text.rfind("\n", 0, at) + 1, end if end >= 0 else len(text)


def gate_line(text: str, found: list[re.Match[str]]) -> bool:
    """Whether a gate is written out: a word of ``found`` on the line of an `if`, `elif` or ternary, or
    on the line after one (`if (`)."""
    for match in found:
        start, end = _line(text, match.start())
        before = _line(text, start - 1)[0] if start else start
        if _IF.search(text, before, end):
            return True
    return False


def derived_names(text: str, found: list[re.Match[str]]) -> set[str]:
    """The module-level names a file derives from torch's version, and its module-level functions
    whose bodies spell it: the names a gate of the file may test without a version word."""
    names: set[str] = set()
    for match in found:
        start, _ = _line(text, match.start())
        assigned = _DERIVED.match(text, start, match.start())
        if assigned is not None:
            names.update(name.strip() for name in assigned.group(1).split(","))
        elif _VERSION.fullmatch(match.group()) and start:
            names.add(_enclosing_function(text, start))
    return names - {""}


_DEF = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)")


def _enclosing_function(text: str, start: int) -> str:
    """The module-level function whose body holds the line at ``start`` ("" if none): the nearest
    line above that starts in column 0 with code."""
    while start > 0:
        start = text.rfind("\n", 0, start - 1) + 1
        first = text[start : start + 1]
        if first and first not in " \t\n\r#)]}":
            match = _DEF.match(text, start)
            return match.group(1) if match else ""
    return ""


def gate_lines(text: str, names: set[str]) -> list[int]:
    """The lines of the `if`s, `elif`s and ternaries that name one of ``names`` (on the same line)."""
    if not names:
        return []
    uses = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\b")
    found: list[int] = []
    line, counted = 1, 0  # (line numbers counted as the matches go: one pass over the text)
    for match in uses.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        line += text.count("\n", counted, start)
        counted = start
        end = text.find("\n", match.end())
        if (not found or found[-1] != line) and _IF.search(text, start, end if end >= 0 else len(text)):
            found.append(line)
    return found


# The last text's derived gate lines: may_report and focus_lines ask of the same text in turn.
_last: tuple[str, list[int]] = ("", [])


def _derived_gate_lines(text: str, found: list[re.Match[str]] | None = None) -> list[int]:
    global _last
    if _last[0] is not text:
        _last = (text, gate_lines(text, derived_names(text, spots(text) if found is None else found)))
    return _last[1]


class OutdatedVersionGate(Rule):
    code = "TU801"
    name = "outdated-version-gate"
    summary = "A version gate's old branch runs only below the project's floor: remove it, keep the live one."
    since = None
    change = Change.ADOPT
    severity = Severity.INFO
    fix_availability = FixAvailability.SOMETIMES
    # (`importlib.metadata.version("torch")` spells no word of its own: accelerate keeps it in `torch_version`)
    needs_floor = True  # (a gate is outdated only against a floor the project states)
    looks_for = LooksFor(words=("__version__", *HELPERS, *FLAGS))
    docs = RuleDocs(
        what="""
        Finds an `if`, `elif` or conditional expression whose test is a torch version gate
        (torchup.analysis.version_gates: `torch.__version__` compared in any common form, the file's
        constants and helpers derived from it, accelerate's `is_torch_version`, transformers'
        `is_torch_greater_or_equal`, Lightning's `compare_version`, mmcv's `digit_version`, and flags
        named for a release such as `_TORCH_GREATER_EQUAL_2_4`) where one branch runs only on a torch
        older than R, and the project's floor (`--from-version`, or its torch requirement) is R or
        later. With no floor known, nothing is reported. Feature probes (`hasattr(torch, "compile")`)
        say no release, and are left alone. Under the pre-filter, a gate must spell torch's version
        (`torch.__version__`, not `th.__version__`), a helper's or flag's name this rule knows, or a
        name the file derives from torch's version on the line of its `if`.
        """,
        why="""
        The oldest torch the project supports never takes that branch: it is dead code that still
        has to be read, kept importable and maintained. Until the floor reaches R the same branch
        is live, old-torch code, and torchup reports nothing inside it either.
        """,
        fix="""
        The gate is removed with its dead branch; the live branch stays, dedented to the gate's
        indentation (as pyupgrade does for `sys.version_info` blocks). Comments in the removed
        branch go with it; those in the kept branch stay. An `elif` that becomes the first test
        turns into an `if`. A conditional expression becomes its live operand. An early exit on a
        new torch (`if new_enough: return new()`) keeps its body and drops the old rest of the
        block; one on an old torch goes whole. No fix for an `elif`
        that is itself the gate, for a kept branch holding a string that spans lines (dedenting
        would change it), or for tabs.
        """,
        fix_safety="""
        Safe when the gate was evaluated from what the code computes: on every release from the
        floor on, the kept branch is the one that ran. Unsafe when only a name says so (a flag
        or helper whose definition torchup could not read): the name might not mean what it says.
        """,
    )
    examples = (
        Example(
            "accelerate's helper at a floor of 2.5: the torch.cuda.amp branch goes",
            """
            import torch
            from accelerate.utils import is_torch_version

            if is_torch_version(">=", "2.3"):
                scaler = torch.amp.GradScaler("cuda")
            else:
                # torch < 2.3
                scaler = torch.cuda.amp.GradScaler()
            """,
            fixed="""
            import torch
            from accelerate.utils import is_torch_version

            scaler = torch.amp.GradScaler("cuda")
            """,
            floor="2.5",
            executable=False,
        ),
        Example(
            "a constant of the file, the old branch first",
            """
            import torch
            from packaging import version

            TORCH_GE_1_10 = version.parse(torch.__version__) >= version.parse("1.10")


            def ones(n):
                if not TORCH_GE_1_10:
                    return torch.ones(n, n)
                else:
                    # the new spelling
                    return torch.ones((n, n))
            """,
            fixed="""
            import torch
            from packaging import version

            TORCH_GE_1_10 = version.parse(torch.__version__) >= version.parse("1.10")


            def ones(n):
                # the new spelling
                return torch.ones((n, n))
            """,
            floor="2.0",
            executable=False,
        ),
        Example(
            "a flag named for its release: unsafe",
            """
            from lightning.fabric.utilities.imports import _TORCH_GREATER_EQUAL_2_1

            mode = "new" if _TORCH_GREATER_EQUAL_2_1 else "old"
            """,
            fixed="""
            from lightning.fabric.utilities.imports import _TORCH_GREATER_EQUAL_2_1

            mode = "new"
            """,
            floor="2.4",
            unsafe=True,
            executable=False,
        ),
        Example(
            "below the gate's release: live code, not reported",
            """
            import torch

            if torch.__version__ >= "2.3":
                scaler = torch.amp.GradScaler("cuda")
            else:
                scaler = torch.cuda.amp.GradScaler()
            """,
            findings=0,
            floor="2.0",
            executable=False,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # A gate names torch's version on its `if` line, or a name the file derives from it.
        content = spans.text
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        found = spots(text)
        return bool(found) and (gate_line(text, found) or bool(_derived_gate_lines(text, found)))

    def focus_lines(self, text: str) -> Iterable[int]:
        # (the `if`s that test a derived name spell no trigger word themselves)
        return _derived_gate_lines(text)

    def check(self, ctx: Context) -> None:
        if not ctx.floor:
            return
        floor = release_tuple(ctx.floor)
        facts = file_gate_facts(ctx.tree, ctx.source.path)
        for node in ctx.walk():
            if isinstance(node, ast.If | ast.IfExp):
                gate = evaluate_gate(node.test, ctx.qualified_name, facts)
                if gate is not None and gate.release is not None and floor >= gate.release:
                    self._report(ctx, node, gate)

    def _report(self, ctx: Context, node: ast.If | ast.IfExp, gate: Gate) -> None:
        if gate.old == "body":
            what = "the `if` branch runs"
        elif not getattr(node, "orelse", True):
            what = "the test is false"
        else:
            what = "the `else` branch runs"
        edits = _ternary(ctx, node, gate) if isinstance(node, ast.IfExp) else _statement(ctx, node, gate)
        how = Applicability.SAFE if gate.certain else Applicability.UNSAFE
        fix = Fix("remove the dead branch, keep the live one", how, edits) if edits else None
        written = " ".join(ctx.segment(node.test).split())  # (the test as the project spells it)
        ctx.report(
            node,
            f"{what} only on torch < {gate.release_text} "
            f"(`{written if len(written) <= 80 else gate.text}`{'' if gate.certain else ', by its name'}); "
            f"the project's floor is {ctx.floor_text or ctx.floor}",
            fix=fix,
            help=None if fix else "remove the dead branch by hand",
        )


def _ternary(ctx: Context, node: ast.IfExp, gate: Gate) -> tuple[Edit, ...]:
    kept = node.orelse if gate.old == "body" else node.body
    text = ctx.segment(kept)
    if isinstance(kept, ast.NamedExpr | ast.Yield | ast.YieldFrom) or "\n" in text:
        text = f"({text})"
    start, end = ctx.source.node_range(node)
    return (Edit(start, end, text),)


def _statement(ctx: Context, node: ast.If, gate: Gate) -> tuple[Edit, ...]:
    """The edits that replace the ``if`` statement by its live branch; () when no exact rewrite exists."""
    source = ctx.source
    start, _ = source.node_range(node)
    if source.text.startswith("elif", start):
        return ()  # (an `elif` gate: the chain around it would need rewriting)
    first, last = node.lineno, node.end_lineno or node.lineno
    indent = source.line_text(first)[: node.col_offset]
    end = source.line_starts[last - 1] + len(source.line_text(last))  # (through a trailing comment)
    if "\t" in indent:
        return ()
    live = node.body if gate.old == "orelse" else node.orelse
    if gate.old == "body" and len(live) == 1 and isinstance(live[0], ast.If) and source.text.startswith(
        "elif", source.node_range(live[0])[0]
    ):
        return (Edit(start, source.node_range(live[0])[0] + 2, ""),)  # `elif` -> `if`
    if not live:
        return _removed(ctx, node, start, end)
    lines = _kept_lines(ctx, node, live, gate)
    if lines is None:
        return ()
    text = _dedented(ctx, live, lines, indent)
    if gate.old == "orelse" and not node.orelse and exits(live):
        end = _block_end(ctx, node, end)  # `if new_enough: return new()`: the rest of the block is dead too
    # (from the line's start: the fix's node is then the block around the gate, old and new alike)
    return () if text is None else (Edit(start - len(indent), end, indent + text),)


def _block_end(ctx: Context, node: ast.If, end: int) -> int:
    """The end of the last line of the block that holds ``node`` (where it stands in one)."""
    block = _parent_block(ctx, node)
    if not block or block[-1] is node:
        return end
    last = block[-1].end_lineno or block[-1].lineno
    return ctx.source.line_starts[last - 1] + len(ctx.source.line_text(last))


def _removed(ctx: Context, node: ast.If, start: int, end: int) -> tuple[Edit, ...]:
    """The whole statement goes; ``pass`` stays where it was its block's only statement."""
    parent_block = _parent_block(ctx, node)
    if parent_block is not None and len(parent_block) == 1:
        return (Edit(start - node.col_offset, end, " " * node.col_offset + "pass"),)
    source = ctx.source
    line_start = source.line_starts[node.lineno - 1]
    after = end + len(source.newline) if source.text.startswith(source.newline, end) else end
    return (Edit(line_start, after, ""),)


def _parent_block(ctx: Context, node: ast.stmt) -> list[ast.stmt] | None:
    """The statement list ``node`` stands in."""
    chain = enclosing(ctx.tree, node)[-1:]
    return next((block for parent, child in chain for block in _blocks(parent) if child in block), None)


def _blocks(parent: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(parent, name, None) for name in ("body", "orelse", "finalbody")]
    return [block for block in blocks if isinstance(block, list)] + [h.body for h in getattr(parent, "handlers", [])]


_ELSE = re.compile(r"[ \t]*else[ \t]*:")


def _kept_lines(ctx: Context, node: ast.If, live: list[ast.stmt], gate: Gate) -> tuple[int, int] | None:
    """The lines of the live branch, from the line after its header (comments there included) to
    its last statement's; None when a header shares its line with code we cannot place."""
    source = ctx.source
    if gate.old == "orelse":
        header = node.test.end_lineno or node.lineno
        after_test = source.line_text(header)[node.test.end_col_offset :]  # (a byte column: ASCII lines only)
        if not source.line_text(header).isascii() or not re.match(r"[ \t)]*:", after_test):
            return None
    else:
        body_end = node.body[-1].end_lineno or node.lineno
        headers = [n for n in range(body_end + 1, live[0].lineno + 1) if _ELSE.match(source.line_text(n))]
        if len(headers) != 1:
            return None
        header = headers[0]
    if live[0].lineno == header:
        return None if len(live) > 1 or live[0].end_lineno != header else (header, header)
    return header + 1, live[-1].end_lineno or live[-1].lineno


def _dedented(ctx: Context, live: list[ast.stmt], lines: tuple[int, int], indent: str) -> str | None:
    """The live branch's text at the gate's indentation (its first line without it: the edit starts
    after the gate's own); None where a string spans lines or a tab indents."""
    source = ctx.source
    first, last = lines
    if first == last and live[0].lineno == first and first == (live[0].end_lineno or first):
        start, _ = source.node_range(live[0])
        line_end = source.line_starts[first - 1] + len(source.line_text(first))
        return source.text[start:line_end]
    texts = [source.line_text(n) for n in range(first, last + 1)]
    while texts and not texts[0].strip():
        texts.pop(0)  # (blank lines after the header)
    depth = len(source.line_text(live[0].lineno)) - len(source.line_text(live[0].lineno).lstrip())
    cut = depth - len(indent)
    if cut < 0 or any("\t" in t[: len(t) - len(t.lstrip())] for t in texts) or _spans_lines(live):
        return None
    out = [t[min(cut, len(t) - len(t.lstrip())):] for t in texts]
    return source.newline.join([out[0].lstrip(" "), *out[1:]])


def _spans_lines(live: list[ast.stmt]) -> bool:
    """A string that spans lines (dedenting would change it)."""
    for statement in live:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant | ast.JoinedStr) and (node.end_lineno or 0) > node.lineno:
                return True
    return False


RULE = OutdatedVersionGate()
