"""Suppressions: ``# noqa`` on a line, ``# torchup: noqa`` for a whole file, and unused ones (TU002).

Forms (case-insensitive; codes separated by commas and/or spaces; free text may follow the codes):

    x = torch.qr(A)  # noqa: TU103             this finding, on this line
    x = torch.qr(A)  # noqa: TU103 legacy path  the same, with a reason
    x = torch.qr(A)  # noqa: E501, TU103        codes of other tools are allowed (ruff and flake8 share the comment)
    x = torch.qr(A)  # noqa                     every finding on this line
    # torchup: noqa: TU103                       on its own line, anywhere: TU103 in the whole file
    # torchup: noqa                              on its own line: nothing in this file is reported

A ``# noqa`` without a colon, or whose colon is followed by no code (``# noqa: legacy``), silences
every finding on its line, as in flake8. A finding is silenced by the comment on its *first* line;
when that line cannot end with a comment (it ends inside a multi-line string, or with a backslash
continuation), by the comment at the end of the line where that string or continuation ends.

Comments are found by the lexer (torchup.core.lexing), as ``tokenize`` finds them, ten times
faster; ``tokenize`` itself reads the files the lexer may misread (f-strings from Python 3.12 on):
``"# noqa"`` inside a string is not a comment. Files that do not contain the word ``noqa`` are not
read for comments at all.

TU002 (off by default, like ruff's RUF100) reports torchup codes in a ``# noqa: ...`` or
``# torchup: noqa: ...`` that silenced nothing. Only codes of rules that ran on the file count (a
code whose rule is not selected is not "unused"), and codes of other tools (``E501``, ``F401``) are
never reported. Unknown ``TU`` codes and repeated codes are. Bare ``# noqa`` is never reported: it
may be there for another tool. A TU002 finding is silenced only by a directive that names ``TU002``
(or a bare ``# torchup: noqa``), and ``TU002`` in a directive is never itself reported, so there is
no loop.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from torchup.core.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from torchup.core.memo import last_answer
from torchup.core.source import SourceFile
from torchup.core.torchfix import is_torchfix, torchup_codes

UNUSED_NOQA = "TU002"

# Findings the engine makes before (or instead of) a parse: no comment can silence them.
UNSUPPRESSIBLE = frozenset({"TU000", "TU001"})


_LINE_DIRECTIVE = re.compile(r"#\s*noqa(?![A-Za-z0-9_])", re.IGNORECASE)
_FILE_DIRECTIVE = re.compile(r"#\s*torchup\s*:\s*noqa(?![A-Za-z0-9_])", re.IGNORECASE)
_COLON = re.compile(r"\s*:\s*")
_SPACE = re.compile(r"\s*")
_CODE = re.compile(r"[A-Za-z]+[0-9]+(?![A-Za-z0-9_])")
_SEPARATOR = re.compile(r"\s*,\s*|\s+")
_TORCHUP_CODE = re.compile(r"TU[0-9]+")
_FREE_TEXT_LEAD = " \t,;:-\u2013\u2014"


@last_answer  # (asked of one text up to four times in a row, by the pre-filter and the analysis)
def mentions_noqa(content: str | bytes) -> bool:
    """The cheap test: only a file that spells ``noqa`` can hold a suppression."""
    # lower() and a substring search run at memory speed; a case-insensitive regex does not.
    return b"noqa" in content.lower() if isinstance(content, bytes) else "noqa" in content.lower()


def is_torchup_code(code: str) -> bool:
    return _TORCHUP_CODE.fullmatch(code.upper()) is not None


@dataclass(frozen=True)
class NoqaCode:
    """One code in a `# noqa:` comment, and where it is written."""

    code: str  # upper case
    text: str  # as written
    start: int  # text offsets
    end: int


@dataclass(frozen=True)
class Directive:
    """One ``# noqa`` (``file`` False) or ``# torchup: noqa`` (``file`` True) comment."""

    line: int  # 1-based line of the comment
    start: int  # offset of the directive's ``#``
    end: int  # offset after its last code (after ``noqa`` for a bare one)
    codes: tuple[NoqaCode, ...] | None  # None: every code
    comment_start: int  # the whole COMMENT token (a directive may follow other text in it)
    comment_end: int
    file: bool = False

    def names(self, code: str) -> bool:
        """Does it silence ``code``? A TorchFix code (`# noqa: TOR102`) silences the torchup rules
        that report what it did (torchup.core.torchfix)."""
        return self.codes is None or any(c.code == code for c in self.codes) or bool(self.torchfix_codes_for(code))

    def torchfix_codes_for(self, code: str) -> list[str]:
        """The TorchFix codes by which it silences ``code``, when it does not name ``code`` itself."""
        if self.codes is None or any(c.code == code for c in self.codes):
            return []
        return [c.code for c in self.codes if is_torchfix(c.code) and code in torchup_codes(c.code)]


@dataclass
class Suppressions:
    """The directives of one file, and where a comment for each line has to go."""

    lines: dict[int, Directive] = field(default_factory=dict)
    files: list[Directive] = field(default_factory=list)
    # Lines whose end can take a comment (a NEWLINE, NL or COMMENT token ends there), sorted; None
    # when tokenize failed (then every line is assumed to take one).
    commentable: list[int] | None = None

    def comment_line(self, line: int) -> int:
        """The line whose trailing comment covers a finding that starts on ``line``."""
        if not self.commentable:
            return line
        index = bisect_left(self.commentable, line)
        return self.commentable[index] if index < len(self.commentable) else line

    def directive_for(self, line: int) -> Directive | None:
        return self.lines.get(self.comment_line(line))


def parse(source: SourceFile) -> Suppressions:
    """Every directive of ``source``, from its real comments (the lexer's, else ``tokenize``'s)."""
    found = Suppressions()
    text = source.text
    lexed = _directive_comments(source)
    if lexed is not None:
        comments, commentable = lexed
    else:
        try:
            comments, commentable = _comments(text)
        except (tokenize.TokenError, SyntaxError, ValueError):
            comments = list(_comments_by_regex(source))  # a file tokenize rejects: the best guess
            commentable = None
    found.commentable = commentable
    for line, column, comment in comments:
        offset = source.line_starts[line - 1] + column
        own_line = not source.line_text(line)[:column].strip()
        directive = _file_directive(comment, offset, line) if own_line else None
        if directive is not None:
            found.files.append(directive)
            continue
        directive = _line_directive(comment, offset, line)
        if directive is not None and line not in found.lines:
            found.lines[line] = directive
    return found


# Python 3.12+ tokenizes f-strings (3.14: t-strings) piece by piece; a line break inside one of their
# replacement fields is an NL token, but a comment there would not parse on older Pythons.
_STRING_STARTS = {getattr(tokenize, name) for name in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, name)}
_STRING_ENDS = {getattr(tokenize, name) for name in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, name)}


def _comments(text: str) -> tuple[list[tuple[int, int, str]], list[int]]:
    comments: list[tuple[int, int, str]] = []
    ends: set[int] = set()
    depth = 0  # f-strings being read
    for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if token.type in _STRING_STARTS:
            depth += 1
        elif token.type in _STRING_ENDS:
            depth -= 1
        elif token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.start[1], token.string))
            if not depth:
                ends.add(token.start[0])
        elif token.type in (tokenize.NL, tokenize.NEWLINE) and not depth:
            ends.add(token.start[0])
    return comments, sorted(ends)


# A string literal that may hold code (an f-string or a 3.14 t-string): from Python 3.12 on, its
# replacement fields may nest quotes and hold comments and line breaks, which the lexer does not
# follow. Before 3.12 (the file parsed on the running Python) they can do none of these.
_CODE_STRING = re.compile(r"""(?<![A-Za-z0-9_])[rRbB]?[fFtT][rRbB]?['"]""")
_NESTED_FIELDS = sys.version_info >= (3, 12)


def _directive_comments(source: SourceFile) -> tuple[list[tuple[int, int, str]], list[int]] | None:
    """What ``_comments`` gives, less the comments that hold no directive, from the lexer
    (torchup.core.lexing): ``tokenize`` reads every token of the file, ten times slower, and TU002
    asks this of every file that spells `noqa`. None where the lexer may be wrong (an f-string or
    t-string from Python 3.12 on, a text it cannot lex): then ``tokenize`` decides. (The file
    parsed: a finding or a directive needs its tree.)"""
    from torchup.core.lexing import spans_of

    text = source.text
    if _NESTED_FIELDS and _CODE_STRING.search(text):
        return None
    spans = spans_of(text)
    if spans is None:
        return None
    starts = source.line_starts
    comments = []
    lines = sorted({bisect_right(starts, m.start()) for m in _DIRECTIVE_WORD.finditer(text)})
    for line in lines:
        line_start = starts[line - 1]
        code_end = spans.code_end(line_start)
        if code_end is None:
            continue  # (the line ends inside a string: no comment ends it)
        end = text.find("\n", line_start)
        end = len(text) if end < 0 else end
        hash_at = text.find("#", code_end, end)
        if hash_at >= 0:
            comments.append((line, hash_at - line_start, text[hash_at:end].rstrip("\r")))
    inside = set()  # lines whose line break a string or a backslash continuation holds
    line, counted = 1, 0
    for start, stop in zip(spans.starts, spans.ends, strict=True):
        line += text.count("\n", counted, start)
        counted = start
        breaks = text.count("\n", start, stop)
        if breaks:
            inside.update(range(line, line + breaks))
    last = len(starts) - 1 if text.endswith("\n") or not text else len(starts)  # (an empty text has no line)
    return comments, [number for number in range(1, last + 1) if number not in inside]


_DIRECTIVE_WORD = re.compile(r"noqa", re.IGNORECASE)


def _comments_by_regex(source: SourceFile) -> Iterable[tuple[int, int, str]]:
    for line in range(1, len(source.line_starts) + 1):
        line_text = source.line_text(line)
        match = _LINE_DIRECTIVE.search(line_text) or _FILE_DIRECTIVE.search(line_text)
        if match is not None:
            yield line, match.start(), line_text[match.start():]


def _line_directive(comment: str, offset: int, line: int) -> Directive | None:
    match = _LINE_DIRECTIVE.search(comment)
    if match is None:
        return None
    colon = _COLON.match(comment, match.end())
    codes, end = _codes(comment, colon.end(), offset) if colon else ((), 0)
    return Directive(
        line=line,
        start=offset + match.start(),
        end=end if codes else offset + match.end(),
        codes=codes or None,
        comment_start=offset,
        comment_end=offset + len(comment),
    )


def _file_directive(comment: str, offset: int, line: int) -> Directive | None:
    match = _FILE_DIRECTIVE.match(comment)
    if match is None:
        return None
    after = _COLON.match(comment, match.end()) or _SPACE.match(comment, match.end())
    assert after is not None
    codes, end = _codes(comment, after.end(), offset)
    return Directive(
        line=line,
        start=offset,
        end=end if codes else offset + match.end(),
        codes=codes or None,
        comment_start=offset,
        comment_end=offset + len(comment),
        file=True,
    )


def _codes(comment: str, position: int, offset: int) -> tuple[tuple[NoqaCode, ...], int]:
    codes: list[NoqaCode] = []
    end = position
    match = _CODE.match(comment, position)
    while match is not None:
        codes.append(NoqaCode(match.group().upper(), match.group(), offset + match.start(), offset + match.end()))
        end = match.end()
        separator = _SEPARATOR.match(comment, end)
        if separator is None:
            break
        match = _CODE.match(comment, separator.end())
    return tuple(codes), offset + end


# -- applying them ---------------------------------------------------------------------------------
def apply_suppressions(
    source: SourceFile,
    diagnostics: list[Diagnostic],
    *,
    ran: Collection[str] = (),
    report_unused: bool = False,
    known: Collection[str] | None = None,
    unused_name: str = "unused-noqa",
    torchfix_silencers: set[str] | None = None,
) -> list[Diagnostic]:
    """The findings no directive silences, plus TU002 findings when ``report_unused``.

    ``ran``: the codes of the rules that ran on this file (a directive's code for another rule is
    not unused). ``known``: every torchup code (default: the registry's), to tell a typo.
    ``torchfix_silencers``: gets the TorchFix codes (`TOR102`) that silenced a finding here, for the
    note that names their torchup codes.
    """
    if not (diagnostics or report_unused) or not mentions_noqa(source.text):
        return diagnostics  # nothing to silence and nothing to report: skip tokenizing the file
    if not report_unused and not _may_silence(source, diagnostics):
        return diagnostics
    suppressions = parse(source)
    if not suppressions.lines and not suppressions.files:
        return diagnostics
    used: dict[int, set[str]] = {}  # id(directive) -> the codes it silenced
    kept = []
    for diagnostic in diagnostics:
        directive = _silencing(suppressions, diagnostic)
        if directive is None:
            kept.append(diagnostic)
        else:
            used.setdefault(id(directive), set()).add(diagnostic.code)
            if torchfix_silencers is not None:
                torchfix_silencers.update(directive.torchfix_codes_for(diagnostic.code.upper()))
    if report_unused:
        if known is None:
            from torchup.rules import all_rules

            known = {rule.code for rule in all_rules()}
        for directive in [*suppressions.lines.values(), *suppressions.files]:
            finding = _unused(source, directive, used.get(id(directive), set()), set(ran), set(known), unused_name)
            if finding is not None and _silencing(suppressions, finding) is None:
                kept.append(finding)
    return kept


def _may_silence(source: SourceFile, diagnostics: list[Diagnostic]) -> bool:
    """Can a directive silence one of ``diagnostics``? Answered without tokenizing the file (a
    tenth of a second on a large one), and yes when unsure: only a file directive or one on the
    line whose comment covers a finding can. That line is the finding's first, or where the string
    or backslash continuation that line ends in ends (the lexer's spans tell); every text that
    looks like a directive counts, even in a string."""
    if _FILE_DIRECTIVE.search(source.text):
        return True
    starts = source.line_starts
    directive_lines = sorted({bisect_right(starts, m.start()) for m in _LINE_DIRECTIVE.finditer(source.text)})
    if not directive_lines:
        return False
    from torchup.core.lexing import spans_of  # (here: files without findings never need it)

    spans = spans_of(source.text)
    if spans is None:
        return True
    for diagnostic in diagnostics:
        if diagnostic.code.upper() in UNSUPPRESSIBLE:
            continue
        last = diagnostic.line
        while last < len(starts) and spans.continued(starts[last]):  # the next line goes on with a span
            last += 1
        index = bisect_left(directive_lines, diagnostic.line)
        if index < len(directive_lines) and directive_lines[index] <= last:
            return True
    return False


def suppress_noqa(source: SourceFile, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Drop the findings that a ``# noqa`` or ``# torchup: noqa`` silences (no TU002)."""
    return apply_suppressions(source, diagnostics)


def _silencing(suppressions: Suppressions, diagnostic: Diagnostic) -> Directive | None:
    code = diagnostic.code.upper()
    if code in UNSUPPRESSIBLE:
        return None
    directive = suppressions.directive_for(diagnostic.line)
    if code == UNUSED_NOQA:  # only an explicit TU002 (or a bare file-level directive) silences TU002
        if directive is not None and directive.codes is not None and directive.names(code):
            return directive
        return next((d for d in suppressions.files if d.names(code)), None)
    if directive is not None and directive.names(code):
        return directive
    return next((d for d in suppressions.files if d.names(code)), None)


def _unused(
    source: SourceFile,
    directive: Directive,
    used: set[str],
    ran: set[str],
    known: set[str],
    name: str,
) -> Diagnostic | None:
    if directive.codes is None:
        return None  # a bare noqa may be there for another tool
    reasons: list[tuple[NoqaCode, str]] = []
    seen: set[str] = set()
    for code in directive.codes:
        if not is_torchup_code(code.code) or code.code == UNUSED_NOQA:
            seen.add(code.code)
            continue
        if code.code in seen:
            reasons.append((code, "named twice"))
        elif code.code not in known:
            reasons.append((code, "not a torchup rule"))
        elif code.code in ran and code.code not in used:
            reasons.append((code, "nothing to silence"))
        seen.add(code.code)
    if not reasons:
        return None
    unused = {id(code) for code, _ in reasons}
    kind = "`torchup: noqa`" if directive.file else "`noqa`"
    listed = ", ".join(f"{code.code} ({why})" for code, why in reasons)
    remaining = [code for code in directive.codes if id(code) not in unused]
    if remaining:
        message = f"unused {kind} code{'s' * (len(reasons) != 1)}: {listed}"
        fix = Fix(
            f"remove {', '.join(code.code for code, _ in reasons)} from the directive",
            Applicability.SAFE,
            (_rewrite_codes(source, directive, remaining),),
        )
    else:
        message = f"unused {kind} directive: {listed}"
        fix = Fix(f"remove the {kind} directive", Applicability.SAFE, (_remove_directive(source, directive),))
    line, column = source.position(directive.start)
    end_line, end_column = source.position(directive.end)
    return Diagnostic(
        code=UNUSED_NOQA,
        name=name,
        message=message,
        path=source.path,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        severity=Severity.WARNING,
        fix=fix,
        start=directive.start,
        end=directive.end,
    )


def _rewrite_codes(source: SourceFile, directive: Directive, remaining: list[NoqaCode]) -> Edit:
    assert directive.codes
    start, end = directive.codes[0].start, directive.codes[-1].end
    separator = ", " if "," in source.text[start:end] else " "
    return Edit(start, end, separator.join(code.text for code in remaining))


def _remove_directive(source: SourceFile, directive: Directive) -> Edit:
    """Take the directive out of its comment; text before it and free text after it stay."""
    text = source.text
    before = text[directive.comment_start:directive.start]
    after = text[directive.end:directive.comment_end]
    free = after.lstrip(_FREE_TEXT_LEAD)
    if free:
        # 'noqa: TU101 legacy path' becomes 'legacy path'; 'noqa: TU101  # why' becomes '# why'
        return Edit(directive.start, directive.comment_end - len(free), "" if free.startswith("#") else "# ")
    if before.strip():
        # other text before the directive in the same comment stays
        return Edit(directive.comment_start + len(before.rstrip()), directive.comment_end, "")
    line_start = source.line_starts[directive.line - 1]
    line_text = source.line_text(directive.line)
    code = line_text[:directive.comment_start - line_start]
    if code.strip():
        # code before the comment: the comment and the spaces before it go
        return Edit(line_start + len(code.rstrip()), directive.comment_end, "")
    # A comment alone on its line: the line goes, with its line ending.
    next_start = source.line_starts[directive.line] if directive.line < len(source.line_starts) else len(text)
    return Edit(line_start, next_start, "")
