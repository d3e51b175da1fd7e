"""Run torchup over TorchFix's own checker fixtures and compare with TorchFix's expected findings.

TorchFix (pytorch-labs/torchfix, archived) keeps, for each rule, a fixture file
(`tests/fixtures/<group>/checker/<name>.py`) and the findings it expects there (`<name>.txt`,
one `LINE:COLUMN CODE message` per line). This maintainer script reads both at a recorded
commit from a git repository of TorchFix (a clone or a bare mirror: nothing is fetched, nothing
is committed here), runs `torchup check --select ALL --from-version 2.0` over the fixtures, and
says, for each expected line, whether torchup reports a finding on that line, with which code,
and which of TorchFix's codes (torchup/data/torchfix.toml) that code answers.

    git clone https://github.com/pytorch-labs/torchfix /tmp/torchfix   # once, anywhere
    python3 tools/torchfix_fixtures.py --repo /tmp/torchfix
    python3 tools/torchfix_fixtures.py --repo /tmp/torchfix --write-results   # also bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0ee382c8bc4d9388fe08d42c8963fba53b73273b"  # the last commit before the archive (2024)
START, END = "<!-- torchfix-fixtures:start -->", "<!-- torchfix-fixtures:end -->"


@dataclass
class Expected:
    line: int
    code: str
    message: str


@dataclass
class Fixture:
    path: str  # in TorchFix's repository
    expected: list[Expected]
    found: dict[int, list[str]] = field(default_factory=dict)  # line -> torchup codes

    def answered(self, expected: Expected, mapping: dict[str, tuple[str, ...]]) -> str | None:
        """The torchup code on ``expected``'s line that answers its TorchFix code, else any code there."""
        codes = self.found.get(expected.line, [])
        own = [code for code in codes if code in mapping.get(expected.code, ())]
        return (own or codes or [None])[0]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def read_fixtures(repo: Path, commit: str) -> list[tuple[str, str, list[Expected]]]:
    """(path, source, expected findings) of each checker fixture at ``commit``."""
    names = _git(repo, "ls-tree", "-r", "--name-only", commit, "tests/fixtures").split()
    fixtures = []
    for path in sorted(name for name in names if "/checker/" in name and name.endswith(".py")):
        text = path[: -len(".py")] + ".txt"
        if text not in names:
            continue
        expected = []
        for row in _git(repo, "show", f"{commit}:{text}").splitlines():
            where, _, rest = row.partition(" ")
            code, _, message = rest.partition(" ")
            if where and code:
                expected.append(Expected(int(where.split(":")[0]), code, message))
        fixtures.append((path, _git(repo, "show", f"{commit}:{path}"), expected))
    return fixtures


def torchfix_mapping() -> dict[str, tuple[str, ...]]:
    """TorchFix code -> the torchup codes that answer it (torchup/data/torchfix.toml)."""
    sys.path.insert(0, str(ROOT))  # (the checkout's table, not an installed copy's)
    from torchup.core.torchfix import table, torchup_codes

    return {code: tuple(torchup_codes(code)) for code in table()}


def run_torchup(directory: Path) -> list[dict]:
    command = [sys.executable, "-m", "torchup", "check", "--select", "ALL", "--from-version", "2.0",
               "--output-format", "json", "--no-cache", "--isolated", "."]
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if done.returncode not in (0, 1):
        raise SystemExit(f"torchup failed ({done.returncode}): {done.stderr}")
    data = json.loads(done.stdout)
    return data if isinstance(data, list) else data.get("diagnostics", [])


def compare(repo: Path, commit: str) -> list[Fixture]:
    fixtures = read_fixtures(repo, commit)
    with tempfile.TemporaryDirectory() as work:
        base = Path(work)
        for path, source, _ in fixtures:
            # (outside a `tests` directory: torchup leaves test files out of TU703, as real test suites
            # use small loaders; TorchFix's fixtures stand for code anywhere)
            target = base / _placed(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source, encoding="utf-8")
        findings = run_torchup(base)
    found: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for finding in findings:
        path = Path(finding.get("filename") or finding["path"]).as_posix().removeprefix("./")
        line = finding["location"]["row"] if "location" in finding else finding["line"]
        found[path][int(line)].append(finding["code"])
    return [Fixture(path, expected, dict(found.get(_placed(path), {}))) for path, _, expected in fixtures]


def _placed(path: str) -> str:
    """Where a fixture is checked: `tests/fixtures/misc/checker/x.py` -> `fixtures/misc/checker/x.py`."""
    return path.removeprefix("tests/")


def render(fixtures: list[Fixture], commit: str) -> str:
    mapping = torchfix_mapping()
    rows, answered, total = [], 0, 0
    by_code: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fixture in fixtures:
        hits = [fixture.answered(item, mapping) for item in fixture.expected]
        expected_lines = {item.line for item in fixture.expected}
        extra = sorted(line for line in fixture.found if line not in expected_lines)
        for item, hit in zip(fixture.expected, hits, strict=True):
            by_code[item.code][0] += 1
            by_code[item.code][1] += hit is not None
        answered += sum(hit is not None for hit in hits)
        total += len(hits)
        codes = sorted({hit for hit in hits if hit})
        missed = [item.line for item, hit in zip(fixture.expected, hits, strict=True) if hit is None]
        name = fixture.path.removeprefix("tests/fixtures/")
        rows.append(f"| `{name}` | {len(hits)} | {len(hits) - len(missed)} | {', '.join(codes) or '-'} | "
                    f"{', '.join(map(str, missed)) or '-'} | {', '.join(map(str, extra)) or '-'} |")
    lines = [
        START,
        f"TorchFix's checker fixtures at `{commit[:12]}` (`tools/torchfix_fixtures.py`): each line TorchFix expects a "
        "finding on, and whether `torchup check --select ALL --from-version 2.0` reports one there.",
        "",
        f"**{answered} of {total} expected lines reported.**",
        "",
        "| fixture | expected lines | torchup reports | torchup codes | missed lines | torchup only (lines) |",
        "|---|---:|---:|---|---|---|",
        *rows,
        "",
        "| TorchFix code | expected | reported by torchup |",
        "|---|---:|---:|",
        *(f"| {code} | {counts[0]} | {counts[1]} |" for code, counts in sorted(by_code.items())),
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone or bare mirror of pytorch-labs/torchfix")
    parser.add_argument("--commit", default=COMMIT, help=f"the commit to read (default: the recorded {COMMIT[:12]})")
    parser.add_argument("--write-results", action="store_true", help="replace the section in bench/RESULTS.md")
    args = parser.parse_args(argv)
    section = render(compare(args.repo, args.commit), args.commit)
    print(section)
    if args.write_results:
        sys.path.insert(0, str(ROOT / "bench"))
        from results import replace_section  # (bench/results.py: the scripts' one writer of RESULTS.md)

        replace_section(section, START, END, "TorchFix's own fixtures (issue 23)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
