"""Re-create the files of the hand-labelled corpus (issue 21) from fetched git mirrors.

    python3 bench/corpus/materialize.py            # mirrors: $TORCHUP_MIRRORS, else ~/.cache/torchup/mirrors
    python3 bench/corpus/materialize.py --mirrors DIR --out /tmp/corpus   (DIR: the git mirrors the search tool fetched)

Every file of `bench/corpus/manifest.json` is read with `git show COMMIT:PATH` from a bare mirror,
`MIRRORS/<owner>+<name>/repo` (the layout the search tool's `fetch github:<owner>/<name>` makes), and
written to `OUT/<owner>+<name>@<commit[:12]>/<path>`. Nothing is fetched: a missing mirror or commit is
reported with the fetch that would bring it. No project code is kept in this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"
DEFAULT_OUT = Path.home() / ".cache" / "torchup" / "corpus"
DEFAULT_MIRRORS = Path(os.environ.get("TORCHUP_MIRRORS", Path.home() / ".cache" / "torchup" / "mirrors"))


def load_manifest(path: Path = MANIFEST) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def tree_name(repo: str, commit: str) -> str:
    """The directory one repository at one commit is written to, under the corpus directory."""
    return f"{repo.replace('/', '+')}@{commit[:12]}"


def corpus_path(entry: dict) -> str:
    """The path (posix, relative to the corpus directory) of a manifest file."""
    return f"{tree_name(entry['repo'], entry['commit'])}/{entry['path']}"


def _has_commit(git_dir: Path, commit: str) -> bool:
    probe = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True
    )
    return probe.returncode == 0


def find_mirror(mirrors: Path, repo: str, commit: str) -> Path | None:
    """The bare git directory under `mirrors` that holds `commit` of `repo`, or None."""
    slug = repo.replace("/", "+")
    candidates = (mirrors / slug / "repo" / ".git", mirrors / slug / "repo", mirrors / slug, mirrors / f"{slug}.git")
    for candidate in candidates:
        if (candidate / "objects").is_dir() and _has_commit(candidate, commit):
            return candidate
    return None


def materialize(manifest: dict, mirrors: Path, out: Path) -> list[str]:
    """Write every file of the manifest under `out`; the problems found (empty when all is well)."""
    problems: list[str] = []
    git_dirs: dict[tuple[str, str], Path | None] = {}
    written = 0
    for entry in manifest["files"]:
        key = (entry["repo"], entry["commit"])
        if key not in git_dirs:
            git_dirs[key] = find_mirror(mirrors, *key)
            if git_dirs[key] is None:
                problems.append(
                    f"{entry['repo']}: no mirror with commit {entry['commit'][:12]} under {mirrors} "
                    f"(fetch github:{entry['repo']}, or pass --mirrors DIR)"
                )
        git_dir = git_dirs[key]
        if git_dir is None:
            continue
        shown = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{entry['commit']}:{entry['path']}"], capture_output=True
        )
        if shown.returncode != 0:
            problems.append(f"{entry['repo']}@{entry['commit'][:12]}: no file {entry['path']}")
            continue
        target = out / corpus_path(entry)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shown.stdout)
        lines = shown.stdout.count(b"\n") + (0 if shown.stdout.endswith(b"\n") else 1)
        beyond = [label["line"] for label in entry["labels"] if label["line"] > lines]
        if beyond:
            problems.append(f"{corpus_path(entry)}: labels beyond the file's {lines} lines: {beyond}")
        written += 1
    print(f"{written} of {len(manifest['files'])} files written under {out}", file=sys.stderr)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="where the bare mirrors are")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"corpus directory (default {DEFAULT_OUT})")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args(argv)
    problems = materialize(load_manifest(args.manifest), args.mirrors, args.out)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
