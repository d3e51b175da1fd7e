"""Re-create the support-window corpus (bench/window/manifest.json) from fetched git mirrors.

    python3 bench/window/materialize.py --mirrors DIR              # DIR/<owner>+<name>/repo: what `fetch` makes
    python3 bench/window/materialize.py --mirrors DIR --out OUT
    python3 bench/window/materialize.py --fetch-list               # the repositories to fetch, one a line

Every entry (one repository at one commit) becomes one tree, `OUT/<owner>+<name>@<commit[:12]>/`, holding
the labelled Python files and the requirement files that name torch, each read with `git show COMMIT:PATH`
from a bare mirror, at its path in the repository. Each tree also gets an empty `.git` directory, so that
torchup's search for the torch requirement stops at the tree's root as it stops at a clone's. Nothing is
fetched: a missing mirror or commit is named with the fetch that would bring it. No project code is kept in
this repository. The mirror lookup and tree names are bench/corpus/materialize.py's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
DEFAULT_OUT = Path(os.environ.get("TORCHUP_WINDOW", Path.home() / ".cache" / "torchup" / "window"))
DEFAULT_MIRRORS = Path(os.environ.get("TORCHUP_MIRRORS", Path.home() / ".cache" / "torchup" / "mirrors"))


def _corpus_helpers() -> ModuleType:
    """bench/corpus/materialize.py, loaded under its own name (this file is also called materialize.py)."""
    name = "torchup_bench_corpus_materialize"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "corpus" / "materialize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_corpus = _corpus_helpers()
tree_name = _corpus.tree_name
find_mirror = _corpus.find_mirror


def load_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        manifest: dict[str, Any] = json.load(handle)
    return manifest


def entry_paths(entry: dict[str, Any]) -> list[str]:
    """The files an entry's tree holds: its requirement files, then its labelled Python files."""
    paths: list[str] = []
    for requirement in entry.get("requirements", []):
        if requirement["path"] not in paths:
            paths.append(requirement["path"])
    for labelled in entry["files"]:
        if labelled["path"] not in paths:
            paths.append(labelled["path"])
    return paths


def fetch_list(manifest: dict[str, Any]) -> list[str]:
    """`github:<owner>/<name>` for every repository of the manifest, in its order, once each."""
    seen: list[str] = []
    for entry in manifest["entries"]:
        source = f"github:{entry['repo']}"
        if source not in seen:
            seen.append(source)
    return seen


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def materialize(manifest: dict[str, Any], mirrors: Path, out: Path) -> list[str]:
    """Write every tree of the manifest under `out`; the problems found (empty when all is well)."""
    problems: list[str] = []
    written = trees = 0
    for entry in manifest["entries"]:
        repo, commit = entry["repo"], entry["commit"]
        git_dir = find_mirror(mirrors, repo, commit)
        if git_dir is None:
            problems.append(
                f"{repo}: no mirror with commit {commit[:12]} under {mirrors} "
                f"(fetch github:{repo}, or pass --mirrors DIR)"
            )
            continue
        root = out / tree_name(repo, commit)
        (root / ".git").mkdir(parents=True, exist_ok=True)
        trees += 1
        labels = {labelled["path"]: labelled["labels"] for labelled in entry["files"]}
        requirement_lines = {}
        for requirement in entry.get("requirements", []):
            requirement_lines.setdefault(requirement["path"], []).append(requirement)
        for path in entry_paths(entry):
            shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True)
            if shown.returncode != 0:
                problems.append(f"{repo}@{commit[:12]}: no file {path}")
                continue
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(shown.stdout)
            written += 1
            count = _line_count(shown.stdout)
            beyond = [label["line"] for label in labels.get(path, []) if label["line"] > count]
            if beyond:
                problems.append(f"{tree_name(repo, commit)}/{path}: labels beyond the file's {count} lines: {beyond}")
            text_lines = shown.stdout.decode("utf-8", errors="replace").splitlines()
            for requirement in requirement_lines.get(path, []):
                line = requirement["line"]
                if line > len(text_lines) or text_lines[line - 1].strip() != requirement["text"]:
                    problems.append(f"{tree_name(repo, commit)}/{path}:{line}: not the recorded requirement line")
    print(f"{written} files in {trees} of {len(manifest['entries'])} trees written under {out}", file=sys.stderr)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="where the bare mirrors are")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the trees go (default {DEFAULT_OUT})")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--fetch-list", action="store_true", help="print the repositories to fetch and exit")
    args = parser.parse_args(argv)
    manifest = load_manifest(args.manifest)
    if args.fetch_list:
        print("\n".join(fetch_list(manifest)))
        return 0
    problems = materialize(manifest, args.mirrors, args.out)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
