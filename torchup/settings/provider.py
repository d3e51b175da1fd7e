"""Resolve the settings for each checked file: nearest config file, then command-line options."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchup.analysis.rule import Rule
from torchup.check.checker import FileSettings
from torchup.core import torchfix
from torchup.core.diagnostics import Confidence
from torchup.core.python_target import forget_files
from torchup.rules import all_rules
from torchup.settings.config import CONFIG_FILE_NAMES, ConfigError, Settings, load, nearest_config, with_overrides
from torchup.settings.selection import SelectionError, select_rules
from torchup.settings.torch_requirement import Detector, FromVersion


@dataclass
class SettingsProvider:
    """``--isolated``: no file; ``--config PATH``: that file for every path; else the nearest one.

    The from-version of each file is ``--from-version``, else the configuration's ``from-version``,
    else what the torch requirement of the nearest project up the tree from the file's directory
    says (torchup.settings.torch_requirement): the rules that run by default follow from it."""

    overrides: dict[str, Any]
    config: str | None = None
    isolated: bool = False
    # What finds the from-version where no option names it; ``detector.read``: what it looked at.
    detector: Detector = field(default_factory=Detector)
    _by_file: dict[str | None, Settings] = field(default_factory=dict)
    _rules: dict[tuple[int, str | None], tuple[Settings, list[Rule]]] = field(default_factory=dict)
    _nearest_by_directory: dict[str, Path | None] = field(default_factory=dict)
    _file_settings: dict[tuple[int, str | None, str | None, tuple[str, ...]], FileSettings] = field(
        default_factory=dict
    )
    _by_path: dict[str, FileSettings] = field(default_factory=dict)  # a run asks for each file several times
    _by_directory: dict[str, FileSettings] = field(default_factory=dict)  # where no per-file-ignores apply

    def __post_init__(self) -> None:
        # Configuration files may have changed since an earlier run in this process.
        nearest_config.cache_clear()
        forget_files()

    def settings(self, path: str) -> Settings:
        return self._resolved(path)

    def from_version(self, path: str) -> FromVersion:
        """The from-version for a file or directory path, and where it comes from."""
        directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        return self._from_version(self._resolved(path), directory)

    def _from_version(self, settings: Settings, directory: str) -> FromVersion:
        if settings.from_version is None:
            return self.detector.from_version(directory)
        given = self.overrides.get("from_version") is not None
        source = "--floor" if given else f"floor in {settings.config_file}"
        return FromVersion(settings.from_version, source)

    def _config_path(self, path: str, is_file: bool = False) -> Path | None:
        if self.isolated:
            return None
        if self.config is not None:
            return Path(self.config)
        directory = path if not is_file and os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        return self._nearest(directory)

    def _nearest(self, directory: str) -> Path | None:
        """Per directory (files share them). One that is no symbolic link and holds no configuration
        file has its parent's answer: two or three system calls, where `realpath` makes one per path
        component. Otherwise the real path decides (realpath never raises, even on a symlink loop)."""
        if directory not in self._nearest_by_directory:
            parent = os.path.dirname(directory)
            if parent != directory and not os.path.islink(directory) and not any(
                os.path.isfile(os.path.join(directory, name)) for name in CONFIG_FILE_NAMES
            ):
                found = self._nearest(parent)
            else:
                found = nearest_config(Path(os.path.realpath(directory)))
            self._nearest_by_directory[directory] = found
        return self._nearest_by_directory[directory]

    def _resolved(self, path: str, is_file: bool = False) -> Settings:
        config_path = self._config_path(path, is_file)
        key = str(config_path) if config_path else None
        if key not in self._by_file:
            base = load(config_path) if config_path else Settings()
            settings = with_overrides(base, **{k: v for k, v in self.overrides.items() if k != "raise_floor"})
            try:  # (the codes are checked here, once per configuration; the from-version changes none)
                select_rules(all_rules(), settings.select, settings.extend_select, settings.ignore)
                for _, codes in settings.per_file_ignores:
                    select_rules(all_rules(), None, (), codes)
            except SelectionError as exc:
                where = f"{config_path}: " if config_path else ""
                raise ConfigError(f"{where}{exc}") from None
            self._by_file[key] = settings
        return self._by_file[key]

    def _selected(self, settings: Settings, from_version: str | None) -> list[Rule]:
        """The rules a configuration selects for code that runs on ``from_version`` today."""
        key = (id(settings), from_version)
        known = self._rules.get(key)
        if known is None or known[0] is not settings:  # (the identity check guards id reuse)
            rules = select_rules(
                all_rules(), settings.select, settings.extend_select, settings.ignore, from_version=from_version
            )
            known = self._rules[key] = (settings, rules)
        return known[1]

    def __call__(self, path: str) -> FileSettings:
        known = self._by_path.get(path)
        if known is None:
            directory = os.path.dirname(path)  # (its files share a configuration file and a from-version)
            known = self._by_directory.get(directory)
            if known is None:
                settings = self._resolved(path, is_file=True)  # (a checked path is a file: no stat to ask)
                floor = self._from_version(settings, directory)
                known = self._for_file(path, settings, floor.release, floor.describe() if floor.known else None)
                if not settings.per_file_ignores:  # then the file's name changes nothing
                    self._by_directory[directory] = known
            self._by_path[path] = known
        return known

    def _for_file(self, path: str, settings: Settings, from_version: str, floor_text: str | None) -> FileSettings:
        ignored = _ignored_codes(settings, path)
        # One object per distinct outcome: callers may memoise on it.
        key = (id(settings), from_version, floor_text, ignored)
        if key not in self._file_settings:
            rules = self._selected(settings, from_version)
            if ignored:
                rules = [rule for rule in rules if not any(rule.code.startswith(code) for code in ignored)]
            self._file_settings[key] = FileSettings(
                tuple(rules), settings.target_python, settings.target_version, from_version,
                Confidence(settings.min_confidence), floor_text, floor_text is not None,
                bool(self.overrides.get("raise_floor")),
            )
        return self._file_settings[key]


def _ignored_codes(settings: Settings, path: str) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    resolved = Path(os.path.realpath(path))
    try:
        relative = resolved.relative_to(settings.root).as_posix()
    except ValueError:
        relative = resolved.as_posix()
    codes: list[str] = []
    for glob, glob_codes in settings.per_file_ignores:
        if fnmatch.fnmatch(relative, glob) or fnmatch.fnmatch(resolved.name, glob):
            # (a TorchFix code stands for torchup's: torchup.core.torchfix)
            codes.extend(c for code in glob_codes for c in (torchfix.torchup_codes(code) if torchfix.is_torchfix(code)
                                                              else [code]))
    return tuple(codes)
