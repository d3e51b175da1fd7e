"""TorchFix's codes in torchup (issue 23): selection, noqa, configuration, and the two rules that
stand for TOR002 and TOR402."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import check, fix
from torchup.cli.main import main
from torchup.core import torchfix
from torchup.rules import all_rules

CODE = """\
import torch
w = torch.zeros(3)
w.require_grad = True  # noqa: TOR002
v = torch.zeros(3)
v.require_grad = True
opt = torch.optim.SGD([w], lr=0.1)
opt.zero_grad(set_to_none=False)
x = torch.load("f.pt")
"""


def run(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, list[tuple[int, str]], str]:
    capsys.readouterr()
    status = main(["check", "--no-cache", "--output-format", "json", *args, str(path)])
    captured = capsys.readouterr()
    found = json.loads(captured.out) if captured.out.strip() else []
    return status, [(f["line"], f["code"]) for f in found], captured.err


def test_every_mapped_code_is_a_rule_and_every_torchfix_code_is_listed() -> None:
    codes = {rule.code for rule in all_rules()}
    table = torchfix.table()
    assert set(table) >= {"TOR001", "TOR002", "TOR003", "TOR004", "TOR101", "TOR102", "TOR103", "TOR402"}
    for entry in table.values():
        assert set(entry["torchup"]) <= codes  # type: ignore[arg-type]
        assert entry["torchup"] or entry.get("missing")


def test_select_by_torchfix_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(CODE)
    status, found, err = run(capsys, tmp_path, "--isolated", "--select", "TOR002,TOR4")
    assert status == 1 and found == [(5, "TU701"), (7, "TU702")]  # line 3's TOR002 noqa silences TU701
    assert "TorchFix's TOR002 is torchup's TU701" in err and "TOR4 is torchup's TU703, TU702" in err
    _, found, _ = run(capsys, tmp_path, "--isolated", "--select", "TOR102")
    assert found == [(8, "TU601")]
    _, found, _ = run(capsys, tmp_path, "--isolated", "--select", "TOR0,TOR1,TOR4", "--ignore", "TOR402")
    assert (7, "TU702") not in found and (8, "TU601") in found


def test_a_torchfix_noqa_that_silenced_a_finding_gets_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, from the findings cache, and replayed: the note is the same each time."""
    (tmp_path / "m.py").write_text(CODE)
    (tmp_path / "other.py").write_text("import torch\nx = torch.load('f.pt')  # noqa: TU601\n")
    monkeypatch.chdir(tmp_path)
    note = "`# noqa: TOR002` in m.py silenced a finding: TorchFix's TOR002 is torchup's TU701 (docs/torchfix.md)"
    _, found, err = run(capsys, Path("."), "--isolated", "--select", "TU701,TU601")
    assert found == [(5, "TU701"), (8, "TU601")] and note in err and err.count("note:") == 1
    capsys.readouterr()
    for _ in range(3):  # the first fills the cache (no --no-cache), the others take from it or replay
        assert main(["check", "--isolated", "--select", "TU701,TU601", "--output-format", "json", "."]) == 1
        assert note in capsys.readouterr().err
    (tmp_path / "m.py").write_text(CODE.replace("# noqa: TOR002", "# noqa: TU701"))
    _, found, err = run(capsys, Path("."), "--isolated", "--select", "TU701,TU601")
    assert (3, "TU701") not in found and "note:" not in err


def test_every_torchfix_code_has_a_rule() -> None:
    from torchup.core.torchfix import table

    assert all(entry["torchup"] for entry in table().values()), [c for c, e in table().items() if not e["torchup"]]


def test_a_torchfix_code_without_a_rule_is_an_error_that_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchup.core import torchfix

    (tmp_path / "m.py").write_text(CODE)
    unmapped = {**torchfix.table(), "TOR201": {**torchfix.table()["TOR201"], "torchup": []}}
    monkeypatch.setattr(torchfix, "table", lambda: unmapped)  # (every code has a rule today: a future one may not)
    status, _, err = run(capsys, tmp_path, "--isolated", "--select", "TOR201")
    assert status == 2 and "no rule for TOR201" in err
    status, _, err = run(capsys, tmp_path, "--isolated", "--select", "TOR999")
    assert status == 2 and "names no TorchFix code" in err


def test_configuration_and_per_file_ignores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(CODE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(CODE)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchup]\nselect = ["TOR0", "TOR4"]\nper-file-ignores = { "tests/*.py" = ["TOR402"] }\n'
    )
    _, found, _ = run(capsys, tmp_path)
    assert found == [(5, "TU701"), (7, "TU702"), (5, "TU701")]


def test_require_grad_typo() -> None:
    assert [d.code for d in check("import torch\nw = torch.zeros(2)\nw.require_grad = True\n")] == ["TU701"]
    assert "w.requires_grad = True" in fix("import torch\nw = torch.zeros(2)\nw.require_grad = True\n", unsafe=True)
    assert fix("import torch\nw = torch.zeros(2)\nw.require_grad = True\n") == \
        "import torch\nw = torch.zeros(2)\nw.require_grad = True\n"  # unsafe only
    tuple_target = "import torch\na, b = torch.zeros(2), torch.ones(2)\na.require_grad, b.x = True, 1\n"
    assert [d.code for d in check(tuple_target)] == ["TU701"]
    own = "import torch\nclass O:\n    require_grad = False\ndef f(o):\n    o.require_grad = True\n    return o.require_grad\n"
    assert check(own) == []
    without_torch = "class O:\n    pass\no = O()\no.require_grad = True\n"
    assert check(without_torch) == []


def test_require_grad_where_the_file_reads_it_and_on_modules() -> None:
    """A file that reads `require_grad` has an attribute of its own: only an evident tensor or module
    is a typo there. A module's `requires_grad` is no switch: its fix calls `requires_grad_`."""
    code = (
        "import torch\n"
        "def use(cfg):\n"
        "    return cfg.require_grad\n"
        "def set_up(cfg):\n"
        "    cfg.require_grad = True\n"
        "x = torch.zeros(3)\n"
        "x.require_grad = True\n"
        "model = torch.nn.Linear(2, 2)\n"
        "model.require_grad = False\n"
    )
    assert [d.line for d in check(code)] == [7, 9]
    fixed = fix(code, unsafe=True)
    assert "x.requires_grad = True\n" in fixed and "model.requires_grad_(False)\n" in fixed
    assert "cfg.require_grad = True\n" in fixed
    unknown = "import torch\ndef f(o):\n    o.require_grad = True\nx = torch.zeros(2)\nx.require_grad = True\n"
    assert [(d.line, d.confidence.value) for d in check(unknown)] == [(3, "possible"), (5, "certain")]


def test_zero_grad_set_to_none_is_opt_in() -> None:
    code = "import torch\ndef step(opt):\n    opt.zero_grad(set_to_none=False)\n"
    assert check(code) == []
    assert [d.code for d in check(code, select=["TU702"])] == ["TU702"]
    assert "opt.zero_grad()" in fix(code, unsafe=True, select=["TU702"])


def test_zero_grad_of_something_else_is_not_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A class that defines `zero_grad` itself (in the file, or elsewhere in the checked project), or
    a name nothing binds, is not torch's optimizer; `zero_grad(False)` by position is the same call."""
    code = (
        "import torch\n"
        "class Tape:\n"
        "    def zero_grad(self, set_to_none=True):\n"
        "        self.cleared = set_to_none\n"
        "    def reset(self):\n"
        "        self.zero_grad(set_to_none=False)\n"
        "model = torch.nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "opt.zero_grad(set_to_none=False)\n"
        "opt.zero_grad(False)\n"
        "tape = Tape()\n"
        "tape.zero_grad(set_to_none=False)\n"
        "unbound.zero_grad(set_to_none=False)\n"
    )
    assert [(d.line, d.confidence.value) for d in check(code, select=["TU702"])] == [(9, "certain"), (10, "certain")]
    assert "opt.zero_grad()\nopt.zero_grad()\n" in fix(code, unsafe=True, select=["TU702"])
    (tmp_path / "tape.py").write_text("class Tape:\n    def zero_grad(self, set_to_none=True):\n        pass\n")
    (tmp_path / "train.py").write_text("import torch\ndef step(o):\n    o.zero_grad(set_to_none=False)\n")
    assert run(capsys, tmp_path / "train.py", "--select", "TU702")[1] == [(3, "TU702")]  # alone: possible
    assert run(capsys, tmp_path, "--select", "TU702")[1] == []  # the project defines `zero_grad`


def test_numerics_hints() -> None:
    code = "import torch as th\nx = th.rand(3)\na = th.log(1 + x)\nb = th.exp(x) - 1\ndef f(y):\n    return th.log(y + 1.0)\n"
    found = check(code, select=["TOR1"])
    assert [(d.code, d.line) for d in found if d.code in ("TU711", "TU712")] == [("TU711", 3), ("TU712", 4), ("TU711", 6)]
    safe = fix(code, select=["TU711", "TU712"])
    assert "a = th.log1p(x)" in safe and "b = th.expm1(x)" in safe and "th.log(y + 1.0)" in safe  # y: unsafe only
    assert "th.log1p(y)" in fix(code, unsafe=True, select=["TU711"])


@pytest.mark.parametrize(("call", "fixed"), [
    ("torch.log(torch.sum(torch.exp(x), 0))", "torch.logsumexp(x, 0)"),
    ("torch.log(torch.sum(torch.exp(x), dim=0, keepdim=True))", "torch.logsumexp(x, dim=0, keepdim=True)"),
    # `input` by keyword is the operand, not an argument to carry over (`logsumexp(x, input=...)` raises)
    ("torch.log(torch.sum(input=torch.exp(x), dim=0))", "torch.logsumexp(x, dim=0)"),
    ("torch.log(torch.sum(dim=1, input=torch.exp(x)))", "torch.logsumexp(x, dim=1)"),
])
def test_logsumexp_fix_keeps_the_sum_arguments_but_its_input(call: str, fixed: str) -> None:
    code = f"import torch\nx = torch.rand(2, 3)\nh = {call}\n"
    assert fix(code, select=["TU713"]) == f"import torch\nx = torch.rand(2, 3)\nh = {fixed}\n"


def test_torchvision_pretrained_beside_weights_is_reported_without_a_fix() -> None:
    """`pretrained=True, weights=None`: a second `weights=` would not compile, and which of the two the
    author meant is not torchup's to guess; the call's other findings keep their fixes."""
    code = (
        "from torchvision.models import resnet50\n"
        "a = resnet50(pretrained=True, weights=None)\n"
        "b = resnet50(pretrained=True)\n"
    )
    found = [(d.line, d.fix is not None) for d in check(code, select=["TU706"])]
    assert found == [(2, False), (3, True)]
    fixed = fix(code, unsafe=True, select=["TU706"])
    assert "a = resnet50(pretrained=True, weights=None)" in fixed
    assert "b = resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)" in fixed


def test_dataloader_workers_and_scoped_library_are_opt_in_and_skip_what_they_should() -> None:
    loader = "import torch\nfrom torch.utils.data import DataLoader\nd = DataLoader(ds, batch_size=4)\n"
    assert check(loader) == [] and [d.code for d in check(loader, select=["TOR401"])] == ["TU703"]
    spread = "import torch\nfrom torch.utils.data import DataLoader\nd = DataLoader(ds, **options)\n"
    assert check(spread, select=["TU703"]) == []
    library = 'import torch\nlib = torch.library.Library("ns", "DEF")\n'
    assert check(library, select=["TU704"]) == []  # a package's own library
    in_test = 'import torch\nclass TestOps:\n    def test_a(self):\n        torch.library.Library("ns", "DEF")\n'
    assert [d.code for d in check(in_test, select=["TOR901"])] == ["TU704"]


# flake8 configuration (torchup/settings/flake8_config.py): TorchFix ran as a flake8 plugin.


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", ".flake8"])
def test_a_flake8_section_with_torchfix_codes_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (tmp_path / name).write_text("[flake8]\nmax-line-length = 100\nselect = E,F,W,TOR402\nextend-ignore = TOR102, E501\n")
    (tmp_path / "m.py").write_text(CODE)
    status, found, err = run(capsys, tmp_path)
    assert status == 1
    assert (7, "TU702") in found  # an opt-in rule, selected by its TorchFix code
    assert (8, "TU601") not in found  # TOR102 ignored
    assert (5, "TU701") in found  # torchup's own defaults stay on
    assert f"TorchFix's codes read from [flake8] in {tmp_path / name}" in err
    assert "TorchFix's TOR402 is torchup's TU702" in err


def test_flake8_per_file_ignores_and_codes_without_a_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchup.core import torchfix

    unmapped = {code: {**entry, "torchup": []} if code.startswith("TOR2") else entry
                for code, entry in torchfix.table().items()}
    monkeypatch.setattr(torchfix, "table", lambda: unmapped)  # (every code has a rule today: a future one may not)
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = demo\n\n[flake8]\nselect = TOR0,TOR2\nper-file-ignores =\n"
        "    m.py: TOR002, E501\n    other/*.py:TOR102 legacy.py:TOR0\n"
    )
    (tmp_path / "m.py").write_text(CODE)
    _, found, err = run(capsys, tmp_path)
    assert (5, "TU701") not in found and (8, "TU601") in found  # TOR002 ignored for m.py only
    assert "TOR2 in [flake8]: torchup has no rule for it yet" in err
    assert "TorchFix's TOR002 is torchup's TU701" in err and "TorchFix's TOR102 is torchup's TU601" in err


def test_a_flake8_section_without_torchfix_codes_is_no_torchup_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = tmp_path / "pkg"
    inner.mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nextend-select = ["TU702"]\n')
    (inner / "setup.cfg").write_text("[flake8]\nselect = E,F\n")
    (inner / "m.py").write_text(CODE)
    _, found, err = run(capsys, inner)
    assert (7, "TU702") in found and "[flake8]" not in err  # the pyproject.toml above is the configuration


def test_torchup_configuration_wins_over_flake8_in_the_same_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nignore = ["TU601"]\n')
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = TOR402\n")
    (tmp_path / "m.py").write_text(CODE)
    _, found, err = run(capsys, tmp_path)
    assert (8, "TU601") not in found and (7, "TU702") not in found and "[flake8]" not in err


def test_rule_shows_the_torchup_rules_for_a_torchfix_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "TOR102"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TorchFix's TOR102 is torchup's TU601") and "# TU601 torch-load-weights-only" in out
    assert main(["rule", "TOR999"]) == 2
    assert "no rule 'TOR999'" in capsys.readouterr().err


def test_require_grad_of_a_class_the_project_gives_that_attribute(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`opts.require_grad = True` on an object of unknown type, where a class of the project sets
    `self.require_grad` itself, is that class's attribute, not a typo (issue 23's review)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "cfg.py").write_text("class Options:\n    def __init__(self):\n        self.require_grad = False\n")
    (tmp_path / "pkg" / "train.py").write_text(
        "import torch\nfrom pkg.cfg import Options\nopts = Options()\nopts.require_grad = True\n"
        "x = torch.zeros(2)\nx.require_grad = True\n"
    )
    assert run(capsys, tmp_path)[1] == [(6, "TU701")]
    assert run(capsys, tmp_path / "pkg" / "train.py")[1] == [(6, "TU701")]  # (the rest of the project is read)
    (tmp_path / "pkg" / "cfg.py").write_text("class Options:\n    pass\n")
    assert run(capsys, tmp_path)[1] == [(4, "TU701"), (6, "TU701")]


@pytest.mark.differential
def test_logsumexp_fix_with_input_by_keyword_runs_as_the_original() -> None:
    """The keyword case, run: the original under torch 2.13.0, the fix under 2.14.1, same values."""
    import subprocess

    from differential.envs import ensure_env

    original = ("import torch\ntorch.manual_seed(0)\nx = torch.randn(3, 4, dtype=torch.float64)\n"
                "h = torch.log(torch.sum(input=torch.exp(x), dim=0))\nprint(h.tolist())\n")
    fixed = fix(original, select=["TU713"])
    assert "torch.logsumexp(x, dim=0)" in fixed
    outputs = [subprocess.run([str(ensure_env(version)), "-c", text], capture_output=True, text=True, check=True,
                              timeout=300).stdout for version, text in (("2.13.0", original), ("2.14.1", fixed))]
    values = [[float(v) for v in out.strip(" []\n").split(",")] for out in outputs]
    assert all(abs(a - b) <= 1e-12 * max(1.0, abs(a)) for a, b in zip(*values, strict=True))
