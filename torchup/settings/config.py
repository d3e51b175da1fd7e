"""Settings from ``[tool.torchup]`` in ``pyproject.toml`` or from ``torchup.toml`` (or the TorchFix
codes of a flake8 configuration: torchup.settings.flake8_config).

The nearest configuration file up the tree from a checked file wins, as in ruff; a
``pyproject.toml`` without a ``[tool.torchup]`` table is passed over. Command-line options override
what a file says. An unknown key or a bad value is an error naming the key and the file.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from torchup.core.diagnostics import Confidence
from torchup.settings.flake8_config import FLAKE8_FILE_NAMES, read_flake8
from torchup.settings.torch_requirement import FROM_RELEASES, FromVersion, from_release

OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "sarif", "github", "junit")
KNOWN_RELEASES = ("2.14", "2.15")

CONFIDENCES = tuple(confidence.value for confidence in Confidence)  # (surest first)


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    """The options of one configuration (`[tool.torchup]`), command-line overrides applied."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    target_version: str = KNOWN_RELEASES[-1]
    # The torch release the code runs on today (None: read from the project's torch requirement,
    # else the installed torch, else 2.0: torchup.settings.torch_requirement). It decides which
    # warnings and changes of behaviour are new, and so reported by default (Rule.on_by_default).
    from_version: str | None = None
    target_python: str | None = None
    unsafe_fixes: bool = False
    # The least sure findings of method rules still reported (torchup.analysis.receivers):
    # "possible" (every receiver not known to be something else), "likely" or "certain".
    min_confidence: str = "possible"
    output_format: str = "full"
    config_file: str | None = field(default=None, compare=False)
    # What reading the configuration has to say (a flake8 section's TorchFix codes: flake8_config.py).
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def root(self) -> Path:
        """Where relative globs are anchored: the config file's directory, else the working directory."""
        return Path(self.config_file).resolve().parent if self.config_file else Path.cwd()

    def describe(self, from_version: FromVersion | None = None) -> str:
        """``key = value`` lines; ``from_version``: the from-version in force and where it was found."""
        lines = [f"config file = {self.config_file or '(none: defaults and command-line options)'}"]
        for item in fields(self):
            if item.name == "from_version" and from_version is not None:
                lines.append(f"floor = {_show(from_version.release)} ({from_version.explained()})")
            elif item.name == "target_version":
                newest = " (the default: the newest release known)" if self.target_version == KNOWN_RELEASES[-1] else ""
                lines.append(f"target-version = {_show(self.target_version)}{newest}")
            elif item.name not in ("config_file", "notes"):
                lines.append(f"{item.name.replace('_', '-')} = {_show(getattr(self, item.name))}")
        return "\n".join(lines) + "\n"


def _show(value: Any) -> str:
    if value is None:
        return "(default)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return "{" + ", ".join(f'"{glob}" = {list(codes)}' for glob, codes in value) + "}"
        return str(list(value))
    return f'"{value}"'


def _codes(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of rule codes or prefixes, like [\"TU1\"], got {value!r}")
    return tuple(v.strip().upper() for v in value)


def _globs(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of glob patterns, got {value!r}")
    return tuple(value)


def _parse(table: dict[str, Any], path: Path) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("select", "ignore", "extend-select"):
            parsed[key.replace("-", "_")] = _codes(value, key, path)
        elif key in ("exclude", "extend-exclude"):
            parsed[key.replace("-", "_")] = _globs(value, key, path)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `per-file-ignores` must be a table of glob = [codes], got {value!r}")
            parsed["per_file_ignores"] = tuple(
                (glob, _codes(codes, f"per-file-ignores.{glob}", path)) for glob, codes in value.items()
            )
        elif key == "target-version":
            if value not in KNOWN_RELEASES:
                known = ", ".join(KNOWN_RELEASES)
                raise ConfigError(f"{path}: `target-version` must be one of {known} (a torch release), got {value!r}")
            parsed["target_version"] = value
        elif key in ("floor", "from-version"):  # (from-version: its first name, kept as an alias)
            if "from_version" in parsed:
                raise ConfigError(f"{path}: `floor` and `from-version` are the same setting: give one")
            try:
                parsed["from_version"] = from_release(value)
            except ValueError:
                raise ConfigError(
                    f"{path}: `{key}` must be a torch release in quotes, {FROM_RELEASES[0]} to {FROM_RELEASES[-1]} "
                    f"(\"2.4\"; a patch release like \"2.4.1\" counts as its minor), got {value!r}"
                ) from None
        elif key == "target-python":
            if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+", value):
                raise ConfigError(f"{path}: `target-python` must be a version like \"3.15\", got {value!r}")
            parsed["target_python"] = value
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: `unsafe-fixes` must be true or false, got {value!r}")
            parsed["unsafe_fixes"] = value
        elif key == "min-confidence":
            if value not in CONFIDENCES:
                raise ConfigError(f"{path}: `min-confidence` must be one of {', '.join(CONFIDENCES)}, got {value!r}")
            parsed["min_confidence"] = value
        elif key == "output-format":
            if value not in OUTPUT_FORMATS:
                raise ConfigError(f"{path}: `output-format` must be one of {', '.join(OUTPUT_FORMATS)}, got {value!r}")
            parsed["output_format"] = value
        else:
            known = "select, ignore, extend-select, per-file-ignores, exclude, extend-exclude, target-version, " \
                "from-version, target-python, unsafe-fixes, min-confidence, output-format"
            raise ConfigError(f"{path}: unknown key `{key}` in the torchup settings; known keys: {known}")
    return parsed


def read_table(path: Path) -> dict[str, Any] | None:
    """The torchup table of a config file (None: a pyproject.toml without [tool.torchup])."""
    # Imported here: a run without a configuration file (or one cached warm) never parses TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = document.get("tool", {}).get("torchup")
        return table if isinstance(table, dict) else None
    nested = document.get("tool", {}).get("torchup")
    return nested if isinstance(nested, dict) else document


def load(path: Path) -> Settings:
    if path.name in FLAKE8_FILE_NAMES:
        read = read_flake8(path)
        fields_, notes = read if read is not None else ({}, ())
        return Settings(**fields_, config_file=str(path), notes=notes)
    table = read_table(path)
    return Settings(**_parse(table or {}, path), config_file=str(path))


# In this order, in each directory: torchup's own, then a flake8 section that names TorchFix's codes.
CONFIG_FILE_NAMES = ("torchup.toml", "pyproject.toml", *FLAKE8_FILE_NAMES)


@lru_cache(maxsize=1024)
def nearest_config(directory: Path) -> Path | None:
    """The closest torchup.toml, pyproject.toml with [tool.torchup], or flake8 configuration with
    TorchFix's codes (torchup.settings.flake8_config), at or above ``directory``. Cached per
    directory, and each directory asks its parent: a tree costs one look per folder."""
    for name in CONFIG_FILE_NAMES:
        path = directory / name
        if not os.path.isfile(path):
            continue
        if name == "torchup.toml" or (read_flake8(path) if name in FLAKE8_FILE_NAMES else read_table(path)) is not None:
            return path
    return None if directory.parent == directory else nearest_config(directory.parent)


def with_overrides(base: Settings, **overrides: Any) -> Settings:
    """``base`` with the command-line options that were given (None means not given). A `--select`
    starts the selection afresh, as ruff's does: the configuration's `extend-select` and `ignore`
    then no longer apply, only those given beside it (`per-file-ignores` still do)."""
    given = {key: value for key, value in overrides.items() if value is not None}
    if "select" in given:
        given = {"extend_select": (), "ignore": (), **given}
    return Settings(**{**{f.name: getattr(base, f.name) for f in fields(base)}, **given})
