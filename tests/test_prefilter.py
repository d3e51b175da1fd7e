"""The pre-filter's second stage: which mentions of a trigger word can be code that refers to torch."""

from __future__ import annotations

import re

import pytest

from tests.helpers import check
from torchup.prefilter.words import TriggerPattern

PATTERN = TriggerPattern(["qr", "solve", "balanced", "use_cuda"])

KEPT = {
    "attribute": "y = torch.qr(a)",
    "attribute after spaces": "y = torch . qr(a)",
    "attribute on the next line": "y = (torch.\n     qr(a))",
    "backslash continuation": "y = torch.\\\n    qr(a)",
    "from import": "from torch import qr",
    "from import in parentheses": "from torch import (\n    solve,\n)",
    "from import after a comma": "from torch import cholesky, qr",
    "keyword argument": "profile(a, use_cuda=True)",
    "keyword argument first": "profile(use_cuda=True)",
    "string": 'Options(acc_policy="balanced")',
    "dict key": "profile(**{'use_cuda': True})",
    "first word of the file": "qr",
    "after a tab and a form feed": "x =\t\fqr",
    "lone CR line endings": "import torch\rqr = 1\r",
    "non-ASCII byte before": "é qr",
    "star import keeps bare names": "from torch import *\nreturn_value = lambda a: [a]\ny = not solve",
    # stage 3 keeps what is code, a one-line string, or an f-string
    "a multi-line f-string": 'x = f"""\n{torch.qr(a)}\n"""',
    "a one-line triple-quoted string": 'Options(acc_policy="""balanced""")',
    "a backslash-newline is no line break in a string's value": 'Options(acc_policy="""\\\nbalanced""")',
    "a hash in a string": 'x = "#" + torch.qr(a)',
    "code after a docstring closes": 's = """\nx""" + torch.qr(a)',
    "code after a comment line in brackets": "y = f(\n    # a comment\n    torch.qr(a))",
}

DROPPED = {
    "prose": "# we solve it",
    "docstring prose": '"""The system is solved: we solve it when balanced."""',
    "definition": "def qr(a):\n    return a",
    "bare name after a keyword": "def f(a):\n    return solve",
    "word inside a longer word": "weight = requirement",
    "imports as a longer word": "reimport qr",
    # stage 2 passes these; stage 3 drops them
    "a reference in a comment": "x = 1  # torch.qr(a) is gone",
    "a reference in a docstring": 'def f():\n    """Call torch.qr(a),\n    not solve.\n    """\n',
    "a reference in a multi-line message": "raise ValueError('''use\ntorch.linalg.qr''')",
    "a comment inside a docstring": '"""\n# torch.qr\n"""',
    "a docstring after code on its line": 'x = 1; """\n(torch.qr)"""',
}


@pytest.mark.parametrize("name", KEPT)
def test_kept(name: str) -> None:
    assert PATTERN.could_match(KEPT[name])
    assert PATTERN.could_match(KEPT[name].encode())


@pytest.mark.parametrize("name", DROPPED)
def test_dropped(name: str) -> None:
    assert not PATTERN.could_match(DROPPED[name])
    assert not PATTERN.could_match(DROPPED[name].encode())


# Words whose rules match a string only as its whole value (Rule.words_in_strings False): "qr", "solve".
STRICT = TriggerPattern(["qr", "solve", "balanced", "pipeline_per_direction_p2p"], frozenset({"qr", "solve", "balanced"}))

STRICT_KEPT = {
    "the whole value": 'Options(acc_policy="balanced")',
    "the whole value, single quotes": "getattr(torch, 'qr')",
    "an f-string's field": 'x = f"{torch.qr(a)}"',
    "code after a string on its line": 'x = "linalg.solve " + torch.qr(a)',
    "a word of a rule that reads words in strings": 'mock.patch("torch.distributed.config.pipeline_per_direction_p2p", 1)',
    "an f-string whose braces do not pair up (unsure)": 'x = f"{a" + "torch.qr"',
    # a backslash-newline adds nothing to a string's value: these are "balanced"
    "the whole value, a backslash-newline after": "L(acc_policy='balanced\\\n')",
    "the whole value, a backslash-newline before": "L(acc_policy='\\\nbalanced')",
    "the whole value, triple quotes and a backslash-newline": 'L(acc_policy="""balanced\\\n""")',
}
STRICT_DROPPED = {
    "a dotted path in a string": 'rules = {"torch.linalg.solve": allowed}',
    "a message": 'check(A, "linalg.qr: expected a matrix")',
    "an f-string's text": 'raise ValueError(f"{name}: use torch.linalg.qr")',
    "a string annotation": 'def f(opt: "torch.qr") -> None:\n    pass',
}


@pytest.mark.parametrize("name", STRICT_KEPT)
def test_stage_three_keeps_a_word_in_code_or_a_whole_string(name: str) -> None:
    assert STRICT.could_match(STRICT_KEPT[name])
    assert STRICT.could_match(STRICT_KEPT[name].encode())


@pytest.mark.parametrize("name", STRICT_DROPPED)
def test_stage_three_drops_a_word_inside_a_longer_string(name: str) -> None:
    assert not STRICT.could_match(STRICT_DROPPED[name])
    assert not STRICT.could_match(STRICT_DROPPED[name].encode())
    assert PATTERN.could_match(STRICT_DROPPED[name])  # (where every word may stand in a string)
    assert STRICT.could_match(STRICT_DROPPED[name], code_in_strings=True)  # (a notebook's JSON)


def test_a_word_in_a_longer_string_still_finds_what_a_rule_that_reads_strings_reports() -> None:
    """TU150 matches the flag at the end of a dotted path in a string; TU503 `"max-autotune"`."""
    patched = 'import torch\nfrom unittest import mock\nmock.patch("torch.distributed.config.pipeline_per_direction_p2p", True)\n'
    assert [d.code for d in check(patched, ["TU150"])] == [d.code for d in check(patched, ["TU150"], prefilter=False)]
    assert [d.code for d in check(patched, ["TU150"])] == ["TU150"]
    compiled = 'import torch\nm = torch.compile(model, mode="max-autotune")\n'
    assert [d.code for d in check(compiled, ["TU503"])] == [d.code for d in check(compiled, ["TU503"], prefilter=False)]
    assert [d.code for d in check(compiled, ["TU503"])] == ["TU503"]


def test_a_star_import_finding_survives_the_prefilter() -> None:
    code = "from torch import *\n\ndef f(a):\n    return cholesky(a)\n"
    assert [d.code for d in check(code)] == [d.code for d in check(code, prefilter=False)] == ["TU101"]


def test_prose_only_file_is_skipped_but_a_reference_is_not() -> None:
    prose = '"""We solve for x; use_cuda is a word here; the qr step is balanced."""\nimport torch\n'
    assert check(prose, ["ALL"]) == check(prose, ["ALL"], prefilter=False) == []
    reference = prose + "q = torch.qr(torch.eye(2))\n"
    assert [d.code for d in check(reference, ["TU103"])] == ["TU103"]


def test_a_file_that_names_torch_only_in_comments_and_docstrings_is_not_parsed() -> None:
    """Stage 3: like a file without trigger words, it is never parsed, so its syntax error is
    reported only by a full parse."""
    prose = 'def f(:\n    """Use torch.qr(a),\n    or torch.linalg.qr(a)."""\n# see torch.cholesky(a)\n'
    assert check(prose, ["ALL"]) == []
    assert [d.code for d in check(prose, ["ALL"], prefilter=False)] == ["TU001"]
    assert [d.code for d in check(prose + "q = torch.qr(a)\n", ["ALL"])] == ["TU001"]


def test_the_factored_pattern_finds_exactly_what_plain_alternation_finds() -> None:
    import random
    import re

    from torchup.prefilter.words import _trie

    chance = random.Random(7)
    alphabet = "ab_c"
    for _ in range(300):
        words = sorted({"".join(chance.choices(alphabet, k=chance.randint(1, 4))) for _ in range(chance.randint(1, 6))})
        text = " ".join("".join(chance.choices(alphabet + " .", k=chance.randint(1, 6))) for _ in range(20))
        plain = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")
        factored = re.compile(r"\b" + _trie(words) + r"\b")
        assert [m.span() for m in factored.finditer(text)] == [m.span() for m in plain.finditer(text)], words


# -- one scan: stage 1, stage 2 and the focus lines, on the text or its bytes ---------------------

SCANNED = {
    **KEPT,
    **DROPPED,
    "lines": "import torch\n\ndef f():\n    global g\n    return torch.qr(a)\n# solve\n",
    "global in prose": 'def f():\n    """Sets a global\n    default."""  # and a nonlocal one\n    return torch.qr(a)\n',
    "CRLF and CR": "import torch\r\nx = 1\ry = torch.qr(a)\r\n\rz = solve\n",
    "non-ASCII letter glued to a word": "é = 1\nxéqr = torch.qr\n",
    "BOM-less UTF-8 and a word in a string": 'name = "café qr"\n',
}


def _in_code_by_python(text: str) -> tuple[set[int], set[str]]:
    """Python's tokenizer's answer: the lines and the words (`global` and `nonlocal` too) that
    stand in code, in a one-line string or in an f-string (a string whose value holds a line
    break cannot be a word)."""
    import io
    import re
    import tokenize

    words = re.compile(r"\b(?:qr|solve|balanced|use_cuda|global|nonlocal)\b")
    lines: set[int] = set()
    present: set[str] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.STRING:
            prefix = token.string[: token.string.index(token.string[-1])].lower()
            if "\n" in token.string.replace("\\\n", "") and "f" not in prefix:
                continue
        for match in words.finditer(token.string):
            lines.add(token.start[0] + token.string.count("\n", 0, match.start()))
            present.add(match.group())
    return lines, present


@pytest.mark.parametrize("name", SCANNED)
def test_scan_finds_what_python_reads_as_code(name: str) -> None:
    """Between what Python reads as code (the least a sound scan finds) and every line that spells
    a word (stage 1); exactly the former once stages 2 and 3 pass the file."""
    import re

    text = SCANNED[name]
    found = PATTERN.scan(text)
    assert found.in_code == PATTERN.could_match(text)
    lines = re.split(r"\r\n|\r|\n", text)
    spelled = {i + 1 for i, line in enumerate(lines) if re.search(r"\b(qr|solve|balanced|use_cuda)\b", line)}
    scope = {i + 1 for i, line in enumerate(lines) if re.search(r"\b(global|nonlocal)\b", line)}
    assert list(found.lines) == sorted(found.lines)
    assert found.present <= {w for w in PATTERN.words if re.search(rf"\b{w}\b", text)}
    assert set(found.lines) <= spelled | scope
    if "\r" in text or "é" in text:
        return  # (stage 3 does not lex a text with lone CRs; `é qr` is no Python)
    code_lines, code_words = _in_code_by_python(text)
    assert code_lines <= set(found.lines) and code_words - {"global", "nonlocal"} <= found.present
    if found.in_code:
        assert set(found.lines) == code_lines and found.present == code_words - {"global", "nonlocal"}


def test_stage_three_keeps_every_word_of_a_text_it_cannot_lex() -> None:
    unclosed = 'x = torch.qr(a)  # solve\ny = """never closed\n'
    assert PATTERN.scan(unclosed).present == {"qr", "solve"}  # (`solve` only in a comment)
    lone_cr = "x = torch.qr(a)\r# torch.qr(a)\n"
    assert PATTERN.scan(lone_cr).lines == (1, 2)


@pytest.mark.parametrize("name", SCANNED)
def test_scanning_the_utf8_bytes_finds_at_least_what_the_text_scan_finds(name: str) -> None:
    text = SCANNED[name]
    on_text, on_bytes = PATTERN.scan(text), PATTERN.scan(text.encode("utf-8"))
    assert set(on_bytes.lines) >= set(on_text.lines)
    assert on_bytes.present >= on_text.present
    assert on_bytes.in_code or not on_text.in_code


def test_an_8_bit_file_is_scanned_again_as_text() -> None:
    """A prescan of the bytes is reused only for UTF-8 or ASCII texts: in other encodings a byte
    offset is not a character offset."""
    from torchup.check.checker import Checker
    from torchup.core.source import SourceFile
    from torchup.rules import all_rules
    from torchup.settings.selection import select_rules

    checker = Checker(select_rules(all_rules(), ["TU103"]))
    raw = "# -*- coding: latin-1 -*-\nimport torch\nnom = 'é'\ndef f(A):\n    return torch.qr(A)\n".encode("latin-1")
    source = SourceFile.from_bytes("m.py", raw)
    assert source.encoding != "utf-8"
    prescan = checker.prescan(raw, "m.py")
    wrong = type(prescan)(True, type(prescan.found)((1,), prescan.found.present, True))  # a misleading focus
    assert [d.line for d in checker.analyze(source, wrong).diagnostics] == [5]
    utf8 = SourceFile.from_bytes("m.py", raw.decode("latin-1").encode("utf-8").replace(b"latin-1", b"utf-8"))
    assert [d.line for d in checker.analyze(utf8, checker.prescan(utf8.raw, "m.py")).diagnostics] == [5]
    assert checker.analyze(utf8, wrong).diagnostics == []  # (reused for UTF-8: the focus decides)


SCAN_CASES = {
    "words and scope words": b"import torch\nglobal g\nclass A:\n    def __init__(self):\n        x.qr()\n",
    "two words on a line, the first in a comment": b"# qr\nx = 1  # solve, then torch.qr\n",
    "a word only in prose": b'"""We solve it."""\ndef solve(a):\n    return a\n',
    "a star import": b"from m import *\nsolve(a)\n",
    "words at the start and the end": b"qr = 1\nx = balanced",
    "a word after import": b"from torch import qr\n",
    "nonlocal inside words": b"my_global = 1\nx.__init__s = nonlocals\n",
    "no trigger word": b"x = 1\nglobal y\n",
}


@pytest.mark.parametrize("name", [*SCAN_CASES, *SCANNED])
def test_a_scan_of_the_lines_grep_names_equals_the_whole_scan(name: str) -> None:
    """grep (``fastscan.Grep``) names every line that holds a trigger word; the scan
    then reads the words on those lines alone and finds scope words by plain search.
    (The stage cases above too: with a carriage return the whole scan is taken.)"""
    content = SCAN_CASES[name] if name in SCAN_CASES else SCANNED[name].encode()
    pattern = TriggerPattern(["qr", "solve", "balanced"])
    assert pattern.scan(content, grep_lines(content, pattern)) == pattern.scan(content)


def grep_lines(content: bytes, pattern: TriggerPattern) -> tuple[tuple[int, int], ...]:
    """What grep gives a scan: each line (by `\\n`) with a trigger or scope word, and its start."""
    words = re.compile(rb"\b(?:" + "|".join(sorted(pattern.words | {"global", "nonlocal"})).encode() + rb")\b")
    starts = {content.rfind(b"\n", 0, m.start()) + 1 for m in words.finditer(content)}
    return tuple((content.count(b"\n", 0, start) + 1, start) for start in sorted(starts))


def test_a_line_that_does_not_start_where_grep_said_takes_the_whole_scan() -> None:
    """The file changed between grep and the read: the offsets are not trusted."""
    content = b"import torch\nx = torch.qr(a)\n"
    assert PATTERN.scan(content, ((2, 5),)) == PATTERN.scan(content)
    assert PATTERN.scan(content, ((2, 99),)) == PATTERN.scan(content)
    assert PATTERN.scan(content, ((2, 13),)).lines == (2,)


def test_the_line_scan_on_real_sources_equals_the_whole_scan() -> None:
    from pathlib import Path

    from torchup.rules import all_rules

    root = Path(__file__).resolve().parent.parent
    words = [word for rule in all_rules() for word in rule.triggers]
    pattern = TriggerPattern(words)
    for path in sorted((root / "torchup").rglob("*.py")) + sorted((root / "tests").rglob("*.py")):
        content = path.read_bytes()
        assert pattern.scan(content, grep_lines(content, pattern)) == pattern.scan(content), path


def test_carriage_returns_take_the_whole_scan() -> None:
    """grep counts lines by `\\n` alone; Python also ends one at `\\r`: the given lines are not used."""
    content = b"import torch\rx = torch.qr(a)\r"
    assert PATTERN.scan(content, ()) == PATTERN.scan(content)
    assert PATTERN.scan(content).lines == (2,)


# Stage 3's reading of a word by its place: in a `from m.word import n` module (no reference
# unless the word names a module on a rule's path), and, for the words a rule matches in some
# places only (``Rule.word_roles``), whether it stands there. Each case: the text, the word, and
# whether the pre-filter counts it; the findings with and without the pre-filter are compared
# below on the rules' own cases.
PLACES = {
    "module of a from-import": ("from torch.utils._sympy.solve import try_solve", "solve", False),
    "relative module": ("from .solve import f", "solve", False),
    "module, then more of its name": ("from a.solve.impl import f", "solve", False),
    "module spaced out": ("from a . solve import f", "solve", False),
    "a name imported, not the module": ("from torch import solve", "solve", True),
    "a from-import after a semicolon": ("x = 1; from a.solve import f", "solve", True),
    "a module split by a backslash": ("from a.solve \\\n    import f", "solve", True),
    "a plain import": ("import a.solve", "solve", True),
    "a path word in a module": ("from torch._higher_order_ops.cond import cond as c", "cond", True),
    "attribute": ("y = prof.key_averages()", "key_averages", True),
    "attribute after spaces": ("y = prof . key_averages()", "key_averages", True),
    "attribute, its dot ending the line before": ("y = (prof.\n     key_averages())", "key_averages", True),
    "attribute, comment lines between": ("y = (prof.  # a\n     # b\n\n     key_averages())", "key_averages", True),
    "attribute after a backslash": ("y = prof.\\\n    key_averages()", "key_averages", True),
    "not an attribute: a definition": ("def key_averages(self):\n    return 1", "key_averages", False),
    "not an attribute: a name": ("key_averages = 1", "key_averages", False),
    "not an attribute after a comment line": ("x = 1\n# key_averages.\nkey_averages(x)", "key_averages", False),
    "not an attribute: a dot inside the string before": ('x = """\n."""\nkey_averages(x)', "key_averages", False),
    "keyword": ("torch.compile(m, shapes_spec=s)", "shapes_spec", True),
    "keyword, spaced": ("torch.compile(m, shapes_spec = s)", "shapes_spec", True),
    "keyword, its sign on the next line": ("torch.compile(m, shapes_spec\n    =s)", "shapes_spec", True),
    "keyword, a comment after it": ("torch.compile(m, shapes_spec  # c\n    =s)", "shapes_spec", True),
    "dict key": ('torch.compile(m, **{"shapes_spec": s})', "shapes_spec", True),
    "not a keyword: a comparison": ("if shapes_spec == s: pass", "shapes_spec", False),
    "not a keyword: a parameter's annotation": ("def f(shapes_spec: Spec): pass", "shapes_spec", False),
    "not a keyword: an attribute read": ("p = shapes_spec._params", "shapes_spec", False),
    "not a keyword: a walrus": ("if (shapes_spec := s): pass", "shapes_spec", False),
    "a string's whole value": ('Options(acc_policy="balanced")', "balanced", True),
    "not a string": ("balanced = split(x)", "balanced", False),
    "a keyword of the profiler": ("profile(use_cuda=True)", "use_cuda", True),
    "not a keyword: an attribute": ("if prof.use_cuda: pass", "use_cuda", False),
    "a reference": ("dist.gather_into_tensor(out, x)", "gather_into_tensor", True),
    "a reference imported": ("from torch.distributed import gather_into_tensor", "gather_into_tensor", True),
    "not a reference: a definition": ("def gather_into_tensor(out, x):\n    return out", "gather_into_tensor", False),
    "not a reference: a string": ('__all__ = ["load_nvprof"]', "load_nvprof", False),
    # A function a fix renames may be patched by name: `patch.object(dist, "gather_into_tensor")`,
    # `mock.patch("torch.cholesky")` (torchup.analysis.patch_targets); not a longer or another dotted name.
    "a renamed function's name in a string": ('patch.object(dist, "gather_into_tensor")', "gather_into_tensor", True),
    "a renamed function's path in a string": ('mock.patch("torch.cholesky")', "cholesky", True),
    "a renamed function's path through a module": ('patch("pkg.ops.torch.cholesky")', "cholesky", True),
    "not a renamed function's path": ('name = "torch.linalg.cholesky"', "cholesky", False),
    "not a renamed function's path, in prose": ('name = "see torch.cholesky"', "cholesky", False),
    "not code: a string": ('name = "solve"', "solve", False),
    "the removed keyword as an attribute": ("e.metadata_json", "metadata_json", True),
    "the removed keyword as a name (a positional argument lands on it)": ("f(ev, metadata_json)", "metadata_json", True),
    "the deprecated attribute only as one": ("event_metadata = {}\nevent_metadata.update(m)", "event_metadata", False),
}


@pytest.mark.parametrize("name", PLACES)
def test_a_word_counts_where_a_rule_can_match_it(name: str) -> None:
    from torchup.check.checker import Checker
    from torchup.rules import all_rules
    from torchup.settings.selection import select_rules

    text, word, counted = PLACES[name]
    pattern = Checker(select_rules(all_rules(), ["ALL"]))._pattern(select_rules(all_rules(), ["ALL"]))
    assert pattern is not None
    for content in (text, text.encode()):
        found = pattern.scan(content)
        assert (found.in_code and word in found.present) is counted, content


def test_a_definition_holds_the_focus_only_for_a_word_not_only_a_reference() -> None:
    """`def solve` (TU105 reads a class's own methods) keeps its line in the focus; `def
    gather_into_tensor` (TU170 resolves names only) does not."""
    from torchup.check.checker import Checker
    from torchup.rules import all_rules
    from torchup.settings.selection import select_rules

    pattern = Checker(select_rules(all_rules(), ["ALL"]))._pattern(select_rules(all_rules(), ["ALL"]))
    assert pattern is not None
    for word in ("solve", "gather_into_tensor"):
        text = f"y = x.{word}(a)\nclass T:\n    def {word}(self):\n        return 1\n"
        assert pattern.scan(text).lines == ((1, 3) if word == "solve" else (1,))


def test_the_roles_name_trigger_words_and_known_places() -> None:
    from torchup.prefilter.words import ATTRIBUTE, CODE, KEYWORD, REFERENCE, STRING
    from torchup.rules import all_rules

    known = {ATTRIBUTE, KEYWORD, STRING, CODE, REFERENCE}
    for rule in all_rules():
        assert set(rule.word_roles) <= set(rule.triggers), rule.code
        assert all(kinds and kinds <= known for kinds in rule.word_roles.values()), rule.code
        assert not set(rule.word_roles) & rule.string_words, rule.code  # (those match inside strings)


ROLE_CASES = {
    "key_averages across lines": """
        import torch
        with torch.profiler.profile(with_stack=True) as prof:
            y = A @ A
        table = (prof.
                 key_averages())
        """,
    "shapes_spec keyword on its own line": """
        import torch
        compiled = torch.compile(
            model,
            shapes_spec
            =spec,
        )
        """,
    "shapes_spec as a dict key": """
        import torch
        options = {"shapes_spec": spec}
        compiled = torch.compile(model, **{"shapes_spec": spec})
        """,
    "metadata_json attribute after a comment": """
        from torch.autograd.profiler_util import FunctionEvent
        value = (event.  # the raw JSON
                 metadata_json)
        """,
    "a module named by a word, then the word called": """
        import torch
        from torch.utils._sympy.solve import try_solve
        x = torch.solve(b, a)
        """,
    "an optimizer called through an import alias": """
        from torch.optim import SGD as Plain
        opt = Plain({p for p in params}, lr=0.1)
        """,
    "an optimizer called in parentheses": """
        import torch
        opt = (torch.optim.SGD)(set(params), lr=0.1)
        """,
    "an optimizer imported under another name, across lines": """
        from torch.optim import (SGD
            as Plain)
        opt = Plain({p for p in params}, lr=0.1)
        """,
    "the removed argument given by position, from a name": """
        from torch.autograd.profiler_util import FunctionEvent
        def build(metadata_json):
            return FunctionEvent(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                 21, 22, 23, 24, 25, 26, 27, metadata_json)
        """,
    "an optimizer subclass called": """
        import torch
        class Mine(torch.optim.Adam):
            pass
        opt = Mine(set(params))
        """,
}


# Cases where a finding depends on a word that is not a reference (none to find, none to lose).
QUIET_CASES = {
    "a tensor subclass's own method, defined where no word is used": """
        import torch

        class Mine(torch.Tensor):
            def cholesky(self):
                return self
            def other(self):
                a = 1
                b = 2
                return a + b

        def use():
            return Mine().cholesky()
        """,
    "a local function shadows a removed one": """
        import torch
        from torch.distributed import *

        def gather_into_tensor(out, x):
            y = x
            z = y
            return out, z

        gather_into_tensor(a, b)
        """,
}


@pytest.mark.parametrize("name", [*ROLE_CASES, *QUIET_CASES])
def test_words_read_by_their_place_miss_no_finding(name: str) -> None:
    code = {**ROLE_CASES, **QUIET_CASES}[name]
    found = [(d.code, d.line, d.column) for d in check(code, ["ALL"])]
    assert found == [(d.code, d.line, d.column) for d in check(code, ["ALL"], prefilter=False)]
    # (each role case has a finding to keep; a quiet case shows the pre-filter makes none)
    assert any(code != "TU002" for code, _, _ in found) is (name in ROLE_CASES)


@pytest.mark.parametrize(
    ("text", "constructs"),
    [
        ("opt = torch.optim.SGD(params)", True),
        ("opt = SGD (params)", True),
        ("opt = (torch.optim.SGD)(params)", True),
        ("opt = torch.optim.SGD  # the class\n(params)", True),
        ("from torch.optim import SGD as S", True),
        ("from torch.optim import (SGD\n    as S)", True),
        ("from torch.optim import (SGD  # plain\n    as S)", True),
        ("from torch.optim import SGD \\\n    as S", True),
        ("class Mine(SGD):\n    pass", True),
        ("if isinstance(o, torch.optim.SGD): pass", False),
        ("def f(o: torch.optim.Optimizer) -> Optimizer: pass", False),
        ("from torch.optim import SGD, Adam", False),
        ("x = 'SGD('  # SGD(", False),
    ],
)
def test_tu160_asks_for_a_call_of_an_optimizer(text: str, constructs: bool) -> None:
    from torchup.core.lexing import spans_of
    from torchup.rules.tu160_optimizer_set_params import RULE, _may_construct

    for content in (text, text.encode()):
        spans = spans_of(content)
        assert spans is not None
        assert _may_construct(spans, RULE.triggers) is constructs, content
