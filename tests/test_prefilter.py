"""The pre-filter's second stage: which mentions of a trigger word can be code that refers to torch."""

from __future__ import annotations

import pytest

from tests.helpers import check
from torchup.prefilter import TriggerPattern

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
}

DROPPED = {
    "prose": "# we solve it",
    "docstring prose": '"""The system is solved: we solve it when balanced."""',
    "definition": "def qr(a):\n    return a",
    "bare name after a keyword": "def f(a):\n    return solve",
    "word inside a longer word": "weight = requirement",
    "imports as a longer word": "reimport qr",
}


@pytest.mark.parametrize("name", KEPT)
def test_kept(name: str) -> None:
    assert PATTERN.could_match(KEPT[name])
    assert PATTERN.could_match(KEPT[name].encode())


@pytest.mark.parametrize("name", DROPPED)
def test_dropped(name: str) -> None:
    assert not PATTERN.could_match(DROPPED[name])
    assert not PATTERN.could_match(DROPPED[name].encode())


def test_a_star_import_finding_survives_the_prefilter() -> None:
    code = "from torch import *\n\ndef f(a):\n    return cholesky(a)\n"
    assert [d.code for d in check(code)] == [d.code for d in check(code, prefilter=False)] == ["TU101"]


def test_prose_only_file_is_skipped_but_a_reference_is_not() -> None:
    prose = '"""We solve for x; use_cuda is a word here; the qr step is balanced."""\nimport torch\n'
    assert check(prose, ["ALL"]) == check(prose, ["ALL"], prefilter=False) == []
    reference = prose + "q = torch.qr(torch.eye(2))\n"
    assert [d.code for d in check(reference, ["TU103"])] == ["TU103"]


def test_the_factored_pattern_finds_exactly_what_plain_alternation_finds() -> None:
    import random
    import re

    from torchup.prefilter import _trie

    chance = random.Random(7)
    alphabet = "ab_c"
    for _ in range(300):
        words = sorted({"".join(chance.choices(alphabet, k=chance.randint(1, 4))) for _ in range(chance.randint(1, 6))})
        text = " ".join("".join(chance.choices(alphabet + " .", k=chance.randint(1, 6))) for _ in range(20))
        plain = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")
        factored = re.compile(r"\b" + _trie(words) + r"\b")
        assert [m.span() for m in factored.finditer(text)] == [m.span() for m in plain.finditer(text)], words
