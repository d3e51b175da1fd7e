"""The from-version: the torch release the checked code runs on today, when no option names it.

Read, never run, from the torch requirement of the nearest project up the tree from each checked
file's directory: the first directory, going up, whose project files name ``torch`` (or conda's
``pytorch``) decides. The walk stops after a directory that holds ``.git`` (nothing above a
repository belongs to it). In each directory these files are read:

- ``pyproject.toml``: ``[project] dependencies`` and ``optional-dependencies``; Poetry's
  ``[tool.poetry.dependencies]``, ``dev-dependencies`` and ``group.<name>.dependencies``; PDM's
  ``[tool.pdm.dev-dependencies]``; uv's ``[tool.uv] dev-dependencies``; ``[dependency-groups]``;
- ``setup.cfg``: ``install_requires`` and ``extras_require`` of ``[options]``;
- ``setup.py``: ``install_requires=`` and ``extras_require=`` of a ``setup(...)`` call, as literals
  or as a module-level variable holding one (read with ``ast``);
- ``requirements*.txt`` and ``requirements/*.txt``, following ``-r`` / ``--requirement`` and
  ``-c`` / ``--constraint``; comments, options, continuation lines and environment markers are
  read past (a requirement counts whatever its marker);
- ``environment.yml`` / ``environment.yaml`` (conda): ``pytorch`` in ``dependencies``
  (``pytorch=2.1`` is ``2.1.*``), ``torch`` in its ``pip:`` list (read by hand: no YAML library).

A requirement's release is the lowest torch release (0.1 ... 0.4, 1.0 ... 1.13, 2.0 ... 2.15) its
specifier admits: ``>=2.1,<2.5`` and ``~=2.1.0`` give 2.1, ``==2.4.1`` and ``==2.4.*`` 2.4, ``>2.3``
2.3 (it admits 2.3.1), ``==1.12.1`` 1.12. Where several requirements name torch, the lowest release
wins (the code must still run there). A requirement without a lower bound (``torch``,
``torch<2.5``, ``torch @ URL``) gives no release: the installed torch decides, then the default.
That release is the project's **floor**. An exact pin (``torch==1.12.1``) is one too, and is said
to be one: such a project moves with the upgrade (its floor becomes the target once it bumps the
pin). A floor below 1.0, the oldest release torchup has data for, is kept as it is and said to be
below it.

The installed torch is that of the environment torchup runs in: the version in its
``.dist-info`` (or ``.egg-info``) metadata on ``sys.path``, as ``importlib.metadata.version("torch")``
finds it, read without importing torch (nor ``importlib.metadata``, a tenth of a second to import).
Else the default, 2.0.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field

from torchup.core.python_target import versions_admitted

# The releases a floor can be: 0.1 ... 0.4, 1.0 ... 1.13, 2.0 ... 2.15.
FROM_RELEASES = (
    *(f"0.{minor}" for minor in range(1, 5)),
    *(f"1.{minor}" for minor in range(14)),
    *(f"2.{minor}" for minor in range(16)),
)
OLDEST_DATA = "1.0"  # the oldest release torchup's facts reach (rules' releases, torchup/data/introduced.json)
DEFAULT_RELEASE = "2.0"
_MINORS = tuple(tuple(int(part) for part in release.split(".")) for release in FROM_RELEASES)


def from_release(value: object) -> str:
    """``"2.4"`` (or ``"2.4.1"``, its minor) as a known release; ValueError naming what is known."""
    text = value.strip() if isinstance(value, str) else None
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", text or "")
    release = f"{int(match.group(1))}.{int(match.group(2))}" if match else None
    if release not in FROM_RELEASES:
        raise ValueError(f"expected a torch release from {FROM_RELEASES[0]} to {FROM_RELEASES[-1]} "
                         f"(like \"2.4\" or \"2.4.1\"), got {value!r}")
    return release


def below_data(release: str) -> bool:
    """Whether ``release`` is older than the oldest release torchup's facts reach."""
    return _key(release) < _key(OLDEST_DATA)


@dataclass(frozen=True)
class FromVersion:
    """The floor: the oldest release the code must run on (today's, for a pinned project), and
    where that was found (for ``--show-settings`` and every report)."""

    release: str
    source: str  # "pyproject.toml:12 `torch>=2.1,<2.5`", "installed torch 2.13.0", "default: ..."
    # The requirement that set it (None: an option, the configuration, the installed torch or the
    # default): ``fix --raise-floor`` raises it.
    requirement: TorchRequirement | None = field(default=None, compare=False)

    @property
    def known(self) -> bool:
        """Whether something says it (an option, the configuration, a requirement, the installed
        torch): a default floor chooses the rules, but no fix is held to it."""
        return not self.source.startswith("default:")

    @property
    def pinned(self) -> bool:
        """An exact pin (``torch==1.12.1``): the project moves with the upgrade."""
        return self.requirement is not None and self.requirement.exact

    def explained(self) -> str:
        """Where it was found, with what a default, a pin or a release below the data means:
        ``requirements.txt:3 `torch==1.12.1`; an exact pin: ...``."""
        notes = [self.source]
        if not self.known:
            notes.append(f"rules run as for {self.release}; fixes are not held to a floor: `--floor X.Y` sets one")
        if self.pinned:
            notes.append("an exact pin: the project moves with the upgrade, and its floor becomes the target "
                         "once the pin is bumped")
        if below_data(self.release):
            notes.append(f"below {OLDEST_DATA}, the oldest release torchup has data for")
        return "; ".join(notes)

    def describe(self) -> str:
        """``1.7 (requirements.txt:3 `torch>=1.7`)``: the release, then ``explained``."""
        return f"{self.release} ({self.explained()})"


@dataclass(frozen=True)
class TorchRequirement:
    """One requirement that names torch: where it stands, and the lowest release it admits."""

    path: str
    line: int
    text: str  # as written (a Poetry entry: its line)
    release: str | None  # None: no lower bound (or a URL)

    @property
    def exact(self) -> bool:
        """An exact pin (`torch==1.12.1`, Poetry's `torch = "1.12.1"`, conda's `pytorch==1.12.1`; not
        `==1.12.*`, nor a range): the project moves with the upgrade."""
        return self.release is not None and _EXACT_PIN.search(self.text) is not None

    def where(self) -> str:
        return f"{_display(self.path)}:{self.line} `{self.text}`"


# -- specifiers ------------------------------------------------------------------------------------

_VERSION = re.compile(r"(?:\d+!)?(\d+(?:\.\d+)*)(\.\*)?")
_CLAUSE = re.compile(r"\s*(===|==|!=|~=|>=|<=|>|<)\s*(\S+)\s*")
_LOWER = ("==", "===", ">=", ">", "~=")  # the operators that bound a release from below
# `==1.12.1` / `===1.12.1` (not `==1.12.*`), or a Poetry value that is a bare version (`"1.12.1"`),
# with nothing but a marker, a comment or a closing quote after it: one release, nothing else.
_EXACT_PIN = re.compile(r"""(?:===?\s*|=\s*["'])v?\d+(?:\.\d+)*(?:[+-][\w.]+)?\s*["']?\s*(?:$|[;#,}])""")


def lowest_release(specifier: str) -> str | None:
    """The lowest known release a PEP 440 specifier (``>=2.1,<2.5``) admits some version of; None
    without a lower bound, when it admits no known release, or when it cannot be read."""
    clauses = []
    for part in specifier.split(","):
        if not part.strip():
            continue
        match = _CLAUSE.fullmatch(part)
        if match is None:
            return None
        operator, version = match.groups()
        # The release segment only: `2.5.0rc1` -> 2.5.0, `2.4.1+cu121` -> 2.4.1 (its series is what counts).
        found = _VERSION.match(version)
        if found is None:
            return None
        clauses.append((operator, found.group(1) + (found.group(2) or "")))
    if not any(operator in _LOWER for operator, _ in clauses):
        return None
    try:
        admitted = versions_admitted(",".join(op + version for op, version in clauses), known=_MINORS)
    except ValueError:
        return None
    return f"{min(admitted)[0]}.{min(admitted)[1]}" if admitted else None


def _poetry_release(constraint: str) -> str | None:
    """The lowest release a Poetry constraint admits: ``^2.1``, ``~2.1``, ``2.1.*``, ``>=2.1,<3``,
    ``2.1`` (exactly), alternatives joined by ``||``."""
    found = []
    for alternative in constraint.split("||"):
        clauses = []
        for part in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", alternative.strip()):
            part = part.strip()
            if not part or part == "*":
                continue
            if part.startswith("^") or (part.startswith("~") and not part.startswith("~=")):
                clauses.append(">=" + part.lstrip("^~").strip())
            elif part[0].isdigit():
                clauses.append("==" + part)
            else:
                clauses.append(part)
        release = lowest_release(",".join(clauses)) if clauses else None
        if release is not None:
            found.append(release)
    return min(found, key=_key) if found else None


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


_PEP508 = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)", re.DOTALL)


def _is_torch(name: str) -> bool:
    return re.sub(r"[-_.]+", "-", name).lower() == "torch"


def pep508_release(requirement: str) -> tuple[bool, str | None]:
    """Whether a PEP 508 requirement names torch, and the lowest release it admits."""
    match = _PEP508.fullmatch(requirement)
    if match is None or not _is_torch(match.group(1)):
        return False, None
    rest = match.group(3).strip()
    if rest.startswith("@"):
        return True, None  # a URL: no version to read
    specifier = rest.split(";", 1)[0].strip()
    if specifier.startswith("(") and specifier.endswith(")"):
        specifier = specifier[1:-1]
    return True, lowest_release(specifier) if specifier else None


# -- the files of a project ------------------------------------------------------------------------

REQUIREMENT_FILE = re.compile(r"requirements.*\.txt")
_CONDA_NAMES = frozenset({"pytorch", "pytorch-cpu", "pytorch-gpu"})  # (conda-forge's metapackages share its version)


def _line_of(text: str, needle: str) -> int:
    """The 1-based line of the first ``needle`` in ``text`` (1 if none)."""
    return next((number for number, line in enumerate(text.splitlines(), 1) if needle in line), 1)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


def _pyproject(path: str, text: str) -> list[TorchRequirement]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    strings: list[object] = []
    project = _table(document, "project")
    strings += _list(project.get("dependencies"))
    for extra in _table(project, "optional-dependencies").values():
        strings += _list(extra)
    tool = _table(document, "tool")
    for group in _table(_table(tool, "pdm"), "dev-dependencies").values():
        strings += _list(group)
    strings += _list(_table(tool, "uv").get("dev-dependencies"))
    for group in _table(document, "dependency-groups").values():
        strings += _list(group)  # (an `{include-group = ...}` table is not a string: passed over)
    found = []
    for item in strings:
        if isinstance(item, str):
            names, release = pep508_release(item)
            if names:
                line = next((_line_of(text, quoted) for quoted in (f'"{item}"', f"'{item}'") if quoted in text), 0)
                found.append(TorchRequirement(path, line or _line_of(text, item), item.strip(), release))
    poetry = _table(tool, "poetry")
    tables = [("tool.poetry.dependencies", _table(poetry, "dependencies")),
              ("tool.poetry.dev-dependencies", _table(poetry, "dev-dependencies"))]
    tables += [(f"tool.poetry.group.{name}.dependencies", _table(group, "dependencies"))
               for name, group in _table(poetry, "group").items() if isinstance(group, dict)]
    for header, table in tables:
        for name, value in table.items():
            if _is_torch(name):
                line = _poetry_line(text, header, name)
                shown = text.splitlines()[line - 1].strip() if line <= len(text.splitlines()) else name
                found.append(TorchRequirement(path, line, shown, _poetry_value_release(value)))
    return found


def _poetry_value_release(value: object) -> str | None:
    """``"^2.1"``, ``{version = "^2.1", ...}`` or a list of such tables (one per marker)."""
    if isinstance(value, str):
        return _poetry_release(value)
    if isinstance(value, dict):
        version = value.get("version")
        return _poetry_release(version) if isinstance(version, str) else None  # (git, url, path: no version)
    if isinstance(value, list):
        found = [release for item in value if (release := _poetry_value_release(item)) is not None]
        return min(found, key=_key) if found else None
    return None


def _poetry_line(text: str, header: str, name: str) -> int:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().replace(" ", "") == f"[{header}]"), 0)
    key = re.compile(rf"""\s*["']?{re.escape(name)}["']?\s*=""")
    return next((i + 1 for i in range(start, len(lines)) if key.match(lines[i])), start + 1)


def _table(container: object, key: str) -> dict[str, object]:
    value = container.get(key) if isinstance(container, dict) else None
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _setup_cfg(path: str, text: str) -> list[TorchRequirement]:
    """``[options] install_requires`` and ``[options.extras_require]``, read by hand (with lines):
    a value on the key's line (items separated by ``;``) and one item per indented line after it."""
    found = []
    section, key = "", ""
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if raw[:1].isspace():
            items = [stripped] if key else []  # a continuation line of the current key's value
        else:
            header = re.fullmatch(r"\[([^\]]+)\]", stripped)
            if header:
                section, key = header.group(1).strip(), ""
                continue
            assignment = re.match(r"([^=:]+?)\s*[=:]\s*(.*)", stripped)
            key, value = (assignment.group(1), assignment.group(2)) if assignment else ("", "")
            items = value.split(";")
        wanted = (section == "options" and key == "install_requires") or section == "options.extras_require"
        for item in items if wanted else ():
            item = re.sub(r"\s+#.*", "", item)  # (a comment after it)
            names, release = pep508_release(item.strip())
            if names:
                found.append(TorchRequirement(path, number, item.strip(), release))
    return found


def _setup_py(path: str, text: str) -> list[TorchRequirement]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    assigned: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            assigned[statement.target.id] = statement.value
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not ((isinstance(func, ast.Name) and func.id == "setup") or
                (isinstance(func, ast.Attribute) and func.attr == "setup")):
            continue
        for keyword in node.keywords:
            value = keyword.value
            if isinstance(value, ast.Name):
                value = assigned.get(value.id, value)
            if keyword.arg == "install_requires":
                values.append(value)
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for item in value.values:
                    values.append(assigned.get(item.id, item) if isinstance(item, ast.Name) else item)
    found = []
    for value in values:
        if not isinstance(value, (ast.List, ast.Tuple)):
            continue
        for element in value.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                names, release = pep508_release(element.value)
                if names:
                    found.append(TorchRequirement(path, element.lineno, element.value.strip(), release))
    return found or _setup_py_strings(path, tree)


def _setup_py_strings(path: str, tree: ast.Module) -> list[TorchRequirement]:
    """A setup.py whose ``install_requires`` is computed (diffusers' table of pins, indexed by name):
    every string literal in it that is a torch requirement with a version."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            names, release = pep508_release(node.value)
            if names and release is not None:
                found.append(TorchRequirement(path, node.lineno, node.value.strip(), release))
    return found


_INCLUDE = re.compile(r"(?:-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?<=^-[rc]))(\S+)")


def _requirements(path: str, text: str, read: set[str], seen: set[str], depth: int = 0) -> list[TorchRequirement]:
    """A pip requirements file, with the files it includes (``-r``, ``-c``) relative to it."""
    found: list[TorchRequirement] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        start = start if pending else number
        line = re.sub(r"(^|\s)#.*", "", raw) if "#" in raw else raw
        if line.endswith("\\"):  # continued on the next line
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        include = _INCLUDE.fullmatch(line)
        if include:
            target = include.group(1)
            included = os.path.normpath(os.path.join(os.path.dirname(path), target))
            if "://" in target or included in seen or depth >= 16:
                continue
            seen.add(included)
            read.add(included)
            content = _read(included)
            if content is not None:
                found += _requirements(included, content, read, seen, depth + 1)
        elif line and not line.startswith("-"):  # (-e, --index-url, ... name no release)
            requirement = re.split(r"\s+--?[A-Za-z]", line, maxsplit=1)[0].strip()  # (`--hash=...` after it)
            names, release = pep508_release(requirement)
            if names:
                found.append(TorchRequirement(path, start, requirement, release))
    return found


def _environment(path: str, text: str) -> list[TorchRequirement]:
    """A conda environment file: its top-level ``dependencies`` list and the ``pip:`` list in it."""
    found: list[TorchRequirement] = []
    inside = False
    pip_indent: int | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*", "", raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if indent == 0 and not stripped.startswith("-"):
            inside = re.fullmatch(r"dependencies\s*:", stripped) is not None
            pip_indent = None
            continue
        if not inside or not stripped.startswith("-"):
            continue
        item = stripped[1:].strip().strip("\"'")
        if pip_indent is not None and indent <= pip_indent:
            pip_indent = None
        if re.fullmatch(r"pip\s*:", item):
            pip_indent = indent
            continue
        if pip_indent is not None:
            names, release = pep508_release(item)
        else:
            names, release = _conda_release(item)
        if names:
            found.append(TorchRequirement(path, number, item, release))
    return found


def _conda_release(spec: str) -> tuple[bool, str | None]:
    """A conda match spec: ``pytorch=2.1`` (2.1.*), ``pytorch 2.1`` (the same), ``pytorch==2.1.*``,
    ``pytorch>=2.1,<2.5``, ``conda-forge::pytorch=2.1.0=cuda*`` (a build after the version),
    ``pytorch[version='>=2.1']``; alternatives joined by ``|``."""
    match = re.fullmatch(r"(?:[^:\s]+::)?([A-Za-z0-9_.-]+)\s*(.*)", spec.strip())
    if match is None or match.group(1).lower() not in _CONDA_NAMES:
        return False, None
    rest = match.group(2).strip()
    bracket = re.match(r"\[.*?\bversion\s*=\s*['\"]?([^'\"\]]+)", rest)
    version = bracket.group(1).strip() if bracket else (rest.split() or [""])[0]
    if not version:
        return True, None
    releases = []
    for alternative in version.split("|"):
        if alternative[:1].isdigit() or (alternative[:1] == "=" and alternative[1:2] != "="):
            fuzzy = alternative.lstrip("=").split("=", 1)[0]  # `=2.1`, `2.1`: 2.1.*; a build after `=`
            clause = "==" + (fuzzy if fuzzy.endswith("*") else fuzzy + ".*")
        elif alternative.startswith("=="):
            clause = "==" + alternative[2:].split("=", 1)[0]
        else:
            clause = alternative
        release = lowest_release(clause)
        if release is not None:
            releases.append(release)
    return True, min(releases, key=_key) if releases else None


def _display(path: str) -> str:
    """``path`` relative to the working directory when under it, else as it is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative


# -- the nearest project, per directory ------------------------------------------------------------

PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")
_RELEVANT = frozenset({*PROJECT_FILES, ".git"})  # (and `requirements*`: torchup.run.replay.project_names agrees)


@dataclass
class Detector:
    """Finds the from-version of each directory (memoised: a directory's files share it, and each
    directory asks its parent). What an answer depended on, for whoever must know it
    (torchup.run.replay): ``read``, every file it read or looked for by name; ``listed``, the
    entries of every directory it listed, as it found them (of which only the names a project file
    or torch's metadata may have count: ``replay.project_names``)."""

    read: set[str] = field(default_factory=set)
    listed: dict[str, list[str]] = field(default_factory=dict)
    _near: dict[str, TorchRequirement | None] = field(default_factory=dict)
    _answers: dict[str, FromVersion] = field(default_factory=dict)
    _installed: tuple[str | None, str | None] | None = None  # (version, metadata path), once looked up

    def from_version(self, directory: str) -> FromVersion:
        directory = os.path.abspath(directory or os.curdir)
        answer = self._answers.get(directory)
        if answer is None:
            answer = self._answers[directory] = self._decide(directory)
        return answer

    def _decide(self, directory: str) -> FromVersion:
        requirement = self.nearest(directory)
        if requirement is not None and requirement.release is not None:
            return FromVersion(requirement.release, requirement.where(), requirement)
        unbounded = f"{requirement.where()} sets no lower bound" if requirement is not None else None
        version = self.installed()
        if version is not None:
            release = _clamp(version)
            note = f"; {unbounded}" if unbounded else ""
            return FromVersion(release, f"installed torch {version}{note}")
        reason = f"{unbounded} and torch is not installed" if unbounded else "no torch requirement found"
        return FromVersion(DEFAULT_RELEASE, f"default: {reason}")

    def nearest(self, directory: str) -> TorchRequirement | None:
        """The requirement of the nearest directory at or above ``directory`` whose project files
        name torch (the lowest release among them), None when none does."""
        if directory in self._near:
            return self._near[directory]
        # (most directories hold none of these: a set of the few that matter, not of every entry)
        names = {name for name in self._list(directory) if name in _RELEVANT or name.startswith("requirements")}
        found = self._requirements_in(directory, names) if names else []
        if found:
            known = [requirement for requirement in found if requirement.release is not None]
            answer: TorchRequirement | None = min(known, key=lambda r: _key(r.release or "")) if known else found[0]
        else:
            parent = os.path.dirname(directory)
            answer = None if ".git" in names or parent == directory else self.nearest(parent)
        self._near[directory] = answer
        return answer

    def all_requirements(self, directory: str) -> list[TorchRequirement]:
        """Every torch requirement of the project that decides ``directory``'s floor (``nearest``'s
        directory): raising the floor raises each of them (``fix --raise-floor``)."""
        directory = os.path.abspath(directory or os.curdir)
        while True:
            names = {name for name in self._list(directory) if name in _RELEVANT or name.startswith("requirements")}
            found = self._requirements_in(directory, names) if names else []
            parent = os.path.dirname(directory)
            if found or ".git" in names or parent == directory:
                return found
            directory = parent

    def _requirements_in(self, directory: str, names: set[str]) -> list[TorchRequirement]:
        found: list[TorchRequirement] = []
        readers = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py,
                   "environment.yml": _environment, "environment.yaml": _environment}
        for name in PROJECT_FILES:
            if name in names:
                path = os.path.join(directory, name)
                text = self._text(path)
                if text is not None:
                    found += readers[name](path, text)
        files = [os.path.join(directory, name) for name in sorted(names) if REQUIREMENT_FILE.fullmatch(name)]
        if "requirements" in names:
            subdirectory = os.path.join(directory, "requirements")
            for name in sorted(self._list(subdirectory)):
                if name.endswith(".txt"):
                    files.append(os.path.join(subdirectory, name))
                elif "." not in name:  # (Lightning's requirements/pytorch/base.txt: one level deeper)
                    deeper = os.path.join(subdirectory, name)
                    files += [os.path.join(deeper, inner) for inner in sorted(self._list(deeper))
                              if inner.endswith(".txt")]
        seen = set(files)
        for path in files:
            text = self._text(path)
            if text is not None:
                found += _requirements(path, text, self.read, seen)
        return found

    def _list(self, directory: str) -> list[str]:
        try:
            names = os.listdir(directory)
        except (OSError, ValueError):
            self.read.add(directory)  # (not a directory, or gone: its status says when that changes)
            return []
        self.listed[directory] = names
        return names

    def _text(self, path: str) -> str | None:
        self.read.add(path)
        return _read(path) if os.path.isfile(path) else None

    def installed(self) -> str | None:
        """The version of the torch installed where torchup runs (None: not installed)."""
        if self._installed is None:
            self._installed = installed_torch(self.listed, self.read)
        return self._installed[0]


def _clamp(version: str) -> str:
    """The known release of an installed version's minor: 2.16 counts as 2.15."""
    match = re.match(r"(\d+)\.(\d+)", version)
    minor = (int(match.group(1)), int(match.group(2))) if match else _MINORS[0]
    return FROM_RELEASES[max((i for i, known in enumerate(_MINORS) if known <= minor), default=0)]


_DIST = re.compile(r"torch-([^-]+?)\.(?:dist-info|egg-info)", re.IGNORECASE)


def installed_torch(
    listed: dict[str, list[str]] | None = None, read: set[str] | None = None
) -> tuple[str | None, str | None]:
    """``importlib.metadata.version("torch")`` for the path-based finder, and the metadata file it
    read: the first entry of ``sys.path`` with a ``torch-*.dist-info`` (or ``.egg-info``)
    directory, its ``Version:`` header (else the version in its name). ``listed`` and ``read``
    (as ``Detector``'s) are told what was looked at."""
    listed = {} if listed is None else listed
    read = set() if read is None else read
    for entry in sys.path:
        directory = os.path.abspath(entry or os.curdir)
        try:
            names = os.listdir(directory)
        except (OSError, ValueError):
            read.add(directory)  # (a zip file, or missing: its status says when that changes)
            continue
        listed[directory] = names
        for name in sorted(names):
            match = _DIST.fullmatch(name)
            if match is None:
                continue
            metadata = os.path.join(directory, name, "METADATA" if name.lower().endswith("dist-info") else "PKG-INFO")
            read.add(metadata)
            text = _read(metadata)
            if text is None:
                continue  # (an empty leftover of an uninstall: not installed)
            version = re.search(r"(?m)^Version:\s*(\S+)", text)
            return (version.group(1) if version else match.group(1)), metadata
    return None, None
