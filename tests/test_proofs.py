"""The releases an example runs on, what CI skips, and docs/proofs.md, the committed results of the
examples CI cannot run (tools/run_examples.py writes it): none of this installs or runs torch."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pytest

from differential import envs, harness, proofs
from differential.harness import COMMAND, Case, cases, ci_runs, params, skip_reason
from differential.proofs import Proof
from helpers import fix, load_tool
from torchup.analysis.rule import Change, Example
from torchup.rules import all_rules

CASES = cases(all_rules(), fix)


@dataclass
class FakeRule:
    code: ClassVar[str] = "TU999"
    name: ClassVar[str] = "fake"
    change: ClassVar[Change] = Change.BEHAVES
    examples: tuple[Example, ...] = ()


def fake_cases(*versions: tuple[str, str]) -> dict[str, Case]:
    rule = FakeRule(tuple(Example(f"on {v}", "x = 1\n", fixed="x = 2\n", versions=v) for v in versions))
    return cases([rule], lambda source, **_: source.replace("1", "2"))  # type: ignore[list-item]


def test_a_minor_is_its_newest_patch() -> None:
    assert envs.release("2.5") == "2.5.1" and envs.release("2.6") == "2.6.0" and envs.release("2.13") == "2.13.0"
    assert envs.release("2.14") == "2.14.1" and envs.release("2.15") == "2.15.0" and envs.release("2.5.0") == "2.5.0"
    assert [envs.release(f"2.{minor}") for minor in range(16)]  # every minor from 2.0 on is known
    assert {envs.release("2.13"), envs.release("2.14")} == set(envs.TORCH_VERSIONS)
    with pytest.raises(KeyError, match="NEWEST_PATCH"):
        envs.release("1.13")


def test_every_example_names_releases_the_harness_knows() -> None:
    for rule in all_rules():
        for example in rule.examples:
            old, new = (envs.release(v) for v in example.versions)  # KeyError names the table
            assert [int(p) for p in old.split(".")] < [int(p) for p in new.split(".")], (rule.code, example.title)


def test_ci_skips_an_example_on_a_release_it_lacks_and_runs_the_default() -> None:
    fake = fake_cases(("2.5", "2.14"), ("2.13", "2.14"))
    old, default = fake["TU999-on ('2.5', '2.14')"], fake["TU999-on ('2.13', '2.14')"]
    assert old.versions == ("2.5.1", "2.14.1") and default.versions == ("2.13.0", "2.14.1")
    assert skip_reason(default) is None and ci_runs(default.versions)
    reason = skip_reason(old)
    assert reason is not None and not ci_runs(old.versions)
    assert "2.5.1" in reason and f"{COMMAND} --codes TU999" in reason and "docs/proofs.md" in reason
    by_id = {p if isinstance(p, str) else p.values[0]: p for p in params(fake)}
    assert by_id[default.case] == default.case  # a plain parameter: it runs
    (mark,) = by_id[old.case].marks
    assert mark.name == "skip" and mark.kwargs["reason"] == reason


def test_the_differential_test_skips_exactly_what_ci_cannot_run() -> None:
    test_differential = pytest.importorskip("test_differential")
    skipped = {p.values[0] for p in test_differential.params(test_differential.CASES) if not isinstance(p, str)}
    assert skipped == {case for case, c in CASES.items() if not ci_runs(c.versions)}


def test_a_fingerprint_follows_the_example() -> None:
    example = Example("t", "x = 1\n", fixed="x = 2\n")
    assert harness.fingerprint(example) == harness.fingerprint(Example("t", "x = 1\n", fixed="x = 2\n"))
    for other in (replace(example, fixed="x = 3\n"), replace(example, versions=("2.5", "2.14")),
                  replace(example, source="x = 4\n"), replace(example, bit_exact=False)):
        assert harness.fingerprint(other) != harness.fingerprint(example)


def test_docs_proofs_lists_every_example_ci_cannot_run() -> None:
    """The committed proof cannot go stale silently: an example that needs a release CI lacks has
    an entry, made from its present text; an entry with nothing to prove is gone."""
    needed = {case: c for case, c in CASES.items() if not ci_runs(c.versions)}
    written = proofs.read()
    missing = sorted(case for case in needed if case not in written)
    stale = sorted(case for case in needed if case in written and written[case].fingerprint != needed[case].fingerprint)
    extra = sorted(set(written) - set(needed))
    codes = ",".join(sorted({needed[case].code for case in missing + stale} | {written[case].code for case in extra}))
    assert not (missing or stale or extra), (
        f"docs/proofs.md is out of date: no entry for {missing}, an entry for another text of {stale}, "
        f"an entry with nothing to prove for {extra}; run `{COMMAND} --codes {codes}` and commit docs/proofs.md"
    )
    for case, proof in written.items():
        assert proof.versions == needed[case].versions and proof.result in proofs.RESULTS, case


def test_docs_proofs_is_as_rendered() -> None:
    """Nobody edited the page by hand: it is what its entries render to."""
    assert proofs.PROOFS.exists(), f"no docs/proofs.md: `{COMMAND}` writes it"
    assert proofs.render(proofs.read()) == proofs.PROOFS.read_text(encoding="utf-8")


RUN = {"float64": {"ok": True, "values": {"x": {"dtype": "torch.float64", "shape": [], "hex": "00", "floats": [0.0]}}}}
RAISED = {"float64": {"ok": False, "error": "TypeError", "message": "no"}}


@pytest.fixture(scope="module")
def tool() -> Any:
    return load_tool("run_examples")


def test_the_tool_judges_as_the_test_does(tool: Any) -> None:
    (case,) = fake_cases(("2.5", "2.14")).values()
    versions = ("2.5.1+cu124", "2.14.1")
    same = tool.judge(case, versions, RUN, RUN, RAISED, "2026-01-01")
    assert same.result == "same" and not same.details
    assert same.control == "the original, unfixed, changes on torch 2.14.1 in its one variant; it raises TypeError: no"
    assert same.variants == ("float64",) and same.torch == versions and same.fingerprint == case.fingerprint
    differs = tool.judge(case, versions, RUN, RAISED, RUN, "2026-01-01")
    assert differs.details == ("the fixed code raised TypeError: no (its one variant)",
                               "no input variant ran: the comparison would prove nothing")
    assert "computes the same" in differs.control
    failed = tool.judge(case, versions, RAISED, RAISED, RAISED, "2026-01-01")
    assert failed.result == "original failed" and failed.details == ("the original raised TypeError: no (its one variant)",)


def test_the_page_reads_back_what_it_rendered(tmp_path: Any, tool: Any) -> None:
    (case,) = fake_cases(("2.5", "2.14")).values()
    entries = {
        case.case: tool.judge(case, ("2.5.1+cu124", "2.14.1"), RUN, RAISED, RUN, "2026-01-01"),
        "TU998-a | b": tool.not_run(replace(case, case="TU998-a | b"), "2026-01-02", "<snippet> --> failed"),
    }
    page = tmp_path / "proofs.md"
    page.write_text(proofs.render(entries), encoding="utf-8")
    assert proofs.read(page) == entries
    text = page.read_text(encoding="utf-8")
    assert "**differs**" in text and "2.5.1+cu124" in text and "TU998-a \\| b" in text and "**not run**" in text
    assert "&lt;snippet> -->" in text and text.count("-->") == 3  # two entries' comments, one message


def test_the_tool_removes_an_env_it_made_after_its_last_use(tool: Any) -> None:
    order = [("2.3.1", "2.14.1"), ("2.5.1", "2.14.1"), ("2.5.1", "2.15.0")]
    assert tool.last_uses(order) == {"2.3.1": 0, "2.14.1": 1, "2.5.1": 2, "2.15.0": 2}
    grouped = harness.pairs(fake_cases(("2.5", "2.15"), ("2.3", "2.14"), ("2.5", "2.14")).values())
    assert list(grouped) == order


def test_the_tool_keeps_the_entries_it_did_not_run(tmp_path: Any, tool: Any, monkeypatch: Any) -> None:
    """--codes runs some rules; the other entries that still need one stay, and nothing is installed
    when nothing is chosen."""
    needed = {case: c for case, c in CASES.items() if not ci_runs(c.versions)}
    page = tmp_path / "proofs.md"
    kept = {case: Proof(case=case, code=c.code, rule=c.rule, title=c.title, fingerprint=c.fingerprint,
                        versions=c.versions, result="same", date="2026-01-01") for case, c in needed.items()}
    gone = Proof(case="TU998-gone", code="TU998", rule="gone", title="gone", fingerprint="0",
                 versions=("2.5.1", "2.14.1"), result="same", date="2026-01-01")
    page.write_text(proofs.render({**kept, gone.case: gone}), encoding="utf-8")
    monkeypatch.setattr(tool, "run", lambda chosen, keep: pytest.fail("nothing should run"))
    assert tool.main(["--codes", "TU000", "--output", str(page)]) == 0
    assert proofs.read(page) == kept


def test_the_tool_removes_only_the_envs_it_made(tmp_path: Any, tool: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(envs, "ENV_ROOT", tmp_path)

    def make(version: str) -> Any:
        (envs.env_path(version) / "bin").mkdir(parents=True)
        (envs.env_path(version) / "bin" / "python").write_text("")
        (envs.env_path(version) / ".torchup-ready").write_text(version)
        return envs.env_path(version) / "bin" / "python"

    monkeypatch.setattr(envs, "ensure_env", make)
    make("2.5.1")  # there before the run
    for keep, created in ((False, ["2.3.1", "2.14.1"]), (True, ["2.3.1"])):
        made = tool.Envs(keep)
        for version in ("2.5.1", "2.3.1", "2.14.1"):
            assert made.python(version) == envs.env_path(version) / "bin" / "python"
            made.release(version)
        assert made.created == created
        # The one there before and CI's stay; the old one it made goes, unless kept.
        assert envs.env_ready("2.5.1") and envs.env_ready("2.14.1") and envs.env_ready("2.3.1") == keep
