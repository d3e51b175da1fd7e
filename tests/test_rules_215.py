"""The rules for torch 2.15 (TU150-TU161) and for 2.14's new FutureWarnings (TU170-TU173), and TU301's end.

Per target release: a 2.15 rule says nothing to a project that migrates to 2.14, and TU170 (a warning
2.15 dropped) and TU301 (a limit 2.15 lifted) say nothing to one that migrates to 2.15. Every fix goes
through ``torchup.fix_source``: the result compiles, and fixing it again changes nothing. The names
the fixes write are checked against the torch 2.15.0 sources (parsed, never imported), and the
TU160 fix is run under torch 2.14.1 against the original.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import torchup
from differential.envs import ensure_env, ensure_sources
from helpers import check
from torchup.check.checker import Checker, FileSettings
from torchup.cli.main import main
from torchup.core.facts import FACTS
from torchup.core.source import SourceFile
from torchup.rules import all_rules, rule_by_code
from torchup.settings.selection import select_rules

RULES_2_15 = ["TU150", "TU151", "TU152", "TU160", "TU161"]
RULES_2_14 = ["TU170", "TU171", "TU172", "TU173"]


def codes_for(code: str, source: str, target_version: str | None, target_python: str | None = None) -> list[str]:
    rules = tuple(select_rules(all_rules(), [code]))
    checker = Checker(list(rules), settings_for=lambda _: FileSettings(rules, target_python, target_version))
    found = checker.analyze(SourceFile.from_bytes("m.py", textwrap.dedent(source).encode())).diagnostics
    return [d.code for d in found]


def first_reported(code: str) -> str:
    rule = rule_by_code(code)
    assert rule is not None
    return next(example.source for example in rule.examples if example.findings)


def fixed(source: str, code: str, unsafe: bool = True) -> str:
    """Through the library API; the result compiles and a second pass changes nothing."""
    first = torchup.fix_source(textwrap.dedent(source), select=[code], unsafe_fixes=unsafe)
    compile(first.source, "fixed.py", "exec")
    again = torchup.fix_source(first.source, select=[code], unsafe_fixes=unsafe)
    assert again.source == first.source, "fixing twice changed the file"
    assert not [d for d in again.remaining if d.fix is not None and (unsafe or d.fix.applicability.value == "safe")]
    return first.source


# -- the releases the rules belong to ---------------------------------------------------------------


@pytest.mark.parametrize("code", RULES_2_15)
def test_2_15_rules_are_silent_when_migrating_to_2_14(code: str) -> None:
    source = first_reported(code)
    assert codes_for(code, source, "2.15")
    assert codes_for(code, source, "2.14") == []
    assert rule_by_code(code).since == "2.15"  # type: ignore[union-attr]


@pytest.mark.parametrize("code", RULES_2_14)
def test_2_14_warnings_apply_to_2_14(code: str) -> None:
    assert codes_for(code, first_reported(code), "2.14")


def test_gather_into_tensor_stops_at_2_15() -> None:
    source = first_reported("TU170")
    assert codes_for("TU170", source, "2.14") == ["TU170", "TU170"]
    assert codes_for("TU170", source, "2.15") == []
    assert rule_by_code("TU170").until == "2.15"  # type: ignore[union-attr]
    # The other 2.14 warnings are still there in 2.15.
    for code in ("TU171", "TU172", "TU173"):
        assert codes_for(code, first_reported(code), "2.15"), code


def test_compile_on_python_3_15_stops_at_2_15() -> None:
    source = "import torch\nfast = torch.compile(lambda t: t)\n"
    assert codes_for("TU301", source, "2.14", target_python="3.15") == ["TU301"]
    assert codes_for("TU301", source, "2.15", target_python="3.15") == []


def test_command_line_target_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.py"
    path.write_text("import torch.distributed as dist\nimport torch.optim as optim\n"
                    "def f(t, o, model):\n    dist.gather_into_tensor(t, o)\n"
                    "    return optim.SGD(set(model.parameters()), lr=0.1)\n")
    for version, expected in (("2.14", "TU170"), ("2.15", "TU160")):
        assert main(["check", "--isolated", "--no-cache", "--select", "TU160,TU170", "--target-version", version,
                     "--output-format", "concise", str(path)]) == 1
        lines = [line for line in capsys.readouterr().out.splitlines() if ": TU" in line]
        assert [line.split(": ")[1].split()[0] for line in lines] == [expected], lines


def test_docs_name_the_releases() -> None:
    assert "not 2.15 or later" in rule_by_code("TU170").render_docs()  # type: ignore[union-attr]
    assert "upgrading to torch 2.15 or later" in rule_by_code("TU160").render_docs()  # type: ignore[union-attr]


# -- TU150 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import torch.distributed.config as c\nc.pipeline_per_direction_p2p = False\n",
        "from torch.distributed import config\nx = config.pipeline_per_direction_p2p\n",
        "import torch\nwith torch.distributed.config.patch(pipeline_per_direction_p2p=False):\n    pass\n",
        "import torch.distributed.config as c\nok = hasattr(c, 'pipeline_per_direction_p2p')\n",
        "import torch.distributed.config as c\nc.load_config({'pipeline_per_direction_p2p': False})\n",
        "import torch.distributed.config as c\ndel c.pipeline_per_direction_p2p\n",
    ],
    ids=["write-false", "from-import-module", "patch-keyword", "hasattr", "load-config", "del"],
)
def test_tu150_safe_renames(source: str) -> None:
    result = fixed(source, "TU150", unsafe=False)
    assert "pipeline_per_edge_p2p" in result and "pipeline_per_direction_p2p" not in result


@pytest.mark.parametrize(
    "source",
    [
        "import torch.distributed.config as c\nc.pipeline_per_direction_p2p = flag\n",
        "import torch.distributed.config as c\nc.pipeline_per_direction_p2p |= True\n",
        "import torch.distributed.config as c\nsetattr(c, 'pipeline_per_direction_p2p', True)\n",
        "import os\nos.environ['TORCH_DISTRIBUTED_PIPELINE_PER_DIRECTION_P2P'] = '0'\n",
    ],
    ids=["write-expression", "augmented", "setattr-true", "environment"],
)
def test_tu150_unsafe_renames(source: str) -> None:
    assert fixed(source, "TU150", unsafe=False) == source
    result = fixed(source, "TU150")
    assert "PER_DIRECTION" not in result and "per_direction" not in result


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nclass Options:\n    pipeline_per_direction_p2p = True\nOptions.pipeline_per_direction_p2p = False\n",
        "import torch\nflags = {'pipeline_per_direction_p2p': True}\n",  # not given to the config module
        "import torch.distributed.config as c\nc.pipeline_per_edge_p2p = True\n",
        "import torch\nname = 'TORCH_DISTRIBUTED_PIPELINE_PER_DIRECTION_P2P_EXTRA'\n",
    ],
    ids=["own-class", "unrelated-dict", "new-name", "longer-string"],
)
def test_tu150_not_reported(source: str) -> None:
    assert check(source, select=["TU150"]) == []


@pytest.mark.parametrize(
    ("source", "safe"),
    [
        ("from unittest import mock\nwith mock.patch('torch.distributed.config.pipeline_per_direction_p2p', False):\n"
         "    pass\n", True),
        ("from unittest import mock\nwith mock.patch('torch.distributed.config.pipeline_per_direction_p2p', True):\n"
         "    pass\n", False),
        ("from unittest import mock\nimport torch.distributed.config as c\n"
         "with mock.patch.object(c, 'pipeline_per_direction_p2p', False):\n    pass\n", True),
        ("from unittest import mock\nimport torch.distributed.config as c\n"
         "with mock.patch.object(c, 'pipeline_per_direction_p2p'):\n    pass\n", False),  # patched with a MagicMock
        ("import torch.distributed.config as c\ndef test_it(monkeypatch):\n"
         "    monkeypatch.setattr(c, 'pipeline_per_direction_p2p', True)\n", False),
        ("import torch.distributed.config as c\nv = getattr(c, 'pipeline_per_direction_p2p', True)\n", True),
    ],
    ids=["mock-patch-path-false", "mock-patch-path-true", "patch-object-false", "patch-object-mock",
         "monkeypatch-setattr", "getattr-default"],
)
def test_tu150_test_helpers_that_patch_the_flag(source: str, safe: bool) -> None:
    """The name after the config module in any call, and the dotted path mock.patch takes: both fail in 2.15."""
    assert len(check(source, select=["TU150"])) == 1
    renamed = source.replace("per_direction", "per_edge")
    assert fixed(source, "TU150", unsafe=False) == (renamed if safe else source)
    assert fixed(source, "TU150") == renamed


def test_tu150_from_import_of_the_flag() -> None:
    source = "from torch.distributed.config import pipeline_per_direction_p2p as flag\nprint(flag)\n"
    assert fixed(source, "TU150", unsafe=False) == source.replace("per_direction", "per_edge")
    plain = "from torch.distributed.config import pipeline_per_direction_p2p\n"
    found = check(plain, select=["TU150"])
    assert len(found) == 1 and found[0].fix is None and "ImportError" in found[0].message


# -- TU151, TU152, TU161 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from torch.autograd.profiler import FunctionEvent as FE\ne = FE(id=1, name='x', thread=0, start_us=0, "
         "end_us=1, metadata_json='{}')\n", ["error"]),
        ("import torch.autograd.profiler_legacy as legacy\ne = legacy.FunctionEvent(1, 'x', 0, 0, 1, metadata_json=None)\n",
         ["error"]),
        ("import torch\ndef rows(prof):\n    return [(e.metadata_json, e.event_metadata) for e in prof.events()]\n",
         ["error", "warning"]),
        ("import torch\ndef rows(activities):\n    return [a.metadata_json() for a in activities]\n", []),
        ("def rows(events):\n    return [e.metadata_json for e in events]\n", []),  # no torch in the file
        ("from torch.autograd.profiler_util import FunctionEvent\ne = FunctionEvent(**{'metadata_json': '{}'})\n",
         ["error"]),
        # a class of the file's own that defines the attribute: its methods read their own attribute
        ("import torch\nclass Record:\n    def __init__(self, text):\n        self.metadata_json = text\n"
         "    def parsed(self):\n        return json.loads(self.metadata_json)\n", []),
        ("import torch\nclass Record:\n    @property\n    def event_metadata(self):\n        return {}\n"
         "    def grid(self, e):\n        return self.event_metadata, e.event_metadata\n", ["warning"]),
    ],
    ids=["keyword-alias", "legacy-module", "attributes", "kineto-method", "no-torch", "dict-spread", "own-attribute",
         "own-property-and-an-event"],
)
def test_tu151(source: str, expected: list[str]) -> None:
    found = check(source, select=["TU151"])
    assert [d.severity.value for d in found] == expected
    assert all(d.fix is None for d in found)


@pytest.mark.parametrize(
    ("source", "count"),
    [
        ("from torch.multiprocessing.reductions import reduce_event as reduce\nreduce(e)\n", 1),  # the import
        ("import torch.multiprocessing\nf = torch.multiprocessing.reductions.reduce_event\n", 1),
        ("from torch.multiprocessing import reductions\nreductions.reduce_event(e)\n", 1),
        ("from torch.multiprocessing.reductions import rebuild_event, reduce_storage\n", 0),
        ("def reduce_event(e):\n    return e\nreduce_event(1)\n", 0),
    ],
    ids=["from-import-alias", "module-attribute", "submodule-import", "other-names", "own-function"],
)
def test_tu152(source: str, count: int) -> None:
    assert len(check(source, select=["TU152"])) == count


@pytest.mark.parametrize(
    ("source", "count"),
    [
        ("import torch\nevents = torch.autograd.profiler.load_nvprof('t.prof')\n", 1),
        ("from torch.autograd import profiler as p\nraw = p.parse_nvprof_trace('t.prof')\n", 1),
        ("from torch.autograd.profiler import EnforceUnique\nclass Mine(EnforceUnique):\n    pass\n", 1),
        ("from torch.autograd.profiler import emit_nvtx\nctx = emit_nvtx()\n", 0),
    ],
    ids=["call", "module-alias", "subclass", "emit-nvtx"],
)
def test_tu161(source: str, count: int) -> None:
    assert len(check(source, select=["TU161"])) == count


# -- TU160 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\nopt = torch.optim.SGD({w, b}, lr=0.1)\n",
         "import torch\nopt = torch.optim.SGD(list(dict.fromkeys([w, b])), lr=0.1)\n"),
        ("from torch.optim.adam import Adam as A\nopt = A(params=set(m.parameters()))\n",
         "from torch.optim.adam import Adam as A\nopt = A(params=list(dict.fromkeys(m.parameters())))\n"),
        ("import torch.optim\nopt = torch.optim.RMSprop(set(p for p in m.parameters() if p.requires_grad))\n",
         "import torch.optim\nopt = torch.optim.RMSprop(list(dict.fromkeys(p for p in m.parameters() if p.requires_grad)))\n"),
        ("from torch import optim\nps = set(a.parameters()) - set(b.parameters())\nopt = optim.Adagrad(ps)\n",
         "from torch import optim\nps = set(a.parameters()) - set(b.parameters())\nopt = optim.Adagrad(list(dict.fromkeys(ps)))\n"),
    ],
    ids=["display", "from-import-alias-keyword", "generator", "variable"],
)
def test_tu160_fixes(source: str, expected: str) -> None:
    assert fixed(source, "TU160", unsafe=False) == source  # unsafe only
    assert fixed(source, "TU160") == expected


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nopt = torch.optim.SGD(list(m.parameters()), lr=0.1)\n",
        "import torch\nopt = torch.optim.SGD(frozenset(m.parameters()), lr=0.1)\n",
        "import torch\nopt = torch.optim.SGD([{'params': list(m.parameters())}], lr=0.1)\n",
        "import torch\nps = set(m.parameters())\nps = sorted(ps, key=id)\nopt = torch.optim.SGD(ps, lr=0.1)\n",
        "import torch\nclass SGD:\n    def __init__(self, params):\n        pass\nopt = SGD({1, 2})\n",
        "import torch\nclass Wrapped(torch.optim.SGD):\n    def __init__(self, model, lr):\n        super().__init__(list(model.parameters()), lr=lr)\n"
        "opt = Wrapped({1}, 0.1)\n",
    ],
    ids=["list", "frozenset", "groups", "reassigned", "own-class", "subclass-other-signature"],
)
def test_tu160_not_reported(source: str) -> None:
    assert check(source, select=["TU160"]) == []


def test_tu160_asynchronous_comprehension_becomes_a_list() -> None:
    # `dict.fromkeys(p async for p in ...)` is a TypeError: an async generator is not iterable.
    source = ("import torch\nasync def build(stream, ready):\n"
              "    a = torch.optim.SGD({p async for p in stream()}, lr=0.1)\n"
              "    b = torch.optim.SGD({p for p in ps if await ready(p)}, lr=0.1)\n"
              "    c = torch.optim.SGD({p for p in await stream()}, lr=0.1)\n")
    assert fixed(source, "TU160") == (
        "import torch\nasync def build(stream, ready):\n"
        "    a = torch.optim.SGD(list(dict.fromkeys([p async for p in stream()])), lr=0.1)\n"
        "    b = torch.optim.SGD(list(dict.fromkeys([p for p in ps if await ready(p)])), lr=0.1)\n"
        "    c = torch.optim.SGD(list(dict.fromkeys(p for p in await stream())), lr=0.1)\n"
    )


@pytest.mark.parametrize(
    ("init", "count"),
    [
        ("def __init__(self, params, lr):\n        super().__init__(params, lr)", 1),
        ("def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)", 1),
        ("def __init__(self, params, lr):\n        torch.optim.SGD.__init__(self, params=params, lr=lr)", 1),
        # the set never reaches Optimizer.__init__: no warning
        ("def __init__(self, params, lr):\n        super().__init__(list(params), lr)", 0),
        ("def __init__(self, params, lr):\n        params = sorted(params, key=id)\n        super().__init__(params, lr)", 0),
        ("def __init__(self, *args):\n        super().__init__(list(args[0]), 0.1)", 0),
    ],
    ids=["passes-params", "passes-args", "base-init-keyword", "converts", "rebinds", "args-converted"],
)
def test_tu160_local_subclass_reported_only_when_the_set_reaches_the_optimizer(init: str, count: int) -> None:
    source = f"import torch\nclass Mine(torch.optim.SGD):\n    {init}\nopt = Mine({{w, b}}, 0.1)\n"
    assert len(check(source, select=["TU160"])) == count


def test_tu160_long_operator_chain_is_not_a_crash() -> None:
    # is_set followed `s | a | b | ...` one frame per operator: a RecursionError out of the rule.
    source = "import torch\nopt = torch.optim.SGD(set(a)" + " | b" * 1500 + ", lr=0.1)\n"
    assert check(source, select=["TU160"]) == []


def test_tu160_shadowed_builtins_get_no_fix() -> None:
    source = "import torch\ndef make(ps, list):\n    return torch.optim.SGD(set(ps), lr=0.1)\n"
    found = check(source, select=["TU160"])
    assert len(found) == 1 and found[0].fix is None and found[0].help


# -- TU170, TU171, TU172 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch.distributed.distributed_c10d as c10d\ndef f(t, o):\n    c10d.gather_into_tensor(t, o, 0)\n",
         "import torch.distributed.distributed_c10d as c10d\ndef f(t, o):\n    c10d.gather_single(t, o, 0)\n"),
        ("from torch.distributed import gather_into_tensor as gather\ndef f(t, o):\n    gather(t, o)\n",
         "from torch.distributed import gather_single\ndef f(t, o):\n    gather_single(t, o)\n"),
        ("import torch\nhook = torch.distributed.gather_into_tensor\n",
         "import torch\nhook = torch.distributed.gather_single\n"),
    ],
    ids=["c10d-module", "from-import-alias", "reference"],
)
def test_tu170_fixes(source: str, expected: str) -> None:
    assert fixed(source, "TU170", unsafe=False) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\ndef f(t):\n    torch.distributed.distributed_c10d._set_pg_timeout(t)\n",
         "import torch\ndef f(t):\n    torch.distributed.distributed_c10d.set_timeout(t)\n"),
        ("from torch.distributed import distributed_c10d\ndef f(t, g):\n    distributed_c10d._set_pg_timeout(timeout=t, group=g)\n",
         "from torch.distributed import distributed_c10d\ndef f(t, g):\n    distributed_c10d.set_timeout(timeout=t, group=g)\n"),
    ],
    ids=["attribute", "from-import-module"],
)
def test_tu171_fixes(source: str, expected: str) -> None:
    assert fixed(source, "TU171", unsafe=False) == expected


def test_tu171_star_import_does_not_bind_the_private_name() -> None:
    source = "from torch.distributed.distributed_c10d import *\n_set_pg_timeout(t)\n"  # a NameError, not a warning
    assert check(source, select=["TU171"]) == []


def test_tu171_ignores_torch_distributed_itself() -> None:
    # torch.distributed never exported the private name: this is someone else's attribute error.
    assert check("import torch.distributed as dist\ndist._set_pg_timeout(t)\n", select=["TU171"]) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\np = torch.profiler.profile(with_modules=True, with_stack=True)\n",
         "import torch\np = torch.profiler.profile(with_stack=True)\n"),
        ("from torch.autograd.profiler import profile as P\np = P(with_modules=True)\n",
         "from torch.autograd.profiler import profile as P\np = P()\n"),
        ("import torch\np = torch.profiler.profile(with_modules=flag)\n", None),
        ("import torch\np = torch.profiler.profile(with_modules=False)\n", "clean"),
        ("import torch\np = torch.autograd.profiler_legacy.profile(with_modules=True)\n", "clean"),
    ],
    ids=["kineto", "autograd-alias", "flag", "false", "legacy"],
)
def test_tu172(source: str, expected: str | None) -> None:
    found = check(source, select=["TU172"])
    if expected == "clean":
        assert found == []
        return
    assert len(found) == 1
    assert fixed(source, "TU172", unsafe=False) == source
    assert fixed(source, "TU172") == (expected if expected is not None else source)


# -- TU173 -------------------------------------------------------------------------------------------


def test_tu173_is_on_by_default_whatever_the_floor_and_informational() -> None:
    """A warning the target still gives: on by default whatever the floor, 2.14 and later too (the code
    still has to change; torchup.analysis.rule.Rule.on_by_default)."""
    rule = rule_by_code("TU173")
    assert rule is not None and rule.enabled_by_default and rule.severity.value == "info"
    assert rule.on_by_default("2.13") and rule.on_by_default("2.14")
    assert "TU173" in [r.code for r in select_rules(all_rules(), from_version="2.14")]
    source = "import torch\nm = torch.jit.script(f)\n"
    assert [d.code for d in check(source)] == ["TU173"]
    assert [d.code for d in check(source, select=["TU173"])] == ["TU173"]


def test_tu173_not_inside_a_scripted_body() -> None:
    # TorchScript compiles these bodies: their fork/wait never run in Python, so never warn.
    source = (
        "import torch\n"
        "@torch.jit.script\ndef f(x):\n    return torch.jit.wait(torch.jit.fork(g, x))\n"
        "class M(torch.jit.ScriptModule):\n    @torch.jit.script_method\n    def forward(self, x):\n"
        "        return torch.jit.wait(torch.jit.fork(g, x))\n"
        "def eager(x):\n    return torch.jit.wait(torch.jit.fork(g, x))\n"
    )
    found = check(source, select=["TU173"])
    assert [(d.line, d.message.split("`")[1]) for d in found] == [
        (2, "torch.jit.script"), (6, "torch.jit.script_method"), (10, "torch.jit.wait"), (10, "torch.jit.fork")
    ]


@pytest.mark.parametrize("name", sorted(n for n in FACTS["deprecated_functions"] if n.startswith("torch.jit.")))
def test_tu173_every_entry_point(name: str) -> None:
    short = name.rpartition(".")[2]
    module = FACTS["deprecated_functions"][name]["module"]
    for source in (f"import torch\nx = torch.jit.{short}\n", f"from {module} import {short} as y\nz = y()\n"):
        assert [d.code for d in check(source, select=["TU173"])] == ["TU173"], source


# -- the data ----------------------------------------------------------------------------------------


def test_new_facts_are_well_formed() -> None:
    releases = set(FACTS["releases"])
    for name, facts in FACTS["deprecated_functions"].items():
        assert name.startswith("torch.") and facts["since"] in releases, name
        assert facts["warning"].startswith("FutureWarning: ") and facts["source"], name
        assert facts.get("until") in (None, *releases), name
    for key in ("deprecated_arguments", "renamed", "removed_members"):
        for name, facts in FACTS[key].items():
            assert name.startswith("torch.") and facts.get("source"), name


# -- against the torch 2.15.0 sources ----------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_2_15() -> Path:
    try:
        return ensure_sources("2.15.0")
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        if os.environ.get("TORCHUP_REQUIRE_SOURCES"):  # CI: a skipped check is not a passed one
            raise
        pytest.skip(f"the torch 2.15.0 sources are not available here: {exc}")


def module_tree(root: Path, module: str) -> ast.Module:
    relative = module.split(".")[1:]
    path = root.joinpath(*relative).with_suffix(".py")
    if not path.exists():
        path = root.joinpath(*relative, "__init__.py")
    return ast.parse(path.read_text(encoding="utf-8"))


def defined(tree: ast.Module) -> dict[str, ast.AST]:
    """Top-level functions, classes and assignments of a module."""
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return names


def exported(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}  # type: ignore[attr-defined]
    return set()


def parameters(function: ast.AST) -> list[str]:
    assert isinstance(function, ast.FunctionDef)
    return [a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]]


def strings(node: ast.AST) -> str:
    """Every string constant under ``node``, implicit concatenations joined, separated by newlines."""
    return "\n".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def decorators(node: ast.AST) -> list[str]:
    assert isinstance(node, (ast.FunctionDef, ast.ClassDef))
    return [ast.unparse(d) for d in node.decorator_list]


def test_2_15_pipeline_flag(torch_2_15: Path) -> None:
    facts = FACTS["renamed"]["torch.distributed.config.pipeline_per_direction_p2p"]
    tree = module_tree(torch_2_15, "torch.distributed.config")
    names = defined(tree)
    assert "pipeline_per_edge_p2p" in names and "pipeline_per_direction_p2p" not in names
    assert "pipeline_per_edge_p2p" in exported(tree)
    assert facts["new_env"] in strings(names["pipeline_per_edge_p2p"]) and facts["env"] not in strings(tree)
    config_module = (torch_2_15 / "utils" / "_config_module.py").read_text(encoding="utf-8")
    assert 'raise AttributeError(f"{self.__name__}.{name} does not exist")' in config_module


def test_2_15_distributed_renames(torch_2_15: Path) -> None:
    tree = module_tree(torch_2_15, "torch.distributed.distributed_c10d")
    names, public = defined(tree), exported(tree)
    # TU170: both names exist, with one signature, and the old one no longer warns.
    assert {"gather_single", "gather_into_tensor"} <= public
    assert parameters(names["gather_into_tensor"]) == parameters(names["gather_single"])
    assert not any("deprecated" in d for d in decorators(names["gather_into_tensor"]))
    assert "deprecated" not in strings(names["gather_into_tensor"]).lower()
    # TU171: set_timeout is public and takes what _set_pg_timeout takes; the private one still warns.
    assert "set_timeout" in public
    assert parameters(names["set_timeout"]) == parameters(names["_set_pg_timeout"]) == ["timeout", "group"]
    warning = FACTS["deprecated_functions"]["torch.distributed.distributed_c10d._set_pg_timeout"]["warning"]
    assert warning.removeprefix("FutureWarning: ") in "".join(strings(d) for d in names["_set_pg_timeout"].decorator_list)


def test_2_15_optimizers(torch_2_15: Path) -> None:
    facts = FACTS["deprecated_arguments"]["torch.optim.Optimizer(params=set)"]
    package = module_tree(torch_2_15, "torch.optim")
    public = {alias.asname or alias.name for node in package.body if isinstance(node, ast.ImportFrom)
              for alias in node.names}
    for qualname in facts["classes"]:
        name = qualname.rpartition(".")[2]
        assert name in public and name in exported(package), name
        assert isinstance(defined(module_tree(torch_2_15, facts["modules"][qualname])).get(name), ast.ClassDef), name
    init = next(n for n in ast.walk(defined(module_tree(torch_2_15, "torch.optim.optimizer"))["Optimizer"])
                if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert facts["warning"].removeprefix("FutureWarning: ") in "".join(strings(init).split("\n"))
    # Exactly the set type warns: the test of the branch is `isinstance(params, set)`.
    assert "isinstance(params, set)" in ast.unparse(init)
    assert "dict.fromkeys" not in ast.unparse(init)  # (nothing in torch de-duplicates for us)


def test_2_15_function_event(torch_2_15: Path) -> None:
    facts = FACTS["removed_members"]
    event = defined(module_tree(torch_2_15, "torch.autograd.profiler_util"))["FunctionEvent"]
    assert isinstance(event, ast.ClassDef)
    methods = {n.name: n for n in event.body if isinstance(n, ast.FunctionDef)}
    assert "metadata_json" not in parameters(methods["__init__"]) and "metadata_json" not in methods
    assert "typed_metadata" in parameters(methods["__init__"])  # what `metadata` is filled from
    warning = facts["torch.autograd.profiler_util.FunctionEvent.event_metadata"]["warning"]
    assert warning.removeprefix("FutureWarning: ") in strings(methods["event_metadata"])
    assert "self.metadata" in ast.unparse(methods["__init__"])


def test_2_15_reduce_event_and_nvprof(torch_2_15: Path) -> None:
    reductions = defined(module_tree(torch_2_15, "torch.multiprocessing.reductions"))
    assert "_reduce_event" in reductions and "reduce_event" not in reductions and "rebuild_event" in reductions
    profiler = defined(module_tree(torch_2_15, "torch.autograd.profiler"))
    for name in ("load_nvprof", "EnforceUnique", "parse_nvprof_trace"):
        warning = FACTS["deprecated_functions"][f"torch.autograd.profiler.{name}"]["warning"]
        assert warning.removeprefix("FutureWarning: ") in "".join(strings(d) for d in profiler[name].decorator_list)  # type: ignore[attr-defined]


def test_2_15_torchscript_still_warns(torch_2_15: Path) -> None:
    for name, facts in FACTS["deprecated_functions"].items():
        if name.startswith("torch.jit."):
            text = "".join(strings(module_tree(torch_2_15, facts["module"])).split("\n"))
            assert facts["warning"].removeprefix("FutureWarning: ") in text, name


def test_2_15_compiles_on_python_3_15(torch_2_15: Path) -> None:
    init = (torch_2_15 / "__init__.py").read_text(encoding="utf-8")
    assert 'raise RuntimeError("torch.compile is not supported on Python 3.16+")' in init
    assert "torch.compile is not supported on Python 3.15+" not in init
    eval_frame = (torch_2_15 / "_dynamo" / "eval_frame.py").read_text(encoding="utf-8")
    assert "Python 3.16+ not yet supported for torch.compile" in eval_frame


# -- against the torch 2.14.1 wheel ------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_2_14() -> Path:
    return ensure_env("2.14.1")


def run_json(python: Path, script: str, payload: object) -> object:
    completed = subprocess.run([str(python), "-c", script], input=json.dumps(payload), capture_output=True,
                               text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])


WARNINGS_2_14 = r"""
import json, sys, warnings, datetime
import torch, torch.distributed as dist, torch.distributed.distributed_c10d as c10d
seen = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.profiler.profile(with_modules=True):
        pass
    try:
        c10d._set_pg_timeout(datetime.timedelta(seconds=1))  # no default group: raises after warning
    except Exception:
        pass
    try:
        dist.gather_into_tensor(torch.ones(1))
    except Exception:
        pass
    try:
        torch.jit.script(lambda x: x)
    except Exception:
        pass
seen = [f"{w.category.__name__}: {w.message}" for w in caught]
print(json.dumps(seen))
"""


@pytest.mark.differential
def test_2_14_warning_texts(python_2_14: Path) -> None:
    seen = run_json(python_2_14, WARNINGS_2_14, None)
    assert isinstance(seen, list)
    expected = [FACTS["deprecated_arguments"]["torch.autograd.profiler.profile(with_modules=True)"]["warning"]]
    expected += [FACTS["deprecated_functions"][name]["warning"] for name in (
        "torch.distributed.distributed_c10d._set_pg_timeout", "torch.distributed.gather_into_tensor", "torch.jit.script")]
    for text in expected:
        assert text in seen, (text, seen)


# The TU160 fix, run: the optimizer built by the original and by the fixed code gets the same
# parameters, each once, in one group, and takes the same steps.
OPTIMIZER_PROBE = r"""
import json, sys, warnings
import torch
warnings.simplefilter("error")  # torch 2.14.1 accepts a set silently; so must the list
def run(source):
    torch.manual_seed(0)
    namespace = {"__name__": "__snippet__"}
    exec(compile(source, "<snippet>", "exec"), namespace)
    model, opt = namespace["model"], namespace["opt"]
    names = {id(p): n for n, p in model.named_parameters()}
    groups = [[names[id(p)] for p in group["params"]] for group in opt.param_groups]
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    def closure():
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    values = {n: p.detach().reshape(-1).tolist() for n, p in model.named_parameters()}
    bits = {n: p.detach().numpy().tobytes().hex() for n, p in model.named_parameters()}
    return {"groups": groups, "values": values, "bits": bits}
cases = json.load(sys.stdin)
print(json.dumps({name: [run(before), run(after)] for name, (before, after) in cases.items()}))
"""
MODEL = (
    "import torch\n"
    "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()\n"
)
OPTIMIZER_CASES = {
    "sgd-momentum-set-call": "opt = torch.optim.SGD(set(model.parameters()), lr=0.1, momentum=0.9)\n",
    "adam-duplicates": "opt = torch.optim.Adam(set(list(model.parameters()) * 2), lr=0.01)\n",
    "adamw-display": "first, last = model[0], model[2]\n"
                     "opt = torch.optim.AdamW({first.weight, first.bias, last.weight, last.bias, first.weight}, lr=0.01)\n",
    "rmsprop-comprehension": "opt = torch.optim.RMSprop({p for p in model.parameters() if p.requires_grad}, lr=0.01)\n",
    "adagrad-union": "opt = torch.optim.Adagrad(set(model[0].parameters()) | set(model[2].parameters()), lr=0.1)\n",
    "lbfgs": "opt = torch.optim.LBFGS(set(model.parameters()), lr=0.5)\n",
}
ORDER_SENSITIVE = {"lbfgs"}  # flattens the parameters in their order: equal up to rounding (~1e-8 seen)


@pytest.fixture(scope="module")
def optimizer_runs(python_2_14: Path) -> dict[str, list[dict]]:
    cases = {}
    for name, body in OPTIMIZER_CASES.items():
        source = MODEL + body
        after = fixed(source, "TU160")
        assert after.count("list(dict.fromkeys(") == 1, after
        cases[name] = (source, after)
    result = run_json(python_2_14, OPTIMIZER_PROBE, cases)
    assert isinstance(result, dict)
    return result


@pytest.mark.differential
@pytest.mark.parametrize("case", sorted(OPTIMIZER_CASES))
def test_tu160_fix_keeps_the_parameters_and_the_steps(optimizer_runs: dict[str, list[dict]], case: str) -> None:
    before, after = optimizer_runs[case]
    assert len(before["groups"]) == len(after["groups"]) == 1
    assert sorted(before["groups"][0]) == sorted(after["groups"][0])  # the same tensors
    assert len(after["groups"][0]) == len(set(after["groups"][0])) == 4  # each once: de-duplicated
    if case in ORDER_SENSITIVE:
        for name, values in before["values"].items():
            assert values == pytest.approx(after["values"][name], rel=1e-6, abs=1e-12), name
    else:
        assert before["bits"] == after["bits"]


@pytest.mark.differential
def test_tu160_fixed_order_is_the_written_order(optimizer_runs: dict[str, list[dict]]) -> None:
    assert optimizer_runs["adamw-display"][1]["groups"][0] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert optimizer_runs["sgd-momentum-set-call"][1]["groups"][0] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def iter_examples() -> Iterator[tuple[str, str]]:
    for code in [*RULES_2_15, *RULES_2_14]:
        rule = rule_by_code(code)
        assert rule is not None
        for example in rule.examples:
            yield code, example.title


@pytest.mark.parametrize(("code", "title"), list(iter_examples()))
def test_examples_of_new_rules_are_not_run_by_the_2_13_harness(code: str, title: str) -> None:
    """Their fixed code targets 2.14+/2.15 APIs, and the original does not break on 2.14: the
    differential examples harness (2.13 original vs 2.14 fixed) has nothing to prove for them."""
    rule = rule_by_code(code)
    example = next(e for e in rule.examples if e.title == title)  # type: ignore[union-attr]
    assert example.fixed is None or not example.executable


@pytest.mark.parametrize(
    ("code", "module", "name"),
    [
        ("TU152", "torch.multiprocessing.reductions", "reduce_event"),
        ("TU150", "torch.distributed.config", "pipeline_per_direction_p2p"),
    ],
)
def test_an_import_only_for_type_checkers_never_runs_so_never_fails(code: str, module: str, name: str) -> None:
    typing_only = f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from {module} import {name}\n"
    assert [d.code for d in check(typing_only, [code])] == []
    runs = f"from {module} import {name}\n"
    assert [d.code for d in check(runs, [code])] == [code]
