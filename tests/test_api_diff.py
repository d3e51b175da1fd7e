"""tools/api_diff.py on two small fake `torch` packages built here, as directories and as wheels.

The fakes raise on import, so a test passes only if the tool never imports what it compares.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from helpers import load_tool

ROOT = Path(__file__).resolve().parent.parent


TOOL = load_tool("api_diff")

BOOM = 'raise RuntimeError("the fake torch was imported")\n'

# What both releases share; OLD and NEW below add or replace files.
COMMON = {
    "torch/_tensor.py": "import torch\n\nclass Tensor(torch._C.TensorBase):\n    def backward(self, gradient=None): ...\n",
    "torch/utils/__init__.py": "",
    "torch/api.py": '__all__ = ["exported"]\n\ndef exported(x): ...\n',
    "torch/testing/__init__.py": "",
}

OLD = {
    **COMMON,
    "torch/__init__.py": BOOM + (
        "from typing import TYPE_CHECKING\n"
        "from torch._tensor import Tensor\n"
        "if TYPE_CHECKING:\n"
        "    from torch._C._VariableFunctions import *\n"
        '__all__ = ["Tensor", "compile"]\n'
        "for __name in dir(_C._VariableFunctions):\n"
        "    __all__.append(__name)\n"
        "def compile(model=None, *, fullgraph=False, shapes_spec=None): ...\n"
        "def get_num_thread(): ...\n"
    ),
    "torch/_C/__init__.pyi": (
        "class TensorBase:\n"
        "    def cholesky(self, upper: bool = False) -> Tensor: ...\n"
        "    def add(self, other: Tensor) -> Tensor: ...\n"
        "    def narrow(self, dim: int, start: int, length: int = ...) -> Tensor: ...\n"
    ),
    "torch/_C/_VariableFunctions.pyi": (
        '__all__ = ["cholesky", "add", "lu"]\n'
        "def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor: ...\n"
        "def add(input: Tensor, other: Tensor) -> Tensor: ...\n"
        "@overload\n"
        "def lu(A: Tensor, pivot: bool = ...) -> Tensor: ...\n"
        "@overload\n"
        "def lu(A: Tensor, pivot: bool = ..., *, get_infos: bool = ...) -> Tensor: ...\n"
    ),
    "torch/utils/helpers.py": (
        "import os\n"
        "from torch.api import exported\n"
        "def removed_fn(x): ...\n"
        "def old_name(tensor, dim, keepdim=False): ...\n"
        "def resize(x, size=None): ...\n"
        "def load(path, verbose=False, **kwargs): ...\n"
        "def save(obj, path, protocol=2): ...\n"
        "def reduce_event(event): ...\n"
        "def scale(x, factor): ...\n"
        "def pad(x, value=0): ...\n"
        "class Profiler:\n"
        "    def __init__(self, enabled=True, use_cuda=False): ...\n"
        "    def start(self): ...\n"
        "    def legacy_export(self, path): ...\n"
        "    @property\n"
        "    def metadata_json(self): ...\n"
        "    def _internal(self): ...\n"
        "class LazyModule:\n"
        "    def forward(self, x): ...\n"
    ),
    "torch/api.py": '__all__ = ["exported"]\n\ndef exported(x): ...\ndef not_exported(y): ...\n',
    "torch/_private_mod.py": "def gone(): ...\n",
    "torch/testing/_internal/common.py": "def gone_too(): ...\n",
}

NEW = {
    **COMMON,
    "torch/__init__.py": BOOM + (
        "from typing import TYPE_CHECKING\n"
        "from torch._tensor import Tensor\n"
        "if TYPE_CHECKING:\n"
        "    from torch._C._VariableFunctions import *\n"
        '__all__ = ["Tensor", "compile"]\n'
        "for __name in dir(_C._VariableFunctions):\n"
        "    __all__.append(__name)\n"
        "def compile(model=None, *, fullgraph=False, dynamic_shapes=None): ...\n"
        "from torch._linalg_utils import cholesky\n"
    ),
    "torch/_linalg_utils.py": (
        "def cholesky(input, upper=False, *, out=None):\n"
        '    """Removed."""\n'
        '    raise RuntimeError("torch.cholesky was removed: use torch.linalg.cholesky")\n'
    ),
    "torch/_tensor.py": (
        "import torch\n\n"
        "class Tensor(torch._C.TensorBase):\n"
        "    def backward(self, gradient=None): ...\n"
        "    def cholesky(self, upper=False):\n"
        "        from ._linalg_utils import cholesky\n\n"
        "        return cholesky(self, upper=upper)\n"
    ),
    "torch/_C/__init__.pyi": (
        "class TensorBase:\n"
        "    def add(self, other: Tensor) -> Tensor: ...\n"
        "    def narrow(self, dim: int, start: int, length: int = ...) -> Tensor: ...\n"
    ),
    "torch/_C/_VariableFunctions.pyi": (
        '__all__ = ["add", "lu"]\n'
        "def add(input: Tensor, other: Tensor) -> Tensor: ...\n"
        "@overload\n"
        "def lu(A: Tensor, *, device: str) -> Tensor: ...\n"
        "@overload\n"
        "def lu(A: Tensor, *, get_infos: bool, device: str) -> Tensor: ...\n"
    ),
    "torch/utils/helpers.py": (
        "import os\n"
        "from torch.api import exported\n"
        "def new_name(tensor, dim, keepdim=False): ...\n"
        "def resize(x, shape=None): ...\n"
        "def load(path, **kwargs): ...\n"
        "def save(obj, path, protocol=4): ...\n"
        "def _reduce_event(event): ...\n"
        "def scale(x, *, factor): ...\n"
        "def pad(x, mode=None, value=0): ...\n"
        "class Profiler:\n"
        "    def __init__(self, enabled=True): ...\n"
        "    def start(self): ...\n"
        "def _classes():\n"
        "    class LazyModule: ...\n"
        '    return {"LazyModule": LazyModule}\n'
        "def __getattr__(name):  # LazyModule is still there, built on first use\n"
        "    return _classes()[name]\n"
    ),
    "torch/api.py": '__all__ = ["exported"]\n\ndef exported(x): ...\n',
    "torch/testing/_internal/common.py": "",
}

# (change, name, parameter or new name): every entry the tool must report, and no other.
EXPECTED = {
    ("removed", "torch.Tensor.cholesky", None),  # TensorBase's stub method, now a forwarder to a raising function
    ("parameter-renamed", "torch.compile", "shapes_spec"),
    ("removed", "torch.cholesky", None),  # stub-only, star-imported from a private .pyi; now raises
    ("removed", "torch.get_num_thread", None),
    ("parameter-removed", "torch.lu", "pivot"),  # overloads: no new one has it
    ("parameter-added-required", "torch.lu", "device"),  # overloads: every new one requires it
    ("removed", "torch.utils.helpers.Profiler.legacy_export", None),
    ("removed", "torch.utils.helpers.Profiler.metadata_json", None),
    ("parameter-removed", "torch.utils.helpers.Profiler.__init__", "use_cuda"),
    ("parameter-removed", "torch.utils.helpers.load", "verbose"),
    ("parameter-moved", "torch.utils.helpers.pad", None),
    ("made-private", "torch.utils.helpers.reduce_event", "torch.utils.helpers._reduce_event"),
    ("removed", "torch.utils.helpers.removed_fn", None),
    ("renamed", "torch.utils.helpers.old_name", "torch.utils.helpers.new_name"),
    ("parameter-renamed", "torch.utils.helpers.resize", "size"),
    ("default-changed", "torch.utils.helpers.save", "protocol"),
    ("parameter-kind-changed", "torch.utils.helpers.scale", "factor"),
}


def key(entry: dict) -> tuple:
    third = entry["new_name"] if entry["change"] in ("renamed", "made-private") else entry["parameter"]
    return entry["change"], entry["name"], third


def write_tree(root: Path, files: dict[str, str], version: str) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / f"torch-{version}.dist-info").mkdir()
    return root


def write_wheel(path: Path, files: dict[str, str], version: str) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"torch-{version}.dist-info/METADATA", f"Name: torch\nVersion: {version}\n")
    return path


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    return write_tree(tmp_path / "old", OLD, "1.0.0"), write_tree(tmp_path / "new", NEW, "1.1.0")


def run_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "diff.json"
    assert TOOL.main([*args, "--format", "json", "--output", str(out)]) == 0
    return json.loads(out.read_text())


def test_directories(trees: tuple[Path, Path], tmp_path: Path) -> None:
    result = run_json(tmp_path, *map(str, trees))
    assert {key(e) for e in result["entries"]} == EXPECTED
    assert len(result["entries"]) == len(EXPECTED)
    assert (result["old"]["version"], result["new"]["version"]) == ("1.0.0", "1.1.0")


def test_wheels_read_in_place(tmp_path: Path) -> None:
    old = write_wheel(tmp_path / "torch-1.0.0-py3-none-any.whl", OLD, "1.0.0")
    new = write_wheel(tmp_path / "torch-1.1.0-py3-none-any.whl", NEW, "1.1.0")
    result = run_json(tmp_path, str(old), str(new))
    assert {key(e) for e in result["entries"]} == EXPECTED
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([old.name, new.name, "diff.json"])  # none extracted


def test_wheel_against_directory(trees: tuple[Path, Path], tmp_path: Path) -> None:
    new = write_wheel(tmp_path / "torch-1.1.0-py3-none-any.whl", NEW, "1.1.0")
    assert {key(e) for e in run_json(tmp_path, str(trees[0]), str(new))["entries"]} == EXPECTED


def test_details(trees: tuple[Path, Path], tmp_path: Path) -> None:
    entries = {key(e): e for e in run_json(tmp_path, *map(str, trees))["entries"]}
    cholesky = entries[("removed", "torch.cholesky", None)]
    assert cholesky["old_signature"] == "cholesky(input, upper=False, *, out=None)"
    assert cholesky["detail"] == "the name is kept, but calling it raises an error"
    assert entries[("removed", "torch.get_num_thread", None)]["detail"] is None
    resize = entries[("parameter-renamed", "torch.utils.helpers.resize", "size")]
    assert (resize["old_signature"], resize["new_signature"]) == ("resize(x, size=None)", "resize(x, shape=None)")
    assert resize["heuristic"] is True
    assert entries[("renamed", "torch.utils.helpers.old_name", "torch.utils.helpers.new_name")]["heuristic"] is True
    assert entries[("default-changed", "torch.utils.helpers.save", "protocol")]["detail"] == "`2` → `4`"
    assert entries[("parameter-removed", "torch.utils.helpers.load", "verbose")]["detail"] == (
        "now only accepted through **kwargs"
    )
    assert entries[("parameter-kind-changed", "torch.utils.helpers.scale", "factor")]["detail"] == (
        "positional-or-keyword → keyword-only"
    )
    assert entries[("parameter-moved", "torch.utils.helpers.pad", None)]["detail"] == "positions `value` 1 → 2"
    assert entries[("removed", "torch.utils.helpers.Profiler.metadata_json", None)]["kind"] == "property"
    tensor_cholesky = entries[("removed", "torch.Tensor.cholesky", None)]
    assert tensor_cholesky["old_signature"] == "cholesky(upper=False)"
    assert tensor_cholesky["origin"] == "torch._C:TensorBase.cholesky"  # inherited from a private base


def test_all_and_private_modules_bound_the_surface(trees: tuple[Path, Path]) -> None:
    api = TOOL.Api(TOOL.open_tree(str(trees[0]), "torch"), "torch", print)
    paths = set(TOOL.surface(api, []))
    assert "torch.api.exported" in paths
    assert "torch.api.not_exported" not in paths  # __all__ leaves it out
    assert not {p for p in paths if "gone" in p or "_internal" in p or "_private_mod" in p}
    assert "torch.utils.helpers.exported" not in paths  # a plain module's import is no re-export
    assert "torch.utils.helpers.os" not in paths
    assert "torch.utils.helpers.Profiler._internal" not in paths
    assert {"torch.Tensor.add", "torch.Tensor.narrow", "torch.add", "torch.cholesky"} <= paths


def test_include_unlisted(trees: tuple[Path, Path], tmp_path: Path) -> None:
    entries = run_json(tmp_path, *map(str, trees), "--include-unlisted")["entries"]
    unlisted = [key(e) for e in entries if not e["listed"]]
    assert unlisted == [("removed", "torch.api.not_exported", None)]
    assert {key(e) for e in entries if e["listed"]} == EXPECTED


def test_module_prefix(trees: tuple[Path, Path], tmp_path: Path) -> None:
    entries = run_json(tmp_path, *map(str, trees), "--module-prefix", "torch.utils")["entries"]
    assert {key(e) for e in entries} == {k for k in EXPECTED if k[1].startswith("torch.utils.")}


def test_markdown(trees: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert TOOL.main([*map(str, trees)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# torch API diff: 1.0.0 → 1.1.0\n")
    assert "| **total** | 17 |" in text
    assert "## torch.utils.helpers\n" in text
    assert "- `torch.utils.helpers.removed_fn` (function) — removed<br>old: `removed_fn(x)`\n" in text
    assert (
        "- `torch.utils.helpers.reduce_event` (function) — made private: `torch.utils.helpers._reduce_event`"
        "<br>old: `reduce_event(event)`\n"
    ) in text
    assert (
        "- `torch.cholesky` (function) — removed (the name is kept, but calling it raises an error)"
        "<br>old: `cholesky(input, upper=False, *, out=None)`\n"
    ) in text
    assert "- `torch.utils.helpers.save` (function) — default of `protocol` changed: `2` → `4`<br>" in text


def test_removals_json_keeps_other_pairs(trees: tuple[Path, Path], tmp_path: Path) -> None:
    removals = tmp_path / "removals.json"
    TOOL.main([*map(str, trees), "--output", str(tmp_path / "a.md"), "--removals-json", str(removals)])
    TOOL.main([*map(str, reversed(trees)), "--output", str(tmp_path / "b.md"), "--removals-json", str(removals)])
    pairs = json.loads(removals.read_text())["pairs"]
    assert [(p["old"], p["new"]) for p in pairs] == [("1.0.0", "1.1.0"), ("1.1.0", "1.0.0")]
    records = {(r["change"], r["name"]): r for r in pairs[0]["removals"]}
    assert set(records) == {(c, n) for c, n, _ in EXPECTED if c in TOOL.REMOVAL_CHANGES}
    assert records[("parameter-removed", "torch.utils.helpers.Profiler.__init__")] == {
        "name": "torch.utils.helpers.Profiler.__init__",
        "change": "parameter-removed",
        "kind": "method",
        "module": "torch.utils.helpers",
        "origin": "torch.utils.helpers:Profiler.__init__",
        "old_signature": "__init__(enabled=True, use_cuda=False)",
        "new_signature": "__init__(enabled=True)",
        "parameter": "use_cuda",
    }


@pytest.mark.parametrize("layout", ["site-packages", "package", "venv", "venv-python"])
def test_input_layouts(layout: str, tmp_path: Path) -> None:
    site = write_tree(tmp_path / "venv" / "lib" / "python3.11" / "site-packages", OLD, "1.0.0")
    (tmp_path / "venv" / "bin").mkdir()
    (tmp_path / "venv" / "bin" / "python").write_text("")  # found by layout, never run
    spec = {
        "site-packages": site,
        "package": site / "torch",
        "venv": tmp_path / "venv",
        "venv-python": tmp_path / "venv" / "bin" / "python",
    }[layout]
    tree = TOOL.open_tree(str(spec), "torch")
    assert tree.version == "1.0.0"
    assert "torch.utils.helpers" in tree.modules


def test_missing_package_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no `torch` package found"):
        TOOL.open_tree(str(tmp_path), "torch")


def test_one_entry_per_object(tmp_path: Path) -> None:
    """A name re-exported by a package is one entry, led by its shortest public path."""
    old = write_tree(tmp_path / "old", {**OLD, "torch/utils/__init__.py": "from .helpers import removed_fn\n"}, "1.0.0")
    new = write_tree(tmp_path / "new", NEW, "1.1.0")
    entries = [e for e in run_json(tmp_path, str(old), str(new))["entries"] if "removed_fn" in e["name"]]
    assert [(e["name"], e["aliases"], e["origin"]) for e in entries] == [
        ("torch.utils.removed_fn", ["torch.utils.helpers.removed_fn"], "torch.utils.helpers:removed_fn")
    ]
