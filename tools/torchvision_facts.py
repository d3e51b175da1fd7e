#!/usr/bin/env python3
"""What torchvision's wheels say of `pretrained=` and `v2.ToTensor`: the data of TU706 and TU707.

    python3 tools/torchvision_facts.py [--wheel WHL ...] [--python PY] [--output FILE]

1. Statically, in each wheel (read in place, nothing imported): every model builder decorated with
   `@handle_legacy_interface(weights=("pretrained", ResNet50_Weights.IMAGENET1K_V1), ...)`, which is
   how torchvision (since 0.13) maps the legacy keyword to the new one and `True` to the weights it
   used to load. For each builder: its public path (`torchvision.models.resnet50`, the package that
   star-exports its module) and defining module, its keyword-only parameters in order (a positional
   `resnet50(True)` lands on the first), and for each legacy keyword the new one and the weights
   `True` means: a public path to an enum member, or null where the default is computed from the
   other arguments (a `lambda kwargs: ...`). A builder whose facts differ between wheels keeps the
   newest wheel's and is listed under `changed`. The deprecated v2 `ToTensor` is found by its warning.
2. By execution, with a Python that has torchvision (default: the torch 2.14.1 venv under
   ~/.cache/torchup/envs, with torchvision 0.29.1 and pillow installed beside it): each builder is
   called with its legacy keyword `True` (and with a positional `True`) while the builder inside the
   legacy wrapper is replaced by one that records the arguments it gets, so no model is built and
   nothing is downloaded; the weights it would receive must be the data's. The v2 `ToTensor()` must
   warn with the message recorded.

The result, torchup/data/torchvision.json, is committed; CI never runs this tool. Wheels: torchvision
0.28.0 (paired with torch 2.13) and 0.29.1, 0.29.2 (torch 2.14); the index has none for torch 2.15 yet.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "torchup" / "data" / "torchvision.json"
WHEELS = Path.home() / ".cache" / "torchup" / "wheels"
PYTHON = Path.home() / ".cache" / "torchup" / "envs" / "torch-2.14.1" / "bin" / "python"
TO_TENSOR = "torchvision.transforms.v2.ToTensor"

# Run with torchvision (stdin: the facts as JSON): what the legacy wrapper hands each builder.
CONFIRM = """
import importlib, json, sys, warnings
facts = json.load(sys.stdin)
def resolve(path):
    module, _, name = path.rpartition(".")
    owner, _, member = module.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        return getattr(getattr(importlib.import_module(owner), member), name)
def received(builder, *args, **kwargs):
    wrapper = builder.__wrapped__  # (kwonly_to_pos_or_kw's; its __wrapped__ is the builder itself)
    cell = next(c for c in wrapper.__closure__ or () if c.cell_contents is wrapper.__wrapped__)
    original, got = cell.cell_contents, {}
    cell.cell_contents = lambda *a, **k: got.update(k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            builder(*args, **kwargs)
    finally:
        cell.cell_contents = original
    return got
failures = []
for path, fact in facts["builders"].items():
    builder = resolve(path)
    for legacy, new in fact["legacy"].items():
        if new["weights"] is None:
            continue
        expected = resolve(new["weights"])
        if received(builder, **{legacy: True}).get(new["parameter"]) is not expected:
            failures.append(f"{path}({legacy}=True)")
        if received(builder, **{legacy: False}).get(new["parameter"], None) is not None:
            failures.append(f"{path}({legacy}=False)")
    first = fact["parameters"][0]
    legacy = next((old for old, new in fact["legacy"].items() if new["parameter"] == first), None)
    if legacy is not None and fact["legacy"][legacy]["weights"] is not None:
        if received(builder, True).get(first) is not resolve(fact["legacy"][legacy]["weights"]):
            failures.append(f"{path}(True)")
transform = facts["to_tensor"]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    resolve(transform["path"])()
if not any(transform["warning"] in str(w.message) for w in caught):
    failures.append(transform["path"])
import torchvision
print(json.dumps({"torchvision": torchvision.__version__.split("+")[0], "failures": failures}))
"""


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _module(name: str) -> str:
    return name[: -len(".py")].replace("/", ".").removesuffix(".__init__")


def _exported(tree: ast.Module, name: str) -> bool:
    """Does a module's `__all__` list ``name`` (or does the module have no literal `__all__`)?"""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            try:
                return name in ast.literal_eval(node.value)
            except ValueError:
                return True
    return not name.startswith("_")


def _star_sources(trees: dict[str, tuple[str, ast.Module]], module: str) -> list[str]:
    """The sibling modules ``module`` star-imports (`from .resnet import *`), as dotted names."""
    package = module if trees.get(module, ("",))[0].endswith("__init__.py") else module.rpartition(".")[0]
    return [
        f"{package}.{node.module}"
        for node in trees[module][1].body
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        and any(alias.name == "*" for alias in node.names) and f"{package}.{node.module}" in trees
    ]


def _public_home(trees: dict[str, tuple[str, ast.Module]], module: str, name: str) -> str:
    """The package that exports ``module``'s ``name`` by star imports (`torchvision.models` for
    `torchvision.models.resnet.resnet50`; also through one module between, as `mobilenetv3` through
    `mobilenet`), else ``module`` itself."""
    package = module.rpartition(".")[0]
    if package not in trees or not _exported(trees[module][1], name):
        return module
    for source in _star_sources(trees, package):
        if source == module or (module in _star_sources(trees, source) and _exported(trees[source][1], name)):
            return package
    return module


def read_wheel(path: Path) -> tuple[str, dict[str, dict], dict[str, str]]:
    """The wheel's version, its builders' facts by public path, and the v2 ToTensor's warning."""
    archive = zipfile.ZipFile(path)
    names = [n for n in archive.namelist() if n.startswith("torchvision/") and n.endswith(".py")]
    version = next(n.split("/")[0] for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    version = version.removeprefix("torchvision-").removesuffix(".dist-info")
    trees = {_module(n): (n, ast.parse(archive.read(n))) for n in names}
    classes = {  # enum class name -> the modules that define it
        node.name: module
        for module, (_, tree) in trees.items()
        if module.startswith("torchvision.models")
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    builders: dict[str, dict] = {}
    for module, (name, tree) in trees.items():
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and _dotted(decorator.func) == "handle_legacy_interface"):
                    continue
                legacy = {}
                for keyword in decorator.keywords:
                    old, default = keyword.value.elts  # type: ignore[attr-defined]
                    weights = None
                    reference = _dotted(default)
                    if reference and "." in reference:
                        enum, _, member = reference.rpartition(".")
                        enum = enum.rpartition(".")[2]
                        home = classes.get(enum)
                        if home is not None:
                            weights = f"{_public_home(trees, home, enum)}.{enum}.{member}"
                    legacy[old.value] = {"parameter": keyword.arg, "weights": weights}
                parameters = [arg.arg for arg in node.args.kwonlyargs]
                builders[f"{_public_home(trees, module, node.name)}.{node.name}"] = {
                    "module": module,
                    "parameters": parameters,
                    "legacy": legacy,
                    "evidence": f"{name}:{decorator.lineno}",
                }
    deprecated = "torchvision/transforms/v2/_deprecated.py"
    source = archive.read(deprecated).decode()
    start = source.index("class ToTensor")
    message = source[source.index("The transform", start):].split('"', 1)[0].split("`ToTensor()`")[0]
    line = source[:start].count("\n") + 1
    warning = {"path": TO_TENSOR, "warning": message + "`ToTensor()` is deprecated", "evidence": f"{deprecated}:{line}"}
    return version, builders, warning


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="torchvision_facts.py")
    parser.add_argument("--wheel", type=Path, action="append", help="a torchvision wheel (repeatable)")
    parser.add_argument("--python", type=Path, default=PYTHON, help="a Python with torchvision, to confirm")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    wheels = args.wheel or sorted(WHEELS.glob("torchvision-*.whl"))
    if not wheels:
        raise SystemExit(f"torchvision_facts: no wheel in {WHEELS}: pip download --no-deps torchvision==X -d it")
    read = sorted((read_wheel(path) for path in wheels), key=lambda item: tuple(int(p) for p in item[0].split(".")))
    versions = [version for version, _, _ in read]
    newest_version, builders, to_tensor = read[-1]
    changed = sorted(
        path for _, older, _ in read[:-1] for path, fact in older.items()
        if {**fact, "evidence": ""} != {**builders.get(path, {}), "evidence": ""}
    )
    facts = {"builders": builders, "to_tensor": to_tensor}
    result = subprocess.run([str(args.python), "-c", CONFIRM], input=json.dumps(facts), capture_output=True,
                            text=True, check=True)
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    if answer["failures"]:
        raise SystemExit(f"torchvision_facts: a run disagrees with the wheels: {answer['failures']}")
    data = {
        "about": "torchvision's model builders and their legacy `pretrained` keywords, and the deprecated v2 "
        f"ToTensor, read from the wheels of torchvision {', '.join(versions)} (tools/torchvision_facts.py); "
        f"confirmed by running torchvision {answer['torchvision']}: each builder's legacy wrapper hands the "
        "builder the weights recorded here.",
        "wheels": versions,
        "confirmed_by_run": answer["torchvision"],
        "changed": sorted(set(changed)),
        **facts,
    }
    args.output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"torchvision_facts: {len(builders)} builders, newest wheel {newest_version} -> {args.output}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
