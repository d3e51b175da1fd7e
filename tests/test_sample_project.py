"""The sample project hits every rule, and the pre-filter never changes what is found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import check
from torchup.check.checker import Checker, FileSettings
from torchup.discover.discovery import Discovery
from torchup.prefilter.words import TriggerPattern
from torchup.rules import all_rules
from torchup.run.runner import RunOptions, run
from torchup.settings.selection import select_rules

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "legacy-project"


def findings(paths: list[Path], prefilter: bool) -> list[tuple[str, int, int, str]]:
    # (with the sample's floor, torch>=2.0: TU801's dead version gate needs one)
    rules = tuple(select_rules(all_rules(), ["ALL"]))
    checker = Checker(list(rules), prefilter=prefilter, settings_for=lambda _: FileSettings(rules, from_version="2.0"))
    result = run([str(p) for p in paths], checker, Discovery(), RunOptions())
    return [(d.path, d.line, d.column, d.code) for d in result.diagnostics]


def test_sample_project_hits_every_rule() -> None:
    found = {code for _, _, _, code in findings([SAMPLE], prefilter=True)}
    rule_codes = {rule.code for rule in all_rules() if not rule.engine_emitted}
    assert rule_codes <= found, rule_codes - found


@pytest.mark.parametrize("corpus", [SAMPLE, ROOT / "tests", ROOT / "torchup"], ids=["sample", "tests", "torchup"])
def test_prefilter_gives_identical_findings(corpus: Path) -> None:
    assert findings([corpus], prefilter=True) == findings([corpus], prefilter=False)


def test_prefilter_is_sound_for_every_example() -> None:
    """Any snippet with a finding spells one of its rule's trigger words where code can refer to it."""
    for rule in all_rules():
        for example in rule.examples:
            if example.findings and not rule.engine_emitted:
                assert TriggerPattern(list(rule.triggers)).could_match(example.source), (rule.code, example.title)


EXAMPLES = [(rule, example) for rule in all_rules() for example in rule.examples]


@pytest.mark.parametrize(("rule", "example"), EXAMPLES, ids=[f"{r.code}-{e.title}" for r, e in EXAMPLES])
def test_every_example_gives_the_same_findings_with_and_without_the_prefilter(rule, example) -> None:
    """A rule's ``looks_for`` that leaves out a use its examples show loses findings under the
    pre-filter: the rule alone, and among all the rules (whose words change the focus)."""
    for select in ([rule.code], ["ALL"]):
        with_prefilter = [(d.code, d.line, d.column, d.message) for d in check(example.source, select)]
        without = [(d.code, d.line, d.column, d.message) for d in check(example.source, select, prefilter=False)]
        assert with_prefilter == without, (rule.code, example.title, select)


def test_project_checks_itself_clean() -> None:
    assert findings([ROOT / "torchup", ROOT / "bench"], prefilter=True) == []


def test_check_and_fix_never_import_torch(tmp_path: Path) -> None:
    """With `torch` made unimportable, check and fix --diff still run over the sample project."""
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "from torchup.cli.main import main\n"
        f"codes = [main(['check', '-q', {str(SAMPLE)!r}]), main(['fix', '--diff', '-q', {str(SAMPLE)!r}])]\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print(codes)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().endswith("[1, 1]")


def test_the_sample_projects_floor_is_its_torch_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/legacy-project requires torch>=2.0,<2.14: its floor is 2.0. What the target warns about
    is reported whatever the floor (TU173's TorchScript, new in 2.14; TU620's functorch, which 2.0 already
    warned about); a change of behaviour only for a floor before it (TU601's `torch.load`, 2.6)."""
    from torchup.cli.main import main

    def count(code: str, *options: str) -> int:
        main(["check", "--no-cache", "--output-format", "concise", *options, str(SAMPLE / "legacy_project")])
        return sum(f": {code} " in line for line in capsys.readouterr().out.splitlines())

    assert count("TU173") == 2 and count("TU173", "--floor", "2.14") == 2
    assert count("TU620") == 2 and count("TU620", "--from-version", "1.13") == 2
    assert count("TU601") == 2 and count("TU601", "--floor", "2.6") == 0
    assert count("TU601", "--floor", "2.6", "--extend-select", "TU601") == 2
    main(["check", "--show-settings", str(SAMPLE)])
    assert 'floor = "2.0" (' in capsys.readouterr().out
