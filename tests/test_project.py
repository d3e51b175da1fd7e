"""What one file's findings owe to the rest of the project (torchup.analysis.project, torchup.analysis.patch_targets,
torchup.analysis.flow): mocks of a renamed function change with its calls or not at all, the project's own
methods are never rewritten, and evidence survives a reassignment."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from helpers import check, fix
from torchup.cli.main import main


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


LIBRARY = """
    import torch

    def factor(A):
        return torch.cholesky(A)

    def decompose(A):
        return torch.qr(A, some=False)
"""


def findings(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["check", "--no-cache", "--output-format", "json", *args, str(root)])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("test", "fixed"),
    [
        ('mock.patch("torch.cholesky", wraps=torch.cholesky)',
         'mock.patch("torch.linalg.cholesky", wraps=torch.linalg.cholesky)'),
        ("mock.patch.object(torch, 'cholesky', wraps=torch.cholesky)",
         "mock.patch.object(torch.linalg, 'cholesky', wraps=torch.linalg.cholesky)"),
        ('mock.patch("lib.ops.torch.cholesky", side_effect=torch.cholesky)',
         'mock.patch("lib.ops.torch.linalg.cholesky", side_effect=torch.linalg.cholesky)'),
    ],
)
def test_a_mock_by_name_is_fixed_with_the_calls(tmp_path: Path, test: str, fixed: str) -> None:
    write(tmp_path, {"lib/ops.py": LIBRARY, "tests/test_ops.py": f"""
        from unittest import mock
        import torch
        from lib import ops

        def test_factor():
            with {test} as m:
                ops.factor(torch.eye(2))
            assert m.call_count == 1
    """})
    assert main(["fix", "--no-cache", str(tmp_path)]) == 0
    assert fixed in (tmp_path / "tests/test_ops.py").read_text()
    assert "torch.linalg.cholesky(A)" in (tmp_path / "lib/ops.py").read_text()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.py")}
    assert main(["fix", "--no-cache", str(tmp_path)]) == 0  # a second fix changes nothing
    assert before == {p: p.read_bytes() for p in tmp_path.rglob("*.py")}


def test_monkeypatch_forms_and_a_saved_original_change_together(tmp_path: Path) -> None:
    write(tmp_path, {"lib/ops.py": LIBRARY, "tests/test_ops.py": """
        import torch
        from lib import ops

        def test_retry(monkeypatch):
            real = torch.cholesky
            calls = []

            def flaky(A, *args, **kwargs):
                calls.append(A)
                return real(A, *args, **kwargs)

            monkeypatch.setattr(torch, "cholesky", flaky)
            monkeypatch.setattr("torch.qr", lambda A, some=True: None)
            ops.factor(torch.eye(2))
    """})
    assert main(["fix", "--no-cache", str(tmp_path)]) == 0
    text = (tmp_path / "tests/test_ops.py").read_text()
    assert "real = torch.linalg.cholesky" in text
    assert 'monkeypatch.setattr(torch.linalg, "cholesky", flaky)' in text
    assert 'monkeypatch.setattr("torch.linalg.qr", lambda A, some=True: None)' in text


def test_a_mock_torchup_cannot_rewrite_keeps_the_calls_fix_unsafe_and_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"lib/ops.py": LIBRARY, "tests/test_ops.py": """
        from unittest import mock
        import torch

        def test_factor():
            with mock.patch("torch." "cholesky") as m:
                pass
    """})
    found = findings(capsys, tmp_path)
    call = next(f for f in found if f["path"].endswith("ops.py") and f["code"] == "TU101")
    assert call["fix"]["applicability"] == "unsafe"
    assert any("test_ops.py:5:" in note and "cannot rewrite" in note for note in call["notes"])
    mock_finding = next(f for f in found if f["path"].endswith("test_ops.py"))
    assert mock_finding["fix"] is None and mock_finding["code"] == "TU101"
    assert main(["fix", "--no-cache", str(tmp_path)]) == 1  # safe fixes only: the call stays as it is
    assert "torch.cholesky(A)" in (tmp_path / "lib/ops.py").read_text()


def test_one_unsafe_member_makes_the_group_unsafe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"lib/ops.py": """
        import torch

        def factor(A):
            return torch.cholesky(A)

        def flexible(A, *options):
            return torch.cholesky(A, *options)
    """, "tests/test_ops.py": """
        from unittest import mock

        def test_factor():
            with mock.patch("torch.cholesky") as m:
                pass
    """})
    found = findings(capsys, tmp_path)
    fixes = [f["fix"] for f in found if f["code"] == "TU101" and f["fix"] is not None]
    assert fixes and all(fix["applicability"] == "unsafe" for fix in fixes), found
    assert any("ops.py:7:12 has no fix" in note for f in found for note in f["notes"])


def test_a_mock_with_no_call_to_follow_gets_no_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"tests/test_ops.py": """
        from unittest import mock
        import torch

        def test_nothing_calls_it():
            with mock.patch("torch.cholesky") as m:
                torch.linalg.cholesky(torch.eye(2))
            assert m.call_count == 0
    """})
    found = findings(capsys, tmp_path)
    assert [f["code"] for f in found] == ["TU101"] and found[0]["fix"] is None
    assert "no call of `torch.cholesky`" in found[0]["notes"][0]


def test_patches_of_other_names_are_not_findings() -> None:
    assert check("""
        from unittest import mock
        import torch
        with mock.patch("torch.linalg.cholesky"), mock.patch.object(torch.linalg, "qr"):
            pass
        setattr(obj, "cholesky", f)
        mock.patch("mylib.LazyMatrix.cholesky")
        hasattr(torch, "cholesky")
    """) == []


# -- the project's own methods --------------------------------------------------------------------
OWN_CLASS = """
    import torch

    class LazyMatrix:
        def __init__(self, m):
            self.m = m

        def cholesky(self):
            return torch.linalg.cholesky(self.m)

        def qr(self):
            return torch.linalg.qr(self.m)
"""
USES = """
    import torch

    def root(lazy):
        return lazy.cholesky()

    def basis(lazy):
        return lazy.qr()

    def evident(n):
        cov = torch.randn(n, n)
        return (cov @ cov.mT).cholesky()

    def loaded(path):
        return torch.load(path, weights_only=True).cholesky()
"""


@pytest.mark.parametrize("unsafe", [False, True])
def test_no_fix_rewrites_a_call_the_projects_own_classes_explain(tmp_path: Path, unsafe: bool) -> None:
    write(tmp_path, {"lib/lazy.py": OWN_CLASS, "lib/uses.py": USES})
    main(["fix", "--no-cache", *(["--unsafe-fixes"] if unsafe else []), str(tmp_path)])
    text = (tmp_path / "lib/uses.py").read_text()
    assert "return lazy.cholesky()" in text and "return lazy.qr()" in text
    assert "torch.linalg.cholesky(cov @ cov.mT)" in text  # a tensor is still fixed


def test_the_finding_names_the_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A receiver of unknown type calling a method the project defines is the project's object
    (issue 22: GPyTorch's `LazyTensor.cholesky()`): no finding. One that is likely a tensor
    (`torch.load(...)`) keeps its finding, without a fix, naming the class."""
    write(tmp_path, {"lib/lazy.py": OWN_CLASS, "lib/uses.py": USES})
    every = [f for f in findings(capsys, tmp_path) if f["code"] in ("TU102", "TU104")]
    assert sorted((f["line"], f["confidence"]) for f in every) == [(11, "certain"), (14, "likely")]
    found = [f for f in every if f["fix"] is None]
    assert [f["line"] for f in found] == [14] and "`LazyMatrix.cholesky` (" in found[0]["notes"][0]
    # The same from the cache: a file's cached findings are adjusted again, with the other files'.
    capsys.readouterr()
    for _ in range(2):
        main(["check", "--output-format", "json", str(tmp_path)])
        cached = json.loads(capsys.readouterr().out)
        assert [f for f in cached if f["code"] == "TU102" and f["fix"] is None] == found


def test_without_such_a_class_the_unknown_receiver_keeps_its_unsafe_fix() -> None:
    fixed = fix("import torch\ndef root(m):\n    return m.cholesky()\n", unsafe=True)
    assert "torch.linalg.cholesky(m)" in fixed
    alone = fix("import torch\nclass L:\n    def cholesky(self):\n        return 1\ndef root(m):\n    return m.cholesky()\n",
                unsafe=True)
    assert "return m.cholesky()" in alone  # one file is the whole project for the API


# -- evidence across reassignment and names bound nowhere ------------------------------------------
@pytest.mark.parametrize(
    "code",
    [
        "import torch\ndef f(n):\n    cov = torch.randn(n, n)\n    cov = cov @ cov.t()\n    return cov.cholesky()\n",
        "import torch\ndef f(x):\n    matrix = torch.ones(3, 3)\n    matrix = matrix.matmul(x)\n    return matrix.cholesky()\n",
        "import torch\ndef f(cov):\n    cov = torch.as_tensor(cov)\n    return cov.cholesky()\n",
        "import torch\ndef f(cov, flag):\n    if flag:\n        cov = cov.t()\n    cov = torch.as_tensor(cov)\n    return cov.cholesky()\n",
    ],
)
def test_a_tensor_reassigned_stays_a_tensor(code: str) -> None:
    found = check(code, ["TU102"])
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability.value == "safe"


@pytest.mark.parametrize(
    "code",
    [
        # rebound later in a loop around the use: the next iteration sees the other value
        "import torch\ndef f(items):\n    m = torch.eye(3)\n    for item in items:\n        m.cholesky()\n        m = item\n",
        # rebound between the assignment and the use, on one branch
        "import torch\ndef f(x, flag):\n    m = torch.eye(3)\n    if flag:\n        m = x\n    return m.cholesky()\n",
    ],
)
def test_a_binding_that_may_intervene_leaves_the_receiver_unknown(code: str) -> None:
    found = check(code, ["TU102"])
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability.value == "unsafe"


def test_a_name_bound_nowhere_is_never_a_tensor() -> None:
    assert check("import torch\nL = tf.cholesky(A)\nQ = tf.linalg.qr(A)\n", ["TU102", "TU104"]) == []
    assert len(check("import torch\ntf = load()\nL = tf.cholesky(A)\n", ["TU102"])) == 1  # bound: unknown


def test_a_reexport_by_name_is_reported_and_keeps_the_calls_fix_unsafe() -> None:
    found = check('from torch import cholesky\n__all__ = ["cholesky", "factor"]\n\ndef factor(A):\n    return cholesky(A)\n')
    imported, reexport, call = found
    assert imported.line == 1 and "(imported)" in imported.message
    assert reexport.line == 2 and "re-exports `torch.cholesky`" in reexport.message and reexport.fix is None
    assert call.fix is not None and call.fix.applicability.value == "unsafe"
    assert "re-exported by name at snippet.py:2:12" in call.notes[0]


# Seen on real projects (bench/project_suites.py): GPyTorch's `torch.inverse(...)` result, geotorch's
# `X.new_empty(...)` rebound in a loop through `N - X @ N` and `N.qr().Q`.
@pytest.mark.parametrize(
    "code",
    [
        "import torch\ndef f(m):\n    Sigma = torch.inverse(-2 * m)\n    return Sigma.cholesky().inverse()\n",
        "import torch\ndef f(X):\n    N = X.new_empty(3, 3)\n    for _ in range(2):\n        N = N - X @ (X.mT @ N)\n"
        "        N = N.qr().Q\n    return N\n",
        "import torch\ndef f(a):\n    q = torch.linalg.qr(a).Q\n    return q.cholesky()\n",
    ],
)
def test_tensors_from_the_stubs_and_loops(code: str) -> None:
    found = check(code, ["TU102", "TU104"])
    assert found and all(d.fix is not None and d.fix.applicability.value == "safe" for d in found), found


def test_a_loop_that_may_rebind_to_something_else_stays_unknown() -> None:
    code = "import torch\ndef f(items):\n    m = torch.eye(3)\n    for item in items:\n        m = m.cholesky()\n        m = item\n"
    (finding,) = check(code, ["TU102"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


def test_the_methods_a_file_defines_read_from_greps_lines() -> None:
    """A `def word` line spells the word, so grep's lines of a file (``lines``) settle one that
    defines none of the methods without a search of the rest; the answer is the whole text's."""
    from torchup.analysis.project import defined_methods_in_text

    text = b"class Lazy:\n    '''cholesky'''\n    def cholesky(self):\n        pass\n\nx.cholesky()\n"
    words = frozenset({"cholesky"})
    starts = [0, *(i + 1 for i, byte in enumerate(text) if byte == 10)]
    lines = tuple((n, s) for n, s in enumerate(starts, 1) if b"cholesky" in text[s:text.find(b"\n", s)])
    assert [n for n, _ in lines] == [2, 3, 6]  # (what grep prints: the lines that spell the word)
    whole = defined_methods_in_text(text, words, "m.py")
    assert [(d.method, d.owner, d.line) for d in whole] == [("cholesky", "Lazy", 3)]
    assert defined_methods_in_text(text, words, "m.py", lines) == whole
    assert defined_methods_in_text(text, words, "m.py", tuple(line for line in lines if line[0] != 3)) == []
    assert defined_methods_in_text(text, words, "m.py", ((1, 5),)) == whole  # (not a line's start: the text)


def test_an_attribute_set_on_self_is_read_the_same_from_the_tree_and_the_text() -> None:
    import ast

    from torchup.analysis.project import defined_methods, defined_methods_in_text

    text = (
        "class A:\n    def __init__(self, flag):\n        self.require_grad = flag\n"
        "        self.require_grad_count: int = 0\n    def reset(me):\n        me.require_grad = None\n"
        "class B:\n    def f(self):\n        self.require_grad == 1\n"
        "def free(self):\n    self.require_grad = 1\n"
    )
    words = frozenset({"require_grad"})
    from_tree = defined_methods(ast.parse(text), None, words, "m.py", text)
    assert [(d.owner, d.line) for d in from_tree] == [("A", 3), ("A", 6)]
    from_text = defined_methods_in_text(text, words, "m.py")
    assert [(d.owner, d.line) for d in from_text] == [("A", 3)]  # (the text knows `self` only by its name)
