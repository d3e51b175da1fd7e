"""TU614's data (torchup/data/argument_kinds.json, made by tools/argument_kinds.py) and its fixes:
the committed facts are what the API diff gives, and each rewrite binds every argument as the old
release did, checked with the two signatures of every function in the data."""

from __future__ import annotations

import ast
import inspect

import pytest

from helpers import check, fix, load_script
from torchup.check.checker import Checker, FileSettings
from torchup.core.source import SourceFile
from torchup.rules import rule_by_code
from torchup.rules.tu614_argument_kinds import CHANGES, KindChange


def test_committed_data_is_what_the_api_diff_gives() -> None:
    tool = load_script("tools/argument_kinds.py", "argument_kinds_tool")
    assert tool.without_runs(tool.committed()) == tool.derive(tool.load_changes()), (
        "torchup/data/argument_kinds.json is stale: run python3 tools/argument_kinds.py"
    )


def test_only_rewritable_changes_are_taken() -> None:
    tool = load_script("tools/argument_kinds.py", "argument_kinds_tool")
    names = {entry["name"] for entry in tool.derive(tool.load_changes())}
    assert {"torch.onnx.export", "torch.is_tensor", "torch.distributed.checkpoint.save"} <= names
    # a new meaning for the first argument, a method of a class, a new `*args`: no mechanical rewrite
    assert not names & {"torch.library.define", "torch.fx.experimental.symbolic_shapes.ShapeEnv.produce_guards_expression",
                        "torch.sym_sum", "torch.cuda.GreenContext.create"}


def _signature(text: str) -> inspect.Signature:
    """The signature the wheel spells, as a function's (defaults, which name torch's objects, as None)."""
    function = ast.parse(f"def {text}: pass").body[0]
    assert isinstance(function, ast.FunctionDef)
    function.args.defaults = [ast.Constant(None) for _ in function.args.defaults]
    function.args.kw_defaults = [None if d is None else ast.Constant(None) for d in function.args.kw_defaults]
    namespace: dict[str, object] = {}
    exec(compile(ast.fix_missing_locations(ast.Module([function], [])), "<signature>", "exec"), namespace)
    return inspect.signature(namespace[function.name])  # type: ignore[arg-type]


def _old_calls(change: KindChange) -> list[str]:
    """Calls the old release took and the new one does not: every number of positional arguments
    beyond the new ones, and each positional-only parameter by keyword."""
    calls = []
    old = change.old_positional
    for count in range(len(change.new_positional) + 1, len(old) + 1):
        calls.append(f"{change.name}({', '.join(f'a{i}' for i in range(count))})")
    for name in sorted(change.positional_only):
        before = ", ".join(f"a{i}" for i in range(old.index(name)))
        calls.append(f"{change.name}({before}{', ' if before else ''}{name}=v)")
    return calls


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: f"{c.release}-{c.name}")
def test_each_rewrite_binds_as_the_old_release_did(change: KindChange) -> None:
    old_signature, new_signature = _signature(change.old), _signature(change.new)
    checked = 0
    for call in _old_calls(change):
        source = f"import torch\nimport torch.distributed.checkpoint\nimport torch.nn.attention.varlen\n{call}\n"
        fixed = fix(source, select=["TU614"]).splitlines()[-1]
        before = ast.parse(call, mode="eval").body
        assert isinstance(before, ast.Call)
        gone = [p for p in change.old_positional[len(change.new_positional):len(before.args)] if not change.exists(p, None)]
        if gone:  # (an argument whose parameter is gone: reported without a fix)
            assert fixed == call and len(check(source, select=["TU614"])) == 1
            continue
        before, after = (ast.parse(text, mode="eval").body for text in (call, fixed))
        assert isinstance(before, ast.Call) and isinstance(after, ast.Call)
        bound_before = old_signature.bind(*[ast.unparse(a) for a in before.args],
                                          **{k.arg: ast.unparse(k.value) for k in before.keywords if k.arg})
        arguments = ([ast.unparse(a) for a in after.args], {k.arg: ast.unparse(k.value) for k in after.keywords if k.arg})
        assert old_signature.bind(*arguments[0], **arguments[1]).arguments == bound_before.arguments, (call, fixed)
        assert new_signature.bind(*arguments[0], **arguments[1]).arguments == bound_before.arguments, (call, fixed)
        with pytest.raises(TypeError):
            new_signature.bind(*[ast.unparse(a) for a in before.args],
                               **{k.arg: ast.unparse(k.value) for k in before.keywords if k.arg})
        checked += 1
    assert checked or change.name.endswith(".varlen_attn"), f"no call of {change.name} was rewritten"
    # (varlen_attn's first argument after the new positional ones, is_causal, was removed in 2.11)


@pytest.mark.parametrize("target, found", [("2.4", 0), ("2.5", 1)])
def test_a_change_newer_than_the_target_is_not_reported(target: str, found: int) -> None:
    rule = rule_by_code("TU614")
    assert rule is not None
    checker = Checker([rule], settings_for=lambda path: FileSettings((rule,), target_version=target))
    source = SourceFile.from_bytes("snippet.py", b"import torch\ntorch.is_tensor(obj=x)\n")
    assert len(checker.analyze_alone(source).diagnostics) == found


def test_each_finding_names_its_own_release() -> None:
    source = "import torch\ntorch.is_tensor(obj=x)\ntorch.compiler.nested_compile_region(f, None)\n"
    found = {(d.since, d.change) for d in check(source, select=["TU614"])}
    assert found == {("2.5", "raises"), ("2.12", "raises")}


def test_a_call_the_wheels_still_take_is_left_out() -> None:
    """The distributed checkpoint's `save(state, writer)` warns and works (`_api_bc_check`): in the
    data, not in the rule."""
    tool = load_script("tools/argument_kinds.py", "argument_kinds_tool")
    warned = {entry["name"] for entry in tool.committed() if entry["wheel"]["change"] == "warns"}
    assert "torch.distributed.checkpoint.save" in warned
    assert not warned & {change.name for change in CHANGES}
    assert check("import torch.distributed.checkpoint as dcp\ndcp.save(s, w)\n", select=["TU614"]) == []


def test_combinations_of_keywords_and_positions_are_left_alone_when_unsure() -> None:
    unsure = [
        "torch.onnx.export(m, x, f, True, export_params=False)",  # (the old release raised too)
        "torch.onnx.export(m, x, *rest)",
        "torch.is_tensor(x, obj=y)",
    ]
    for call in unsure:
        source = f"import torch\n{call}\n"
        assert fix(source, select=["TU614"]) == source


def test_a_parameter_a_later_release_removed_is_gone_from_that_target_on() -> None:
    change = KindChange("m.f", (), "2.5", "f(a, b=1)", "f(a, *, b=1)", frozenset({"b"}), frozenset(), {"b": "2.9"},
                        "TypeError: ...", "wheel")
    assert change.exists("b", (2, 8)) and not change.exists("b", (2, 9)) and not change.exists("b", None)
    assert not change.exists("c", (2, 8))


@pytest.mark.parametrize("text, passes", [
    ("f(obj=x)", True), ("f(a,\n  # obj\n  obj = x)", True), ("f(\\\n obj=1)", True),
    ("t = 3", False), ("x == (t == 1)", False), ("def f(self):\n    d = {}\n", False),
])
def test_a_keyword_for_a_positional_only_parameter_is_read_from_the_text(text: str, passes: bool) -> None:
    """The pre-filter's question for the positional-only functions (`torch.is_tensor(obj=x)`): a
    keyword argument follows `(` or `,`; an assignment does not."""
    from torchup.rules.tu614_argument_kinds import _KEYWORD_GIVEN

    assert (_KEYWORD_GIVEN.search(text) is not None) is passes
