#!/usr/bin/env python3
"""Check facts TU609 and TU610 rest on against the real wheels (a maintainer command, never CI: the
wheels live outside the repository).

    python3 tools/check_rule_facts.py [--wheels DIR]     # default ~/.cache/torchup/wheels

The wheels are read in place (zipfile), as tools/api_history.py downloads them. Exit 1 when a fact
no longer holds, or a wheel is missing.
"""

from __future__ import annotations

import argparse
import ast
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from torchup.rules.tu609_lr_scheduler_verbose import VERBOSE_POSITION  # noqa: E402  (after the path)

WHEELS = Path.home() / ".cache" / "torchup" / "wheels"


def wheel_source(version: str, path: str) -> str:
    matches = sorted(WHEELS.glob(f"torch-{version}-*.whl"))
    if not matches:
        raise FileNotFoundError(f"torch {version} wheel not in {WHEELS}: python3 tools/api_history.py fetches it")
    with zipfile.ZipFile(matches[0]) as archive:
        return archive.read(path).decode()


def tu609_positions_match_the_last_wheel_with_verbose() -> None:
    """VERBOSE_POSITION is what the 2.6.0 wheel's `__all__` classes take; 2.7.0 takes it nowhere."""
    tree = ast.parse(wheel_source("2.6.0", "torch/optim/lr_scheduler.py"))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    exported = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__")
    positions = {}
    for name in [element.value for element in exported.value.elts]:  # type: ignore[attr-defined]
        init = next((f for f in classes[name].body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        parameters = [a.arg for a in init.args.args][1:] if init else []
        if "verbose" in parameters:
            assert parameters[-1] == "verbose"
            positions[name] = parameters.index("verbose")
    assert positions == {k: v for k, v in VERBOSE_POSITION.items() if k != "_LRScheduler"}
    assert "verbose" not in wheel_source("2.7.0", "torch/optim/lr_scheduler.py")



def tu610_wrapper_bodies_in_the_wheels() -> None:
    """The fix is the wrappers' own body, in the oldest and newest wheels of the range."""
    for version in ("2.0.1", "2.15.0"):
        text = wheel_source(version, "torch/nn/functional.py")
        assert "return interpolate(input, size, scale_factor, mode, align_corners)" in text
        assert 'return interpolate(input, size, scale_factor, mode="nearest")' in text.replace("'", '"')
        assert 'return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)' in \
            text.replace("'", '"')


def main(argv: list[str] | None = None) -> int:
    global WHEELS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=WHEELS)
    WHEELS = parser.parse_args(argv).wheels
    failed = 0
    for check in (tu609_positions_match_the_last_wheel_with_verbose, tu610_wrapper_bodies_in_the_wheels):
        try:
            check()
        except (AssertionError, FileNotFoundError) as exc:
            failed += 1
            print(f"FAILED {check.__name__}: {exc}")
        else:
            print(f"ok     {check.__name__}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
