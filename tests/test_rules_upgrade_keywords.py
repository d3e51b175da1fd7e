"""The rules for a keyword whose default changed: TU601 (`torch.load` weights_only), TU604
(`torch.utils.checkpoint` use_reentrant), TU606 (`torch.onnx.export` dynamo).

Each reports a call that leaves the keyword out, its `functools.partial`, and the function passed
on; not a call whose `**options` or `*args` may hold it, nor look-alikes.
"""

from __future__ import annotations

import pytest

from helpers import check, fix
from torchup.core.diagnostics import Applicability
from torchup.rules import rule_by_code


def findings(code: str, select: str) -> list[tuple[int, bool]]:
    """(line, has a fix) for each finding of the rule ``select``; the same without the pre-filter."""
    found = [(d.line, d.fix is not None) for d in check(code, [select]) if d.code == select]
    assert found == [(d.line, d.fix is not None) for d in check(code, [select], prefilter=False) if d.code == select]
    return found


# -- TU601 torch.load --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("import torch\ntorch.load(p)\n", 1),
        ("import torch\ntorch.load(p, 'cpu')\n", 1),
        ("import torch\ntorch.load(p, map_location=torch.device('cpu'))\n", 1),
        ("import torch\ntorch.load(p, encoding='latin1')\n", 1),
        ("import torch as th\nth.load(p)\n", 1),
        ("from torch import load\nload(p)\n", 1),
        ("from torch import load as tl\ntl(p)\n", 1),
        ("import torch.serialization as ser\nser.load(p)\n", 1),
        ("from torch.serialization import load\nload(p)\n", 1),
        ("from torch import *\nload(p)\n", 1),
        ("import torch\ntorch.load(p, weights_only=None)\n", 1),
        ("import torch\ntorch.load(p, 'cpu', None)\n", 1),  # pickle_module=None is the default
        ("import torch\ntorch.load(p, **{'map_location': 'cpu'})\n", 1),
        ("import torch\ntorch.load(p, **{'weights_only': None})\n", 1),
        ("import functools, torch\nf = functools.partial(torch.load, map_location='cpu')\n", 1),
        ("from functools import partial\nimport torch\nf = partial(torch.load)\n", 1),
        ("import torch\npaths = list(map(torch.load, files))\n", 1),
        # through a name it is saved in
        ("import torch\nld = torch.load\nm = ld(p)\n", 1),
        ("import torch\ndef f(p):\n    load = torch.load\n    return load(p)\n", 1),
        ("import torch\nld = torch.load\npaths = list(map(ld, files))\n", 1),
        ("import torch\nld = torch.load\nm = ld(p, weights_only=True)\n", 0),
        ("import torch\nld = torch.load\ndef wrapped(*a, **k):\n    return ld(*a, **k)\n", 0),
        ("import torch, pickle\nld = torch.load\nif old:\n    ld = pickle.load\nm = ld(p)\n", 0),
        ("import torch\nclass C:\n    load = torch.load\n    def go(self):\n        return self.load(p)\n", 0),
        ("import torch\na = b = torch.load\nm = a(p)\n", 0),
        # not reported
        ("import torch\ntorch.load(p, weights_only=True)\n", 0),
        ("import torch\ntorch.load(p, weights_only=False)\n", 0),
        ("import torch\ntorch.load(p, weights_only=flag)\n", 0),
        ("import torch, pickle\ntorch.load(p, pickle_module=pickle)\n", 0),
        ("import torch, dill\ntorch.load(p, 'cpu', dill)\n", 0),
        ("import torch\ntorch.load(p, **{'weights_only': True})\n", 0),
        ("import torch\ntorch.load(p, **options)\n", 0),
        ("import torch\ntorch.load(p, **{**base, 'map_location': 'cpu'})\n", 0),
        ("import torch\ntorch.load(*args)\n", 0),
        ("import torch\ntorch.load(p, *rest)\n", 0),
        ("import functools, torch\nf = functools.partial(torch.load, weights_only=True)\n", 0),
        ("import torch\noriginal = torch.load\n", 0),
        ("import torch\nfrom unittest import mock\nmock.patch.object(torch, 'load', wraps=torch.load)\n", 0),
        ("import torch\nm = torch.hub.load('a/b', 'c')\n", 0),
        ("import torch\nm = torch.jit.load(p)\n", 0),
        ("import numpy\nnumpy.load(p)\n", 0),
        ("import pickle\npickle.load(f)\n", 0),
        ("import json, yaml\njson.load(f); yaml.load(f)\n", 0),
        ("def load(p):\n    return p\nload(p)\n", 0),
        ("class M:\n    def go(self):\n        return self.load(p)\n", 0),
        ("import torch\ns = 'torch.load(p)'  # torch.load(p)\n", 0),
        # already written for 2.6's default
        ("import torch\nwith torch.serialization.safe_globals([Config]):\n    c = torch.load(p)\nd = torch.load(p)\n", 1),
        ("from torch.serialization import safe_globals\nimport torch\nwith safe_globals([Config]):\n    torch.load(p)\n", 0),
        ("import torch\ntorch.serialization.add_safe_globals([Config])\nc = torch.load(p)\n", 0),
        ("from torch.serialization import add_safe_globals\nimport torch\n"
         "def setup():\n    add_safe_globals([Config])\ndef restore(p):\n    return torch.load(p)\n", 0),
    ],
)
def test_tu601_cases(snippet: str, expected: int) -> None:
    assert len(findings(snippet, "TU601")) == expected


def test_tu601_fix_is_unsafe_and_exact() -> None:
    source = "import torch\nstate = torch.load(path, map_location='cpu')\n"
    assert fix(source, select=["TU601"]) == source  # not applied without --unsafe-fixes
    assert fix(source, unsafe=True, select=["TU601"]) == (
        "import torch\nstate = torch.load(path, map_location='cpu', weights_only=False)\n"
    )
    [diagnostic] = check(source, ["TU601"])
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
    assert "add_safe_globals" in (diagnostic.help or "")


def test_tu601_fix_forms() -> None:
    source = (
        "import torch\n"
        "a = torch.load(p, weights_only=None)\n"
        "b = torch.load(p, **{'map_location': 'cpu'})\n"
        "c = torch.load(\n    p,\n    map_location='cpu',  # where\n)\n"
        "d = torch.load(p, 'cpu', None)\n"
        "e = torch.load(p, **{'weights_only': None})\n"
    )
    assert fix(source, unsafe=True, select=["TU601"]) == (
        "import torch\n"
        "a = torch.load(p, weights_only=False)\n"
        "b = torch.load(p, **{'map_location': 'cpu'}, weights_only=False)\n"
        "c = torch.load(\n    p,\n    map_location='cpu', weights_only=False,  # where\n)\n"
        "d = torch.load(p, 'cpu', None, weights_only=False)\n"
        "e = torch.load(p, **{'weights_only': False})\n"
    )


def test_tu601_passed_on_has_no_fix() -> None:
    assert findings("import torch\nds = DatasetFolder(root, loader=torch.load)\n", "TU601") == [(2, False)]


def test_tu601_inside_functions_and_nested_calls() -> None:
    source = """
    import torch

    class Trainer:
        def resume(self, path):
            self.model.load_state_dict(torch.load(path)["model"])
    """
    assert findings(source, "TU601") == [(6, True)]


# -- TU604 torch.utils.checkpoint ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("import torch\ntorch.utils.checkpoint.checkpoint(f, x)\n", 1),
        ("import torch.utils.checkpoint\ntorch.utils.checkpoint.checkpoint(f, *xs)\n", 1),
        ("import torch.utils.checkpoint as cp\ncp.checkpoint(f, x, preserve_rng_state=False)\n", 1),
        ("from torch.utils import checkpoint\ncheckpoint.checkpoint(f, x)\n", 1),
        ("from torch.utils.checkpoint import checkpoint as ckpt\nckpt(f, x)\n", 1),
        ("from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, x, use_reentrant=None)\n", 1),
        ("from torch.utils.checkpoint import checkpoint\ng = checkpoint(preserve_rng_state=False)(f)\n", 1),
        ("from torch.utils.checkpoint import checkpoint_sequential\ncheckpoint_sequential(m, 2, x)\n", 1),
        ("from torch.utils.checkpoint import checkpoint_sequential\ncheckpoint_sequential(m, 2, x, None)\n", 1),
        ("import functools\nfrom torch.utils.checkpoint import checkpoint\nf = functools.partial(checkpoint)\n", 1),
        ("from torch.utils.checkpoint import checkpoint\nblock = Wrapper(fn=checkpoint)\n", 1),
        # not reported
        ("from torch.utils.checkpoint import checkpoint\ncheckpoint(f, x, use_reentrant=False)\n", 0),
        ("from torch.utils.checkpoint import checkpoint\ncheckpoint(f, x, use_reentrant=flag)\n", 0),
        ("from torch.utils.checkpoint import checkpoint\ncheckpoint(f, x, **{'use_reentrant': True})\n", 0),
        ("from torch.utils.checkpoint import checkpoint\ncheckpoint(f, x, **kwargs)\n", 0),
        ("from torch.utils.checkpoint import checkpoint_sequential\ncheckpoint_sequential(m, 2, x, False)\n", 0),
        ("from torch.utils.checkpoint import checkpoint_sequential\ncheckpoint_sequential(m, 2, *rest)\n", 0),
        ("import functools\nfrom torch.utils.checkpoint import checkpoint\n"
         "f = functools.partial(checkpoint, **gradient_checkpointing_kwargs)\n", 0),
        ("import functools\nfrom torch.utils.checkpoint import checkpoint\n"
         "f = functools.partial(checkpoint, use_reentrant=False)\n", 0),
        ("import deepspeed\ndeepspeed.checkpointing.checkpoint(f, x)\n", 0),
        ("from deepspeed.checkpointing import checkpoint\ncheckpoint(f, x)\n", 0),
        ("def checkpoint(f, x):\n    return f(x)\ncheckpoint(f, x)\n", 0),
        ("from torch.utils import checkpoint\nm = checkpoint\n", 0),
        ("import torch\nself.save_checkpoint(model)\n", 0),
        ("import torch\nfn = torch.utils.checkpoint.checkpoint\n", 0),
    ],
)
def test_tu604_cases(snippet: str, expected: int) -> None:
    assert len(findings(snippet, "TU604")) == expected


def test_tu604_fix_is_safe() -> None:
    source = (
        "import functools\n"
        "from torch.utils.checkpoint import checkpoint, checkpoint_sequential\n"
        "y = checkpoint(f, *inputs)\n"
        "z = checkpoint(f, x, use_reentrant=None)\n"
        "w = checkpoint_sequential(model, 2, x)\n"
        "v = checkpoint(f, x, **{'use_reentrant': None})\n"
        "u = checkpoint_sequential(model, 2, x, None)\n"
        "t = functools.partial(checkpoint_sequential, model, 2, x, None)\n"
    )
    assert fix(source, select=["TU604"]) == (
        "import functools\n"
        "from torch.utils.checkpoint import checkpoint, checkpoint_sequential\n"
        "y = checkpoint(f, *inputs, use_reentrant=True)\n"
        "z = checkpoint(f, x, use_reentrant=True)\n"
        "w = checkpoint_sequential(model, 2, x, use_reentrant=True)\n"
        "v = checkpoint(f, x, **{'use_reentrant': True})\n"
        "u = checkpoint_sequential(model, 2, x, True)\n"
        "t = functools.partial(checkpoint_sequential, model, 2, x, True)\n"
    )
    diagnostics = check(source, ["TU604"])
    assert all(d.fix and d.fix.applicability is Applicability.SAFE for d in diagnostics)
    assert all("use_reentrant=False" in (d.help or "") for d in diagnostics)


def test_tu604_is_a_warning_since_2_1() -> None:
    rule = rule_by_code("TU604")
    assert rule is not None and rule.since == "2.1" and rule.change.value == "warns"
    assert rule.on_by_default("2.0") and rule.on_by_default("2.1")  # (a warning the target still gives)


# -- TU606 torch.onnx.export --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("import torch\ntorch.onnx.export(m, (x,), 'm.onnx')\n", 1),
        ("import torch.onnx\ntorch.onnx.export(m, x, f, opset_version=13)\n", 1),
        ("from torch import onnx\nonnx.export(m, (x,), f)\n", 1),
        ("from torch.onnx import export as to_onnx\nto_onnx(m, (x,), f)\n", 1),
        ("import torch\ntorch.onnx.export(m, (x,), f, **{'opset_version': 17})\n", 1),
        ("import functools, torch\ne = functools.partial(torch.onnx.export, opset_version=17)\n", 1),
        # not reported
        ("import torch\ntorch.onnx.export(m, (x,), f, dynamo=True)\n", 0),
        ("import torch\ntorch.onnx.export(m, (x,), f, dynamo=False)\n", 0),
        ("import torch\ntorch.onnx.export(m, (x,), f, dynamo=use_dynamo)\n", 0),
        ("import torch\ntorch.onnx.export(m, (x,), f, **{'dynamo': True})\n", 0),
        ("import torch\ntorch.onnx.export(m, (x,), f, **options)\n", 0),
        ("import torch\ntorch.onnx.export(torch.export.export(m, (x,)), (x,), f)\n", 0),
        ("import torch\ntorch.onnx.export(model=torch.export.export(m, (x,)), args=(x,), f=f)\n", 0),
        ("import torch\ntorch.onnx.dynamo_export(m, x)\n", 0),
        ("import torch\ntorch.onnx.utils.export(m, (x,), f)\n", 0),
        ("import torch\nep = torch.export.export(m, (x,))\n", 0),
        ("from ultralytics import YOLO\nYOLO('y.pt').export(format='onnx')\n", 0),
        ("import tf2onnx\ntf2onnx.convert.from_keras(m)\n", 0),
    ],
)
def test_tu606_cases(snippet: str, expected: int) -> None:
    assert len(findings(snippet, "TU606")) == expected


def test_tu606_fix() -> None:
    source = "import torch\ntorch.onnx.export(model, (x,), 'm.onnx', input_names=['x'])\n"
    assert fix(source, select=["TU606"]) == (
        "import torch\ntorch.onnx.export(model, (x,), 'm.onnx', input_names=['x'], dynamo=False)\n"
    )
    [diagnostic] = check(source, ["TU606"])
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE
    assert "onnxscript" in diagnostic.message


# -- shared -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", ["TU601", "TU604", "TU606"])
def test_fixes_are_idempotent_and_docs_render(code: str) -> None:
    rule = rule_by_code(code)
    assert rule is not None
    text = rule.render_docs()
    assert rule.docs.wheels_vs_notes and "## Fix safety" in text
    for example in rule.examples:
        if example.fixed is not None:
            once = fix(example.source, unsafe=example.unsafe, select=[code])
            assert fix(once, unsafe=example.unsafe, select=[code]) == once
            assert not [d for d in check(once, [code]) if d.fix is not None]


def test_tu604_checkpoint_handed_to_checkpoint_wrapper_is_not_reported() -> None:
    """torchtitan: `checkpoint_wrapper` passes `use_reentrant` itself, from its `checkpoint_impl`."""
    from helpers import check

    source = (
        "from torch.utils.checkpoint import checkpoint\n"
        "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper, CheckpointImpl\n"
        "m = checkpoint_wrapper(model, checkpoint_impl=CheckpointImpl.NO_REENTRANT, checkpoint_fn=checkpoint)\n"
        "apply = map(checkpoint, fns)\n"
    )
    assert [d.line for d in check(source, select=["TU604"])] == [4]


def test_tu601_fix_into_load_state_dict_keeps_weights_only() -> None:
    """Handed straight to `load_state_dict`, the file holds a state dict of tensors: the unsafe fix
    says `weights_only=True` (2.6's default) instead of giving its safety up."""
    source = "import torch\nm.load_state_dict(torch.load(p), strict=False)\nstate = torch.load(p)\nm.load_state_dict(state)\n"
    fixed = fix(source, unsafe=True, select=["TU601"])
    assert "m.load_state_dict(torch.load(p, weights_only=True), strict=False)" in fixed
    assert "state = torch.load(p, weights_only=False)" in fixed  # (what the name holds is not followed)
