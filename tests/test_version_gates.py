"""Version gates evaluated against the project's floor (torchup/analysis/version_gates.py, TU801)."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest

from torchup.analysis.version_gates import (
    Gate,
    GateFacts,
    collect_gate_facts,
    evaluate_gate,
    file_qualified_name,
)
from torchup.api import check_source, fix_source
from torchup.check.checker import Checker, FileSettings
from torchup.core.source import SourceFile
from torchup.rules import rule_by_code

HEADER = "import operator\nimport torch\nfrom packaging import version\n"


def gate(test: str, defs: str = "", module: str = "") -> Gate | None:
    """The gate of ``if <test>:`` after ``HEADER`` and ``defs`` (module-level code of the same file)."""
    source = HEADER + textwrap.dedent(defs) + f"if {test}:\n    pass\n"
    tree = ast.parse(source)
    facts = collect_gate_facts(tree, module)
    return evaluate_gate(tree.body[-1].test, file_qualified_name(tree, module), facts)  # type: ignore[attr-defined]


def summary(found: Gate | None) -> tuple[tuple[int, ...] | None, str, bool] | None:
    return None if found is None else (found.release, found.old, found.certain)


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ('torch.__version__ >= "2.3"', ((2, 3), "orelse", True)),
        ('torch.__version__ < "2.3"', ((2, 3), "body", True)),
        ("torch.__version__ >= (2, 3)", ((2, 3), "orelse", True)),  # TorchVersion compares with tuples
        ('"2.3" > torch.__version__', ((2, 3), "body", True)),  # reversed operands
        ('torch.__version__ <= "2.3"', ((2, 3, 1), "body", True)),  # 2.3.0 itself takes the body
        ('torch.version.__version__ >= "2.1"', ((2, 1), "orelse", True)),
        ('version.parse(torch.__version__) >= version.parse("1.8.0")', ((1, 8), "orelse", True)),
        ('version.parse(torch.__version__).release >= (2, 3)', ((2, 3), "orelse", True)),
        ('version.parse(torch.__version__.split("+")[0]) < version.parse("2.1")', ((2, 1), "body", True)),
        ('not version.parse(torch.__version__) >= version.parse("2.3")', ((2, 3), "body", True)),
        ('tuple(map(int, torch.__version__.split(".")[:2])) >= (1, 8)', ((1, 8), "orelse", True)),
        ('tuple(int(x) for x in torch.__version__.split(".")[:2]) < (1, 10)', ((1, 10), "body", True)),
        ('[int(x) for x in torch.__version__.split(".")[:2]] >= [1, 10]', ((1, 10), "orelse", True)),
        ('int(torch.__version__.split(".")[0]) >= 2', ((2,), "orelse", True)),
        ("int(torch.__version__[0]) < 2", ((2,), "body", True)),
        ('int(torch.__version__.split(".")[0]) == 1', ((2,), "body", True)),  # `==` fixing a major
        ('int(torch.__version__.split(".")[0]) != 1', ((2,), "orelse", True)),
        ('torch.__version__.startswith("1.")', ((2,), "body", True)),
        ('torch.__version__.startswith(("0.", "1."))', ((2,), "body", True)),
        ('not torch.__version__.startswith("1.")', ((2,), "orelse", True)),
        ('(1, 8) <= tuple(map(int, torch.__version__.split(".")[:2])) < (2, 0)', ((2,), "body", True)),
        ('torch.__version__ < "2.3" and torch.cuda.is_available()', ((2, 3), "body", True)),
        ('torch.__version__ < "1.8" or torch.__version__ < "2.0"', ((2,), "body", True)),
        ('torch.__version__ >= "2.3" or torch.__version__ >= "2.1"', ((2, 1), "orelse", True)),
        ("hasattr(torch, 'compile')", (None, "orelse", False)),  # the release that added the name
        ("not hasattr(torch.amp, 'GradScaler')", (None, "body", False)),
        ("_TORCH_GREATER_EQUAL_2_4", ((2, 4), "orelse", False)),  # only the name says it
        ("TORCH_GE_1_13", ((1, 13), "orelse", False)),
        ("not TORCH_LESS_THAN_2_0", ((2,), "orelse", False)),
        ('is_torch_greater_or_equal("2.4")', ((2, 4), "orelse", False)),
        ('is_torch_version("<=", "2.3")', ((2, 3, 1), "body", False)),  # accelerate's, by its name
        ('is_torch_version(">=", "2.3") and cuda', None),
        ('compare_version("torch", operator.lt, "2.1")', ((2, 1), "body", False)),  # Lightning's, by its name
        ('compare_version("numpy", operator.lt, "2.1")', None),
        ("torch_version_geq(1, 13)", ((1, 13), "orelse", False)),
        ('importlib.metadata.version("torch") >= "2.2"', ((2, 2), "orelse", True)),
    ],
)
def test_gate_forms(test: str, expected: tuple[object, ...]) -> None:
    source = "import importlib.metadata\n" if "importlib" in test else ""
    assert summary(gate(test, source)) == expected


@pytest.mark.parametrize(
    "test",
    [
        'torch.__version__ >= "2.3" and torch.cuda.is_available()',  # the else branch also runs on new torch
        'torch.__version__.startswith("2.1")',  # 2.10 to 2.19 as well
        "sys.version_info >= (3, 8)",
        'numpy.__version__ >= "2.0"',
        'version.parse(np.__version__) >= version.parse("2.0")',
        "TORCH_MINOR < 8",  # a minor without its major (and unknown)
        "x > 2",
        "is_available()",
        "hasattr(np, 'float128')",
        'is_torchvision_greater_or_equal("0.29")',  # another package's release
        'torch.__version__ >= "2.3" or torch.__version__ < "2.3"',  # both ways: no gate
        'utils.item(state.get("version", torch.Tensor([1]))[0]) < 2',
    ],
)
def test_no_gate(test: str) -> None:
    assert gate(test) is None


@pytest.mark.parametrize(
    ("defs", "test", "expected"),
    [
        ('TORCH_GE_1_8_0 = version.parse(torch.__version__) >= version.parse("1.8.0")\n', "TORCH_GE_1_8_0",
         ((1, 8), "orelse", True)),
        ('NEW = version.parse(torch.__version__) >= version.parse("1.8.0")\n', "not NEW", ((1, 8), "body", True)),
        (
            "from lightning_utilities.core.imports import compare_version\n"
            '_TORCH_GREATER_EQUAL_2_4 = compare_version("torch", operator.ge, "2.4.0")\n',
            "_TORCH_GREATER_EQUAL_2_4",
            ((2, 4), "orelse", True),
        ),
        ('TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])\n',
         "TORCH_MAJOR == 1 and TORCH_MINOR < 8", ((1, 8), "body", True)),
        ('TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])\n',
         "TORCH_MAJOR > 1 or TORCH_MINOR >= 8", ((1, 8), "orelse", True)),
        ('TORCH_VERSION = tuple(int(x) for x in torch.__version__.split(".")[:2])\n', "TORCH_VERSION >= (1, 10)",
         ((1, 10), "orelse", True)),
        ("from mmcv.utils import digit_version\n", 'digit_version(torch.__version__) >= digit_version("1.8")',
         ((1, 8), "orelse", True)),
        ("from mmengine.utils import digit_version\n", 'digit_version(torch.__version__) < digit_version("2.0")',
         ((2,), "body", True)),
        # a parser of the file's own, found by what it computes (mmcv's digit_version)
        (
            """
            def digit_version(version_str: str, length: int = 4):
                parsed = version.parse(version_str)
                release = list(parsed.release)
                return tuple(release)
            """,
            'digit_version(torch.__version__) >= digit_version("1.8")',
            ((1, 8), "orelse", True),
        ),
        # accelerate's helper, defined in the file
        (
            """
            torch_version = version.parse(importlib.metadata.version("torch"))
            def is_torch_version(operation: str, version: str):
                return compare_versions(torch_version, operation, version)
            """,
            'is_torch_version("<", "2.3")',
            ((2, 3), "body", True),
        ),
        ("from accelerate.utils import is_torch_version\n", 'is_torch_version(">=", "2.3")', ((2, 3), "orelse", True)),
        ("from transformers.utils import is_torch_greater_or_equal\n", 'not is_torch_greater_or_equal("2.4")',
         ((2, 4), "body", True)),
        # transformers' helper, defined in the file
        (
            """
            def is_torch_greater_or_equal(library_version: str):
                if not _torch_available:
                    return False
                return version.parse(torch.__version__) >= version.parse(library_version)
            """,
            'is_torch_greater_or_equal("2.4")',
            ((2, 4), "orelse", True),
        ),
        # found by what it computes, whatever its name
        (
            "def new_enough(v):\n    return version.parse(torch.__version__) >= version.parse(v)\n",
            'new_enough("2.4")',
            ((2, 4), "orelse", True),
        ),
        ('def torch_version_at_least(v):\n    return torch.__version__ >= v\n', 'torch_version_at_least("2.4")',
         ((2, 4), "orelse", True)),
        ('def base():\n    return version.parse(torch.__version__.split("+")[0])\n', 'base() < version.parse("1.9")',
         ((1, 9), "body", True)),
        ('F = torch.__version__ >= "2.1"\n', "F == False", ((2, 1), "body", True)),
    ],
)
def test_facts_of_the_file(defs: str, test: str, expected: tuple[object, ...]) -> None:
    source = "import importlib.metadata\n" + textwrap.dedent(defs)
    assert summary(gate(test, source)) == expected


@pytest.mark.parametrize(
    ("defs", "test"),
    [
        ('FLAG = version.parse(torch.__version__) >= version.parse("1.8")\nFLAG = False\n', "FLAG"),  # bound twice
        ("def new_enough(v):\n    return version.parse(np.__version__) >= version.parse(v)\n", 'new_enough("2.4")'),
        ("def check(v):\n    print(v)\n    return v\n", 'check("2.4")'),
        ('SPLIT = torch.__version__.split(".")\n', "SPLIT"),
    ],
)
def test_no_fact(defs: str, test: str) -> None:
    assert gate(test, defs) is None


def test_facts_are_json_and_cross_modules() -> None:
    """What one file defines, stored as JSON and merged, resolves a constant another file imports."""
    imports = ast.parse(HEADER + '_TORCH_GE_2_4 = version.parse(torch.__version__) >= version.parse("2.4")\n')
    facts = collect_gate_facts(imports, "pkg.imports")
    stored = GateFacts.from_json(json.loads(json.dumps(facts.to_json())))
    user = ast.parse("from .imports import _TORCH_GE_2_4 as NEW\nif NEW:\n    pass\n")
    own = collect_gate_facts(user, "pkg.model")
    found = evaluate_gate(user.body[-1].test, file_qualified_name(user, "pkg.model"), own.merge(stored))  # type: ignore[attr-defined]
    assert summary(found) == ((2, 4), "orelse", True)
    assert summary(evaluate_gate(user.body[-1].test, file_qualified_name(user, "pkg.model"), own)) is None  # type: ignore[attr-defined]


# -- findings in gated branches (torchup/analysis/old_torch.py) ----------------------------------


def codes(source: str, floor: str | None = None, select: tuple[str, ...] = ("TU6",)) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(source).lstrip("\n"), path="snippet.py", select=list(select), from_version=floor)
    return [(d.line, d.code) for d in found]


ACCELERATE_HELPER = """
import importlib.metadata
import torch
from packaging import version

torch_version = version.parse(importlib.metadata.version("torch"))


def is_torch_version(operation: str, version: str):
    return compare_versions(torch_version, operation, version)


if is_torch_version(">=", "2.3"):
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()
"""
ACCELERATE_IMPORTED = """
import torch
from accelerate.utils import is_torch_version

if is_torch_version(">=", "2.3"):
    scaler = torch.amp.GradScaler("cuda")
else:
    scaler = torch.cuda.amp.GradScaler()
"""


@pytest.mark.parametrize("source", [ACCELERATE_HELPER, ACCELERATE_IMPORTED], ids=["defined", "imported"])
def test_accelerate_grad_scaler(source: str) -> None:
    assert codes(source, "2.0", select=("ALL",)) == []
    assert codes(source, None, select=("ALL",)) == []
    at_floor = check_source(textwrap.dedent(source).lstrip("\n"), path="snippet.py", from_version="2.5")
    assert [d.code for d in at_floor] == ["TU801"]
    assert "runs only on torch < 2.3 (`is_torch_version(\">=\", \"2.3\")`); the project's floor is 2.5" in at_floor[0].message
    fixed = fix_source(textwrap.dedent(source).lstrip("\n"), path="snippet.py", from_version="2.5").source
    assert fixed.endswith('\nscaler = torch.amp.GradScaler("cuda")\n')
    assert "torch.cuda.amp" not in fixed and "if " not in fixed


@pytest.mark.parametrize(
    "source",
    [
        # an early exit on new torch leaves the rest of the block to old torch
        """
        import torch
        from accelerate.utils import is_torch_version
        def make():
            if is_torch_version(">=", "2.3"):
                return torch.amp.GradScaler("cuda")
            return torch.cuda.amp.GradScaler()
        """,
        """
        import torch
        def make():
            if not _TORCH_GREATER_EQUAL_2_3:
                pass
            else:
                return torch.amp.GradScaler("cuda")
            return torch.cuda.amp.GradScaler()
        """,
        # an elif chain: the else runs on old torch only
        """
        import torch
        if torch.__version__ >= "2.5":
            scaler = torch.amp.GradScaler("cuda")
        elif torch.__version__ >= "2.3":
            scaler = torch.amp.GradScaler("cuda")
        else:
            scaler = torch.cuda.amp.GradScaler()
        """,
        """
        import torch
        from packaging import version
        TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])
        if TORCH_MAJOR == 2 and TORCH_MINOR < 3:
            scaler = torch.cuda.amp.GradScaler()
        """,
    ],
)
def test_old_branches_are_not_reported(source: str) -> None:
    for floor in (None, "2.0", "2.5"):
        assert codes(source, floor) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # after an early exit on old torch, the rest runs on new torch
        (
            """
            import torch
            from accelerate.utils import is_torch_version
            def make():
                if is_torch_version("<", "2.3"):
                    return None
                return torch.cuda.amp.GradScaler()
            """,
            [(6, "TU602")],
        ),
        # a gate whose old branch runs on the target too (major 2 includes 2.14)
        (
            """
            import torch
            if int(torch.__version__.split(".")[0]) == 2:
                scaler = torch.cuda.amp.GradScaler()
            """,
            [(3, "TU602")],
        ),
        # the else of `new and something`: new torch takes it too
        (
            """
            import torch
            if torch.__version__ >= "2.3" and torch.cuda.is_available():
                pass
            else:
                scaler = torch.cuda.amp.GradScaler()
            """,
            [(5, "TU602")],
        ),
    ],
)
def test_live_branches_are_reported(source: str, expected: list[tuple[int, str]]) -> None:
    assert codes(source) == expected


# -- TU801 ----------------------------------------------------------------------------------------


def fixed(source: str, floor: str, unsafe: bool = False) -> str:
    text = textwrap.dedent(source).lstrip("\n")
    return fix_source(text, path="snippet.py", select=["TU801"], unsafe_fixes=unsafe, from_version=floor).source


def tu801(source: str, floor: str | None) -> list[int]:
    return [line for line, _ in codes(source, floor, select=("TU801",))]


GATED = """
import torch
from packaging import version

if version.parse(torch.__version__) >= version.parse("2.3"):
    mode = "new"
else:
    mode = "old"
"""


@pytest.mark.parametrize(("floor", "expected"), [(None, []), ("1.13", []), ("2.2", []), ("2.3", [4]), ("2.5", [4])])
def test_floor_below_at_above(floor: str | None, expected: list[int]) -> None:
    assert tu801(GATED, floor) == expected


def test_patch_releases_count() -> None:
    source = 'import torch\nif torch.__version__ <= "2.3":\n    mode = "old"\n'
    assert tu801(source, "2.3") == []  # 2.3.0 takes the branch
    assert tu801(source, "2.4") == [2]


@pytest.mark.parametrize(
    ("source", "floor", "expected"),
    [
        # the old branch first, a comment in the kept one
        (
            """
            import torch
            def f(n):
                if torch.__version__ < "2.0":
                    # old
                    return torch.ones(n, n)
                else:
                    # new
                    return torch.ones((n, n))
            """,
            "2.1",
            """
            import torch
            def f(n):
                # new
                return torch.ones((n, n))
            """,
        ),
        # no else: the whole statement goes
        (
            """
            import torch
            x = 1
            if torch.__version__ < "2.0":  # old
                x = 2
            y = x
            """,
            "2.0",
            """
            import torch
            x = 1
            y = x
            """,
        ),
        # the only statement of its block: pass stays
        (
            """
            import torch
            def f():
                if torch.__version__ < "2.0":
                    g()
            """,
            "2.0",
            """
            import torch
            def f():
                pass
            """,
        ),
        # a test that is always true: its body stays
        (
            """
            import torch
            for i in range(3):
                if torch.__version__ >= "1.9":
                    a = i
                    b = i  # kept
            """,
            "2.0",
            """
            import torch
            for i in range(3):
                a = i
                b = i  # kept
            """,
        ),
        # an elif chain: the elif becomes the if
        (
            """
            import torch
            if torch.__version__ < "1.9":
                mode = 1
            elif cuda:
                mode = 2
            else:
                mode = 3
            """,
            "2.0",
            """
            import torch
            if cuda:
                mode = 2
            else:
                mode = 3
            """,
        ),
        # the new branch kept, the elif/else chain of old ones removed
        (
            """
            import torch
            if torch.__version__ >= "2.3":
                mode = 1
            elif torch.__version__ >= "2.0":
                mode = 2
            else:
                mode = 3
            """,
            "2.5",
            """
            import torch
            mode = 1
            """,
        ),
        # a one-line branch
        (
            """
            import torch
            if torch.__version__ >= "2.3": mode = 1
            else: mode = 3
            """,
            "2.5",
            """
            import torch
            mode = 1
            """,
        ),
        # a ternary
        (
            """
            import torch
            mode = "new" if torch.__version__ >= (2, 3) else "old"
            """,
            "2.5",
            """
            import torch
            mode = "new"
            """,
        ),
        # a file's constant
        (
            """
            import torch
            TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])
            if TORCH_MAJOR == 1 and TORCH_MINOR < 8:
                mode = 1
            else:
                mode = 2
            """,
            "1.8",
            """
            import torch
            TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])
            mode = 2
            """,
        ),
    ],
)
def test_fix_keeps_the_live_branch(source: str, floor: str, expected: str) -> None:
    assert fixed(source, floor) == textwrap.dedent(expected).lstrip("\n")


def test_flags_known_by_name_only_fix_unsafely() -> None:
    source = """
    from lightning.fabric.utilities.imports import _TORCH_GREATER_EQUAL_2_1
    if _TORCH_GREATER_EQUAL_2_1:
        mode = 1
    else:
        mode = 2
    """
    assert tu801(source, "2.4") == [2]
    assert fixed(source, "2.4") == textwrap.dedent(source).lstrip("\n")
    assert fixed(source, "2.4", unsafe=True).endswith("_TORCH_GREATER_EQUAL_2_1\nmode = 1\n")


@pytest.mark.parametrize(
    "source",
    [
        # a string that spans lines in the kept branch: dedenting would change it
        '''
        import torch
        def f():
            if torch.__version__ >= "2.0":
                doc = """a
                b"""
            else:
                doc = ""
        ''',
        # the gate is an elif
        """
        import torch
        if cuda:
            mode = 0
        elif torch.__version__ >= "2.0":
            mode = 1
        else:
            mode = 2
        """,
    ],
)
def test_no_fix_where_no_exact_rewrite(source: str) -> None:
    assert tu801(source, "2.5") != []
    assert fixed(source, "2.5", unsafe=True) == textwrap.dedent(source).lstrip("\n")


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nif hasattr(torch, 'compile'):\n    mode = 1\nelse:\n    mode = 2\n",  # release unknown
        'import torch\nif torch.__version__ >= "2.3" and cuda:\n    mode = 1\nelse:\n    mode = 2\n',
        'import sys\nif sys.version_info >= (3, 8):\n    mode = 1\nelse:\n    mode = 2\n',
    ],
)
def test_tu801_leaves_alone(source: str) -> None:
    assert tu801(source, "2.5") == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # an early exit on new torch: the old rest of the block goes with the gate
        (
            """
            import torch
            def make():
                if torch.__version__ >= "2.3":
                    return torch.amp.GradScaler("cuda")
                # old torch
                scaler = torch.cuda.amp.GradScaler()
                return scaler
            x = 1
            """,
            """
            import torch
            def make():
                return torch.amp.GradScaler("cuda")
            x = 1
            """,
        ),
        # an early exit on old torch: the gate goes, the rest stays
        (
            """
            import torch
            def make():
                if torch.__version__ < "2.3":
                    return torch.cuda.amp.GradScaler()
                return torch.amp.GradScaler("cuda")
            """,
            """
            import torch
            def make():
                return torch.amp.GradScaler("cuda")
            """,
        ),
    ],
)
def test_fix_early_exits(source: str, expected: str) -> None:
    assert fixed(source, "2.5") == textwrap.dedent(expected).lstrip("\n")


PREFILTERED = [
    GATED,
    ACCELERATE_HELPER,
    ACCELERATE_IMPORTED,
    # a name the file derives, tested in a function whose body spells no version word
    """
    import torch
    TORCH_MAJOR, TORCH_MINOR = map(int, torch.__version__.split(".")[:2])
    def f():
        if TORCH_MAJOR == 1 and TORCH_MINOR < 8:
            return 1
        return 2
    """,
    # a helper of the file, the same
    """
    import torch
    from packaging import version
    def new_enough(v):
        return version.parse(torch.__version__) >= version.parse(v)
    def f():
        return 1 if new_enough("1.9") else 2
    """,
    # a test spread over lines
    """
    import torch
    def f():
        if (
            torch.__version__ < "1.9"
        ):
            return 1
        return 2
    """,
]


@pytest.mark.parametrize("source", PREFILTERED)
def test_the_prefilter_finds_the_same(source: str) -> None:
    rule = rule_by_code("TU801")
    assert rule is not None
    settings = FileSettings((rule,), from_version="2.5")
    text = textwrap.dedent(source).lstrip("\n")
    found = []
    for prefilter in (True, False):
        checker = Checker([rule], prefilter=prefilter, settings_for=lambda _path: settings)
        found.append([(d.line, d.code) for d in checker.analyze_alone(SourceFile.from_bytes("s.py", text.encode())).diagnostics])
    assert found[0] == found[1] != []
