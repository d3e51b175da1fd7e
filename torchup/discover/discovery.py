"""Which files to check: walk directories like ruff does (default excludes, .gitignore, globs)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks: see torchup.run.notebook

# ruff's default exclusions, plus __pycache__ and site-packages.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "__pycache__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", ".torchup_cache",
)


@dataclass(frozen=True)
class Target:
    """A source file to check."""

    path: str
    explicit: bool  # named on the command line: always checked


@dataclass(frozen=True)
class Missing:
    """A path that was named or found but cannot be read."""

    path: str
    reason: str


@dataclass
class _IgnoreRule:
    """One line of a `.gitignore` file."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


@dataclass
class GitIgnore:
    """The patterns of one .gitignore file, matched against paths relative to its directory."""

    base: Path
    rules: list[_IgnoreRule] = field(default_factory=list)

    @classmethod
    def load(cls, directory: Path) -> GitIgnore | None:
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        ignore = cls(directory)
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            directory_only = line.endswith("/")
            line = line.strip("/") if directory_only else line
            anchored = "/" in line.rstrip("/")
            line = line.lstrip("/")
            if not line:
                continue
            ignore.rules.append(_IgnoreRule(_glob_to_regex(line, anchored), negated, directory_only))
        return ignore

    def decide(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` pattern; None: not mentioned."""
        try:
            relative = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        verdict = None
        for rule in self.rules:
            if rule.directory_only and not is_dir:
                continue
            if rule.regex.fullmatch(relative):
                verdict = not rule.negated
        return verdict


def display_path(path: str, cwd: str) -> str:
    """How reports name ``path``: relative to the working directory ``cwd`` when under it, else
    absolute, as ruff does, so that `./a.py`, `a.py` and `/cwd/a.py` print alike. ``..`` is undone
    on the text alone, unless that reaches another file (``link/..`` where ``link`` is a symbolic link)."""
    joined = os.path.join(cwd, path)
    absolute = os.path.normpath(joined)
    if os.pardir in path.split(os.sep):
        try:
            same = os.path.samefile(joined, absolute)  # (the system follows the link, normpath does not)
        except OSError:
            same = not os.path.lexists(joined)  # a missing path reads nothing: only its name matters
        if not same:
            return path
    if absolute == cwd:
        return "."
    prefix = cwd if cwd.endswith(os.sep) else cwd + os.sep
    return absolute[len(prefix):] if absolute.startswith(prefix) else absolute


def _rebase(root: str, shown: str, cwd: str) -> Callable[[str], str]:
    """Maps a path found under the walked ``root`` to the same path under ``shown``, the display
    form of ``root``: a slice per file (the walk itself keeps ``root``, for excludes and .gitignore)."""
    if root == ".":
        return lambda path: path[2:] if path.startswith("./") else path  # only the top level reads ./a.py
    skip = len(root) + (0 if root.endswith(os.sep) else 1)
    if shown == ".":
        return lambda path: path[skip:]
    head = shown if shown.endswith(os.sep) else shown + os.sep
    inner = cwd if cwd.endswith(os.sep) else cwd + os.sep
    if not inner.startswith(head):  # the working directory is not inside the root: no file found is under it
        return _as_found if root == shown else (lambda path: head + path[skip:])

    def rebase(path: str) -> str:  # `torchup check ..`: the files of the working directory print relative
        full = path if root == shown else head + path[skip:]
        return full[len(inner):] if full.startswith(inner) else full

    return rebase


def _as_found(path: str) -> str:
    return path


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _glob_to_regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    parts = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("/**", index) and index + 3 == len(pattern):
            parts.append("/.*")
            index += 3
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        elif pattern[index] == "[":
            end = pattern.find("]", index)
            if end < 0:
                parts.append(re.escape("["))
                index += 1
            else:
                parts.append(fnmatch.translate(pattern[index:end + 1])[4:-3])
                index = end + 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    body = "".join(parts)
    return re.compile(body if anchored else f"(?:.*/)?{body}")


@dataclass
class Discovery:
    """Which files a run checks: the walk, its exclusions and `.gitignore` files."""

    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    suffixes: tuple[str, ...] = SOURCE_SUFFIXES
    follow_links: bool = False  # follow symbolic links that lead out of the directory being walked
    listed: list[str] = field(default_factory=list)  # every directory the walk read (torchup.run.replay)

    @cached_property
    def _exclusion(self) -> tuple[frozenset[str], re.Pattern[str] | None, re.Pattern[str] | None]:
        """Literal names (a set lookup), and two regexes: globs on the name, globs on the path."""
        patterns = (*self.exclude, *self.extend_exclude)
        literal = frozenset(p for p in patterns if not any(c in p for c in "*?[/"))
        on_name = [fnmatch.translate(p) for p in patterns if p not in literal]
        on_path = [fnmatch.translate(p) for p in patterns if p not in literal]
        on_path += [fnmatch.translate(f"*/{p.lstrip('/')}") for p in patterns if "/" in p]
        return (
            literal,
            re.compile("|".join(on_name)) if on_name else None,
            re.compile("|".join(on_path)) if on_path else None,
        )

    def excluded(self, path: Path | str) -> bool:
        literal, on_name, on_path = self._exclusion
        text = path.as_posix() if isinstance(path, Path) else path.replace(os.sep, "/")
        name = text.rsplit("/", 1)[-1]
        if name in literal:
            return True
        if on_name is not None and on_name.match(name):
            return True
        return on_path is not None and on_path.match(text) is not None

    def targets(self, paths: list[str]) -> Iterator[Target | Missing]:
        """The files to check, each path as reports show it (``display_path``): the cache and the
        replay key on absolute paths or on the working directory, so only the spelling changes."""
        try:
            cwd: str | None = os.getcwd()
        except OSError:  # the working directory was removed: paths as given
            cwd = None
        for given in paths:
            path = Path(given)
            shown = display_path(given, cwd) if cwd is not None else given
            try:
                is_dir = path.is_dir()
                exists = path.exists() or path.is_symlink()
            except OSError as exc:  # a symlink loop, say
                yield Missing(shown, exc.strerror or str(exc))
                continue
            if not exists:
                yield Missing(shown, "no such file or directory")
            elif is_dir:
                in_repo, ignores = self._parent_ignores(path)
                rebase = _rebase(str(path), shown, cwd) if cwd is not None else _as_found
                yield from self._walk(path, ignores, in_repo, rebase)
            else:
                yield Target(shown, explicit=True)

    def _parent_ignores(self, start: Path) -> tuple[bool, list[GitIgnore]]:
        """Whether ``start`` is in a git repository, and the .gitignore files from its root down.

        As in git (and ruff), .gitignore files count only inside a repository.
        """
        if not self.respect_gitignore:
            return False, []
        chain: list[Path] = []
        current = start.resolve()
        for directory in [*reversed(current.parents)]:
            chain.append(directory)
        root_index = max((i for i, d in enumerate(chain) if (d / ".git").exists()), default=None)
        if root_index is None:
            return False, []
        ignores = [GitIgnore.load(d) for d in chain[root_index:]]
        return True, [ignore for ignore in ignores if ignore is not None]

    def _ignored(self, path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
        verdict = False
        resolved = path.resolve() if ignores else path
        for ignore in ignores:
            decision = ignore.decide(resolved, is_dir)
            if decision is not None:
                verdict = decision
        return verdict

    def _walk(
        self, root: Path, inherited: list[GitIgnore], in_repo: bool, shown: Callable[[str], str]
    ) -> Iterator[Target | Missing]:
        """Files under ``root``. Symbolic links are followed only where they stay inside ``root`` (files)
        or not at all (directories), unless ``follow_links``; FIFOs, devices and sockets are passed over."""
        stack: list[tuple[Path, list[GitIgnore], bool]] = [(root, inherited, in_repo)]
        real_root = os.path.realpath(root)
        visited: set[tuple[int, int]] = set()  # directories walked, when links are followed
        while stack:
            directory, ignores, inside = stack.pop()
            self.listed.append(str(directory))
            inside = inside or (self.respect_gitignore and (directory / ".git").exists())
            if inside:
                own = GitIgnore.load(directory.resolve())
                if own is not None:
                    ignores = [*ignores, own]
            if self.follow_links:
                try:
                    info = directory.stat()
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) in visited:
                    continue  # a link loop, or a directory reached twice
                visited.add((info.st_dev, info.st_ino))
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            if directory is not root and any(e.name == "pyvenv.cfg" and os.path.exists(e.path) for e in entries):
                continue  # a virtual environment: its packages are not the project's code
            subdirectories = []
            for entry in entries:
                if not entry.name.endswith(self.suffixes):
                    try:  # most entries of a package are other files (torch ships ten thousand headers)
                        if not entry.is_dir(follow_symlinks=False) and not (self.follow_links and entry.is_symlink()):
                            continue  # neither a source file nor a directory to walk, nor a link to one
                    except OSError:
                        continue
                if self.excluded(entry.path):
                    continue
                try:
                    link = entry.is_symlink()
                    is_dir = entry.is_dir(follow_symlinks=self.follow_links and link)
                    is_file = entry.is_file()
                except OSError as exc:  # a symlink loop, say
                    if entry.name.endswith(self.suffixes):
                        yield Missing(shown(entry.path), exc.strerror or str(exc))
                    continue
                if link and not (is_file or is_dir):
                    if entry.name.endswith(self.suffixes) and not os.path.exists(entry.path):
                        yield Missing(shown(entry.path), "a broken or looping symbolic link")
                    continue  # (else a link to a directory, a FIFO or a device: passed over)
                if link and is_file and not self.follow_links and not _inside(os.path.realpath(entry.path), real_root):
                    continue  # a link out of the tree: the file is someone else's
                if ignores and self._ignored(Path(entry.path), is_dir, ignores):
                    continue
                if is_dir:
                    subdirectories.append((Path(entry.path), ignores, inside))
                elif is_file and entry.name.endswith(self.suffixes):
                    yield Target(shown(entry.path), explicit=False)
            stack.extend(reversed(subdirectories))
