"""Raising a project's torch requirement to a newer release, in its file's own syntax.

``torchup fix --raise-floor`` applies fixes that need a newer torch than the project's floor (the lowest
release its torch requirement admits: torchup.settings.torch_requirement) and raises that requirement
to the release they need, as one reviewed edit. Only the requirement's own characters change: comments,
line endings, a BOM, quoting, extras, markers, hashes and the other clauses stay byte for byte.

What a raise does to a specifier, in every syntax (PEP 440, Poetry, conda):

- a lower bound moves up: ``>=1.7`` and ``>1.7`` become ``>=2.3``; a compatible-release clause keeps its
  operator where its upper bound stays the same (``~=2.1`` -> ``~=2.3``, Poetry ``^2.1`` -> ``^2.3``),
  else a ``>=2.3,`` goes in front of it (Poetry ``~2`` -> ``>=2.3,~2``);
- a specifier without a lower bound gets one in front: ``torch`` -> ``torch>=2.3``, ``<3`` ->
  ``>=2.3,<3``; a lone ``*`` (Poetry, conda) becomes ``>=2.3``;
- other clauses stay as written (``!=1.12.0`` too, though it no longer excludes anything);
- an upper bound never moves: where one excludes the release (``<2``, ``~=1.13.0``, ``^1.13``, conda's
  ``pytorch=1.13``, which means ``1.13.*``) or the version is pinned (``==1.12.1``), nothing is raised
  and the reason says why: moving a cap or a pin with the upgrade is the project's decision;
- alternatives (Poetry ``||``, conda ``|``) are not raised;
- a specifier that already admits nothing below the release stays as it is.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass

from torchup.settings.torch_requirement import TorchRequirement, _conda_release, _display, _is_torch

Release = tuple[int, ...]
Edit = tuple[int, int, str]  # (start, end, replacement) in the text it applies to


@dataclass(frozen=True)
class RaiseResult:
    """What raising one requirement gives: the new file text, or None and the reason."""

    text: str | None  # the whole new file text (the same text when nothing needed raising); None: not raised
    description: str  # one line: "requirements.txt:16: `torch>=1.7` -> `torch>=2.3`"
    reason: str = ""  # why it was not raised (when text is None)
    changed: bool = False


@dataclass(frozen=True)
class SpecifierRaise:
    """A raised specifier: its new text and the edits that make it, or None and the reason."""

    text: str | None
    edits: tuple[Edit, ...] = ()
    reason: str = ""


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` applied."""
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


# -- specifiers ------------------------------------------------------------------------------------

_OPERATORS = {  # longest first: `==` before `=`, `~=` before `~`
    "pep440": ("===", "==", "!=", "~=", ">=", "<=", ">", "<"),
    "poetry": ("==", "!=", "~=", ">=", "<=", ">", "<", "^", "~", "="),
    "conda": ("==", "!=", "~=", ">=", "<=", ">", "<", "="),
}
_ALTERNATIVE = {"pep440": None, "poetry": "||", "conda": "|"}
_VERSION_TEXT = re.compile(r"(\d+(?:\.\d+)*)(\.?\*)?((?:[-_.+]?[A-Za-z0-9]+)*)")


@dataclass(frozen=True)
class _Clause:
    start: int  # offsets in the specifier
    operator: str  # "" for a bare version (Poetry, conda)
    version_start: int
    version: str

    @property
    def end(self) -> int:
        return self.version_start + len(self.version)


@dataclass(frozen=True)
class _Bounds:
    kind: str  # "floor" (>=, >), "compatible" (~=, ^, ~), "series", "exact", "cap", "any", "other"
    lower: Release | None = None
    upper: Release | None = None  # exclusive, except for "exact" and `<=`
    inclusive: bool = False


def release_tuple(release: str) -> Release:
    """``"2.3"`` -> (2, 3); ValueError for anything but dotted numbers."""
    if not re.fullmatch(r"\d+(?:\.\d+)*", release):
        raise ValueError(f"expected a release like \"2.3\", got {release!r}")
    return tuple(int(part) for part in release.split("."))


def _less(left: Release, right: Release) -> bool:
    width = max(len(left), len(right))
    return left + (0,) * (width - len(left)) < right + (0,) * (width - len(right))


def _bump(prefix: Release) -> Release:
    return (*prefix[:-1], prefix[-1] + 1)


def _compatible_upper(operator: str, version: Release) -> Release:
    """The exclusive upper bound ``~=``, Poetry's ``^`` and ``~`` imply."""
    if operator == "~=":
        return _bump(version[:-1])
    if operator == "^":
        first = next((i for i, part in enumerate(version) if part), len(version) - 1)
        return _bump(version[: first + 1])
    return _bump(version[:1] if len(version) == 1 else version[:2])  # `~`


def _clauses(specifier: str, dialect: str) -> list[_Clause] | None:
    """The clauses of one alternative; None where it cannot be read. PEP 440 and conda separate
    clauses with commas, Poetry with commas or spaces."""
    found: list[_Clause] = []
    position, separated = 0, True
    while position < len(specifier):
        character = specifier[position]
        if character.isspace():
            position += 1
            continue
        if character == ",":
            position, separated = position + 1, True
            continue
        if not separated and dialect != "poetry":
            return None
        operator = next((op for op in _OPERATORS[dialect] if specifier.startswith(op, position)), "")
        if not operator and dialect == "pep440":
            return None
        version_start = position + len(operator)
        while version_start < len(specifier) and specifier[version_start].isspace():
            version_start += 1
        end = version_start
        while end < len(specifier) and not specifier[end].isspace() and specifier[end] not in ",|":
            end += 1
        if end == version_start:
            return None
        found.append(_Clause(position, operator, version_start, specifier[version_start:end]))
        position, separated = end, False
    return found


def _bounds(clause: _Clause, dialect: str) -> _Bounds | None:
    """What one clause admits, as bounds; None where its version cannot be read."""
    operator = clause.operator
    if clause.version == "*" and operator in ("", "=", "=="):
        return _Bounds("any")
    parsed = _VERSION_TEXT.fullmatch(clause.version)
    if parsed is None or (parsed.group(2) and parsed.group(3)):
        return None
    version = tuple(int(part) for part in parsed.group(1).split("."))
    wildcard = bool(parsed.group(2))
    if wildcard and operator not in ("", "=", "==", "!="):
        return None
    if operator in (">=", ">"):
        return _Bounds("floor", lower=version)
    if operator in ("<", "<="):
        return _Bounds("cap", upper=version, inclusive=operator == "<=")
    if operator == "!=":
        return _Bounds("other")
    if operator in ("~=", "^", "~"):
        if operator == "~=" and len(version) < 2:
            return None
        return _Bounds("compatible", lower=version, upper=_compatible_upper(operator, version))
    if wildcard or (dialect == "conda" and operator in ("", "=")):  # conda's `=1.13` is `1.13.*`
        return _Bounds("series", lower=version, upper=_bump(version))
    return _Bounds("exact", lower=version, upper=version, inclusive=True)


def _admits(bounds: _Bounds, wanted: Release) -> bool:
    """Whether ``bounds``' upper bound lets the release ``wanted`` (its first version) in."""
    if bounds.upper is None:
        return True
    return not _less(bounds.upper, wanted) if bounds.inclusive else _less(wanted, bounds.upper)


def _written(version: Release) -> str:
    return ".".join(str(part) for part in version)


def _excluded(text: str, bounds: _Bounds, release: str) -> str:
    """Why a clause whose upper bound excludes ``release`` stops the raise."""
    if bounds.kind == "exact":
        return f"`{text}` pins one version: moving the pin to {release} is the project's decision"
    if bounds.kind == "series":
        return (f"`{text}` pins the {_written(bounds.lower or ())} series: raising it to {release} "
                f"would move its upper bound")
    if bounds.kind == "compatible":
        upper = bounds.upper or ()
        return (f"`{text}` admits nothing from {_written(upper + (0,) * (2 - len(upper)))} on: raising it to {release} "
                f"would move its upper bound")
    return f"`{text}` excludes {release}: moving an upper bound is the project's decision"


def _alternatives(specifier: str, dialect: str) -> list[tuple[int, str]]:
    """``(offset, text)`` of each alternative of the specifier."""
    separator = _ALTERNATIVE[dialect]
    if separator is None or separator not in specifier:
        return [(0, specifier)]
    parts, offset = [], 0
    for part in specifier.split(separator):
        parts.append((offset, part))
        offset += len(part) + len(separator)
    return parts


def raise_specifier(specifier: str, release: str, dialect: str = "pep440") -> SpecifierRaise:
    """``specifier`` (``>=1.7,<3``; ``dialect`` "pep440", "poetry" or "conda") with its lower bound
    raised to ``release`` (``>=2.3,<3``), as the module's docstring says; the same text where it
    already admits nothing below ``release``; None and the reason where it cannot be raised."""
    wanted = release_tuple(release)
    alternatives = []
    for offset, part in _alternatives(specifier, dialect):
        clauses = _clauses(part, dialect)
        bounds = [_bounds(clause, dialect) for clause in clauses or ()]
        if clauses is None or None in bounds:
            return SpecifierRaise(None, reason=f"cannot read the version specifier `{specifier.strip()}`")
        alternatives.append((offset, part, clauses, bounds))
    if len(alternatives) > 1:
        if all(_floor_reached(bounds, wanted) for *_, bounds in alternatives):
            return SpecifierRaise(specifier)
        return SpecifierRaise(None, reason=f"`{specifier.strip()}` has alternatives: which to raise is the "
                                           f"project's decision")
    _, _, clauses, bounds = alternatives[0]
    edits = _raised(specifier, clauses, bounds, wanted, release)
    if isinstance(edits, str):
        return SpecifierRaise(None, reason=edits)
    return SpecifierRaise(apply_edits(specifier, edits), tuple(edits))


def _floor_reached(bounds: list[_Bounds], wanted: Release) -> bool:
    return any(b.lower is not None and not _less(b.lower, wanted) for b in bounds)


def _raised(specifier: str, clauses: list[_Clause], bounds: list[_Bounds], wanted: Release,
            release: str) -> list[Edit] | str:
    """The edits that raise one alternative's clauses (none when its floor is reached), or why not."""
    if _floor_reached(bounds, wanted):
        return []
    for clause, bound in zip(clauses, bounds, strict=True):
        if not _admits(bound, wanted):
            return _excluded(specifier[clause.start:clause.end], bound, release)
    edits: list[Edit] = []
    raised = False
    for clause, bound in zip(clauses, bounds, strict=True):
        if bound.kind == "floor":
            if clause.operator != ">=":  # (`>1.7` -> `>=2.3`: the release itself is admitted)
                edits.append((clause.start, clause.start + len(clause.operator), ">="))
            edits.append((clause.version_start, clause.end, release))
            raised = True
        elif bound.kind == "compatible" and bound.lower is not None:
            candidate = wanted + (0,) * (len(bound.lower) - len(wanted))
            if _compatible_upper(clause.operator, candidate) == bound.upper:  # (else its meaning would change)
                edits.append((clause.version_start, clause.end, _written(candidate)))
                raised = True
    if raised:
        return edits
    if len(clauses) == 1 and bounds[0].kind == "any":
        return [(clauses[0].start, clauses[0].end, f">={release}")]
    if clauses:
        return [(clauses[0].start, clauses[0].start, f">={release},")]
    return [(0, 0, f">={release}")]


# -- where a requirement stands in its file --------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """Text as a file spells it, with the file offset of each character (-1: a character the file
    does not hold, as the space that joins a continued line)."""

    text: str
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, source: str, start: int, end: int) -> _Piece:
        return cls(source[start:end], tuple(range(start, end)))

    def file_edit(self, edit: Edit) -> Edit | None:
        """``edit`` (in this piece) in the file's offsets; None where it does not map onto one span."""
        start, end, replacement = edit
        if start == end:
            if start < len(self.offsets) and self.offsets[start] >= 0:
                return self.offsets[start], self.offsets[start], replacement
            if start > 0 and self.offsets[start - 1] >= 0:
                return self.offsets[start - 1] + 1, self.offsets[start - 1] + 1, replacement
            return None
        span = self.offsets[start:end]
        if min(span) < 0 or span[-1] - span[0] != len(span) - 1:  # (a continuation's join inside it)
            return None
        return span[0], span[-1] + 1, replacement


@dataclass(frozen=True)
class _Located:
    """The requirement's characters (``piece``, whose stripped text is the requirement's) and the
    ranges in it that hold a specifier to raise, each with its syntax."""

    piece: _Piece
    targets: tuple[tuple[int, int, str], ...]  # (start, end, "pep508" | "poetry" | "conda")


def _lines(text: str) -> list[tuple[int, str]]:
    """``(offset, line)`` of each line, as ``str.splitlines`` counts them (as the reader does)."""
    lines, offset = [], 0
    for kept, line in zip(text.splitlines(keepends=True), text.splitlines(), strict=True):
        lines.append((offset, line))
        offset += len(kept)
    return lines


def _line(text: str, number: int) -> tuple[int, str] | None:
    lines = _lines(text)
    if not 1 <= number <= len(lines):
        return None
    offset, line = lines[number - 1]
    if offset == 0 and line.startswith("\ufeff"):  # (a BOM is no part of the first line's text)
        return 1, line[1:]
    return offset, line


def _uncommented(line: str) -> str:
    """A requirements or conda line without its comment, as torch_requirement reads it."""
    comment = re.search(r"(^|\s)#.*", line) if "#" in line else None
    return line[: comment.start()] if comment else line


def _stripped(piece: _Piece) -> _Piece:
    start = len(piece.text) - len(piece.text.lstrip())
    end = len(piece.text.rstrip())
    return _Piece(piece.text[start:end], piece.offsets[start:end]) if end > start else _Piece("", ())


def _requirements_file(text: str, number: int) -> _Located | str:
    """A requirements.txt line and the lines that continue it (``\\``), up to its options (``--hash``)."""
    characters, offsets = "", ()
    for offset, line in _lines(text)[number - 1:] if number >= 1 else ():
        if offset == 0 and line.startswith("\ufeff"):
            offset, line = 1, line[1:]
        kept = _uncommented(line)
        continued = kept.endswith("\\")
        kept = kept[:-1] if continued else kept
        characters += kept + (" " if continued else "")
        offsets += tuple(range(offset, offset + len(kept))) + ((-1,) if continued else ())
        if not continued:
            break
    logical = _stripped(_Piece(characters, offsets))
    option = re.search(r"\s+--?[A-Za-z]", logical.text)
    cut = option.start() if option else len(logical.text)
    piece = _stripped(_Piece(logical.text[:cut], logical.offsets[:cut]))
    return _Located(piece, ((0, len(piece.text), "pep508"),))


_TOML_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|#.*")


def _toml_strings(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the contents of each string on a TOML line, before its comment."""
    found = []
    for match in _TOML_STRING.finditer(line):
        if match.group().startswith("#"):
            break
        found.append((match.start() + 1, match.end() - 1))
    return found


def _pyproject_file(text: str, requirement: TorchRequirement) -> _Located | str:
    found = _line(text, requirement.line)
    if found is None:
        return f"line {requirement.line} is not in the file"
    offset, line = found
    key = re.match(r"\s*([\"']?)([A-Za-z0-9._-]+)\1\s*=\s*", line)
    if key and _is_torch(key.group(2)) and line.strip() == requirement.text:  # (a Poetry entry is its line)
        return _poetry_entry(_Piece.of(text, offset, offset + len(line)), key.end())
    for start, end in _toml_strings(line):
        content = line[start:end]
        if content.strip() == requirement.text and "\\" not in content:
            return _Located(_Piece.of(text, offset + start, offset + end), ((0, len(content), "pep508"),))
    escaped = any(_toml_value(other[start - 1:end + 1]) == requirement.text
                  for _, other in _lines(text) for start, end in _toml_strings(other) if "\\" in other[start:end])
    if escaped:  # (the reader finds no line for it: it names the first)
        return f"`{requirement.text}` is written with escapes"
    return f"`{requirement.text}` is not a string on line {requirement.line}"


def _toml_value(literal: str) -> str | None:
    """The stripped value of one TOML string literal, None where it is not one."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10
        import tomli as tomllib
    try:
        value = tomllib.loads(f"v = {literal}").get("v")
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    return value.strip() if isinstance(value, str) else None


def _poetry_entry(piece: _Piece, value: int) -> _Located | str:
    """``torch = "^1.13"``, ``torch = { version = "^1.13", ... }`` or a list of such tables."""
    line = piece.text
    opener = line[value:value + 1]
    strings = _toml_strings(line)
    if opener in ("\"", "'"):
        targets = [(start, end, "poetry") for start, end in strings if start == value + 1]
    elif opener in ("{", "["):
        comment = next((m.start() for m in _TOML_STRING.finditer(line) if m.group().startswith("#")), len(line))
        if not line[:comment].rstrip().endswith("}" if opener == "{" else "]"):
            return "the Poetry entry continues on the next lines"
        versions = re.finditer(r"\bversion\s*=\s*([\"'])", line)
        starts = {match.end() for match in versions}
        targets = [(start, end, "poetry") for start, end in strings if start in starts]
        if not targets:
            return "the Poetry entry has no version (a git, url or path dependency)"
    else:
        return "the Poetry entry's value is not a string or a table"
    if any("\\" in line[start:end] for start, end, _ in targets):
        return "the Poetry version is written with escapes"
    return _Located(piece, tuple(targets))


def _setup_cfg_file(text: str, requirement: TorchRequirement) -> _Located | str:
    found = _line(text, requirement.line)
    if found is None:
        return f"line {requirement.line} is not in the file"
    offset, line = found
    search_from = 0
    if not line[:1].isspace():  # `install_requires = torch>=1.7`: after the key (which may be `torch`)
        key = re.match(r"[^=:]+?\s*[=:]", line)
        search_from = key.end() if key else 0
    start = line.find(requirement.text, search_from)
    if start < 0:
        return f"`{requirement.text}` is not on line {requirement.line}"
    piece = _Piece.of(text, offset + start, offset + start + len(requirement.text))
    return _Located(piece, ((0, len(piece.text), "pep508"),))


def _setup_py_file(text: str, requirement: TorchRequirement) -> _Located | str:
    """A string literal of ``install_requires`` (or ``extras_require``) in a setup.py, found with ``ast``."""
    shift = 1 if text.startswith("\ufeff") else 0
    source = text[shift:]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "setup.py does not parse"
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", source)]  # (as ast counts lines)

    def offset(line: int, column: int) -> int:  # (ast's columns count UTF-8 bytes)
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(source)
        return start + len(source[start:end].encode()[:column].decode(errors="replace"))

    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno == requirement.line
                and node.value.strip() == requirement.text and node.end_lineno and node.end_col_offset is not None):
            continue
        start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
        literal = re.fullmatch(r"([rRuU]?)('''|\"\"\"|'|\")(.*)\2", source[start:end], re.DOTALL)
        if literal is None or literal.group(3) != node.value or ("\\" in node.value and not literal.group(1)):
            return f"`{requirement.text}` is not written as one plain string literal"
        inner = start + shift + literal.end(2)
        piece = _Piece.of(text, inner, inner + len(node.value))
        return _Located(piece, ((0, len(piece.text), "pep508"),))
    return f"`{requirement.text}` is not a string on line {requirement.line}"


def _environment_file(text: str, requirement: TorchRequirement) -> _Located | str:
    found = _line(text, requirement.line)
    if found is None:
        return f"line {requirement.line} is not in the file"
    offset, line = found
    kept = _uncommented(line)
    dash = kept.find("-")
    start = kept.find(requirement.text, dash + 1) if dash >= 0 else -1
    if start < 0:
        return f"`{requirement.text}` is not on line {requirement.line}"
    piece = _Piece.of(text, offset + start, offset + start + len(requirement.text))
    kind = "conda" if _conda_release(requirement.text)[0] else "pep508"
    return _Located(piece, ((0, len(piece.text), kind),))


def _locate(text: str, requirement: TorchRequirement) -> _Located | str:
    name = os.path.basename(requirement.path)
    if name == "pyproject.toml":
        located = _pyproject_file(text, requirement)
    elif name == "setup.cfg":
        located = _setup_cfg_file(text, requirement)
    elif name == "setup.py":
        located = _setup_py_file(text, requirement)
    elif name in ("environment.yml", "environment.yaml"):
        located = _environment_file(text, requirement)
    else:
        located = _requirements_file(text, requirement.line)
    if isinstance(located, _Located) and located.piece.text.strip() != requirement.text:
        return f"line {requirement.line} does not hold `{requirement.text}` (has the file changed?)"
    return located


# -- the specifier of a requirement ----------------------------------------------------------------

_NAME = re.compile(r"\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def _pep508_specifier(requirement: str) -> tuple[int, int] | str:
    """Where the version specifier of a PEP 508 requirement stands (an empty range right after the
    name and extras where it has none), or why it has none to raise."""
    name = _NAME.match(requirement)
    if name is None or not _is_torch(name.group().strip()):
        return f"`{requirement.strip()}` does not name torch"
    start = name.end()
    extras = re.compile(r"\s*\[[^\]]*\]").match(requirement, start)
    start = extras.end() if extras else start
    end = requirement.find(";", start)
    end = len(requirement) if end < 0 else end
    inside = requirement[start:end]
    if inside.strip().startswith("@"):
        return f"`{requirement.strip()}` names a URL: there is no version to raise"
    if inside.strip().startswith("(") and inside.strip().endswith(")"):  # `torch (>=1.7)`
        return start + inside.index("(") + 1, start + inside.rindex(")")
    return start, end


def _conda_specifier(spec: str) -> tuple[int, int] | str:
    """Where the version of a conda match spec stands: ``pytorch>=1.13``, ``pytorch 1.13 cuda*``,
    ``pytorch=1.13=cuda*`` (the build after it is not the version), ``pytorch[version='>=1.13']``."""
    match = re.match(r"\s*(?:[^:\s]+::)?[A-Za-z0-9_.-]+", spec)
    if match is None:
        return f"cannot read the conda spec `{spec.strip()}`"
    start = match.end()
    bracket = re.compile(r"\s*\[.*?\bversion\s*=\s*(['\"]?)([^'\"\]]+)\1").match(spec, start)
    if bracket:
        return bracket.start(2), bracket.end(2)
    version = re.compile(r"\s*(\S*)").match(spec, start)
    if version is None or not version.group(1):
        return start, start
    token = version.group(1)
    build = re.match(r"(==?[^=]+|[^=<>!~][^=]*)=", token)  # (`=1.13=cuda*`, `1.13=cuda*`)
    return version.start(1), version.start(1) + (build.end() - 1 if build else len(token))


def _specifier_span(kind: str, text: str) -> tuple[int, int] | str:
    if kind == "pep508":
        return _pep508_specifier(text)
    if kind == "conda":
        return _conda_specifier(text)
    return 0, len(text)  # (a Poetry version string is all specifier)


def _specifier_edits(located: _Located, release: str) -> list[Edit] | str:
    """The edits (in the located piece) that raise each of its specifiers, or why they cannot."""
    edits: list[Edit] = []
    for start, end, kind in located.targets:
        text = located.piece.text[start:end]
        span = _specifier_span(kind, text)
        if isinstance(span, str):
            return span
        raised = raise_specifier(text[span[0]:span[1]], release, "pep440" if kind == "pep508" else kind)
        if raised.text is None:
            return raised.reason
        edits += [(start + span[0] + a, start + span[0] + b, new) for a, b, new in raised.edits]
    return edits


def _file_edits(text: str, requirement: TorchRequirement, release: str) -> tuple[_Located, list[Edit]] | str:
    """The requirement's characters, and the edits (in them) that raise it; or why it cannot be."""
    located = _locate(text, requirement)
    if isinstance(located, str):
        return located
    edits = _specifier_edits(located, release)
    if isinstance(edits, str):
        return edits
    if any(located.piece.file_edit(edit) is None for edit in edits):
        return "the version is split across lines"
    return located, edits


def raise_requirement(text: str, requirement: TorchRequirement, release: str) -> RaiseResult:
    """``text`` (the whole file ``requirement`` was read from) with that requirement raised to admit
    nothing below ``release`` ("2.3"): only its own characters change. The text is the same when it
    already does; None, with the reason, where it cannot be edited exactly."""
    release_tuple(release)
    where = f"{_display(requirement.path)}:{requirement.line}: `{requirement.text}`"
    found = _file_edits(text, requirement, release)
    if isinstance(found, str):
        return RaiseResult(None, f"{where} not raised to {release}: {found}", found)
    located, edits = found
    if not edits:
        return RaiseResult(text, f"{where} already admits nothing below {release}")
    file_edits = [edit for edit in map(located.piece.file_edit, edits) if edit is not None]
    shown = apply_edits(located.piece.text, edits).strip()
    return RaiseResult(apply_edits(text, file_edits), f"{where} -> `{shown}`", changed=True)
