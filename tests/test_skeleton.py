"""The skeleton parse (torchup/prefilter/skeleton.py): bodies outside the focus are blanked before ``ast.parse``.

The property that makes it safe: the skeleton's tree is the original tree with each shortened body
reduced to its last statement (behind a ``pass``), and every position the same, the ends of the
shortened definitions included. It is checked here on torchup's own sources, a sample of the
standard library and hand-written edge cases, with several choices of focus lines.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import check
from torchup.analysis.resolver import Focus, Resolver
from torchup.prefilter.skeleton import Region, Skeleton, cut, may_hide_a_word

ROOT = Path(__file__).resolve().parent.parent
STDLIB = Path(ast.__file__).parent


def _normalised(tree: ast.Module, skeleton: Skeleton, *, original: bool) -> str:
    """``tree`` with each shortened body emptied (in the skeleton's, after checking that it is
    the `pass` and the literal of zeros, ending where the original body ended)."""
    regions = {region.header: region for region in skeleton.regions}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.lineno in regions:
            if regions[node.lineno].short_header is not None:  # (then only the name is kept)
                if isinstance(node, ast.ClassDef):
                    node.bases, node.keywords = [], []
                else:
                    node.args, node.returns = ast.arguments([], [], None, [], [], None, []), None
            if not original:
                region = regions[node.lineno]
                first, last = node.body
                assert isinstance(first, ast.Pass) and (first.lineno, first.col_offset) == (region.first, region.indent)
                assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) and last.value.value == 0
                assert (last.end_lineno, last.end_col_offset) == (node.end_lineno, node.end_col_offset)
            node.body = []
    return ast.dump(tree, include_attributes=True)


def assert_faithful(text: str, focus: tuple[int, ...]) -> Skeleton | None:
    """Cut ``text``; if it was cut, the skeleton parses, passes its own check, blanks no focus
    line, keeps every other line as it was, and its tree is the original's less the blanked bodies."""
    skeleton = cut(text, focus)
    if skeleton is None:
        return None
    tree = ast.parse(skeleton.text)
    assert skeleton.matches(tree)
    assert _normalised(tree, skeleton, original=False) == _normalised(ast.parse(text), skeleton, original=True)
    original_lines, skeleton_lines = text.split("\n"), skeleton.text.split("\n")
    assert len(original_lines) == len(skeleton_lines)
    changed = {number for number, (a, b) in enumerate(zip(original_lines, skeleton_lines, strict=True), 1) if a != b}
    assert not changed & set(focus)
    for region in skeleton.regions:
        assert skeleton_lines[region.first - 1] == " " * region.indent + "pass"
        assert all(not line for line in skeleton_lines[region.first : region.last - 1])
        assert skeleton_lines[region.last - 1] == " " * region.indent + "0" * (region.end_column - region.indent)
        assert not any(region.header <= line <= region.last for line in focus)
    for region in skeleton.regions:
        if region.short_header is not None:
            assert skeleton_lines[region.header - 1] == region.short_header
            assert text.split("\n")[region.header - 1].startswith(region.short_header.rstrip("():"))
    assert changed <= {line for region in skeleton.regions for line in range(region.header, region.last + 1)}
    return skeleton


def _sources() -> list[Path]:
    own = sorted((ROOT / "torchup").rglob("*.py"))
    library = sorted(STDLIB.glob("*.py"))
    return own + library[::4]  # (a quarter of the standard library's top-level modules: a few seconds)


@pytest.mark.parametrize("path", _sources(), ids=lambda path: str(path.relative_to(path.parents[1])))
def test_the_skeleton_is_the_original_less_the_blanked_bodies(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    count = text.count("\n") + 1
    for focus in [(), tuple(range(1, count, 7)), tuple(range(3, count, 41)), (count // 2,)]:
        assert_faithful(text, focus)


def test_most_of_a_file_without_focus_is_blanked() -> None:
    text = (ROOT / "torchup" / "analysis" / "resolver.py").read_text(encoding="utf-8")
    skeleton = assert_faithful(text, ())
    assert skeleton is not None and len(skeleton.text.replace("\n", "")) < len(text) / 2


def test_the_prescans_lexing_of_the_bytes_cuts_the_same() -> None:
    """The checker hands the cut the spans stage 3 found in an ASCII file's bytes."""
    from torchup.core.lexing import spans_of

    for path in sorted((ROOT / "torchup").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.isascii():
            focus = tuple(range(5, text.count("\n"), 37))
            assert cut(text, focus, spans_of(text.encode())) == cut(text, focus), path


CASES = {
    "docstring with code at column 0": '''
        def f(a):
            """Example:

        def g():
            return 1
        class H:
            pass
            """
            x = 1
            y = 2
            return x + y
        ''',
    "multi-line header, closing line at the def's indentation": """
        class C:
            def f(
                self,
                a: int,
            ) -> int:
                x = a
                y = x
                return y
        """,
    "last statement spans lines and ends with a bracket at the body's indentation": """
        def f(a):
            b = a
            c = b
            return dict(
                a=a,
                b=b,
            )
        """,
    "clauses at the body's indentation belong to the statement before": """
        def f(a):
            b = a
            try:
                c = b
            except ValueError:
                c = 0
            else:
                c = 1
            finally:
                pass
        """,
    "backslash continuations": """
        def f(a):
            b = a + \\
        1
            c = b
            return c + \\
                1
        """,
    "strings with comment and quote characters; comments with triple quotes": """
        def f(a):
            b = "# not a comment '''"  # a comment with \"\"\"
            c = '\"\"\"'
            d = "x"
            return b + c + d
        """,
    "a header's default holds brackets in a string": """
        def f(a=")", b="(("):
            c = a
            d = b
            return c + d
        """,
    "nested definitions, one in the focus": """
        class Outer:
            def first(self):
                x = 1
                y = 2
                return x + y

            def focused(self):
                a = 1
                b = 2
                return torch.qr(a)

            def last(self):
                def inner():
                    p = 1
                    q = 2
                    return p + q
                return inner
        """,
    "async, decorators, one-liners, comments after the body": """
        import functools

        @functools.cache
        async def f(a):
            b = await a
            c = b
            return c
            # trailing comment at the body's indentation
        # and at column 0

        def g(): return 1
        class H: pass
        """,
    "no newline at the end": "def f(a):\n    b = a\n    c = b\n    return c",
    "headers: annotations over lines, a comment, bases, a keyword, spaces; `:=` keeps its header": """
        import typing

        async def f (
            a: typing.List[int],  # a comment
            *args: int, b: "str" = "x", **kw: dict,
        ) -> typing.Optional[  # another
            int
        ]:  # and one more
            x = a
            y = x
            return y

        class C(Base, metaclass=Meta, **options):
            x = 1
            y = 2
            z = 3

        def g(a=(b := 1)):
            c = a
            d = c
            return d
        """,
    "the last line: a comment with quotes, blanks, a semicolon, non-ASCII text": """
        def f(a):
            b = a
            e = b
            c = b ;  d = "é # '''"   # a comment with ' and \"\"\"  \\n
        x = 1
        """,
    "the last statement ends deeper than the body, or in a string": """
        def f(a):
            for b in a:
                if b:
                    return b
        def g(a):
            b = a
            return f\"\"\"{a}
                \"\"\" + '''
        '''   # ends at column 3: left of the body, not cut
        def k(a):
            b = a
            return f\"\"\"{a}
                \"\"\" + '''
                '''   # a comment
        def h(a):
            b = a
            x = [
                1,
        ]
        """,
    "a definition at the end of an indented block": """
        if True:
            def f(a):
                b = a
                c = b
                return c
        else:
            def f(a):
                return a
        """,
    "global and nonlocal keep their function (they are focus lines)": """
        def f():
            x = 1
            def g():
                nonlocal x
                x = 2
                y = 3
            global z
            z = x
        """,
}


@pytest.mark.parametrize("name", CASES)
def test_edge_cases_are_cut_faithfully(name: str) -> None:
    text = textwrap.dedent(CASES[name]).lstrip("\n")
    focus = tuple(number for number, line in enumerate(text.split("\n"), 1)
                  if any(word in line for word in ("qr", "global", "nonlocal")))
    assert_faithful(text, focus)


def test_what_is_cut_and_what_is_kept() -> None:
    text = textwrap.dedent("""\
        import torch

        def far(a):
            b = a
            c = b
            return c

        def near(a):
            b = a
            return torch.qr(b)
        """)
    skeleton = assert_faithful(text, (10,))
    assert skeleton is not None
    assert skeleton.text == textwrap.dedent("""\
        import torch

        def far():
            pass

            00000000

        def near(a):
            b = a
            return torch.qr(b)
        """)


@pytest.mark.parametrize(
    "text",
    [
        "def f(a):\r\n    b = a\r\n    c = b\r\n    return c\r\n",  # CRLF: columns are fine, but splitlines is not the tokenizer
        "def f(a):\n\tb = a\n\tc = b\n\treturn c\n",  # tabs in an indentation
        "def f(a):\n    b = a\f\n    c = b\n    return c\n",  # a form feed
        'def f(a):\n    b = """never closed\n    c = b\n    return c\n',  # an unclosed string
        "def f(a):\n    b = a\n    return b\n",  # nothing worth blanking
    ],
    ids=["crlf", "tabs", "form-feed", "unclosed-string", "too-short"],
)
def test_no_cut_where_it_could_not_be_proved(text: str) -> None:
    assert cut(text, ()) is None


def test_a_body_that_ends_left_of_its_indentation_is_not_cut() -> None:
    text = "def f(a):\n    b = a\n    x = [\n        1,\n]\ndef g(a):\n    b = a\n    c = b\n    return c\n"
    skeleton = assert_faithful(text, ())
    assert skeleton is not None and [region.header for region in skeleton.regions] == [6]


def test_a_cut_that_does_not_parse_as_claimed_is_refused() -> None:
    # A header whose brackets the count gets wrong: the `pass` lands inside the parameters.
    text = 'def f(a=")",\n      b=1):\n    c = a\n    d = b\n    return c + d\n'
    skeleton = cut(text, ())
    if skeleton is not None:  # (the count may also decline to cut)
        try:
            tree = ast.parse(skeleton.text)
        except SyntaxError:
            return
        assert skeleton.matches(tree)
        assert_faithful(text, ())


def test_the_check_rejects_a_body_that_did_not_come_back_as_pass() -> None:
    skeleton = cut("def f(a):\n    b = a\n    c = b\n    return c\n", ())
    assert skeleton is not None
    assert not skeleton.matches(ast.parse("def f(a):\n    b = a\n    c = b\n    return c\n"))
    assert not skeleton.matches(ast.parse("x = 1\n"))


def test_a_syntax_error_in_a_blanked_body_is_not_reported_but_one_in_the_focus_is() -> None:
    # The same as a file without trigger words, which is never parsed: only code a rule reads is.
    body_error = "import torch\n\ndef f(a):\n    b = a\n    c = (b\n    return c\n\nx = torch.qr(1)\n"
    assert [d.code for d in check(body_error)] == ["TU103"]
    focus_error = "import torch\n\ndef f(a):\n    b = a\n    c = (torch.qr(b)\n    return c\n"
    assert [d.code for d in check(focus_error)] == ["TU001"]
    assert [d.code for d in check(body_error, prefilter=False)] == ["TU001"]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 701 f-strings")
def test_nested_quotes_in_fstrings_on_312() -> None:
    text = 'def f(a):\n    b = f"{a["k"]}"\n    c = f"{\'"""\'}"\n    return b + c\n'
    assert_faithful(text, ())


FAR = "def far(a):\n    b = a\n    c = b\n    return c\n\n"


@pytest.mark.parametrize(
    ("code", "select", "parses"),
    [
        ("import torch\n\n" + FAR + "x = torch.qr(1)\n", None, ["skeleton"]),
        # A rule that reads bodies outside the focus runs here: the whole text.
        ("import torch\n\n" + FAR + "x = torch.linalg.svd(torch.ones(2, device=\"mps\").cpu())\n", ["TU505"], ["whole"]),
        # An alias of a trigger word: its uses need not spell it, so the focus does not hold. Seen
        # on the import's first line: the whole text at once; on a later line: after the skeleton.
        ("from torch import qr as q\n\n" + FAR + "x = q(1)\n", None, ["whole"]),
        ("from torch import (\n    qr as q,\n)\n\n" + FAR + "x = q(1)\n", None, ["skeleton", "whole"]),
        # Without the pre-filter there is no focus: the whole text.
        ("import torch\n\n" + FAR + "x = torch.qr(1)\n", "no-prefilter", ["whole"]),
    ],
    ids=["cut", "rule-reads-bodies", "alias", "alias-on-a-later-line", "no-prefilter"],
)
def test_the_checker_parses_the_skeleton_where_it_can(
    monkeypatch: pytest.MonkeyPatch, code: str, select: list[str] | str | None, parses: list[str]
) -> None:
    seen: list[str] = []
    real = ast.parse

    def spy(text: str, *args: object, **kwargs: object) -> ast.Module:
        seen.append("skeleton" if "    pass\n" in text and "pass" not in code else "whole")
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", spy)
    findings = check(code, prefilter=False) if select == "no-prefilter" else check(code, select)
    assert findings
    assert seen == parses


@pytest.mark.parametrize(
    ("line", "hides"),
    [
        ("from torch import qr as q", True),
        ("from torch._higher_order_ops.cond import cond_op", True),  # (`cond` is a path word)
        ("from torch.utils._sympy.solve import try_solve", False),  # (`solve` is none)
        ("from torch.utils._sympy.solve import try_solve as t", False),
        ("import torch.linalg.solve as s", True),
        ("from m import *", False),  # (a name it brings spells the word where it is used)
        ("from m.cond import *", True),
        ("from torch._linalg_utils import _symeig as symeig, eig", False),  # (no word renamed)
        ("import torch.qr as qr", False),
        ("from m.cond import f as g", True),
        ("from torch import qr", False),
        ("from torch.linalg import solve, qr", False),
        ("import torch.linalg as la", False),
        ("x = 1  # we import qr as q in the docs", False),
    ],
)
def test_imports_that_may_hide_a_trigger_word(line: str, hides: bool) -> None:
    words, path_words = frozenset({"qr", "solve", "cond"}), frozenset({"cond"})
    assert may_hide_a_word(f"import os\n{line}\n", words, path_words) is hides
    # The text's verdict is the resolver's, which decides in the end (``Resolver._aliases_a_word``).
    resolver = Resolver(ast.parse(line), Focus(lines=(1,), words=words, path_words=path_words))
    assert resolver._aliases_a_word(words, path_words) is hides


def test_a_skeleton_that_fails_its_check_falls_back_to_the_whole_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import torchup.prefilter.skeleton

    code = "import torch\n\n" + FAR + "x = torch.qr(1)\n"
    claims = Region(3, 4, 4, 6, 9, 0, 0)  # a `pass` at line 4 that the text does not have
    monkeypatch.setattr(torchup.prefilter.skeleton, "cut", lambda text, focus, spans=None: Skeleton(text, (claims,)))
    seen: list[str] = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: seen.append(text) or real(text, *a, **k))
    assert [d.code for d in check(code)] == ["TU103"]
    assert seen == [code, code]  # the claimed skeleton, refused; then the whole text, once
