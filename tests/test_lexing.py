"""``lexing.Spans.in_expression``: code proper, as Python's tokenizer sees it, and the replacement
fields of f-strings (which TU160's test for sets reads, torchup/rules/tu160_optimizer_set_params.py)."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from torchup.core.lexing import _BYTES, _STR, _triple_quoted_end, spans_of
from torchup.rules.tu160_optimizer_set_params import _may_build_a_set

ROOT = Path(__file__).resolve().parent.parent

CASES = [  # (text, the marked text: the position is its last character, in code proper?)
    ("x = {a, b}", "x = {", True),
    ('x = "{a, b}"', '"{', False),
    ("x = '{a}' + {b}", "+ {", True),
    ('x = f"{a}"', 'f"{', False),  # a replacement field opens: no set display
    ('x = f"{ {a} }"', "{ {", True),  # one inside a field
    ('x = f"{{a}}"', '"{{', False),  # an escaped brace
    ('x = f"{x:{w}}"', ":{", True),  # a nested field: unsure, so code
    ("x = 1  # {a}\n", "# {", False),
    ('x = """\n{a}\n"""', "\n{", False),
    ('x = f"""\n{ {a} }\n"""', "{ {", True),
    ('x = f"""\n{a}\n"""', "\n{", False),
    ('x = rf"{ {b} }"', "{ {", True),
    ('x = br"{b}"', 'r"{', False),
    ('x = "a" if b else {c}', "e {", True),
    ('x = "#" + str({c})', "({", True),
    ('x = f"{d["k"]}{ {1} }"', "{ {1", True),  # 3.12 nests quotes: the lexer cuts the f-string short
    ('x = f"""{"""x"""}{ {1} }"""', "{ {1", True),
    ("x = '''a''' + {b}", "+ {", True),
    ("x = f'set {y}'", "set", False),
    ("x = f'{set(y)}'", "{set", True),
    ("x = \\\n    {b}", "    {", True),
]


@pytest.mark.parametrize(("text", "marker", "expected"), CASES)
def test_in_expression(text: str, marker: str, expected: bool) -> None:
    for content in (text, text.encode()):
        spans = spans_of(content)
        assert spans is not None
        position = content.index(marker if isinstance(content, str) else marker.encode()) + len(marker) - 1
        assert spans.in_expression(position) is expected, type(content).__name__



def test_a_long_line_asked_many_times_answers_as_each_case_alone() -> None:
    """A minified file: one line of many statements, asked of at every marker, forwards, backwards
    and each on a fresh lexing: the answers are the cases' own (the line's pieces and strings are
    read once and kept; before, each question read the line again, quadratic on 700 KB)."""
    alone = [(text, marker, expected) for text, marker, expected in CASES
             if "\n" not in text and 'f"{d[' not in text and 'f"""{' not in text]  # (cut short: unsure after)
    copies = 60
    line = "; ".join(text for _ in range(copies) for text, _, _ in alone)
    assert len(line) > 4096  # (longer than the window searched back for the line's start)
    for content in (f"import torch\n# a comment\n{line}\nz = 1\n", f"import torch\n# a comment\n{line}\nz = 1\n".encode()):
        asked: list[tuple[int, bool]] = []
        at = content.index(line if isinstance(content, str) else line.encode())
        for _ in range(copies):
            for text, marker, expected in alone:
                piece = text if isinstance(content, str) else text.encode()
                mark = marker if isinstance(content, str) else marker.encode()
                asked.append((at + piece.index(mark) + len(mark) - 1, expected))
                at += len(piece) + 2
        spans = spans_of(content)
        assert spans is not None
        assert [spans.in_expression(offset) for offset, _ in asked] == [expected for _, expected in asked]
        backwards = spans_of(content)
        assert backwards is not None
        assert [backwards.in_expression(offset) for offset, _ in reversed(asked)] == [e for _, e in reversed(asked)]
        for offset, expected in asked[:: len(alone) * 7]:
            fresh = spans_of(content)
            assert fresh is not None and fresh.in_expression(offset) is expected and fresh.in_code(offset)


def _sources() -> list[Path]:
    return sorted(path for folder in ("torchup", "tests", "examples", "bench", "tools") for path in (ROOT / folder).rglob("*.py"))


def test_every_brace_and_name_the_tokenizer_sees_in_code_is_in_an_expression() -> None:
    """Soundness against Python's own tokenizer, on every file of the repository (in 3.11 an f-string
    is one token: its fields are covered by the cases above)."""
    checked = 0
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        spans = spans_of(text)
        if spans is None:
            continue
        starts = [0]
        for line in io.StringIO(text).readlines():
            starts.append(starts[-1] + len(line))
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.string in ("{", "set") and token.type in (tokenize.OP, tokenize.NAME):
                offset = starts[token.start[0] - 1] + token.start[1]
                assert spans.in_expression(offset), (path, token.start)
                checked += 1
    assert checked > 500


def _builds_a_set(tree: ast.AST) -> bool:
    return any(
        isinstance(node, (ast.Set, ast.SetComp))
        or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set")
        for node in ast.walk(tree)
    )


def test_an_annotation_of_set_builds_no_set() -> None:
    for text in ("x: set[int] = []\n", "def f(a: set[str]) -> set[str]:\n    return a\n", "s = 'set(x)'\n",
                 "x = reset(y)\n", "x = offset (y) + my_set(z)\n", "x = set1(y)\n"):
        spans = spans_of(text)
        assert spans is not None and not _may_build_a_set(spans), text


@pytest.mark.parametrize("kind", [str, bytes])
def test_tu160s_test_for_sets_misses_none_that_python_sees(kind: type) -> None:
    """Every file whose tree holds a set display, comprehension or call of `set` is said to (the
    f-string cases too, as parsed by the Python running the test)."""
    texts = [path.read_bytes() for path in _sources()]
    texts += [text.encode() for text, _, _ in CASES]
    texts += [b"x = {lambda: 1}\n", b"x = {(y := 1)}\n", b"x = {a ** 2}\n", b"x = {*a}\n", b"x = {a[1:2]}\n",
              b"x = {  # c\n    a: 1}\n", b"x = {'k' 'j'}\n", b"x = {1.5e-3}\n",
              b"x = set (y)\n", b"x = (set  # c\n     (y))\n", b"x = (set\n     (y))\n", b"x = set\\\n(y)\n",
              b"set(y)\n", b"x=[set(y)]\n", b"x = 1;set(y)\n", "x = \u00e9 + set(y)\n".encode()]
    said_no = 0
    for raw in texts:
        try:
            tree = ast.parse(raw)
        except SyntaxError:
            continue  # (3.12 f-strings on an older Python)
        spans = spans_of(raw if kind is bytes else raw.decode())
        builds = True if spans is None else _may_build_a_set(spans)
        assert builds or not _builds_a_set(tree), raw[:200]
        said_no += not builds
    assert said_no > 20  # (and it does tell)


TRIPLE_CASES = [
    r'plain"""',
    r'with "one" and ""two"" quotes"""',
    r'four at the end""""',
    r'escaped \""" still open"""',
    r'an escaped backslash \\"""',
    'a line break\nand a \\\nbackslash-newline"""',
    r"never closed",
    "ends in a backslash \\",
    r'escape right before \"',
    r'"""',
    r'\"""\"""',
    r"''' other quotes",
]


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_triple_quoted_string_ends_where_the_regex_says(kind: type) -> None:
    """``_triple_quoted_end`` (literal searches) against the regex it replaced, on the cases above
    and after every triple quote of the repository's sources."""
    syntax = _STR if kind is str else _BYTES
    texts = [(case, '"""') for case in TRIPLE_CASES] + [(case.replace('"', "'"), "'''") for case in TRIPLE_CASES]
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        for quote in ('"""', "'''"):
            texts += [(source[index + 3 :], quote) for index in _offsets(source, quote)]
    for text, quote in texts:
        content, token = (text, quote) if kind is str else (text.encode(), quote.encode())
        match = syntax.string_rest[token].match(content, 0)
        expected = -1 if match is None else match.end()
        assert _triple_quoted_end(content, 0, token, syntax.backslash) == expected, text[:80]
    assert len(texts) > 1000


def _offsets(text: str, token: str) -> list[int]:
    found, position = [], text.find(token)
    while position >= 0 and len(found) < 400:
        found.append(position)
        position = text.find(token, position + 1)
    return found
