"""What a file must spell before it is parsed: the module a name lives in, bound to the name's
last word (torchup/prefilter/requirements.py), and calls that already pass a keyword
(torchup/prefilter/calls.py). Each case is checked with and without the pre-filter; a file the
pre-filter rules out is one whose syntax error (TU001) goes unreported."""

from __future__ import annotations

import pytest

from tests.helpers import check
from torchup.core.lexing import spans_of
from torchup.prefilter.calls import every_call_passes
from torchup.prefilter.requirements import NameRequirements

BROKEN = "\ndef broken(:\n    pass\n"  # reported (TU001) only by a parse


def _parsed(code: str, select: list[str]) -> bool:
    return "TU001" in [d.code for d in check(code + BROKEN, [*select, "TU001"])]


def _codes(code: str, select: list[str], prefilter: bool = True) -> list[str]:
    return [d.code for d in check(code, select, prefilter=prefilter)]


JIT = NameRequirements(("torch.jit.load", "torch.jit.script"))


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("import torch\nm = torch.jit.load(p)\n", True),
        ("import torch.jit as J\nm = J.load(p)\n", True),
        ("from torch import jit as J\nm = J.load(p)\n", True),
        ("import torch\nT = torch.jit\nm = T.load(p)\n", True),
        ("from torch.jit import load\nm = load(p)\n", True),
        ("from torch.jit import (\n    script,\n)\n", True),
        ("from torch.jit import *\nm = load(p)\n", True),
        ("import torch as th\nm = th.jit.script(f)\n", True),
        # `jit` and `load` both spelled, never together: `triton.jit`, another module's `load`
        ("import torch, triton\n@triton.jit\ndef k(): pass\nm = PyCodeCache.load(src)\n", False),
        ("import torch\nok = torch.jit.is_scripting()\nx = pickle.load(f)\n", False),
        ("import torch\ndef f(script):\n    return torch.jit.is_scripting()\n", False),
    ],
)
def test_a_name_of_a_submodule_needs_its_last_word_after_the_module(text: str, refers: bool) -> None:
    assert JIT.could_refer(text) is refers
    assert JIT.could_refer(text.encode()) is refers


AMP = NameRequirements(("torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"))


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("import torch\nwith torch.cuda.amp.autocast():\n    pass\n", True),
        ("from torch.cuda.amp import autocast\n", True),
        ("from torch.cuda import amp\ns = amp.GradScaler()\n", True),
        ("from torch import cuda\ns = cuda.amp.GradScaler()\n", True),
        ("import torch.cuda as tc\ns = tc.amp.GradScaler()\n", True),
        ("import torch.cuda.amp as A\ns = A.GradScaler()\n", True),
        ("import torch\nscaler_cls = torch.cuda.amp.GradScaler\n", True),
        ("from torch.cuda import *\ns = amp.GradScaler()\n", True),
        # `torch.amp.autocast` and `torch.cuda` elsewhere: not the deprecated class
        ("import torch\nwith torch.amp.autocast('cuda'):\n    x = torch.cuda.is_available()\n", False),
        ("import torch\nx = torch.cuda.is_available()\ns = apex.amp.GradScaler()\n", False),
    ],
)
def test_each_word_of_a_path_follows_its_parent(text: str, refers: bool) -> None:
    assert AMP.could_refer(text) is refers


def test_a_local_function_named_like_a_reported_module_is_not_read() -> None:
    """torch's own test suite defines `def _tensor(...)`: no import of `torch.distributed._tensor`
    (TU622), so the file is not parsed; an import of the module is still found (of a removed
    submodule: TU634)."""
    code = "import torch\n\ndef _tensor(shape):\n    return torch.zeros(shape)\n\nx = _tensor((2,))\n"
    assert not _parsed(code, ["TU622"])
    assert _codes(code, ["TU622"]) == _codes(code, ["TU622"], prefilter=False) == []
    for imported, code in (
        ("from torch.distributed._tensor import DTensor\n", "TU622"),
        ("import torch.distributed._tensor.experimental\n", "TU622"),
        ("import torch.distributed._tensor.debug\n", "TU634"),
    ):
        assert _codes(imported, [code]) == _codes(imported, [code], prefilter=False) == [code]


def test_an_import_from_a_module_on_a_names_path_keeps_the_cut() -> None:
    """`from torch.utils.checkpoint import CheckpointPolicy` cannot reach `checkpoint` itself: the
    word in the module's name is not counted (and no body needs to be read for it)."""
    code = "import torch\nfrom torch.utils.checkpoint import CheckpointPolicy\n\ndef f(a):\n    return CheckpointPolicy(a)\n"
    assert not _parsed(code, ["TU604"])
    assert _codes(code, ["TU604"], prefilter=False) == []


def _passes(text: str, words: tuple[str, ...] = ("load",), keywords: frozenset[str] = frozenset({"weights_only"})) -> bool:
    spans = spans_of(text)
    assert spans is not None
    return every_call_passes(spans, words, keywords)


@pytest.mark.parametrize(
    ("text", "passes"),
    [
        ("x = torch.load(f, weights_only=True)\n", True),
        ("x = torch.load(\n    f,\n    map_location='cpu',  # (see below)\n    weights_only = False,\n)\n", True),
        ("x = torch.load(f, map_location=lambda s, l: s, weights_only=True)\n", True),
        ("x = torch.load(f, '(', weights_only=True)\n", True),  # a bracket in a string
        ("x = torch.load(f)\n", False),
        ("x = torch.load(f, weights_only=None)\n", False),  # None: the default, the rule reports it
        ("x = torch.load(f, weights_only=True)\ny = torch.load(g)\n", False),
        ("x = torch.load(f, **dict(weights_only=True))\n", False),  # nested: unsure
        ("x = torch.load(f, opts(weights_only=True))\n", False),
        ("x = torch.load(f, weights_only_flag=True)\n", False),
        ("x = torch.load(f, flag == weights_only)\n", False),
        ("loader = partial(torch.load, weights_only=True)\n", False),  # no call of the name itself
        ("from torch import load\nx = load(f, weights_only=True)\n", True),  # an import binds: no use
        ("from torch import (\n    load,\n)\nx = load(f)\n", False),
        ("from torch import load as tl\nx = tl(f)\n", False),  # renamed: its uses do not spell the word
        ("from torch import (\n    load as tl,\n)\n", False),
        ("doc = torch.load.__doc__\n", True),  # an attribute of the function: no use these rules report
        ('x = torch.load(f"{a(}", weights_only=True)\n', False),  # an f-string: unsure
        ("x = torch.load(f, 'unterminated\n", False),
        ("# torch.load(f) in a comment\nx = 1\n", True),
        ('"""torch.load(f) in prose\n"""\n', True),
    ],
)
def test_every_call_passes(text: str, passes: bool) -> None:
    assert _passes(text) is passes
    spans = spans_of(text.encode())
    assert spans is not None and every_call_passes(spans, ("load",), frozenset({"weights_only"})) is passes


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("import torch\nx = torch.load(f, weights_only=True)\n", "TU601"),
        ("import torch\nfrom torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x, use_reentrant=False)\n", "TU604"),
        ("import torch\ntorch.onnx.export(m, (x,), 'm.onnx', dynamo=True)\n", "TU606"),
    ],
)
def test_a_file_whose_calls_all_pass_the_keyword_is_not_parsed(code: str, rule: str) -> None:
    assert not _parsed(code, [rule])
    assert _codes(code, [rule], prefilter=False) == []
    missing = code.replace("weights_only=True", "").replace("use_reentrant=False", "").replace("dynamo=True", "")
    assert _codes(missing, [rule]) == _codes(missing, [rule], prefilter=False) == [rule]


# The grep path (`Checker.prescan` given grep's lines, as in runs of 200 files or more): a file
# whose names-only words stand nowhere a name's last word can is not parsed. Each case: findings
# with the lines given equal those of a full parse, and whether the gate lets the file through.
GATED = {
    "attribute": ("import torch\nx = torch.load(f)\n", True),
    "from-import": ("from torch import load\nx = load(f)\n", True),
    "import list": ("from torch import (\n    jit,\n    load\n)\nx = load(f)\n", True),
    "import list, items on one line": ("from torch import (jit,\n    save, load)\nx = load(f)\n", True),
    "renamed in a list": ("from torch import (\n    load as tl,\n)\nx = tl(f)\n", True),
    "dot on the line before": ("import torch\nx = (torch.\n     load(f))\n", True),
    "dot before a comment line": ("import torch\nx = (torch.  # why\n     # more\n     load(f))\n", True),
    "backslash": ("import torch\nx = torch.\\\n    load(f)\n", True),
    "star import": ("from torch import *\nx = load(f)\n", True),
    "after a semicolon": ("import os; from torch import load\nx = load(f)\n", True),
    "a hash in a string before": ('import torch\nx = f("#", torch.load(p))\n', True),
    "prose and keywords only": (
        'import torch\n"""Save a\ncheckpoint here, then load it."""\nrun(checkpoint="a", load=True)\n'
        "def load(path):\n    return path\n",
        False,
    ),
    "a local function": ("import torch\ndef load(p):\n    return p\nx = load(f)\n", False),
}


@pytest.mark.parametrize("name", sorted(GATED))
def test_the_grep_path_lets_through_every_file_that_may_refer(name: str) -> None:
    from tests.test_prefilter import grep_lines
    from torchup.check.checker import Checker
    from torchup.core.source import SourceFile
    from torchup.rules import all_rules
    from torchup.settings.selection import select_rules

    code, through = GATED[name]
    checker = Checker(select_rules(all_rules(), ["TU601", "TU604", "TU173"]))
    raw = code.encode()
    pattern = checker.scan_pattern("m.py")
    assert pattern is not None
    prescan = checker.prescan(raw, "m.py", grep_lines(raw, pattern))
    assert prescan.could_match is through
    source = SourceFile.from_bytes("m.py", raw)
    found = checker.analyze(source, prescan).diagnostics if prescan.could_match else []
    full = Checker(select_rules(all_rules(), ["TU601", "TU604", "TU173"]), prefilter=False).analyze(source)
    assert [(d.code, d.line) for d in found] == [(d.code, d.line) for d in full.diagnostics]


TOP_LEVEL = NameRequirements(("torch.cholesky",))


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("from torch import cholesky\n", True),
        ("from torch import (\n    qr,\n    cholesky,\n)\n", True),
        # a `from` import of another module binds no `torch.cholesky`; a relative one binds nothing
        ("import torch\nfrom torch.linalg import cholesky\nL = cholesky(A)\n", False),
        ("import torch\nfrom .linalg import cholesky\nL = cholesky(A)\n", False),
        ("import torch\nfrom scipy.linalg import cholesky\n", False),
    ],
)
def test_a_from_import_counts_only_from_the_names_module(text: str, refers: bool) -> None:
    assert TOP_LEVEL.could_refer(text) is refers


QR_METHOD = NameRequirements(("torch.Tensor.qr",), methods=("qr",))


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("import torch\nQ, R = x.qr()\n", True),
        ("import torch\nQ, R = torch.randn(3, 3).qr()\n", True),
        ("import torch\nQ, R = self.weight.qr()\n", True),
        ("import torch\nQ, R = (a @ b).qr()\n", True),
        ("import torch\nQ, R = torch.Tensor.qr(x)\n", True),  # the unbound method: a name
        # functions of modules the file imports: no receiver
        ("import torch\nQ, R = torch.linalg.qr(x)\n", False),
        ("import torch\nimport numpy as np\nQ, R = np.linalg.qr(a)\n", False),
        ("import torch\nimport torch.linalg as LA\nQ, R = LA.qr(a)\n", False),
        ("import torch\nclass M:\n    def qr(self):\n        return 1\n", False),  # a definition: no call
        # a name bound otherwise may be anything
        ("import torch\nfrom torch import linalg\nQ, R = linalg.qr(x)\n", True),
        ("import torch\nimport numpy as np\nnp = make()\nQ, R = np.linalg.qr(a)\n", True),
        ("import torch\nQ, R = mat.linalg.qr(a)\n", True),
        ("import torch\ndef f(torch):\n    return torch.qr(A)\n", True),  # a parameter shadows the module
        ("import torch\ndef f(a, *, torch=None):\n    return torch.linalg.qr(a)\n", True),
        ("import torch\ng = lambda torch: torch.linalg.qr(a)\n", True),
        ("import torch\nfor torch in mats:\n    torch.linalg.qr(a)\n", True),
        ("import torch\nwith make() as torch:\n    torch.linalg.qr(a)\n", True),
        ("import torch\nfrom mylib import torch\nQ, R = torch.linalg.qr(a)\n", True),
        # an argument of a call binds nothing
        ("import torch\nf = getattr(torch, 'qr')\nQ, R = torch.linalg.qr(a)\n", False),
    ],
)
def test_a_method_counts_where_called_on_something_but_an_imported_module(text: str, refers: bool) -> None:
    assert QR_METHOD.could_refer(text) is refers
    assert QR_METHOD.could_refer(text.encode()) is refers


LOAD = NameRequirements(("torch.load", "torch.serialization.load"))


@pytest.mark.parametrize(
    ("text", "passes"),
    [
        # uses of another object's `load` are none of torch's
        ("import torch\nx = torch.load(f, weights_only=True)\ny = pickle.load(g)\nz = ep.load()\n", True),
        ("import torch\nx = torch.load(f, weights_only=True)\ny = unpickler(f).load()\n", True),
        ('import torch\nx = torch.load(f, weights_only=True)\nraise E(f"cannot load {p}")\n', True),
        ("import torch\nx = torch.load(f, weights_only=True)\ndef load(self, p):\n    return p\n", True),
        # torch's, by any name the file binds to the module
        ("import torch\nx = torch.load(f, weights_only=True)\ny = torch.load(g)\n", False),
        ("import torch as th\nx = torch.load(f, weights_only=True)\ny = th.load(g)\n", False),
        ("from torch import serialization as S\ny = S.load(g)\n", False),
        ("from torch import load\nraise E(f'cannot load {p}')\n", False),  # bound bare: unsure
        ("from torch.serialization import *\nx = load(g)\n", False),
    ],
)
def test_every_call_passes_counts_only_uses_that_may_be_the_names(text: str, passes: bool) -> None:
    for content in (text, text.encode()):
        spans = spans_of(content)
        assert spans is not None
        assert every_call_passes(spans, ("load",), frozenset({"weights_only"}), LOAD) is passes


def test_a_patch_of_a_renamed_name_still_runs_its_rule() -> None:
    """`mock.patch("torch." "cholesky")` is reported with TU101 (a patch its fix would break),
    though no reference to `torch.cholesky` is spelled: the file is parsed."""
    code = 'from unittest import mock\nimport torch\n\nwith mock.patch("torch." "cholesky"):\n    pass\n'
    assert _parsed(code, ["TU101"])
    assert _codes(code, ["TU101"]) == _codes(code, ["TU101"], prefilter=False) == ["TU101"]


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("import torch\nL = torch.linalg.cholesky(A)\n", "TU102"),
        ("import torch\nimport numpy as np\nQ, R = np.linalg.qr(a)\n", "TU104"),
        ("import torch\nx = torch.load(f, weights_only=True)\ny = pickle.load(g)\n", "TU601"),
    ],
)
def test_a_file_with_only_other_objects_uses_is_not_parsed(code: str, rule: str) -> None:
    assert not _parsed(code, [rule])
    assert _codes(code, [rule], prefilter=False) == []


def test_the_patching_callees_are_those_of_patch_targets() -> None:
    from torchup.analysis import patch_targets
    from torchup.prefilter.requirements import PATCHING

    assert (patch_targets._BY_PATH | patch_targets._BY_OBJECT) - {"object"} == set(PATCHING)


def test_a_string_of_a_renamed_word_without_a_patch_is_not_parsed() -> None:
    code = 'import torch\nOPS = ["cholesky", "qr"]\nL = torch.linalg.cholesky(A)\n'
    assert not _parsed(code, ["TU101", "TU102"])
    assert _codes(code, ["TU101", "TU102"], prefilter=False) == []


NUMERICS = [
    # (code, rule, parsed): a file without the shape a numerics hint rewrites is not parsed
    ("import torch\ny = torch.log(x)\nz = torch.exp(x)\n", "TU711", False),
    ("import torch\ny = torch.log(1 + x)\n", "TU711", True),
    ("import torch\ny = torch.log(\n    x + 1.0\n)\n", "TU711", True),
    ("from torch import log as L\ny = L(1 + x)\n", "TU711", True),  # renamed: its calls do not spell `log`
    ("import torch\nf = torch.log\ny = f(1 + x)\n", "TU711", True),
    ("import torch\ny = torch.exp(x) * 2 - 1\n", "TU712", False),
    ("import torch\ny = torch.exp(x) - 1\n", "TU712", True),
    ("import torch\ny = (torch.exp(x)\n     - 1.0)\n", "TU712", True),
    ("import torch\ny = torch.exp(x) - 10\n", "TU712", False),
    ("import torch\ny = torch.log(torch.exp(x))\nz = torch.sum(x)\n", "TU713", False),
    ("import torch\ny = torch.log(torch.sum(torch.exp(x), dim=1))\n", "TU713", True),
    ("import torch\ny = torch.log(\n    torch.sum(\n        torch.exp(x), 1))\n", "TU713", True),
    # TU713 needs all three names (LooksFor.together): two of them, or the third from numpy, are not enough
    ("import torch\ny = torch.log(torch.sum(x, 1))\n", "TU713", False),
    ("import numpy as np\nimport torch\ny = torch.log(torch.sum(np.exp(x), 1))\n", "TU713", False),
    ("from torch import exp, log, sum\ny = log(sum(exp(x), 1))\n", "TU713", True),
]


@pytest.mark.parametrize(("code", "rule", "parsed"), NUMERICS)
def test_numerics_hints_parse_only_files_with_their_shape(code: str, rule: str, parsed: bool) -> None:
    assert _parsed(code, [rule]) is parsed
    assert _codes(code, [rule]) == _codes(code, [rule], prefilter=False)


@pytest.mark.parametrize(
    ("code", "through"),
    [
        ("import torch\ny = torch.log(torch.sum(x, 1))\n", False),  # no `exp` on any line grep names
        ("import torch\ny = torch.log(torch.sum(torch.exp(x), 1))\n", True),
    ],
)
def test_a_rule_that_needs_its_names_together_is_settled_on_greps_lines(code: str, through: bool) -> None:
    from tests.test_prefilter import grep_lines
    from torchup.check.checker import Checker
    from torchup.rules import all_rules
    from torchup.settings.selection import select_rules

    checker = Checker(select_rules(all_rules(), ["TU713"]))
    raw = code.encode()
    pattern = checker.scan_pattern("m.py")
    assert pattern is not None
    assert checker.prescan(raw, "m.py", grep_lines(raw, pattern)).could_match is through


def test_names_together_take_names_only() -> None:
    from torchup.analysis.rule import LooksFor

    assert LooksFor(names=("torch.log", "torch.sum"), together=True).name_requirements() is not None
    with pytest.raises(ValueError, match="together"):
        LooksFor(names=("torch.log",), together=True)
    with pytest.raises(ValueError, match="together"):
        LooksFor(names=("torch.log", "torch.sum"), keywords=("dim",), together=True)
