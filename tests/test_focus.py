"""The resolver walks only the function and class bodies that spell a trigger word (``Focus``).

Each case is checked with the focus (the default, pre-filter on) and with a full walk
(``--no-prefilter``): the findings and their fixes must be the same. The cases are the ways a
skipped body could matter: aliases, ``global``, closures, evidence from other scopes.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.helpers import check, fix
from torchup.analysis.context import Context
from torchup.analysis.resolver import Focus, Resolver
from torchup.analysis.rule import Rule, RuleDocs
from torchup.check.checker import Checker
from torchup.core.source import SourceFile
from torchup.rules import all_rules
from torchup.settings.selection import select_rules

CASES = {
    "alias used in another function": """
        from torch import qr as q

        def unrelated():
            return 1

        def use(a):
            return q(a)
        """,
    "module alias of torch": """
        import torch as t

        def helper():
            pass

        def use(a):
            return t.cholesky(a)
        """,
    "global binding made in a function without a trigger": """
        import numpy

        def setup():
            global torch
            import torch as torch

        def use(a):
            return torch.cholesky(a)
        """,
    "nonlocal in a nested function": """
        import torch

        def outer():
            x = None
            def inner():
                nonlocal x
                x = torch.randn(3, 3)
            inner()
            return x.qr()
        """,
    "closure: evidence from the enclosing function": """
        import torch

        def outer():
            m = torch.randn(4, 4)
            def inner():
                return m.qr()
            return inner
        """,
    "tensor subclass defined in a class without a trigger": """
        import torch

        class MyTensor(torch.Tensor):
            def double(self):
                return self * 2

        def use():
            m = MyTensor()
            return m.cholesky()
        """,
    "class that defines the method itself": """
        import torch

        class Solver:
            def qr(self):
                return 1

        def use():
            return Solver().qr()
        """,
    "shadowing in a skipped function does not leak": """
        import torch

        def shadow():
            torch = None
            return torch

        def use(a):
            return torch.cholesky(a)
        """,
    "from import released by the fix, used only in a focused function": """
        from torch import cholesky

        def other():
            return 2

        def use(a):
            return cholesky(a)
        """,
    "profiler bound in a function without a trigger is not a finding elsewhere": """
        import torch

        def make():
            with torch.profiler.profile(with_stack=True) as prof:
                pass
            return prof

        def report(prof):
            return prof.key_averages()
        """,
    "profiler bound by a with block, read after it (TU140 searches the scope's statements)": """
        import torch

        def unrelated():
            return 1

        with torch.profiler.profile(with_stack=True) as prof:
            unrelated()

        def later():
            return 2

        table = prof.key_averages()

        def run():
            with torch.profiler.profile(with_stack=True) as inner:
                unrelated()
            if later():
                return inner.key_averages()
        """,
    "profiler bound by a with block under a global declaration": """
        import torch

        def start():
            global prof
            with torch.profiler.profile(with_stack=True) as prof:
                pass

        def report():
            return prof.key_averages()
        """,
    "renamed flag assigned, patched and read in different functions (TU150)": """
        import torch
        from unittest import mock

        def unrelated():
            return 1

        def configure(value):
            torch.distributed.config.pipeline_per_direction_p2p = value

        def test_it():
            with mock.patch("torch.distributed.config.pipeline_per_direction_p2p", True):
                unrelated()
            os.environ["TORCH_DISTRIBUTED_PIPELINE_PER_DIRECTION_P2P"] = "1"
        """,
    "an attribute of the class's own beside the profiler's (TU151)": """
        import torch

        class Event:
            def __init__(self):
                self.metadata_json = "{}"

            def show(self):
                return self.metadata_json

        def helper():
            return 3

        def dump(prof):
            return [e.metadata_json for e in prof.events()]
        """,
    "TorchScript body under a decorator on its own line (TU173)": """
        import torch

        def unrelated():
            return 1

        @torch.jit.script
        def scripted(x):
            return x + 1

        traced = torch.jit.trace(unrelated, ())
        """,
    "an optimizer subclass's __init__ and a subclass of it, neither naming an optimizer (TU160)": """
        import torch

        class Base(torch.optim.Optimizer):
            pass

        class Local(Base):
            def __init__(self, params, lr=0.1):
                defaults = dict(lr=lr)
                def helper():
                    params = None
                    list = tuple
                    return params, list
                super().__init__(params, defaults)

            def step(self):
                total = 0
                for group in self.param_groups:
                    total += 1
                return total

        model = torch.nn.Linear(2, 2)
        optimizer = Local(set(model.parameters()))  # (a nested function's own `params` is not __init__'s)
        """,
    "a local subclass used in a function that names no optimizer, and a subclass of it (TU160)": """
        import torch

        class Local(torch.optim.SGD):
            pass

        class Sub(Local):
            pass

        def build(model):
            params = model.parameters()
            other = 1
            return Local(set(params), lr=0.1), Sub({p for p in params}, lr=0.1)

        def unrelated():
            x = 1
            return x
        """,
    "an __init__ that passes on a set it made (TU160)": """
        import torch

        class Local(torch.optim.SGD):
            def __init__(self, params, lr=0.1):
                unique = set(params)
                other = 1
                super().__init__(unique, dict(lr=lr))

        opt = Local([1, 2])
        """,
    "a subclass defined inside a function that uses it (TU160)": """
        import torch

        class Local(torch.optim.SGD):
            pass

        def build(params):
            class Inner(Local):
                pass
            count = 1
            return Inner(set(params))
        """,
    "an __init__ that rebinds params in its own body (TU160)": """
        import torch

        class Local(torch.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                params = list(params)
                other = 1
                more = 2
                super().__init__(params, dict(lr=lr))

        model = torch.nn.Linear(2, 2)
        optimizer = Local(set(model.parameters()))
        """,
    "an optimizer subclass whose header spans lines, with a comment and a string (TU160)": """
        import torch

        class Local(
            Mixin("a (string"),  # a (comment
            torch.optim.SGD,
        ):
            def __init__(self, params, lr=0.1):
                defaults = dict(lr=lr)
                other = 1
                super().__init__(params, defaults)

        class Unrelated(Mixin("x")):
            def __init__(self, a):
                self.a = a
                self.b = 2

        model = torch.nn.Linear(2, 2)
        optimizer = Local(set(model.parameters()))
        """,
    "no class names an optimizer: the __init__ bodies are left out (TU160)": """
        import torch

        class Holder:
            def __init__(self, params):
                self.params = params
                self.optimizer = torch.optim.SGD(set(params), lr=0.1)

        def build(params):
            return torch.optim.Adam({p for p in params})
        """,
    "a local tensor subclass outside the focus": """
        import torch

        class Plain(torch.Tensor):
            def other(self):
                a = 1
                b = 2
                return a + b

        class Mine(torch.Tensor):
            def cholesky(self):
                return self
            def other(self):
                a = 1
                return a

        def use():
            return Plain().cholesky(), Mine().cholesky()
        """,
    "a set at module level reaches an optimizer in a function": """
        import torch

        PARAMS = {1, 2}

        def unrelated(a):
            b = {a, a}
            b |= {a}
            return b

        def build():
            return torch.optim.SGD(PARAMS, lr=0.1)
        """,
    "a set in the enclosing function reaches an optimizer in a nested one": """
        import torch

        def unrelated(a):
            b = {a, a}
            b |= {a}
            return b

        def outer(model):
            params = set(model.parameters())
            def build():
                return torch.optim.Adam(params)
            return build
        """,
    "a set in another function's body reaches no optimizer": """
        import torch

        params = [1, 2]

        def unrelated():
            params = {1, 2}
            params |= {3}
            return params

        def build():
            return torch.optim.SGD(params, lr=0.1), torch.cholesky(a)
        """,
    "a set bound in another function declared global": """
        import torch

        def setup():
            global params
            params = {1, 2}
            print(params)

        def build():
            return torch.optim.SGD(params, lr=0.1)
        """,
    "decorator and defaults of a skipped function are still seen": """
        import torch

        @torch.no_grad()
        def f(a, solver=torch.cholesky):
            return a
        """,
}


def _findings(code: str, prefilter: bool) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.column, d.message) for d in check(code, ["ALL"], prefilter=prefilter)]


@pytest.mark.parametrize("name", CASES)
def test_focused_walk_finds_what_the_full_walk_finds(name: str) -> None:
    code = CASES[name]
    assert _findings(code, prefilter=True) == _findings(code, prefilter=False)


@pytest.mark.parametrize("name", CASES)
def test_focused_walk_fixes_like_the_full_walk(name: str) -> None:
    code = textwrap.dedent(CASES[name])
    checker_full = Checker(select_rules(all_rules(), ["ALL"]), prefilter=False)
    from torchup.fix.fixer import fix_source

    full = fix_source(checker_full, SourceFile.from_bytes("m.py", code.encode()), unsafe=True).text
    assert fix(code, unsafe=True, select=["ALL"]) == full


def test_context_walk_skips_only_what_spans_no_focus_line() -> None:
    code = textwrap.dedent("""\
        import torch

        def far():
            return [1, 2, 3]

        @torch.jit.script
        def near(x):
            return x

        y = torch.qr(
            far(),
        )
        """)
    tree = ast.parse(code)
    focus = Focus(lines=(6, 10), words=frozenset({"script", "qr"}))
    walked = list(focus.walk(tree))
    names = {node.name for node in walked if isinstance(node, ast.FunctionDef)}
    assert names == {"near"}  # its decorator spans line 6, though the `def` is on line 7
    assert any(isinstance(node, ast.Attribute) and node.attr == "qr" for node in walked)
    assert not any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) for node in walked)  # far(), line 11
    assert not any(isinstance(node, ast.List) for node in walked)  # inside `far`, skipped
    every = list(ast.walk(tree))
    spanning = [node for node in every if not hasattr(node, "lineno") or any(
        (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno)
        <= line <= node.end_lineno for line in focus.lines)]
    assert {id(node) for node in walked} >= {id(node) for node in spanning if _under_spanning(tree, node, focus)}


def _under_spanning(tree: ast.AST, target: ast.AST, focus: Focus) -> bool:
    """Is every ancestor of ``target`` a node that spans a focus line (or has no position)?"""
    def spans(node: ast.AST) -> bool:
        if not hasattr(node, "lineno"):
            return True
        first = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        return any(first <= line <= node.end_lineno for line in focus.lines)

    def path(node: ast.AST, trail: list[ast.AST]) -> list[ast.AST] | None:
        if node is target:
            return trail
        for child in ast.iter_child_nodes(node):
            found = path(child, [*trail, child])
            if found is not None:
                return found
        return None

    trail = path(tree, [])
    return trail is not None and all(spans(node) for node in trail)


def test_bodies_without_a_trigger_are_not_walked() -> None:
    tree = ast.parse(textwrap.dedent(CASES["module alias of torch"]))
    full = Resolver(tree)
    focused = Resolver(tree, Focus(lines=(8,), words=frozenset({"cholesky"})))
    assert len(full.scopes) == 3 and len(focused.scopes) == 2  # `helper` was skipped
    assert focused.qualified_name(focused.attributes[-1]) == "torch.cholesky"


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("from torch import qr as q\ndef f():\n    return 1\ndef g(a):\n    return q(a)\n", {"qr"}),
        ("from torch.jit import script\ndef f():\n    return 1\ndef g(m):\n    return script(m)\n", {"jit"}),
        ("from torch.jit import *\ndef f():\n    return 1\ndef g(m):\n    return script(m)\n", {"jit"}),
    ],
    ids=["alias", "name-imported-through-a-path-word", "star-import"],
)
def test_names_that_can_hide_a_trigger_word_walk_everything(code: str, words: set[str]) -> None:
    focused = Resolver(ast.parse(code), Focus(lines=(1,), words=frozenset(words), path_words=frozenset({"jit"})))
    assert len(focused.scopes) == 3


def test_a_name_imported_through_a_module_named_by_a_word_keeps_the_focus() -> None:
    """`try_solve` is `torch.utils._sympy.solve.try_solve`: no rule's name has `solve` before its
    end (it is no path word), so no use of `try_solve` can reach one, and `f` is skipped."""
    code = "from torch.utils._sympy.solve import try_solve\ndef f():\n    return try_solve(1)\n"
    focused = Resolver(ast.parse(code), Focus(lines=(1,), words=frozenset({"solve"})))
    assert len(focused.scopes) == 1


def test_a_name_imported_through_a_module_on_a_rules_path_is_no_finding_the_focus_hides() -> None:
    """Rules match their qualified names whole, so `from torch.utils.checkpoint import f` binds `f`
    to a name no rule reports, and a body that uses `f` without spelling a word may be skipped:
    for every name of every rule and every other member of a module on its path, checked with
    and without the pre-filter, the findings agree (a rule that reported every member of a module
    would have to declare it in ``LooksFor.modules``, whose words are ``Rule.path_words``)."""
    from tests.helpers import check
    from torchup.rules import all_rules

    checked = 0
    for rule in all_rules():
        for name in rule.looks_for.names:
            parts = name.split(".")
            for end in range(1, len(parts)):
                if set(parts[:end]).isdisjoint(rule.triggers):
                    continue  # (no word of the path: nothing the focus could misjudge)
                module = ".".join(parts[:end])
                member = parts[end] + "_other"
                code = f"import torch\nfrom {module} import {member}\n\n\ndef f(a):\n    return {member}(a)\n"
                codes = [d.code for d in check(code, [rule.code])]
                assert codes == [d.code for d in check(code, [rule.code], prefilter=False)], (rule.code, code)
                checked += 1
    assert checked > 20


def test_the_words_of_the_modules_a_rule_reports_are_its_path_words() -> None:
    from torchup.analysis.rule import module_word
    from torchup.rules import all_rules

    declared = [rule for rule in all_rules() if rule.looks_for.modules]
    assert declared  # (the catalogue's module entries: `functorch`, `torch._six`, ...)
    for rule in declared:
        assert set(rule.path_words) == {module_word(module) for module in rule.looks_for.modules}, rule.code
        assert set(rule.path_words) <= set(rule.triggers), rule.code


def test_a_star_import_through_no_path_word_keeps_the_focus() -> None:
    """`qr(a)` after `from torch import *` spells `qr`: the body of `f`, which spells no word, is
    skipped; `qr` still resolves through the star import."""
    code = "from torch import *\ndef f():\n    return 1\ndef g(a):\n    return qr(a)\n"
    focused = Resolver(ast.parse(code), Focus(lines=(5,), words=frozenset({"qr"}), path_words=frozenset({"jit"})))
    assert len(focused.scopes) == 2
    assert [focused.qualified_name(n) for n in focused.names if n.id == "qr"] == ["torch.qr"]


def test_a_plain_import_of_a_trigger_word_keeps_the_focus() -> None:
    code = "from torch import qr\ndef f():\n    return 1\ndef g(a):\n    return qr(a)\n"
    focused = Resolver(ast.parse(code), Focus(lines=(1, 5), words=frozenset({"qr"})))
    assert len(focused.scopes) == 2  # `f` skipped: every use of `qr` spells it


def test_an_import_alias_of_a_trigger_word_walks_everything() -> None:
    tree = ast.parse(textwrap.dedent(CASES["alias used in another function"]))
    focused = Resolver(tree, Focus(lines=(2,), words=frozenset({"qr"})))
    assert len(focused.scopes) == 3  # q(a) in `use` does not spell `qr`: nothing may be skipped
    assert [focused.qualified_name(n) for n in focused.names if n.id == "q"] == ["torch.qr"]


class _EveryCall(Rule):
    """A rule with no trigger words: it must see every file and every body."""

    code = "TU998"
    name = "every-call"
    summary = "test only"
    docs = RuleDocs("", "", "", "")

    def check(self, ctx: Context) -> None:
        for call in ctx.resolver.calls:
            ctx.report(call, "a call")


def test_a_rule_without_trigger_words_turns_the_shortcuts_off() -> None:
    code = "import torch\n\ndef helper():\n    return print(1)\n\nL = torch.cholesky(A)\n"
    rules = [_EveryCall(), *select_rules(all_rules(), ["TU101"])]
    found = {
        prefilter: [(d.code, d.line) for d in Checker(rules, prefilter=prefilter).analyze(
            SourceFile.from_bytes("m.py", code.encode())).diagnostics]
        for prefilter in (True, False)
    }
    assert found[True] == found[False] and ("TU998", 4) in found[True] and ("TU101", 6) in found[True]
    assert Checker([_EveryCall()]).could_match("x = 1\n", "m.py")


# -- the tree dies with its analysis -------------------------------------------------------------


def test_an_analysis_frees_its_tree_without_the_cycle_collector() -> None:
    """No reference cycle holds the tree (scope <-> binding, a builder's bound methods): it is freed
    when the analysis is dropped, so the cycle collector never has to traverse it."""
    import gc
    import weakref

    code = textwrap.dedent(CASES["nonlocal in a nested function"]) + "class C:\n    def qr(self):\n        return 1\n"
    checker = Checker(select_rules(all_rules(), ["ALL"]))
    gc.disable()
    try:
        analysis = checker.analyze(SourceFile.from_bytes("m.py", code.encode()))
        assert analysis.parsed and analysis.resolver is not None and len(analysis.resolver.scopes) > 2
        tree = weakref.ref(analysis.tree)
        binding = analysis.resolver.module_scope.bindings["torch"][0]
        assert binding.scope is analysis.resolver.module_scope
        del analysis
        assert tree() is None
        with pytest.raises(ReferenceError):
            binding.scope  # noqa: B018 (a binding kept past its resolver says so instead of misleading)
    finally:
        gc.enable()


def test_the_collector_pause_restores_what_it_found() -> None:
    import gc

    checker = Checker(select_rules(all_rules(), ["ALL"]))
    source = SourceFile.from_bytes("m.py", b"import torch\ntorch.qr(a)\n")
    assert gc.isenabled()
    checker.analyze(source)
    assert gc.isenabled()
    gc.disable()
    try:
        checker.analyze(source)
        assert not gc.isenabled()  # the embedding program's choice stands
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("class A(torch.optim.SGD):\n    pass\n", True),
        ("class A(Base):\n    pass\nclass B:\n    x = 1\n", False),
        ("class A(\n    Base,\n):\n    pass\n", False),
        ("def f():\n    class A(Base): pass\n", False),
        ("class A(\n    Base,  # (not SGD\n):\n", True),  # the word counts even in a comment
        ('class A(M(")("),\n        SGD):\n', True),  # brackets in a string do not end the header
        ("class A(M('#'), B,\n        SGD):\n", True),
        ('class A(M(f"{x}"),\n        SGD):\n', True),  # an f-string: unsure
        ("class A(B, \\\n        SGD):\n", True),  # a backslash: unsure
        ("class A(B,\n", True),  # the header never ends: unsure
        ('x = """\nclass A(B):\n"""\n', False),
        ("@classmethod\ndef subclass(cls): return cls(SGD)\n", False),
    ],
)
def test_tu160_focuses_on_local_subclasses_where_a_class_header_may_name_an_optimizer(text: str, expected: bool) -> None:
    """TU160 reads the `__init__` and the uses of local optimizer subclasses: their lines join the
    focus wherever a class header spells an optimizer, or cannot be read for sure (the focus cases
    above compare the findings with those of a full walk)."""
    from torchup.rules.tu160_optimizer_set_params import RULE

    assert bool(RULE.focus_lines(text + "def __init__(self): pass\n")) is expected


def test_a_rule_that_cannot_report_in_a_text_does_not_run_and_spares_the_parse() -> None:
    """TU160 needs a set (``Rule.may_report``): without one, a file that only spells optimizers is
    not parsed; with another rule's word it is, without TU160; a `# noqa: TU160` is then unused."""
    def analyze(text: str, select: list[str]) -> tuple[bool, list[str]]:
        checker = Checker(select_rules(all_rules(), select))
        source = SourceFile.from_bytes("m.py", textwrap.dedent(text).encode())
        analysis = checker.analyze(source, checker.prescan(source.raw, "m.py"))
        return analysis.parsed, [d.code for d in analysis.diagnostics]

    no_set = """
        import torch
        opt = torch.optim.SGD(list(params), lr=0.1)
        print(f"{opt} {{a}}", "{b}")  # {a, b}
        """
    assert analyze(no_set, ["TU160"]) == (False, [])
    assert analyze(no_set.replace("list(params)", "{p for p in params}"), ["TU160"]) == (True, ["TU160"])
    assert analyze(no_set.replace("list(params)", "set(params)"), ["TU160"]) == (True, ["TU160"])
    assert analyze(no_set.replace("list(params)", "f'{ {1} }'"), ["TU160"])[0]  # (a set in a replacement field)
    assert analyze(no_set + "torch.cholesky(a)\n", ["TU160", "TU101"]) == (True, ["TU101"])
    assert analyze(no_set.replace("lr=0.1)", "lr=0.1)  # noqa: TU160"), ["TU160", "TU002"]) == (True, ["TU002"])


def test_a_rule_that_cannot_report_from_the_kept_code_does_not_run_and_spares_the_parse() -> None:
    """TU160 (``Rule.reports_from_kept_code``): a set only in the body of a function that spells no
    trigger word cannot reach an optimizer's call, so TU160 does not run, and its words' bodies
    leave the parse: no parse at all unless another rule runs (the focus cases above compare the
    findings with a full walk's)."""
    parses: list[str] = []

    def analyze(text: str, select: list[str]) -> tuple[bool, list[str], str]:
        parses.clear()
        checker = Checker(select_rules(all_rules(), select))
        source = SourceFile.from_bytes("m.py", textwrap.dedent(text).encode())
        real = ast.parse
        try:
            ast.parse = lambda text, *args, **kwargs: parses.append(text) or real(text, *args, **kwargs)  # type: ignore[assignment]
            analysis = checker.analyze(source, checker.prescan(source.raw, "m.py"))
        finally:
            ast.parse = real  # type: ignore[assignment]
        return analysis.parsed, [d.code for d in analysis.diagnostics], "".join(parses)

    elsewhere = """
        import torch

        def unrelated(model):
            found = {p for p in model.parameters()}
            found |= {model.weight}
            return found

        def build(model):
            params = model.parameters()
            optimizer = torch.optim.SGD(params, lr=0.1)
            return optimizer
        """
    assert analyze(elsewhere, ["TU160"]) == (False, [], "")
    near = elsewhere.replace("SGD(params, lr", "SGD(set(params), lr")
    assert analyze(near, ["TU160"])[:2] == (True, ["TU160"])
    # With another rule's word elsewhere, the file is parsed for that rule alone: the optimizer's
    # function is blanked like any other without a word of a rule that runs.
    other = textwrap.dedent(elsewhere) + "\ndef solve(a):\n    return torch.cholesky(a)\n"
    parsed, codes, text = analyze(other, ["TU160", "TU101"])
    assert (parsed, codes) == (True, ["TU101"]) and "SGD" not in text and "torch.cholesky(a)" in text


def test_the_kept_code_is_the_skeletons() -> None:
    """``Skeleton.kept_code`` takes a blanked body, and a shortened header's parameters, for no
    code; the rest reads as the lexer's spans read it."""
    from torchup.core.lexing import spans_of
    from torchup.prefilter.skeleton import cut

    text = "import torch\ndef f(a={1}):\n    x = {2}\n    x |= {4}\n    return x\n\ndef g():\n    return torch.qr({3})\n"
    skeleton = cut(text, (1, 8), spans_of(text))
    assert skeleton is not None
    kept = skeleton.kept_code()
    assert kept is not None
    braces = [index for index, char in enumerate(text) if char == "{"]
    assert [kept.in_expression(index) for index in braces] == [False, False, False, True]
    assert [kept.in_code(index) for index in braces] == [False, False, False, True]


def test_the_focus_holds_the_lines_of_the_words_present() -> None:
    from torchup.prefilter.words import TriggerPattern

    text = b"import torch\nx = torch.qr(a)\ndef f():\n    global y\n    y = SGD(p)\nz = qr, SGD\n"
    found = TriggerPattern(["qr", "SGD"]).scan(text)
    assert found.lines == (2, 4, 5, 6) and found.declaring == (4,)
    assert found.lines_of(frozenset({"qr", "SGD"})) == found.lines
    assert found.lines_of(frozenset({"qr"})) == (2, 4, 6)
    assert found.lines_of(frozenset()) == (4,)


def test_a_function_is_searched_for_global_and_nonlocal_only_where_a_line_declares() -> None:
    """``Focus.declaring`` (the lines that spell `global` / `nonlocal`) spares the search of a
    walked body that spells neither; where one does, its bindings go where it says."""
    code = "import torch\n\ndef f(a):\n    global q\n    q = torch.qr\n    return q(a)\n\ndef g(a):\n    return torch.qr(a)\n"
    tree = ast.parse(code)
    declared = Resolver(tree, Focus(lines=(4, 5, 6, 9), words=frozenset({"qr"}), declaring=(4,)))
    assert [b.scope.kind.value for b in declared.module_scope.bindings["q"]] == ["module"]
    unknown = Resolver(tree, Focus(lines=(4, 5, 6, 9), words=frozenset({"qr"})))
    assert [b.scope.kind.value for b in unknown.module_scope.bindings["q"]] == ["module"]
    focus = Focus(lines=(4, 5, 6, 9), words=frozenset({"qr"}), declaring=(4,))
    searched = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and focus.may_declare(node)]
    assert searched == ["f"]  # `g` spans no declaring line: its body is not searched


def test_a_star_import_at_the_top_walks_the_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchup.analysis import resolver

    runs: list[int] = []
    original = resolver._ScopeBuilder.run
    monkeypatch.setattr(resolver._ScopeBuilder, "run", lambda self, tree: (runs.append(1), original(self, tree)))
    words, path_words = frozenset({"cond"}), frozenset({"cond"})
    code = "from m.cond import *\ndef f():\n    return 1\ndef g(a):\n    return h(a)\n"
    focused = Resolver(ast.parse(code), Focus(lines=(1,), words=words, path_words=path_words))
    assert len(focused.scopes) == 3 and len(runs) == 1  # every body walked, in one walk
    nested = "import sys\nif sys:\n    from m.cond import *\ndef f():\n    return 1\n"
    runs.clear()
    assert len(Resolver(ast.parse(nested), Focus(lines=(3,), words=words, path_words=path_words)).scopes) == 2
    assert len(runs) == 2  # (a star import below the top is found by the focused walk, then all is walked)


def test_the_fields_the_walk_skips_never_hold_a_node_to_visit() -> None:
    """``resolver._LEAF_FIELDS`` names fields that hold names, flags or markers only: checked on
    every node of torchup's own sources and the rule cases."""
    from torchup.analysis import resolver

    root = Path(__file__).resolve().parent.parent
    skipped = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    texts = [path.read_text(encoding="utf-8") for path in sorted((root / "torchup").rglob("*.py"))]
    texts += [path.read_text(encoding="utf-8") for path in sorted((root / "tests").glob("test_*.py"))]
    newer = [  # (syntax of later Pythons, where this one parses it: a `type` alias's name is a node)
        "type Alias[T] = list[T]\ndef f[T: int, *Ts, **P](x: T) -> T:\n    return x\nclass C[T]:\n    pass\n",
        "match x:\n    case [a, *rest] | {'k': a, **rest} if a:\n        pass\n    case C(y=z) as w:\n        pass\n",
    ]
    for text in newer:
        try:
            ast.parse(text)
        except SyntaxError:
            continue  # (a Python before that syntax)
        texts.append(text)
    checked = 0
    for text in texts:
        for node in ast.walk(ast.parse(text)):
            for name in resolver._LEAF_FIELDS.intersection(node._fields):
                value = getattr(node, name, None)
                items = value if isinstance(value, list) else [value]
                assert all(not isinstance(item, ast.AST) or isinstance(item, skipped) for item in items), (
                    type(node).__name__, name)
                checked += 1
    assert checked > 10_000
