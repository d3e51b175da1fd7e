"""tools/tensor_api.py and the tensor facts it writes into torchup/data/torch_api.json.

CI has no torch wheel: the committed data is checked for the shape the tool gives it, and the tool runs
on a small fake `torch` tree built here. The fake raises on import, so a test passes only if the tool
reads it statically.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import load_tool

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "torchup" / "data" / "torch_api.json"
GENERATED = ("tensor_functions", "tensor_methods", "torch_only_methods", "tensor_fields")


TOOL = load_tool("tensor_api")
FACTS = json.loads(DATA.read_text(encoding="utf-8"))


# The committed data


@pytest.mark.parametrize("key", ["tensor_functions", "tensor_methods", "torch_only_methods"])
def test_lists_are_sorted_names_without_duplicates(key: str) -> None:
    names = FACTS[key]
    assert names and all(isinstance(name, str) and name for name in names)
    assert names == sorted(set(names))


def test_tensor_fields_map_names_to_field_lists() -> None:
    fields = FACTS["tensor_fields"]
    assert list(fields) == sorted(fields)
    for name, names in fields.items():
        assert isinstance(names, list) and len(names) >= 2, name
        assert all(isinstance(field, str) and field.isidentifier() for field in names), name
        assert len(set(names)) == len(names), name


def test_each_generated_key_says_where_it_comes_from() -> None:
    keys = list(FACTS)
    for key in GENERATED:
        about = FACTS[f"_about_{key}"]
        assert "`python3 tools/tensor_api.py`" in about and "torch 2.13.0+cpu" in about, key
        assert keys.index(f"_about_{key}") == keys.index(key) - 1, key  # the comment sits right above
    assert "tools/tensor_api.py" in FACTS["_about"]


def test_the_lists_hold_together() -> None:
    methods = set(FACTS["tensor_methods"])
    only = set(FACTS["torch_only_methods"])
    assert only <= methods
    assert not only & set(TOOL.NOT_TORCH_ONLY)
    assert set(TOOL.NOT_TORCH_ONLY) <= methods, "an exclusion that is not a tensor method is stale"
    prefixes = tuple(f"{module}." for module in TOOL.FUNCTION_MODULES)
    assert all(name.startswith(prefixes) for name in FACTS["tensor_functions"])
    assert not any(name.rpartition(".")[2].startswith("_") for name in FACTS["tensor_functions"])
    assert not any(name.startswith("_") for name in methods)
    # A named tuple is not a Tensor: a name is in tensor_fields or returns a Tensor on every overload.
    assert not set(FACTS["tensor_fields"]) & (set(FACTS["tensor_functions"]) | methods)


def test_what_the_hand_lists_knew_is_still_known() -> None:
    functions = set(FACTS["tensor_functions"])
    for name in (
        "torch.inverse",
        "torch.linalg.inv",
        "torch.from_numpy",
        "torch.tensor",
        "torch.zeros",
        "torch.einsum",
        "torch.block_diag",
        "torch.cdist",
        "torch.linalg.multi_dot",
        "torch.nn.functional.relu",
        "torch.nn.functional.linear",
        "torch.fft.fft",
        "torch.special.erf",
    ):
        assert name in functions, name
    # torch.where(condition) returns a tuple of index tensors: not every overload is a Tensor.
    assert "torch.where" not in functions
    # Removed in 2.0, a stub that only raises in 2.13: not a tensor function.
    assert "torch.matrix_rank" not in functions
    methods = set(FACTS["tensor_methods"])
    for name in ("cholesky", "inverse", "to", "view", "cfloat", "cdouble", "new_empty", "unsqueeze", "zero_"):
        assert name in methods, name
    only = set(FACTS["torch_only_methods"])
    for name in (
        "new_empty",
        "new_zeros",
        "new_full",
        "new_tensor",
        "masked_fill",
        "index_select",
        "unsqueeze",
        "narrow",
        "normal_",
        "uniform_",
        "zero_",
        "fill_diagonal_",
        "triu_",
        "addmm",
    ):
        assert name in only, name
    for name in ("to", "cpu", "cuda", "float", "double", "detach", "view", "copy", "solve", "inverse", "t"):
        assert name not in only, name


def test_named_tuples_list_their_tensor_fields() -> None:
    fields = FACTS["tensor_fields"]
    assert fields["qr"] == fields["torch.qr"] == fields["torch.linalg.qr"] == ["Q", "R"]
    assert fields["svd"] == ["U", "S", "V"]
    assert fields["torch.linalg.svd"] == ["U", "S", "Vh"]
    assert fields["torch.linalg.eigh"] == ["eigenvalues", "eigenvectors"]
    assert fields["max"] == fields["torch.sort"] == fields["topk"] == ["values", "indices"]
    assert fields["torch.linalg.lu_factor"] == ["LU", "pivots"]
    assert fields["slogdet"] == ["sign", "logabsdet"]
    assert "torch.histogramdd" not in fields  # its bin_edges is a tuple of tensors, not a Tensor


def test_the_committed_file_is_laid_out_as_the_tool_writes_it(tmp_path: Path) -> None:
    copy = tmp_path / "torch_api.json"
    copy.write_text(DATA.read_text(encoding="utf-8"), encoding="utf-8")
    generated = {key: FACTS[key] for key in GENERATED}
    comments = {f"_about_{key}": FACTS[f"_about_{key}"] for key in GENERATED}
    assert not TOOL.write_facts(copy, generated, comments)
    assert copy.read_text(encoding="utf-8") == DATA.read_text(encoding="utf-8")


# The tool on a fake installation

BOOM = 'raise RuntimeError("the fake torch was imported")\n'

FAKE = {
    "torch/version.py": "__version__ = '9.9.0+cpu'\n",
    "torch/__init__.py": BOOM
    + (
        "from typing import TYPE_CHECKING\n"
        "from torch import _C as _C\n"
        "if TYPE_CHECKING:\n"
        "    from torch._C._VariableFunctions import *\n"
        "from torch.functional import *\n"
        "from torch._linalg_utils import matrix_rank\n"
        "from torch.random import get_rng_state\n"
    ),
    "torch/random.py": BOOM + "import torch\n\ndef get_rng_state() -> torch.Tensor: ...\ndef seed() -> int: ...\n",
    "torch/_linalg_utils.py": BOOM
    + 'def matrix_rank(input, tol=None) -> Tensor:\n    """Removed."""\n    raise RuntimeError("removed")\n',
    "torch/functional.py": BOOM
    + (
        '__all__ = ["block_diag", "einsum", "lu", "atleast_1d"]\n'
        "def block_diag(*tensors):\n    return torch._C._VariableFunctions.block_diag(tensors)\n"
        "def atleast_1d(*tensors):\n    return tensors\n"
        "def einsum(*args) -> Tensor: ...\n"
        "lu = boolean_dispatch(arg_name='get_infos')\n"
    ),
    "torch/_C/__init__.pyi": (
        "from typing import TypeVar, overload\n"
        "import torch\n"
        'S = TypeVar("S", bound=torch.Tensor)\n'
        "class TensorBase:\n"
        "    shape: Size\n"
        "    T: Tensor\n"
        "    def new_zeros(self, size) -> Tensor: ...\n"
        "    def add(self, other) -> Tensor: ...\n"
        "    def to(self: S, device) -> S: ...\n"
        "    def detach(self) -> Tensor: ...\n"
        "    def unflatten(self, dim, sizes) -> Tensor: ...\n"
        "    def tolist(self) -> list: ...\n"
        "    def qr(self) -> torch.return_types.qr: ...\n"
        "    @overload\n    def max(self) -> Tensor: ...\n"
        "    @overload\n    def max(self, dim: int) -> torch.return_types.max: ...\n"
        "    @property\n    def grad(self) -> Tensor: ...\n"
        "    def __add__(self, other) -> Tensor: ...\n"
    ),
    "torch/_C/_VariableFunctions.pyi": (
        "from torch import Tensor\n"
        '__all__ = ["inverse", "where", "max", "qr", "_private", "histogramdd"]\n'
        "def inverse(input: Tensor) -> Tensor: ...\n"
        "@overload\ndef where(condition: Tensor) -> tuple[Tensor, ...]: ...\n"
        "@overload\ndef where(condition: Tensor, input: Tensor, other: Tensor) -> Tensor: ...\n"
        "@overload\ndef max(input: Tensor) -> Tensor: ...\n"
        "@overload\ndef max(input: Tensor, dim: int) -> torch.return_types.max: ...\n"
        "def qr(input: Tensor) -> torch.return_types.qr: ...\n"
        "def histogramdd(input: Tensor) -> torch.return_types.histogramdd: ...\n"
        "def _private(input: Tensor) -> Tensor: ...\n"
    ),
    "torch/_C/_nn.pyi": "from torch import Tensor\ndef linear(input: Tensor, weight: Tensor) -> Tensor: ...\n",
    "torch/_tensor.py": BOOM
    + (
        "import torch\n"
        "import torch._C as _C\n"
        "class Tensor(torch._C.TensorBase):\n"
        '    detach = _C._add_docstr(_C.TensorBase.detach, "doc")\n'
        "    def unflatten(self, dim, sizes):\n        return super().unflatten(dim, sizes)\n"
        "    def backward(self, gradient=None) -> None: ...\n"
        "    def numpy(self):\n        ...\n"
    ),
    "torch/_tensor_docs.py": BOOM
    + (
        'add_docstr_all("cfloat", r"""\ncfloat(memory_format=torch.preserve_format) -> Tensor\n\nDoc.\n""")\n'
        'add_docstr_all("mystery", """\nmystery() -> int\n""".format())\n'
    ),
    "torch/return_types.pyi": (
        "from torch import Tensor\n"
        "class qr(tuple[Tensor, Tensor]):\n"
        "    @property\n    def Q(self) -> Tensor: ...\n"
        "    @property\n    def R(self) -> Tensor: ...\n"
        "class max(tuple[Tensor, Tensor]):\n"
        "    @property\n    def values(self) -> Tensor: ...\n"
        "    @property\n    def indices(self) -> Tensor: ...\n"
        "class histogramdd(tuple[Tensor, list[Tensor]]):\n"
        "    @property\n    def hist(self) -> Tensor: ...\n"
        "    @property\n    def bin_edges(self) -> list[Tensor]: ...\n"
    ),
    "torch/linalg/__init__.py": BOOM
    + (
        "from torch._C import _add_docstr, _linalg\n"
        'inv = _add_docstr(_linalg.linalg_inv, "inv(A) -> Tensor")\n'
        'qr = _add_docstr(_linalg.linalg_qr, "qr(A) -> (Tensor, Tensor)")\n'
        'multi_dot = _add_docstr(_linalg.linalg_multi_dot, "multi_dot(tensors)")\n'
        '_powsum = _add_docstr(_linalg.linalg__powsum, "")\n'
    ),
    "torch/fft/__init__.py": BOOM
    + (
        "from torch._C import _add_docstr, _fft\n"
        '__all__ = ["fft"]\n'
        'fft = _add_docstr(_fft.fft_fft, "")\n'
        'hfft2 = _add_docstr(_fft.fft_hfft2, "")  # public, though __all__ leaves it out\n'
    ),
    "torch/special/__init__.py": BOOM
    + (
        "import torch\n"
        "from torch._C import _add_docstr, _special\n"
        '__all__ = ["entr", "logsumexp"]\n'
        'entr = _add_docstr(_special.special_entr, "")\n'
        'logsumexp = _add_docstr(_special.special_logsumexp, "")\n'
    ),
    "torch/nn/__init__.py": BOOM,
    "torch/nn/functional.py": BOOM + "def relu(input, inplace=False):\n    ...\n",
    "torch/nn/functional.pyi": (
        "from typing import overload, Literal\n"
        "from torch import Tensor\n"
        '__all__ = ["relu"]\n'
        "def relu(input: Tensor, inplace: bool = False) -> Tensor: ...\n"
        '__all__ += ["max_pool2d"]\n'
        "@overload\ndef max_pool2d(input: Tensor, return_indices: Literal[False] = False) -> Tensor: ...\n"
        "@overload\ndef max_pool2d(input: Tensor, return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...\n"
        "from torch import inverse as inverse\n"
        "from torch._C._nn import linear as linear\n"
        '__all__ += ["inverse", "linear"]\n'
    ),
    "torchgen/packaged/ATen/native/native_functions.yaml": (
        "# a comment\n"
        "- func: linalg_inv(Tensor A) -> Tensor\n  python_module: linalg\n  variants: function\n\n"
        "- func: linalg_inv.out(Tensor A, *, Tensor(a!) out) -> Tensor(a!)\n  python_module: linalg\n\n"
        "- func: linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)\n  python_module: linalg\n\n"
        "- func: linalg_qr.out(Tensor A, *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, Tensor(b!) R)\n"
        "  python_module: linalg\n\n"
        "- func: linalg_multi_dot(Tensor[] tensors) -> Tensor\n  python_module: linalg\n\n"
        "- func: linalg__powsum(Tensor x) -> Tensor\n  python_module: linalg\n\n"
        "- func: fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor\n  python_module: fft\n\n"
        "- func: fft_hfft2(Tensor self, int[1] dim=[-2,-1]) -> Tensor\n"
        "  use_const_ref_for_mutable_tensors: True\n  python_module: fft\n\n"
        "- func: special_entr(Tensor self) -> Tensor\n  python_module: special\n\n"
        "- func: special_logsumexp(Tensor self, int[1] dim) -> Tensor[]\n  python_module: special\n\n"
        "- func: block_diag(Tensor[] tensors) -> Tensor\n  variants: function\n\n"
        "- func: atleast_1d(Tensor self) -> Tensor\n\n"
        "- func: atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]\n\n"
        "- func: einsum(str equation, Tensor[] tensors) -> Tensor[]\n  variants: method\n"
    ),
}


@pytest.fixture
def fake_torch(tmp_path: Path) -> Path:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for name, text in FAKE.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return site / "torch"


def test_the_tool_reads_a_fake_installation(fake_torch: Path) -> None:
    stubs = TOOL.Stubs(fake_torch)
    assert stubs.version() == "9.9.0+cpu"
    facts = TOOL.facts(stubs, ["add", "tolist", "T"])
    assert facts["tensor_functions"] == [
        "torch.block_diag",  # unannotated in torch/functional.py: its op's schema says Tensor
        "torch.einsum",  # annotated: the method-only schema of the same name is not read
        "torch.fft.fft",
        "torch.fft.hfft2",
        "torch.get_rng_state",
        "torch.inverse",
        "torch.linalg.inv",
        "torch.linalg.multi_dot",
        "torch.nn.functional.inverse",
        "torch.nn.functional.linear",
        "torch.nn.functional.relu",
        "torch.special.entr",
    ]
    assert facts["tensor_methods"] == ["add", "cfloat", "detach", "new_zeros", "to", "unflatten"]
    assert facts["torch_only_methods"] == ["cfloat", "new_zeros", "unflatten"]  # add: numpy's; to: NOT_TORCH_ONLY
    assert facts["tensor_fields"] == {
        "max": ["values", "indices"],
        "qr": ["Q", "R"],
        "torch.linalg.qr": ["Q", "R"],
        "torch.max": ["values", "indices"],
        "torch.qr": ["Q", "R"],
    }
    assert stubs.typed_by == {
        "replaced stub": {"Tensor.unflatten"},
        "schema": {"torch.block_diag", "torch.atleast_1d"},
        "docs": {"cfloat", "mystery"},  # mystery() -> int: typed, not a tensor method
    }


def test_the_tool_writes_only_its_keys_in_the_file_style(fake_torch: Path, tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    before = (
        "{\n"
        '  "_about": "Facts.",\n'
        '  "removed": {"torch.x": {"removed_in": "2.14"}},\n'
        '  "tensor_functions": ["torch.old"],\n'
        '  "tensor_methods": [\n    "old"\n  ],\n'
        '  "tensor_attributes": ["T", "mT"],\n'
        '  "later": [1, 2]\n'
        "}\n"
    )
    path.write_text(before, encoding="utf-8")
    stubs = TOOL.Stubs(fake_torch)
    generated = TOOL.facts(stubs, [])
    filler = [f"torch.function_{index:03}" for index in range(40)]  # a list too long for one line
    generated["tensor_functions"] = sorted([*generated["tensor_functions"], *filler])
    assert TOOL.write_facts(path, generated, TOOL.about(stubs, generated, "9.9.0+cpu", "2.0.0"))
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert list(data) == [
        "_about",
        "removed",
        "_about_tensor_functions",
        "tensor_functions",
        "_about_tensor_methods",
        "tensor_methods",
        "tensor_attributes",
        "_about_torch_only_methods",
        "torch_only_methods",
        "_about_tensor_fields",
        "tensor_fields",
        "later",
    ]
    assert text.startswith('{\n  "_about": "Facts.",\n  "removed": {"torch.x": {"removed_in": "2.14"}},\n')
    assert text.endswith('  "later": [1, 2]\n}\n')
    assert '  "tensor_functions": [\n    "torch.block_diag", "torch.einsum", "torch.fft.fft",' in text
    assert all(len(line) <= 120 for line in text.splitlines() if not line.lstrip().startswith('"_about'))
    assert '    "qr": ["Q", "R"],\n' in text
    assert (
        "torch 9.9.0+cpu" in data["_about_tensor_functions"] and "torch.block_diag" in data["_about_tensor_functions"]
    )
    assert "numpy 2.0.0" in data["_about_torch_only_methods"]
    # A second run changes nothing.
    assert not TOOL.write_facts(path, generated, TOOL.about(stubs, generated, "9.9.0+cpu", "2.0.0"))
    assert path.read_text(encoding="utf-8") == text


def test_the_installation_is_found_from_any_of_its_paths(fake_torch: Path) -> None:
    site = fake_torch.parent
    venv = site.parent.parent.parent
    python = venv / "bin" / "python"
    python.parent.mkdir()
    python.write_text("", encoding="utf-8")
    for spec in (fake_torch, site, venv):
        assert TOOL.locate(spec) == (fake_torch, python)
    assert TOOL.locate(python) == (fake_torch, python)
    with pytest.raises(SystemExit):
        TOOL.locate(venv / "bin")
