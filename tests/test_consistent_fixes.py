"""A fix is consistent across the project: when a name is rewritten, every reference that observes it
moves with it, or none does (torchup.analysis.project, torchup.analysis.patch_targets, TU602).

The three cases come from ignite v0.4.11's own tests after `torchup fix`: a mock of
`torch.cuda.amp.autocast` that stopped seeing the library's calls, a `try: from torch.cuda.amp import
autocast / except ImportError:` emptied into `pass`, and an `isinstance(s, torch.cuda.amp.GradScaler)`
left behind while the scaler's creation moved to `torch.amp.GradScaler`.
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import fix
from torchup.analysis.importer import probing_imports
from torchup.cli.main import main


def write(root: Path, files: dict[str, str]) -> None:
    """The project's files, and its torch requirement: `torch.amp.GradScaler` is new in 2.3, so an
    older floor would keep the fixes back for another reason (torchup.analysis.fix_window)."""
    (root / "requirements.txt").write_text("torch>=2.4\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def findings(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["check", "--no-cache", "--select", "TU602", "--output-format", "json", *args, str(root)])
    return json.loads(capsys.readouterr().out)


def run_fix(root: Path, *args: str) -> dict[str, str]:
    """`torchup fix` over the project (TU602 only); the texts of its files after it."""
    main(["fix", "--no-cache", "--select", "TU602", *args, str(root)])
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def settled(root: Path, *args: str) -> None:
    """A second fix changes nothing."""
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    run_fix(root, *args)
    assert before == {p: p.read_bytes() for p in root.rglob("*.py")}


# -- 1. a mock of a rewritten name --------------------------------------------------------------------

AUTOCAST_LIBRARY = """
    import torch

    def step(model, x):
        from torch.cuda.amp import autocast
        with autocast(enabled=True):
            return model(x)
"""


@pytest.mark.parametrize(
    ("mock", "moved"),
    [
        ('mock.patch("torch.cuda.amp.autocast")', 'mock.patch("torch.amp.autocast")'),
        ('mock.patch.object(torch.cuda.amp, "autocast")', 'mock.patch.object(torch.amp, "autocast")'),
        ("mock.patch('ignite.engine.torch.cuda.amp.autocast')", "mock.patch('ignite.engine.torch.amp.autocast')"),
        ('mock.patch("torch.cuda.amp.autocast", wraps=torch.cuda.amp.autocast)',
         'mock.patch("torch.amp.autocast", wraps=torch.amp.autocast)'),
    ],
)
def test_a_mock_that_cannot_move_exactly_keeps_the_calls_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mock: str, moved: str
) -> None:
    write(tmp_path, {"ignite/engine.py": AUTOCAST_LIBRARY, "tests/test_engine.py": f"""
        from unittest import mock
        import torch
        from ignite.engine import step

        def test_step_uses_autocast():
            with {mock} as autocast:
                step(lambda x: x, 1)
            autocast.assert_called_once_with(enabled=True)
    """})
    found = findings(capsys, tmp_path)
    call = next(f for f in found if f["path"].endswith("engine.py") and f["fix"] is not None)
    assert call["fix"]["applicability"] == "unsafe"
    assert any("test_engine.py:6:" in note and "unsafe" in note for note in call["notes"]), call["notes"]
    patches = [f for f in found if f["path"].endswith("test_engine.py") and f["line"] == 6]
    assert patches and all(f["fix"] is None or f["fix"]["applicability"] == "unsafe" for f in patches), patches
    # safe fixes: neither the calls nor the mock change
    texts = run_fix(tmp_path)
    assert "with autocast(enabled=True):" in texts["ignite/engine.py"]
    assert mock in texts["tests/test_engine.py"]
    # unsafe fixes: both change, together
    texts = run_fix(tmp_path, "--unsafe-fixes")
    assert 'torch.amp.autocast("cuda", enabled=True, dtype=torch.float16)' in texts["ignite/engine.py"]
    assert moved in texts["tests/test_engine.py"]
    settled(tmp_path, "--unsafe-fixes")


def test_without_a_mock_the_calls_move_in_safe_mode(tmp_path: Path) -> None:
    write(tmp_path, {"ignite/engine.py": AUTOCAST_LIBRARY, "tests/test_engine.py": """
        from unittest import mock
        from ignite.engine import step

        def test_step():
            with mock.patch("torch.amp.autocast") as autocast:  # already the new name: not a finding
                step(lambda x: x, 1)
    """})
    texts = run_fix(tmp_path)
    assert 'with torch.amp.autocast("cuda", enabled=True, dtype=torch.float16):' in texts["ignite/engine.py"]
    assert "from torch.cuda.amp import autocast" not in texts["ignite/engine.py"]
    assert 'mock.patch("torch.amp.autocast")' in texts["tests/test_engine.py"]


def test_a_mock_of_an_unrewritten_name_gets_no_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"tests/test_engine.py": """
        from unittest import mock

        def test_nothing_calls_it():
            with mock.patch("torch.cuda.amp.GradScaler") as scaler:
                pass
    """})
    found = findings(capsys, tmp_path)
    assert len(found) == 1 and found[0]["fix"] is None
    assert "no call of `torch.cuda.amp.GradScaler`" in found[0]["notes"][0]


def test_a_read_by_name_gets_no_fix_and_holds_the_calls_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"ignite/engine.py": """
        import torch

        def step(model, x):
            with torch.cuda.amp.autocast(enabled=True):
                return model(x)

        def factory():
            return getattr(torch.cuda.amp, "autocast")
    """})
    found = findings(capsys, tmp_path)
    read = [f for f in found if f["line"] == 8]
    assert len(read) == 1 and read[0]["fix"] is None, read  # (not reported again as a use of the module)
    call = next(f for f in found if f["line"] == 4)
    assert call["fix"]["applicability"] == "unsafe"
    assert any("engine.py:8:" in note and "cannot rewrite" in note for note in call["notes"])
    assert "torch.cuda.amp.autocast(enabled=True)" in run_fix(tmp_path)["ignite/engine.py"]


# -- 2. an import whose failure the code handles --------------------------------------------------------

PROBING_LIBRARY = """
    import torch

    def step(model, x):
        try:
            from torch.cuda.amp import autocast
        except ImportError:
            raise ImportError("Please install torch>=1.6.0 to use amp_mode='amp'.")
        with autocast(enabled=True):
            return model(x)
"""


def test_an_import_the_code_probes_for_stays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"ignite/engine.py": PROBING_LIBRARY, "tests/test_engine.py": """
        import sys
        from unittest import mock
        import pytest
        from ignite.engine import step

        def test_step_without_amp():
            with mock.patch.dict(sys.modules, {"torch.cuda.amp": None}):
                with pytest.raises(ImportError, match="Please install"):
                    step(lambda x: x, 1)
    """})
    texts = run_fix(tmp_path)
    assert texts["ignite/engine.py"] == textwrap.dedent(PROBING_LIBRARY).lstrip("\n").replace(
        "with autocast(enabled=True):", 'with torch.amp.autocast("cuda", enabled=True, dtype=torch.float16):')
    settled(tmp_path)
    kept = next(f for f in findings(capsys, tmp_path) if f["line"] == 5)
    assert kept["fix"] is None and "keeps this import" in kept["help"]


@pytest.mark.parametrize(
    "handler", ["except ImportError:", "except (AttributeError, ModuleNotFoundError) as e:", "except Exception:",
                "except:", "except builtins.ImportError:"],
)
def test_every_handler_of_a_failed_import_keeps_it(handler: str) -> None:
    source = f"""
        import torch
        try:
            from torch.cuda.amp import GradScaler
        {handler}
            GradScaler = None
        scaler = torch.cuda.amp.GradScaler(enabled=False)
    """
    fixed = fix(textwrap.dedent(source), select=["TU602"])
    assert "    from torch.cuda.amp import GradScaler\n" in fixed
    assert 'scaler = torch.amp.GradScaler("cuda", enabled=False)' in fixed


@pytest.mark.parametrize(
    ("source", "gone"),
    [
        # not in a try: the import goes with its last use
        ("import torch\nfrom torch.cuda.amp import autocast\nwith autocast():\n    pass\n", True),
        # a handler that does not catch a failed import
        ("import torch\ntry:\n    from torch.cuda.amp import autocast\n    y = 1\nexcept KeyError:\n    pass\n"
         "with autocast():\n    pass\n", True),
        # in a function defined in the try: it runs later, unguarded
        ("import torch\ntry:\n    def f():\n        from torch.cuda.amp import autocast\n        with autocast():\n"
         "            pass\nexcept ImportError:\n    pass\n", True),
        # the import in the try's `else`: not guarded by it
        ("import torch\ntry:\n    import numpy\nexcept ImportError:\n    pass\nelse:\n"
         "    from torch.cuda.amp import autocast\n    with autocast():\n        pass\n", True),
    ],
)
def test_imports_outside_a_probe_still_go(source: str, gone: bool) -> None:
    fixed = fix(source, select=["TU602"])
    assert ("from torch.cuda.amp import autocast" not in fixed) is gone, fixed
    assert "torch.amp.autocast(" in fixed
    ast.parse(fixed)


def test_the_probing_imports_of_a_tree() -> None:
    star = "try:\n    import e\nexcept* ImportError:\n    pass\n" if sys.version_info >= (3, 11) else ""
    tree = ast.parse(star + textwrap.dedent("""
        try:
            import a
            if x:
                from b import c
        except ImportError:
            import d
        try:
            import f
        finally:
            pass
        def g():
            try:
                import h
            except (ValueError, ImportError):
                pass
    """))
    names = {alias.name for node in ast.walk(tree) if id(node) in probing_imports(tree)
             for alias in node.names}  # type: ignore[attr-defined]
    assert names == {"a", "c", "h"} | ({"e"} if star else set())


# -- 3. a check of a rewritten class ------------------------------------------------------------------


def test_an_isinstance_check_moves_with_the_class_it_checks(tmp_path: Path) -> None:
    write(tmp_path, {"ignite/engine.py": """
        import torch
        from torch.cuda.amp import GradScaler

        def make_scaler(enabled: bool) -> "GradScaler":
            return torch.cuda.amp.GradScaler(enabled=enabled)

        def check_scaler(scaler: torch.cuda.amp.GradScaler | bool) -> None:
            if not isinstance(scaler, (bool, GradScaler)):
                raise TypeError(scaler)
    """, "tests/test_engine.py": """
        import torch
        from ignite.engine import make_scaler

        def test_make_scaler():
            assert isinstance(make_scaler(False), torch.cuda.amp.GradScaler)
            assert issubclass(type(make_scaler(False)), torch.cuda.amp.GradScaler)
    """})
    texts = run_fix(tmp_path)
    engine = texts["ignite/engine.py"]
    assert 'return torch.amp.GradScaler("cuda", enabled=enabled)' in engine
    assert "def check_scaler(scaler: torch.amp.GradScaler | bool)" in engine
    assert "isinstance(scaler, (bool, torch.amp.GradScaler))" in engine
    assert "cuda.amp" not in texts["tests/test_engine.py"]
    assert "isinstance(make_scaler(False), torch.amp.GradScaler)" in texts["tests/test_engine.py"]
    settled(tmp_path)


def test_a_check_moves_even_where_nothing_is_created(tmp_path: Path) -> None:
    """The old class derives from the new one: the moved check holds for objects of either."""
    write(tmp_path, {"ignite/engine.py": """
        import torch

        def check_scaler(scaler):
            return isinstance(scaler, torch.cuda.amp.GradScaler)
    """})
    assert "isinstance(scaler, torch.amp.GradScaler)" in run_fix(tmp_path)["ignite/engine.py"]


def test_a_check_of_both_devices_is_unsafe(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = """
        import torch

        def device_of(scaler):
            if isinstance(scaler, torch.cuda.amp.GradScaler):
                return "cuda"
            if isinstance(scaler, torch.cpu.amp.GradScaler):
                return "cpu"
    """
    write(tmp_path, {"engine.py": source})
    checks = [f for f in findings(capsys, tmp_path) if f["fix"] is not None]
    assert len(checks) == 2 and all(f["fix"]["applicability"] == "unsafe" for f in checks)
    assert run_fix(tmp_path)["engine.py"] == textwrap.dedent(source).lstrip("\n")


def test_a_check_torchup_cannot_rewrite_holds_the_calls_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"engine.py": """
        import torch
        from torch.cuda.amp import GradScaler

        def make_scaler():
            return GradScaler(enabled=False)

        def check_scaler(scaler, torch=None):
            return isinstance(scaler, GradScaler)
    """})
    found = findings(capsys, tmp_path)
    check = next(f for f in found if f["line"] == 8)
    assert check["fix"] is None
    create = next(f for f in found if f["line"] == 5)
    assert create["fix"]["applicability"] == "unsafe"
    assert any("engine.py:8:" in note and "cannot rewrite" in note for note in create["notes"])
    assert "return GradScaler(enabled=False)" in run_fix(tmp_path)["engine.py"]


def test_an_import_a_string_annotation_names_stays() -> None:
    """`-> "GradScaler"` names the import the resolver sees no use of: it must not dangle."""
    source = textwrap.dedent("""
        import torch
        from torch.cuda.amp import GradScaler, autocast

        def make_scaler() -> "GradScaler":
            with autocast():
                return GradScaler(enabled=False)
    """)
    fixed = fix(source, select=["TU602"])
    assert "from torch.cuda.amp import GradScaler\n" in fixed
    assert 'return torch.amp.GradScaler("cuda", enabled=False)' in fixed and "torch.amp.autocast(" in fixed
