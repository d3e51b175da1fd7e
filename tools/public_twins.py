#!/usr/bin/env python3
"""Private paths to torch functions and classes that a public module also exports: the data of TU705.

    python3 tools/public_twins.py [--wheels DIR] [--python PY ...] [--output FILE]

`torch.utils.data._utils.collate.default_collate` is the function `torch.utils.data.default_collate`
is: the public module imports it from the private one. Code that names the private path works today
and breaks the day the private module is reorganised (TorchFix's TOR104/TOR105 knew two such pairs,
by hand). This tool finds every pair in the wheels:

1. statically, in each release's wheel (tools/api_history.RELEASES, read in place by
   tools/api_diff.py, nothing imported): each public module's exported functions and classes whose
   definition lives in a private module (a dotted path with a part starting with `_`), and are not
   themselves private or only raising (torch 2.14's `torch.cholesky`); a name with several public
   paths takes the shortest (`torch.utils.data.default_collate`, not `...data.dataloader.default_collate`);
   a pair's `since` is the first release from which every later release has it;
2. by execution, in each local torch (default: the 2.13.0 and 2.14.1 venvs under
   ~/.cache/torchup/envs): both paths are imported and must be the same object. Stubs describe some
   objects that the runtime puts elsewhere or nowhere (`torch._C.FloatTensor`), and only pairs every
   interpreter confirms are kept.

The result, torchup/data/public_twins.json, is committed; CI never runs this tool (it needs the wheels
and the venvs), and tests/test_public_twins.py checks the committed pairs again in whatever torch the
test run has.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import api_diff
from api_history import RELEASES, WHEELS, wheel_for
from probe_source import RESOLVE

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "torchup" / "data" / "public_twins.json"
ENVS = Path.home() / ".cache" / "torchup" / "envs"
PYTHONS = [ENVS / "torch-2.13.0" / "bin" / "python", ENVS / "torch-2.14.1" / "bin" / "python"]

# Run in each interpreter: which pairs name one object there (stdin: the pairs as JSON).
CONFIRM = RESOLVE + """
import json, sys
same = []
for private, public in json.load(sys.stdin).items():
    try:
        if resolve(private) is resolve(public):
            same.append(private)
    except Exception:
        pass
import torch
print(json.dumps({"torch": torch.__version__.split("+")[0], "same": same}))
"""


def twins_in(wheel: Path) -> dict[str, tuple[str, str]]:
    """``{private path: (public path, file of the public module)}`` for one wheel."""
    tree = api_diff.open_tree(str(wheel), "torch")
    api = api_diff.Api(tree, "torch", warn=lambda message: None)
    found: dict[str, set[str]] = {}
    for module in api_diff.public_modules(api, []):
        for name, (sym, listed) in api.exports(module).items():
            binding = sym.binding
            if not listed or sym.is_module or not isinstance(binding, (api_diff.Func, api_diff.Klass)):
                continue
            if "." in sym.qualname or sym.qualname.startswith("_") or not api_diff.is_private_module(sym.origin):
                continue  # (members, private names, and names defined in public modules)
            if api.raises(sym):
                continue  # a removed function kept only to raise
            found.setdefault(f"{sym.origin}.{sym.qualname}", set()).add(f"{module}.{name}")
    twins = {}
    for private, publics in found.items():
        public = min(publics, key=lambda path: (path.count("."), path))
        module = public.rpartition(".")[0]
        files = tree.modules.get(module, {})
        twins[private] = (public, files.get(".py") or files.get(".pyi") or "")
    tree.close()
    return twins


def confirmed_by(python: Path, pairs: dict[str, str]) -> tuple[str, set[str]]:
    """The torch release of ``python`` and the private paths whose pair names one object there."""
    result = subprocess.run(
        [str(python), "-c", CONFIRM], input=json.dumps(pairs), capture_output=True, text=True, check=True
    )
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return answer["torch"], set(answer["same"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="public_twins.py")
    parser.add_argument("--wheels", type=Path, default=WHEELS, help=f"where the wheels are kept (default {WHEELS})")
    parser.add_argument("--python", type=Path, action="append", help="a Python with torch (repeatable)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)

    per_release = {}
    for release in RELEASES:
        print(f"public_twins: reading torch {release}", file=sys.stderr)
        per_release[release] = twins_in(wheel_for(release, args.wheels))
    newest = per_release[RELEASES[-1]]
    pairs: dict[str, dict[str, str]] = {}
    for private, (public, evidence) in sorted(newest.items()):
        since = RELEASES[-1]
        for release in reversed(RELEASES):
            if per_release[release].get(private, ("",))[0] != public:
                break
            since = release
        pairs[private] = {"public": public, "since": ".".join(since.split(".")[:2]), "evidence": evidence}
    confirmed: dict[str, set[str]] = {}
    releases = []
    for python in args.python or PYTHONS:
        release, same = confirmed_by(python, {private: pair["public"] for private, pair in pairs.items()})
        releases.append(release)
        confirmed[release] = same
    kept = {private: pair for private, pair in pairs.items() if all(private in same for same in confirmed.values())}
    data = {
        "about": "Private paths to torch objects a public module exports (tools/public_twins.py): found in the "
        f"wheels of torch {RELEASES[0]} to {RELEASES[-1]}, each pair confirmed the same object by running torch "
        + " and ".join(releases) + ". `since`: the first release from which every later one has the pair; "
        "`evidence`: the public module's file in the newest wheel.",
        "confirmed_in": releases,
        "dropped_by_run": len(pairs) - len(kept),
        "twins": kept,
    }
    args.output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"public_twins: {len(kept)} pairs ({len(pairs) - len(kept)} not confirmed by a run) -> {args.output}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
