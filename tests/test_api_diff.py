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


# --- tools/api_history.py: deprecations, changed defaults, the history of several releases ----------------

HISTORY = load_tool("api_history")

# Three releases: 1.0 has the old API; 1.1 deprecates most of it; 1.2 changes defaults and moves a module.
BASE = {
    "torch/__init__.py": BOOM + "from torch._C import *\nfrom torch import api, utils\n",
    "torch/_C/__init__.pyi": "def get_autocast_gpu_dtype() -> dtype: ...\n",
    "torch/utils/__init__.py": "",
    "torch/_helpers.py": (
        "import warnings\n"
        "def _warn_deprecated(name):\n"
        '    warnings.warn(f"`{name}` is deprecated", FutureWarning)\n'
        "def _check_verbose_deprecated_warning(verbose):\n"
        '    if verbose != "deprecated":\n'
        '        warnings.warn("The verbose parameter is deprecated", UserWarning)\n'
        "def _make_deprecate(meth):\n"
        "    def deprecated_init(*args, **kwargs):\n"
        '        warnings.warn(f"`{meth.__name__[:-1]}` is deprecated in favor of `torch.api.{meth.__name__}`",'
        " FutureWarning)\n"
        "        return meth(*args, **kwargs)\n"
        "    return deprecated_init\n"
        "def deprecated(since, instructions):\n"
        "    def decorator(function):\n"
        "        def wrapper(*args, **kwargs):\n"
        '            warnings.warn(f"deprecated since {since}: {instructions}", category=FutureWarning)\n'
        "            return function(*args, **kwargs)\n"
        "        return wrapper\n"
        "    return decorator\n"
    ),
    "torch/_C/_VariableFunctions.pyi": (
        '__all__ = ["lu_solve", "ger"]\n'
        "def ger(input: Tensor, vec2: Tensor) -> Tensor: ...\n"
        "def lu_solve(b: Tensor, LU: Tensor, pivots: Tensor) -> Tensor:\n"
        '    r"""lu_solve(b, LU, pivots) -> Tensor\n\n'
        "    .. warning::\n\n"
        "        :func:`torch.lu_solve` is deprecated in favor of :func:`torch.linalg.lu_solve`.\n"
        '    """\n'
    ),
}

V10 = {
    **BASE,
    "torch/api.py": (
        "from torch._C._VariableFunctions import ger, lu_solve\n"
        "__all__ = ['load', 'export', 'plain', 'uniform_', 'Scheduler', 'StepScheduler', 'autocast', 'checkpoint',\n"
        "           'assert_allclose', 'old_user_warning', 'unrelated_warning', 'via_helper', 'decorated_by_torch',\n"
        "           'new_style', 'lu_solve', 'ger']\n"
        "def load(f, *, weights_only=None):\n"
        "    if weights_only is None:\n"
        "        weights_only = False\n"
        "def export(model, dynamo=False): ...\n"
        "def plain(x): ...\n"
        "def uniform_(t): ...\n"
        "class Scheduler:\n"
        "    def __init__(self, optimizer, verbose='deprecated'): ...\n"
        "class StepScheduler(Scheduler):\n"
        "    def __init__(self, optimizer, step, verbose='deprecated'):\n"
        "        super().__init__(optimizer, verbose)\n"
        "class autocast:\n"
        "    def __init__(self, enabled=True): ...\n"
        "def checkpoint(fn, *args, use_reentrant=None): ...\n"
        "def assert_allclose(a, b): ...\n"
        "def old_user_warning(x): ...\n"
        "def unrelated_warning(x): ...\n"
        "def via_helper(x): ...\n"
        "def decorated_by_torch(x): ...\n"
        "def new_style(x): ...\n"
    ),
    "torch/utils/old_mod.py": "def f(): ...\n",
    "torch/distributed/__init__.py": "",
    "torch/distributed/_tensor/__init__.py": "from torch.api import plain\n",
    "torch/_functorch/deprecated.py": "import torch\ndef vmap(func):\n    return func\n",
    "functorch/__init__.py": "from torch._functorch.deprecated import vmap\n",
}

V11 = {
    **BASE,
    "torch/api.py": (
        "import warnings\n"
        "from typing_extensions import deprecated\n"
        "from torch._C._VariableFunctions import ger, lu_solve\n"
        "from torch._helpers import _check_verbose_deprecated_warning, _make_deprecate, _warn_deprecated\n"
        "from torch import _helpers\n"
        "def load(f, *, weights_only=None):\n"
        "    if weights_only is None:\n"
        '        warnings.warn("weights_only will default to True in a future release", FutureWarning)\n'
        "        weights_only, warn = False, True\n"
        "def export(model, dynamo=False): ...\n"
        "def plain(x): ...\n"
        "def uniform_(t): ...\n"
        "uniform = _make_deprecate(uniform_)\n"
        "__all__ = ['load', 'export', 'plain', 'uniform_', 'uniform', 'Scheduler', 'StepScheduler', 'autocast',\n"
        "           'checkpoint', 'assert_allclose', 'old_user_warning', 'unrelated_warning', 'via_helper',\n"
        "           'decorated_by_torch', 'new_style', 'lu_solve', 'checkpoint_seq', 'lu', 'ger']\n"
        "class Scheduler:\n"
        "    def __init__(self, optimizer, verbose='deprecated'):\n"
        "        _check_verbose_deprecated_warning(verbose)\n"
        "class StepScheduler(Scheduler):\n"
        "    def __init__(self, optimizer, step, verbose='deprecated'):\n"
        "        super().__init__(optimizer, verbose)\n"
        "class autocast:\n"
        "    @deprecated(\"`torch.api.autocast(...)` is deprecated. Please use `torch.amp.autocast(...)` instead.\","
        " category=FutureWarning)\n"
        "    def __init__(self, enabled=True): ...\n"
        "def checkpoint(fn, *args, use_reentrant=None):\n"
        "    if use_reentrant is None:\n"
        '        warnings.warn("use_reentrant should be passed explicitly. In a future release, calling it without'
        ' use_reentrant will raise an exception.")\n'
        "        use_reentrant = True\n"
        '@deprecated("`assert_allclose` is deprecated, use `torch.testing.assert_close`", category=DeprecationWarning)\n'
        "def assert_allclose(a, b): ...\n"
        "def checkpoint_seq(fn, *, use_reentrant=None):\n"
        "    return _checkpoint_seq_impl(fn, use_reentrant=use_reentrant)\n"
        "def _checkpoint_seq_impl(fn, use_reentrant=None):\n"
        "    if use_reentrant is None:\n"
        '        warnings.warn("use_reentrant should be passed: we will raise an exception otherwise")\n'
        "def _lu_impl(A):\n"
        '    """.. warning:: :func:`torch.api.lu` is deprecated in favor of :func:`torch.linalg.lu_factor`."""\n'
        "lu = dict(impl=_lu_impl)\n"
        "lu.__doc__ = _lu_impl.__doc__\n"
        "def old_user_warning(x):\n"
        '    warnings.warn("old_user_warning is deprecated and will be removed")\n'
        "def unrelated_warning(x):\n"
        '    warnings.warn("x is large", UserWarning)\n'
        "def via_helper(x):\n"
        '    _warn_deprecated("via_helper")\n'
        '@_helpers.deprecated("1.1", "use plain")\n'
        "def decorated_by_torch(x): ...\n"
        "@warnings.deprecated('gone soon')\n"
        "def new_style(x): ...\n"
        "_deprecated_attrs = {'has_cuda': None}\n"
        "_old_attrs = {'has_mps': None}\n"
        "_lazy = ['other']\n"
        "def __getattr__(name):\n"
        "    if name in _deprecated_attrs:\n"
        "        warnings.warn(f\"'{name}' is deprecated\", FutureWarning)\n"
        "    replacement = _old_attrs.get(name)\n"
        "    if replacement is not None:\n"
        "        warnings.warn(f\"'{name}' is deprecated\", FutureWarning)\n"
        "    if name in _lazy:\n"
        "        return 1\n"
    ),
    "torch/utils/old_mod.py": (
        'import warnings\nwarnings.warn("torch.utils.old_mod is deprecated", DeprecationWarning)\ndef f(): ...\n'
    ),
    "torch/distributed/__init__.py": "",
    "torch/distributed/_tensor/__init__.py": '"""NOTICE: DTensor has moved to torch.distributed.tensor"""\n'
    "from torch.api import plain\n",
    "torch/_functorch/deprecated.py": (
        "import warnings\n"
        "def get_warning(api):\n"
        '    warning = f"`functorch.{api}` is deprecated. Please use `torch.func.{api}` instead"\n'
        "    return warning\n"
        "def warn_deprecated(api):\n"
        "    warning = get_warning(api)\n"
        "    warnings.warn(warning, FutureWarning)\n"
        "def vmap(func):\n"
        '    warn_deprecated("vmap")\n'
        "    return func\n"
    ),
    "functorch/__init__.py": "from torch._functorch.deprecated import vmap\n",
    # before torch 2.3 the docstrings of C functions were set here, not in the stubs
    "torch/_torch_docs.py": (
        "import torch\nfrom torch._C import _add_docstr as add_docstr\n"
        'add_docstr(torch.api.ger, r"""ger(input, vec2) -> Tensor\n\n'
        '.. warning::\n    This function is deprecated and will be removed in a future PyTorch release."""\n)\n'
    ),
    # a warning raised in C++: only its message, compiled into the library, tells
    "torch/lib/libtorch_python.so": "\x7fELF\x00torch.get_autocast_gpu_dtype() is deprecated. Please use"
    " torch.get_autocast_dtype('cuda') instead.\x00torch.unknown_name() is deprecated.\x00",
}

V12 = {
    **V11,
    "torch/api.py": V11["torch/api.py"]
    .replace("        weights_only, warn = False, True\n", "        weights_only = True\n")
    .replace("def export(model, dynamo=False)", "def export(model, dynamo=True)"),
}

# (kind, name, parameter) -> the release that first shows it
EXPECTED_HISTORY = {
    ("deprecated", "torch.api.autocast", None): "1.1",
    ("deprecated", "torch.api.assert_allclose", None): "1.1",
    ("deprecated", "torch.api.old_user_warning", None): "1.1",
    ("deprecated", "torch.api.via_helper", None): "1.1",
    ("deprecated", "torch.api.decorated_by_torch", None): "1.1",
    ("deprecated", "torch.api.new_style", None): "1.1",
    ("deprecated", "torch.api.uniform", None): "1.1",
    ("deprecated", "torch.api.has_cuda", None): "1.1",
    ("deprecated", "torch.api.has_mps", None): "1.1",
    ("deprecated", "torch.api.lu_solve", None): "1.0",  # only its docstring says so (the warning is in C++)
    ("deprecated", "torch.api.ger", None): "1.1",  # the same, set by add_docstr in torch/_torch_docs.py
    ("deprecated", "functorch.vmap", None): "1.1",
    ("deprecated", "torch.get_autocast_gpu_dtype", None): "1.1",
    ("parameter-deprecated", "torch.api.Scheduler", "verbose"): "1.1",
    ("parameter-deprecated", "torch.api.StepScheduler", "verbose"): "1.1",  # through super().__init__
    ("parameter-deprecated", "torch.api.checkpoint", "use_reentrant"): "1.1",
    ("parameter-deprecated", "torch.api.checkpoint_seq", "use_reentrant"): "1.1",  # its _impl warns
    ("deprecated", "torch.api.lu", None): "1.1",  # a value whose __doc__ is a function's
    ("parameter-deprecated", "torch.api.load", "weights_only"): "1.1",
    ("module-deprecated", "torch.utils.old_mod", None): "1.1",
    ("module-deprecated", "torch.distributed._tensor", None): "1.1",
    ("default-changed", "torch.api.export", "dynamo"): "1.2",
    ("default-changed", "torch.api.load", "weights_only"): "1.2",
}


@pytest.fixture
def history_wheels(tmp_path: Path) -> list[Path]:
    return [
        write_wheel(tmp_path / f"torch-{v}-py3-none-any.whl", files, v)
        for v, files in (("1.0.0", V10), ("1.1.0", V11), ("1.2.0", V12))
    ]


def run_history(wheels: list[Path], tmp_path: Path) -> dict:
    data = HISTORY.history(wheels, tmp_path / "md", "python3 tools/api_history.py")
    return HISTORY.apply_confirmations({"_about": "test", **data}, None)


def test_history_finds_deprecations_and_defaults(history_wheels: list[Path], tmp_path: Path) -> None:
    data = run_history(history_wheels, tmp_path)
    found = {(r["kind"], r["name"], r.get("parameter")): r for r in data["changes"]}
    for key, release in EXPECTED_HISTORY.items():
        assert key in found, key
        assert found[key]["release"] == release, (key, found[key])
    assert data["releases"] == {"1.0": "1.0.0", "1.1": "1.1.0", "1.2": "1.2.0"}
    assert not any(r["name"] == "torch.api.unrelated_warning" for r in data["changes"])
    assert not any(r["name"] in ("torch.api.other", "torch.unknown_name") for r in data["changes"])
    assert not any(r["kind"] == "deprecated" and r["name"] in ("torch.api.Scheduler", "torch.api.checkpoint")
                   for r in data["changes"])  # only a parameter is deprecated
    assert ("parameter-deprecated", "torch.api.Scheduler", "optimizer") not in found


def test_history_records_evidence(history_wheels: list[Path], tmp_path: Path) -> None:
    found = {(r["kind"], r["name"], r.get("parameter")): r for r in run_history(history_wheels, tmp_path)["changes"]}
    autocast = found[("deprecated", "torch.api.autocast", None)]
    assert autocast["category"] == "FutureWarning"
    assert autocast["replacement"] == "torch.amp.autocast"
    assert autocast["evidence"]["wheel"] == "torch-1.1.0"
    assert autocast["evidence"]["file"] == "torch/api.py"
    assert autocast["evidence"]["how"] == "decorator typing_extensions.deprecated"
    assert autocast["evidence"]["warning"].startswith("`torch.api.autocast(...)` is deprecated.")
    assert found[("deprecated", "torch.api.assert_allclose", None)]["category"] == "DeprecationWarning"
    assert found[("deprecated", "torch.api.old_user_warning", None)]["category"] == "UserWarning"
    vmap = found[("deprecated", "functorch.vmap", None)]
    assert vmap["evidence"]["warning"] == "`functorch.{api}` is deprecated. Please use `torch.func.{api}` instead"
    assert vmap["evidence"]["how"] == "helper warn_deprecated('vmap')"
    assert vmap["evidence"]["file"] == "torch/_functorch/deprecated.py"
    verbose = found[("parameter-deprecated", "torch.api.Scheduler", "verbose")]
    assert verbose["evidence"]["warning"] == "The verbose parameter is deprecated"
    assert verbose["evidence"]["how"] == "helper _check_verbose_deprecated_warning(verbose)"
    lu_solve = found[("deprecated", "torch.api.lu_solve", None)]
    assert lu_solve["evidence"]["how"] == "docstring"
    assert lu_solve["evidence"]["file"] == "torch/_C/_VariableFunctions.pyi"
    assert lu_solve["replacement"] == "torch.linalg.lu_solve"
    native = found[("deprecated", "torch.get_autocast_gpu_dtype", None)]
    assert native["evidence"] == {
        "wheel": "torch-1.1.0",
        "file": "torch/lib/libtorch_python.so",
        "warning": "torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda') instead.",
        "how": "C++ message",
    }
    module = found[("module-deprecated", "torch.utils.old_mod", None)]
    assert (module["evidence"]["line"], module["category"]) == (2, "DeprecationWarning")
    dynamo = found[("default-changed", "torch.api.export", "dynamo")]
    assert (dynamo["old"], dynamo["new"]) == ("False", "True")
    weights_only = found[("default-changed", "torch.api.load", "weights_only")]
    assert (weights_only["old"], weights_only["new"]) == ("False", "True")
    assert "resolved in the body" in weights_only["evidence"]["detail"]
    assert all(r["confirmed_by_run"] is False for r in found.values())


def test_history_json_is_deterministic(history_wheels: list[Path], tmp_path: Path) -> None:
    first = HISTORY.dump(run_history(history_wheels, tmp_path))
    second = HISTORY.dump(run_history(history_wheels, tmp_path))
    assert first == second
    data = json.loads(first)
    assert list(data) == ["_about", "releases", "not_detectable", "changes"]
    keys = [(HISTORY.ad.version_key(r["release"]), r["kind"], r["name"]) for r in data["changes"]]
    assert sum(line.startswith(' {"release": ') for line in first.splitlines()) == len(data["changes"])  # one a line
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)


def test_history_writes_one_markdown_per_pair(history_wheels: list[Path], tmp_path: Path) -> None:
    run_history(history_wheels, tmp_path)
    assert sorted(p.name for p in (tmp_path / "md").iterdir()) == [
        "torch-1.0.0-to-1.1.0.md",
        "torch-1.1.0-to-1.2.0.md",
    ]
    text = (tmp_path / "md" / "torch-1.1.0-to-1.2.0.md").read_text()
    assert text.startswith("# torch API diff: 1.1.0 → 1.2.0\n")
    assert "default of `dynamo` changed: `False` → `True`" in text


def test_confirmations_mark_changes(history_wheels: list[Path], tmp_path: Path) -> None:
    data = HISTORY.history(history_wheels, None, "x")
    confirmed = {"probes": [{"kind": "deprecated", "name": "torch.api.autocast", "parameter": None, "confirmed": True},
                            {"kind": "deprecated", "name": "torch.api.via_helper", "parameter": None,
                             "confirmed": False}]}
    marked = {r["name"] for r in HISTORY.apply_confirmations(data, confirmed)["changes"] if r["confirmed_by_run"]}
    assert marked == {"torch.api.autocast"}


# The committed data: what the lead's rules are mapped from.
DATA = ROOT / "torchup" / "data" / "api_changes.json"
KNOWN = {
    ("default-changed", "torch.load", "weights_only", "2.6"),
    ("default-changed", "torch.onnx.export", "dynamo", "2.9"),
    ("deprecated", "torch.cuda.amp.autocast", None, "2.4"),
    ("deprecated", "torch.cuda.amp.GradScaler", None, "2.4"),
    ("deprecated", "torch.cuda.amp.custom_fwd", None, "2.4"),
    ("deprecated", "torch.cuda.amp.custom_bwd", None, "2.4"),
    ("deprecated", "torch.cpu.amp.autocast", None, "2.4"),
    ("deprecated", "torch.get_autocast_gpu_dtype", None, "2.4"),
    ("deprecated", "torch.lu", None, "2.0"),
}


def test_committed_api_changes() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    assert set(data) == {"_about", "releases", "not_detectable", "changes"}
    assert list(data["releases"]) == [HISTORY.minor(v) for v in HISTORY.RELEASES]
    for record in data["changes"]:
        assert {"release", "kind", "name", "evidence", "confirmed_by_run"} <= set(record), record
        assert record["release"] in data["releases"]
        assert record["kind"] in HISTORY.CHANGE_KINDS
        assert record["evidence"]["wheel"].startswith("torch-")
    found = {(r["kind"], r["name"], r.get("parameter"), r["release"]) for r in data["changes"]}
    assert found >= KNOWN, KNOWN - found
    assert HISTORY.dump(data) == DATA.read_text(encoding="utf-8")  # as the tool writes it
