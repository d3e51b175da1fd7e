#!/usr/bin/env python3
"""The first torch release that has each API a fix writes, read from the real wheels.

    python3 tools/api_introduced.py [--wheels DIR] [--output FILE] [--no-download]

For the newest patch of every minor release 1.0 ... 2.15 (RELEASES below) the wheel is taken from DIR
(default ~/.cache/torchup/wheels, shared with tools/api_history.py), downloaded with `pip download --no-deps`
for the platform named there when missing: the smallest wheel each release has (macOS or Windows builds, tens
of MB, never the CUDA Linux ones). Nothing is installed, imported or extracted: tools/api_diff.py reads the
`.py`/`.pyi` files in place.

The keys are those of the output file (a key added by hand, with no `since`, is answered on the next run)
plus KEYS below. A key is a qualified name (`torch.amp.GradScaler`, a module `torch.amp`, an enum member
`torch.nn.attention.SDPBackend.MATH`) or a keyword parameter of a callable, `torch.onnx.export(dynamo=)`
(of a class: its `__init__`'s, or `__new__`'s).

How a release is asked whether it has a key (evidence `how`):
- `definition`, `assignment`, `import`, `module`: the name, resolved as api_diff resolves public names
  (imports, star imports, `_add_docstr` aliases, stubs), with a module's own binding before its submodule
  (`torch.autograd.gradcheck` is the function, as at run time; the import path
  `torch.autograd.gradcheck.gradcheck` is tried when that fails); a function that only raises (how torch
  keeps removed names) does not count;
- `add_docstr`: a C function that no stub of the release defines, from `add_docstr(torch.x, ...)` in
  torch/_torch_docs.py (torch.where in 1.0 has no stub);
- `used by torch's own code`: a `torch.x` that neither names, read or called by the package's own modules
  (torch.set_autocast_enabled in 1.6);
- for a parameter, `signature` (any overload of the `.py` or `.pyi` definition has it, and as a keyword:
  positional-only does not count), `kwargs read` (the function takes `**kwargs` and its own body reads
  that key: `kwargs.pop("use_reentrant", True)`; forwarding `**kwargs` does not count), and for a C function
  with no stub `ATen signature` (its C++ declaration in torch/include/ATen: the schema's names, `self`
  being `input` in Python, `out` when an `_out` variant exists) or, for a function no header declares,
  `docstring signature` (the `name(a, *, out=None)` line of its docstring, which may be ahead of the code:
  torch.linalg.qr's says `A` from 1.9, its schema from 1.12).

`since` is the first release of the run of releases, ending with the newest that has the key, in which every
release has it; `until` is set when the newest release read lacks it; `also_in` lists earlier releases
outside that run. `since` null: no release read has it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_diff as ad
import api_history as ah

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "torchup" / "data" / "introduced.json"
# minor release -> (the newest patch, the platform and Python of its smallest wheel on the package index).
# macOS x86-64 until 1.9 (1.9.1 has no arm64 build; 1.8.1's smallest is Linux aarch64), macOS arm64 from
# 1.10 (macOS 14 from 2.12), Windows from 2.14 (its macOS wheels are the larger ones there).
RELEASES: dict[str, tuple[str, str, str]] = {
    "1.0": ("1.0.1", "macosx_10_9_x86_64", "3.7"),
    "1.1": ("1.1.0", "macosx_10_9_x86_64", "3.7"),
    "1.2": ("1.2.0", "macosx_10_9_x86_64", "3.7"),
    "1.3": ("1.3.1", "macosx_10_9_x86_64", "3.7"),
    "1.4": ("1.4.0", "macosx_10_9_x86_64", "3.7"),
    "1.5": ("1.5.1", "macosx_10_9_x86_64", "3.7"),
    "1.6": ("1.6.0", "macosx_10_9_x86_64", "3.7"),
    "1.7": ("1.7.1", "macosx_10_9_x86_64", "3.7"),
    "1.8": ("1.8.1", "manylinux2014_aarch64", "3.9"),
    "1.9": ("1.9.1", "macosx_10_9_x86_64", "3.9"),
    "1.10": ("1.10.2", "macosx_11_0_arm64", "3.9"),
    "1.11": ("1.11.0", "macosx_11_0_arm64", "3.10"),
    "1.12": ("1.12.1", "macosx_11_0_arm64", "3.10"),
    "1.13": ("1.13.1", "macosx_11_0_arm64", "3.10"),
    "2.0": ("2.0.1", "macosx_11_0_arm64", "3.10"),
    "2.1": ("2.1.2", "macosx_11_0_arm64", "3.10"),
    "2.2": ("2.2.2", "macosx_11_0_arm64", "3.10"),
    "2.3": ("2.3.1", "macosx_11_0_arm64", "3.10"),
    "2.4": ("2.4.1", "macosx_11_0_arm64", "3.10"),
    "2.5": ("2.5.1", "macosx_11_0_arm64", "3.10"),
    "2.6": ("2.6.0", "macosx_11_0_arm64", "3.10"),
    "2.7": ("2.7.1", "macosx_11_0_arm64", "3.10"),
    "2.8": ("2.8.0", "macosx_11_0_arm64", "3.10"),
    "2.9": ("2.9.1", "macosx_11_0_arm64", "3.10"),
    "2.10": ("2.10.0", "macosx_11_0_arm64", "3.10"),
    "2.11": ("2.11.0", "macosx_11_0_arm64", "3.10"),
    "2.12": ("2.12.1", "macosx_14_0_arm64", "3.11"),
    "2.13": ("2.13.0", "macosx_14_0_arm64", "3.11"),
    "2.14": ("2.14.1", "win_amd64", "3.11"),
    "2.15": ("2.15.0", "win_amd64", "3.11"),
}
# The APIs the fixes write (the output file may list more).
KEYS = (
    "torch.linalg.cholesky", "torch.linalg.cholesky(upper=)", "torch.linalg.cholesky(out=)", "torch.linalg.qr",
    "torch.linalg.qr(mode=)", "torch.linalg.qr(A=)", "torch.linalg.lu_factor", "torch.linalg.lu_factor_ex",
    "torch.lu_unpack", "torch.linalg.eigh", "torch.linalg.eigh(UPLO=)", "torch.linalg.solve",
    "torch.linalg.solve_triangular", "torch.linalg.multi_dot", "torch.linalg.multi_dot(out=)",
    "torch.linalg.lu_solve", "torch.profiler.ProfilerActivity", "torch.profiler.ProfilerActivity.CPU",
    "torch.profiler.ProfilerActivity.CUDA", "torch.profiler.profile(activities=)",
    "torch.profiler.profile(use_device=)", "torch.autograd.profiler.profile(use_device=)", "torch.compile",
    "torch.compile(dynamic_shapes=)", "torch.distributed.config.pipeline_per_edge_p2p",
    "torch.distributed.gather_single", "torch.distributed.distributed_c10d.set_timeout",
    "torch.distributed.set_timeout", "torch.where", "torch.load(weights_only=)", "torch.amp",
    "torch.amp.GradScaler", "torch.amp.GradScaler(device=)", "torch.amp.autocast",
    "torch.amp.autocast(device_type=)", "torch.autocast", "torch.amp.custom_fwd", "torch.amp.custom_bwd",
    "torch.amp.custom_fwd(device_type=)", "torch.amp.custom_bwd(device_type=)", "torch.nn.attention.sdpa_kernel",
    "torch.nn.attention.SDPBackend", "torch.nn.attention.SDPBackend.MATH",
    "torch.nn.attention.SDPBackend.FLASH_ATTENTION", "torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION",
    "torch.nn.attention.SDPBackend.CUDNN_ATTENTION", "torch.utils.checkpoint.checkpoint(use_reentrant=)",
    "torch.utils.checkpoint.checkpoint_sequential(use_reentrant=)", "torch.set_default_dtype",
    "torch.set_default_device", "torch.onnx.export(dynamo=)", "torch.nn.utils.parametrizations.weight_norm",
    "torch.nn.utils.parametrize.remove_parametrizations", "torch.testing.assert_close",
    "torch.nn.functional.interpolate", "torch.get_autocast_dtype", "torch.set_autocast_dtype",
    "torch.is_autocast_enabled(device_type=)", "torch.set_autocast_enabled",
    "torch.distributed.init_process_group(timeout=)",
    "torch.nn.parallel.DistributedDataParallel(forward_sync_buffers=)", "torch.compiler.nested_compile_region",
    "torch.hub.load(trust_repo=)", "torch.hub.list(trust_repo=)",
    "torch.utils.cpp_extension.include_paths(device_type=)", "torch.utils.cpp_extension.library_paths(device_type=)",
    "torch.func", "torch.func.vmap", "torch.func.grad", "torch.func.jacrev", "torch.func.hessian",
    "torch.distributed.tensor", "torch.distributed.tensor.DTensor", "torch.distributed.tensor.Shard",
    "torch.utils._pytree.register_pytree_node", "torch.arange", "torch.get_default_dtype",
    "torch.cuda.memory_reserved", "torch.cuda.max_memory_reserved", "torch.nn.init.normal_",
    "torch.nn.init.xavier_normal_", "torch.nn.utils.clip_grad_norm_", "torch.outer",
    "torch.distributed.all_gather_single", "torch.distributed.reduce_scatter_single", "torch.export",
    "torch.export.export", "torch.export.export(strict=)", "torch.utils.dlpack.DLDeviceType.kDLCUDA",
    "torch.utils.dlpack.DLDeviceType.kDLCUDAHost", "torch.backends.cuda.is_built",
    "torch.backends.cudnn.is_available", "torch.backends.mkldnn.is_available", "torch.backends.mps.is_built",
    "torch.autograd.gradcheck(masked=)", "torch.autograd.gradcheck.gradcheck(masked=)",
    "torch.distributed.fsdp.FullyShardedDataParallel(ignored_states=)",
    "torch.backends.cuda.enable_mem_efficient_sdp", "torch.backends.cuda.mem_efficient_sdp_enabled",
    "torch.backends.cuda.enable_math_sdp", "torch.backends.cuda.math_sdp_enabled",
    "torch.backends.cuda.enable_flash_sdp", "torch.utils.data.default_collate", "torch.utils.data.default_convert",
    "torch.log1p", "torch.expm1", "torch.logsumexp", "torch.backends.cuda.sdp_kernel", "torch.cuda.amp.autocast",
    "torch.cuda.amp.GradScaler",
)  # fmt: skip
KEY = re.compile(r"^(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\((?P<param>[A-Za-z_]\w*)=\))?$")
# Files whose `add_docstr(torch.x, ...)` calls document C functions (before stubs, the only trace of them).
DOCS_FILES = ("torch/_torch_docs.py",)
# The C++ declarations of an ATen operator: its own header (1.12 on), else all of them in one.
ATEN_HEADERS = ("torch/include/ATen/ops/{op}.h", "torch/include/ATen/Functions.h")
# Sources whose use of a name says nothing about what users may call.
NOT_USAGE = ("torch/testing/_internal/", "/test/", "/tests/", "/benchmarks/")
# The methods through which a body reads one key of its `**kwargs`.
KWARGS_READERS = frozenset({"pop", "get", "setdefault"})


# --- Wheels --------------------------------------------------------------------------------------


def download(version: str, platform: str, python: str, wheels: Path) -> None:
    """pip download one wheel; the machine's pip configuration and local links are left out (they may cap
    torch below the newest release or offer other builds)."""
    wheels.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", f"torch=={version}",
        "--platform", platform, "--python-version", python, "-d", str(wheels),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_CONSTRAINT")}
    print(f"api_introduced: {shlex.join(command)}", file=sys.stderr)
    subprocess.run(command, check=True, env={**env, "PIP_CONFIG_FILE": os.devnull})


def wheel_of(minor: str, wheels: Path, may_download: bool) -> Path:
    version, platform, python = RELEASES[minor]
    try:
        return ah.wheel_for(version, wheels, download=False)
    except SystemExit:
        if not may_download:
            raise
    download(version, platform, python, wheels)
    return ah.wheel_for(version, wheels, download=False)


# --- One release ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    file: str
    line: int
    how: str

    def record(self, wheel: str) -> dict:
        return {"wheel": wheel, "file": self.file, "line": self.line, "how": self.how}


# Where a release has a key, or why not.
Answer = tuple[Found | None, str | None]


def docstring_params(text: str, name: str) -> list[str] | None:
    """The parameter names of the `name(a, b, *, out=None) -> Tensor` lines that open a C function's
    docstring; None when it has no such line."""
    short = re.escape(name.rpartition(".")[2])
    found: list[str] | None = None
    for line in text.strip().splitlines()[:6]:
        match = re.match(rf"^\s*(?:\.\. function:: )?(?:[\w.]*\.)?{short}\(", line)
        if match:
            found = (found or []) + param_names(inside(line, match.end()))
    return found


def inside(text: str, start: int) -> str:
    """The text from `start` (just after an opening parenthesis) to the one that closes it."""
    depth, end = 1, start
    while depth and end < len(text):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return text[start : end - 1] if depth == 0 else text[start:end]


def param_names(text: str) -> list[str]:
    """`const at::Tensor & A, bool upper=false` or `A, *, out=None` -> the names (A, upper; A, out)."""
    names = [re.findall(r"\w+", p.split("=")[0])[-1:] for p in split_top(text)]
    return [n[0] for n in names if n]


def string_arg(call: ast.Call, index: int) -> str:
    """The literal text of a docstring argument (`r\"\"\"...\"\"\".format(**common_args)` keeps its text)."""
    return ah.message(call.args[index], {}) if len(call.args) > index else ""


def split_top(text: str) -> list[str]:
    """`a, b<c, d>, e={1, 2}` -> three parts: commas inside brackets do not split."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<({[":
            depth += 1
        elif char in ">)}]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]] if text.strip() else parts


def aten_declarations(text: str, op: str) -> Iterator[tuple[int, bool, list[str]]]:
    """(line, is the `_out` variant, parameter names) of each C++ declaration of `op` in a header."""
    for match in re.finditer(rf"(?:TORCH_API|CAFFE2_API)[^(;{{}}]*?\b{op}(_out)?\(", text):
        line = text.count("\n", 0, match.start()) + 1
        yield line, bool(match.group(1)), param_names(inside(text, match.end()))


def kwargs_read(node: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> int | None:
    """The line where the body reads `param` out of its own `**kwargs`, if it does."""
    if node.args.kwarg is None:
        return None
    kwargs = node.args.kwarg.arg
    is_kwargs = lambda e: isinstance(e, ast.Name) and e.id == kwargs  # noqa: E731
    is_param = lambda e: isinstance(e, ast.Constant) and e.value == param  # noqa: E731
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in KWARGS_READERS
            and is_kwargs(sub.func.value)
            and sub.args
            and is_param(sub.args[0])
        ):
            return sub.lineno
        if isinstance(sub, ast.Subscript) and is_kwargs(sub.value) and is_param(sub.slice):
            return sub.lineno
        if isinstance(sub, ast.Compare) and is_param(sub.left) and any(is_kwargs(c) for c in sub.comparators):
            return sub.lineno
    return None


class Release:
    """One wheel, asked about keys."""

    def __init__(self, minor: str, path: Path):
        self.minor = minor
        self.wheel = path.name
        tree = ad.open_tree(str(path), ah.PACKAGE, ah.ALSO)
        self.version = tree.version
        self.api = ad.Api(tree, ah.PACKAGE, lambda message: None, include_unlisted=True, also=ah.ALSO)
        self.source = ah.Source(self.api)
        self._docs: dict[str, tuple[str, int, str]] | None = None
        self._sources: list[tuple[str, bytes]] | None = None

    def close(self) -> None:
        self.api.tree.close()

    # -- names

    def resolve(self, dotted: str) -> ad.Sym | None:
        """What `torch.a.b` is: as at run time (a module's binding before its submodule of the same name:
        `torch.autograd.gradcheck` is the function), else as an import path (`torch.autograd.gradcheck.gradcheck`)."""
        parts = dotted.split(".")
        if parts[0] not in self.api.packages or not self.api.is_module(parts[0]):
            return None
        found = self.walk(ad.Sym(parts[0], "", ad.ModRef(parts[0])), parts[1:])
        modules = (".".join(parts[:end]) for end in range(len(parts) - 1, 1, -1))
        for module in (m for m in modules if found is None and self.api.is_module(m)):
            found = self.walk(ad.Sym(module, "", ad.ModRef(module)), parts[len(module.split(".")) :])
        return found

    def walk(self, sym: ad.Sym | None, parts: list[str]) -> ad.Sym | None:
        for part in parts:
            if sym is None:
                return None
            if sym.is_module:
                sym = self.self_alias(sym.origin, part) or self.api.lookup(sym.origin, part)
            elif isinstance(sym.binding, ad.Klass):
                sym = self.api.class_members(sym, inherited="all").get(part)
            else:
                return None
        return sym

    def self_alias(self, module: str, name: str) -> ad.Sym | None:
        """`from torch._C import _SDPBackend as SDPBackend` then `SDPBackend = SDPBackend` (torch.nn.attention):
        api_diff keeps the assignment, an alias of itself; the import before it says what the name is."""
        info = self.api.module(module)
        binding = info.bindings.get(name) if info else None
        if not (isinstance(binding, ad.Alias) and binding.dotted == name):
            return None
        for _, tree in self.source.trees(module)[:1]:
            for stmt in reversed(list(ah.flat(tree.body))):
                for alias in stmt.names if isinstance(stmt, ast.ImportFrom) else []:
                    if (alias.asname or alias.name) == name:
                        source = ad.absolute_module(module, info.is_package, stmt.module, stmt.level)  # type: ignore[union-attr]
                        imported = ad.FromImport(source, alias.name, alias.asname == alias.name)
                        return self.api.resolve_binding(module, name, imported, 1)
        return None

    def docs(self) -> dict[str, tuple[str, int, str]]:
        """`torch.x` -> (file, line, docstring) of every `add_docstr(torch.x, "...")`."""
        if self._docs is None:
            self._docs = {}
            for file in DOCS_FILES:
                module = ad.module_name(file)
                for _, tree in self.source.trees(module or "")[:1]:
                    for node in ast.walk(tree):
                        if isinstance(node, ast.Call) and (ad.dotted_name(node.func) or "").endswith("add_docstr"):
                            target = ad.dotted_name(node.args[0]) if node.args else None
                            if target and target.startswith("torch."):
                                self._docs.setdefault(target, (file, node.lineno, string_arg(node, 1)))
        return self._docs

    def locate(self, sym: ad.Sym) -> tuple[str, int, str]:
        """(file, line, how) of a resolved name."""
        files = self.api.tree.modules.get(sym.origin, {})
        if sym.is_module or not sym.qualname:
            return files.get(".py") or files.get(".pyi") or "", 1, "module"
        for d in self.source.definitions(sym.origin, sym.qualname):
            return d.file, d.node.lineno, "definition"
        *owner, name = sym.qualname.split(".")
        for file, tree in self.source.trees(sym.origin):
            body = tree.body
            for part in owner:
                cls = ah.find_in(body, [part])
                body = cls.body if isinstance(cls, ast.ClassDef) else []
            for stmt in ah.flat(body):
                if binds(stmt, name):
                    how = "import" if isinstance(stmt, ast.Import | ast.ImportFrom) else "assignment"
                    return file, stmt.lineno, how
        return files.get(".py") or files.get(".pyi") or "", 1, "definition"

    def find_name(self, dotted: str) -> tuple[ad.Sym | None, Found | None, str | None]:
        """(symbol, where, note): the symbol is None for a C function known from its docstring only."""
        sym = self.resolve(dotted)
        if sym is not None and self.api.raises(sym):
            return None, None, "defined, but every call raises"
        if sym is not None:
            return sym, Found(*self.locate(sym)), None
        if dotted in self.docs():
            file, line, _ = self.docs()[dotted]
            return None, Found(file, line, "add_docstr"), None
        if dotted.count(".") == 1 and (used := self.used(dotted)):
            return None, used, None
        return None, None, None

    def used(self, dotted: str) -> Found | None:
        """Where torch's own code calls or reads `torch.x`: a C function that neither a stub nor a docstring
        of the release names (torch.set_autocast_enabled in 1.6) still exists if torch uses it (a use under
        `hasattr(torch, "x")` does not count)."""
        word, guard = dotted.encode(), f'hasattr(torch, "{dotted.partition(".")[2]}")'.encode()
        for file, text in self.sources():
            if word not in text or guard in text or guard.replace(b'"', b"'") in text:
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and ad.dotted_name(node) == dotted:
                    return Found(file, node.lineno, "used by torch's own code")
        return None

    def sources(self) -> list[tuple[str, bytes]]:
        """The `.py` files of the package, tests left out, read once."""
        if self._sources is None:
            files = sorted(f[".py"] for f in self.api.tree.modules.values() if ".py" in f)
            self._sources = [(f, self.api.tree.read(f)) for f in files if not any(p in f for p in NOT_USAGE)]
        return self._sources

    # -- parameters

    def find_param(self, dotted: str, param: str) -> Answer:
        sym, where, note = self.find_name(dotted)
        if where is None:
            return None, note or "no such name"
        if sym is None and dotted not in self.docs():
            return None, "known from torch's own uses only, which do not show its parameters"
        if sym is None:  # a C function without a stub, documented by `add_docstr(torch.x, ...)`
            file, line, text = self.docs()[dotted]
            return self.c_param(dotted.rpartition(".")[2], dotted, param, file, line, text)
        if isinstance(sym.binding, ad.Klass):
            members = self.api.class_members(sym, inherited="all")
            init = members.get("__init__") or members.get("__new__")
            if init is None:
                return None, "its class defines no __init__ the sources show"
            sym = init
        if not isinstance(sym.binding, ad.Func):
            return None, "not a function"
        if not sym.binding.sigs:  # `name = _add_docstr(C function, ...)`, no stub
            file, line, _ = self.locate(sym)
            info = self.api.module(sym.origin)
            alias = info.bindings.get(sym.qualname) if info else None
            op = alias.dotted.rpartition(".")[2] if isinstance(alias, ad.Alias) else sym.qualname
            return self.c_param(op, dotted, param, file, line, self.add_docstr_text(sym))
        return self.signature_param(sym, param)

    def c_param(self, op: str, dotted: str, param: str, file: str, line: int, doc: str) -> Answer:
        """A keyword of a C function with no stub: its C++ declaration, else its docstring (which may
        be ahead of the code: torch.linalg.qr's says `A` from 1.9, its schema from 1.12)."""
        return self.aten_param(op, param) or self.docstring_param(dotted, param, file, line, doc)

    def signature_param(self, sym: ad.Sym, param: str) -> Answer:
        file, line, _ = self.locate(sym)
        keyword = ("positional-or-keyword", "keyword-only")
        params = [p for sig in sym.binding.sigs for p in sig if p.name == param]  # type: ignore[union-attr]
        if any(p.kind in keyword for p in params):
            return Found(file, line, "signature"), None
        if params:
            return None, "positional-only"
        for d in self.source.definitions(sym.origin, sym.qualname):
            if isinstance(d.node, ast.FunctionDef | ast.AsyncFunctionDef) and (read := kwargs_read(d.node, param)):
                return Found(d.file, read, "kwargs read"), None
        return None, "not a parameter"

    def add_docstr_text(self, sym: ad.Sym) -> str:
        """The docstring given to a C function by `name = _add_docstr(f, "...")` in its module."""
        for _, tree in self.source.trees(sym.origin)[:1]:
            for stmt in ah.flat(tree.body):
                if binds(stmt, sym.qualname) and isinstance(stmt.value, ast.Call):  # type: ignore[union-attr]
                    return string_arg(stmt.value, 1)  # type: ignore[union-attr]
        return ""

    def aten_param(self, op: str, param: str) -> Answer | None:
        """A C operator's keyword from its C++ declaration (the schema's names: Python calls `self` `input`,
        and `out=` is there when an `_out` variant is); None when no header declares it."""
        for path in ATEN_HEADERS:
            try:
                text = self.api.tree.read(path.format(op=op)).decode("utf-8", "replace")
            except KeyError:
                continue
            declarations = list(aten_declarations(text, op))
            if not declarations:
                continue
            for line, out, params in declarations:
                names = {"out"} if out else {"input" if n == "self" else n for n in params}
                if param in names:
                    return Found(path.format(op=op), line, "ATen signature"), None
            return None, "not a parameter of its C++ declaration"
        return None

    @staticmethod
    def docstring_param(dotted: str, param: str, file: str, line: int, text: str) -> Answer:
        params = docstring_params(text, dotted)
        if params is None:
            return None, "no signature in its docstring"
        return (Found(file, line, "docstring signature"), None) if param in params else (None, "not a parameter")

    def find(self, key: str) -> Answer:
        match = KEY.match(key)
        if match is None:
            return None, "not a key"
        if match["param"]:
            return self.find_param(match["name"], match["param"])
        _, where, note = self.find_name(match["name"])
        return where, note


def binds(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == name
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
    return False


# --- All releases --------------------------------------------------------------------------------


def entry(key: str, answers: dict[str, Answer], wheels: dict[str, str]) -> dict:
    """`since` (first release of the run ending at the newest one that has the key), its evidence, and
    `until` / `also_in` when the key was not always there."""
    order = list(answers)
    present = [m for m in order if answers[m][0] is not None]
    if not present:
        why = answers[order[-1]][1] or "not found"
        return {"since": None, "note": f"in no release read ({order[0]} ... {order[-1]}); in {order[-1]}: {why}"}
    last = order.index(present[-1])
    first = last
    while first > 0 and answers[order[first - 1]][0] is not None:
        first -= 1
    since = order[first]
    found = answers[since][0]
    assert found is not None
    record: dict = {"since": since, "evidence": found.record(wheels[since])}
    if present[-1] != order[-1]:
        record["until"] = present[-1]
        record["note"] = f"gone from {order[last + 1]}: {answers[order[last + 1]][1] or 'not found'}"
    if earlier := [m for m in present if order.index(m) < first]:
        record["also_in"] = earlier
    return record


def answer(keys: list[str], paths: dict[str, Path]) -> dict[str, dict]:
    answers: dict[str, dict[str, Answer]] = {k: {} for k in keys}
    wheels = {}
    for minor, path in paths.items():
        release = Release(minor, path)
        wheels[minor] = release.wheel
        for key in keys:
            answers[key][minor] = release.find(key)
        release.close()
        print(f"api_introduced: {release.wheel}: {sum(a[minor][0] is not None for a in answers.values())}"
              f" of {len(keys)} keys", file=sys.stderr)  # fmt: skip
    return {key: entry(key, answers[key], wheels) for key in keys}


def about(paths: dict[str, Path]) -> str:
    names = ", ".join(p.name for p in paths.values())
    return (
        "The first torch minor release that has each API (a qualified name, or `name(param=)`: a keyword"
        " parameter of a callable, of a class its __init__), found statically in the wheels of the newest patch"
        " of every minor release by tools/api_introduced.py, never installed or imported. Each release's"
        " smallest wheel on the package index is read (macOS, Linux aarch64 for 1.8.1, Windows for 2.14 and"
        " 2.15): the Python sources and stubs do not differ between platforms. Evidence `how` (the tool's"
        " docstring says more): definition, assignment, import, module (the name, resolved through imports and"
        " stubs); add_docstr (torch/_torch_docs.py documents a C function no stub names); used by torch's own"
        " code (a C function neither names); signature (a parameter of the .py or .pyi definition); kwargs read"
        " (its body reads the key out of **kwargs); ATen signature (a C operator's C++ declaration in"
        " torch/include/ATen: the schema's names, which the docstrings are sometimes ahead of); docstring"
        " signature (the `name(...)` line of a C function's docstring, when no header declares it). `since`:"
        " the first release of the unbroken run of releases that ends with the newest"
        " one having it (1.0: already in the oldest read); `until`: the last release having it when the newest"
        " lacks it; null: in none. Regenerate with `python3 tools/api_introduced.py` (wheels cached in"
        " ~/.cache/torchup/wheels, downloaded when missing); add a key by hand, with no `since`, and re-run to"
        f" answer it. Wheels: {names}."
    )


def dump(data: dict) -> str:
    """One name a line, sorted."""
    head = json.dumps({"_about": data["_about"], "releases": data["releases"]}, indent=1, ensure_ascii=False)
    rows = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in data["names"].items()]
    return head[:-2] + ',\n "names": {\n' + ",\n".join(rows) + "\n }\n}\n"


def keys_of(output: Path) -> list[str]:
    known = json.loads(output.read_text()).get("names", {}) if output.exists() else {}
    return sorted({*KEYS, *known})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0], prog="api_introduced.py")
    parser.add_argument("--wheels", type=Path, default=ah.WHEELS, help=f"where wheels are kept (default {ah.WHEELS})")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--no-download", action="store_true", help="fail when a wheel is missing")
    args = parser.parse_args(argv)
    paths = {m: wheel_of(m, args.wheels, not args.no_download) for m in sorted(RELEASES, key=ad.version_key)}
    keys = keys_of(args.output)
    names = answer(keys, paths)
    releases = {m: RELEASES[m][0] for m in paths}
    data = {"_about": about(paths), "releases": releases, "names": names}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dump(data))
    unknown = [k for k, v in names.items() if v["since"] is None]
    print(f"api_introduced: {len(names)} keys, {len(unknown)} in no release -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
