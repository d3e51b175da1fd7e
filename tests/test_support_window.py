"""The support window (issue 38): the floor and target shown in every format, and fixes that hold on
every release from the floor to the target (torchup.analysis.fix_window, torchup.run.floor_raise)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import git_project, run_cli
from torchup.analysis.fix_window import introduced

# yolov5 at a 2022 commit: `torch>=1.7`, a GradScaler from torch.cuda.amp and a TorchScript-era ONNX export.
YOLO_TRAIN = """\
import torch

def train(model, amp, im, f):
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
    torch.onnx.export(model, im, f, verbose=False, opset_version=12)
    return scaler
"""


run = run_cli
project = git_project


def test_the_data_knows_the_releases_of_what_fixes_write() -> None:
    known = introduced()
    assert known["torch.amp.GradScaler"] == "2.3"
    assert known["torch.linalg.cholesky"] == "1.8"
    assert known["torch.load(weights_only=)"] == "1.13"


def test_a_fix_the_floor_lacks_is_withheld_and_says_what_it_needs(tmp_path, capsys, monkeypatch) -> None:
    """yolov5's `torch>=1.7`: plain `fix` writes neither `torch.amp.GradScaler` (2.3) nor `dynamo=False` (2.4)."""
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=1.7\n", "train.py": YOLO_TRAIN}))
    code, out, _ = run(capsys, "fix", "--no-cache", ".")
    assert (tmp_path / "train.py").read_text() == YOLO_TRAIN
    assert "fix needs torch>=2.3 (`torch.amp.GradScaler`); this project supports torch 1.7 " \
           "(requirements.txt:1 `torch>=1.7`)" in out
    assert "fix needs torch>=2.4 (`torch.onnx.export(dynamo=)`)" in out
    assert "Support window: floor torch 1.7 (requirements.txt:1 `torch>=1.7`); target torch 2.15" in out
    assert code == 1


def test_raise_floor_applies_them_and_raises_the_requirement(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "numpy\ntorch>=1.7  # CUDA builds\n",
                                         "train.py": YOLO_TRAIN}))
    run(capsys, "fix", "--no-cache", "--raise-floor", ".")
    fixed = (tmp_path / "train.py").read_text()
    assert 'torch.amp.GradScaler("cuda", enabled=amp)' in fixed and "dynamo=False" in fixed
    assert (tmp_path / "requirements.txt").read_text() == "numpy\ntorch>=2.4  # CUDA builds\n"
    # The window now holds the fixes: a second run has nothing to apply, and the floor it states is the new one.
    _, out, _ = run(capsys, "fix", "--no-cache", "--raise-floor", ".")
    assert (tmp_path / "train.py").read_text() == fixed and "floor torch 2.4" in out


def test_raise_floor_with_diff_prints_the_requirement_too(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=1.7\n", "train.py": YOLO_TRAIN}))
    code, out, err = run(capsys, "fix", "--no-cache", "--raise-floor", "--diff", ".")
    assert "--- requirements.txt\n+++ requirements.txt\n@@ -1 +1 @@\n-torch>=1.7\n+torch>=2.4\n" in out
    assert "would raise requirements.txt:1: `torch>=1.7` -> `torch>=2.4`" in err
    assert (tmp_path / "requirements.txt").read_text() == "torch>=1.7\n" and code == 1


def test_a_floor_that_has_what_the_fix_writes_gets_the_fix(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=2.4\n", "train.py": YOLO_TRAIN}))
    run(capsys, "fix", "--no-cache", ".")
    assert 'torch.amp.GradScaler("cuda", enabled=amp)' in (tmp_path / "train.py").read_text()


def test_an_exact_pin_below_2_0_is_read_and_shown(tmp_path, capsys, monkeypatch) -> None:
    """`torch==1.12.1` was read as "no lower bound" (so 2.0); it is the floor 1.12, and a pin."""
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch==1.12.1\n",
                                         "m.py": "import functorch\ng = functorch.vmap(f)\n"}))
    code, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", ".")
    assert "floor torch 1.12 (requirements.txt:1 `torch==1.12.1`; an exact pin" in out
    assert "TU620" in out and code == 1  # (a deprecation 2.0 already warned about, still warning in 2.15)
    settings = run(capsys, "check", "--show-settings", ".")[1]
    assert 'floor = "1.12" (requirements.txt:1 `torch==1.12.1`; an exact pin' in settings


def test_a_bound_below_the_data_is_stated(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=0.4.1\n", "m.py": "import torch\n"}))
    out = run(capsys, "check", "--no-cache", ".")[1]
    assert "floor torch 0.4 (requirements.txt:1 `torch>=0.4.1`; below 1.0, the oldest release torchup has data for)" \
        in out


def test_every_format_states_the_floor_and_the_target(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=1.7\n", "m.py": "import torch\nL = torch.qr(A)\n"}))
    records = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json", ".")[1])
    assert records[0]["floor"] == {"release": "1.7", "source": "requirements.txt:1 `torch>=1.7`"}
    assert records[0]["target"]["release"] == "2.15"
    line = json.loads(run(capsys, "check", "--no-cache", "--output-format", "json-lines", ".")[1].splitlines()[0])
    assert line["floor"]["release"] == "1.7"
    sarif = json.loads(run(capsys, "check", "--no-cache", "--output-format", "sarif", "--target-version", "2.14",
                           ".")[1])
    properties = sarif["runs"][0]["properties"]
    assert (properties["floor"], properties["target"], properties["targetSource"]) == ("1.7", "2.14",
                                                                                       "--target-version")
    junit = ET.fromstring(run(capsys, "check", "--no-cache", "--output-format", "junit", "--floor", "2.1", ".")[1])
    found = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert (found["floor"], found["floorSource"], found["target"]) == ("2.1", "--floor", "2.15")


@pytest.mark.parametrize(("floor", "expected"), [
    ("2.4", 'with torch.amp.autocast("cuda", enabled=True, dtype=torch.float16):'),
    ("1.11", 'with torch.autocast("cuda", enabled=True, dtype=torch.float16):'),  # (torch.amp.autocast: 1.12)
    ("1.10", "with torch.cuda.amp.autocast(enabled=True):"),  # (torch.autocast takes dtype= from 1.11)
])
def test_a_form_for_the_whole_window_where_the_rule_has_one(tmp_path, capsys, monkeypatch, floor: str,
                                                           expected: str) -> None:
    source = "import torch\n\nwith torch.cuda.amp.autocast(enabled=True):\n    pass\n"
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": f"torch>={floor}\n", "a.py": source}))
    run(capsys, "fix", "--no-cache", ".")
    assert (tmp_path / "a.py").read_text().splitlines()[2] == expected


def test_a_floor_from_the_option_gates_fixes_too(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(project(tmp_path, {"train.py": YOLO_TRAIN}))
    out = run(capsys, "check", "--no-cache", "--floor", "2.2", ".")[1]
    assert "this project supports torch 2.2 (--floor)" in out


def test_a_helper_another_module_defines_gates_the_findings(tmp_path, capsys, monkeypatch) -> None:
    """A helper like MONAI's `pytorch_after`: the helper is read from its own module, through the package's re-export."""
    monkeypatch.chdir(project(tmp_path, {
        "requirements.txt": "torch>=1.9\n",
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": "from .module import recent_enough\n",
        "pkg/utils/module.py": """\
            import torch
            from packaging import version


            def recent_enough(v):
                return version.parse(torch.__version__) >= version.parse(v)
            """,
        "pkg/ops.py": """\
            import torch
            from pkg.utils import recent_enough

            if recent_enough("1.12"):
                close = torch.testing.assert_close
            else:
                close = torch.testing.assert_allclose
            """,
    }))
    assert run(capsys, "check", "--no-cache", "--select", "TU608", "-q", ".")[0] == 0
    (tmp_path / "pkg" / "utils" / "module.py").write_text("def recent_enough(v):\n    return True\n")
    assert run(capsys, "check", "--no-cache", "--select", "TU608", "-q", "--floor", "1.10", ".")[0] == 1


def test_the_data_knows_every_api_the_examples_fixes_write(monkeypatch) -> None:
    """A fix is held to the floor only for what torchup/data/introduced.json lists: every API a rule
    example's fix writes (read off the fix as the engine reads it) is there, with its release."""
    from torchup.analysis import fix_window
    from torchup.api import check_source
    from torchup.rules import all_rules

    written: dict[str, set[str]] = {}
    read = fix_window.written_apis

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        apis = read(*args, **kwargs)
        written.setdefault(current[0], set()).update(apis)
        return apis

    monkeypatch.setattr(fix_window, "written_apis", recording)
    current = [""]
    for rule in all_rules():
        for example in rule.examples:
            if example.fixed is not None:
                current[0] = f"{rule.code} {example.title}"
                check_source(example.source, path="snippet.py", select=[rule.code], from_version="1.0")
    known = json.loads((Path(fix_window.__file__).parent.parent / "data" / "introduced.json").read_text())["names"]
    missing = {case: sorted(apis - set(known)) for case, apis in written.items() if apis - set(known)}
    assert written and not missing, f"add these keys and run `python3 tools/api_introduced.py`: {missing}"


def test_monais_pytorch_after_is_a_gate_by_its_name(tmp_path, capsys, monkeypatch) -> None:
    """`pytorch_after(1, 11)` (MONAI's helper, imported from a dependency torchup cannot read): a gate."""
    monkeypatch.chdir(project(tmp_path, {"requirements.txt": "torch>=1.9\n", "a.py": """\
        import torch
        from monai.utils import pytorch_after

        check = torch.testing.assert_close if pytorch_after(1, 11) else torch.testing.assert_allclose
        """}))
    assert run(capsys, "check", "--no-cache", "--select", "TU608", "-q", ".")[0] == 0


@pytest.mark.parametrize(("source", "reported"), [
    # speechbrain: the TypeError is the project's own method's (`strict=`), not an old torch's.
    ("try:\n    obj.load_state_dict(torch.load(p), strict=True)\nexcept TypeError:\n"
     "    obj.load_state_dict(torch.load(p))\n", 2),
    # a probe of torch itself: the handler runs only where torch lacks the keyword.
    ("try:\n    state = torch.load(p, weights_only=True)\nexcept TypeError:\n    state = torch.load(p)\n", 0),
])
def test_a_type_error_handler_is_old_torch_only_after_a_probe_of_torch(source: str, reported: int) -> None:
    from torchup.api import check_source

    found = check_source("import torch\n" + source, path="m.py", select=["TU601"], from_version="1.9")
    assert len(found) == reported


def test_a_mock_of_a_use_the_floor_keeps_moves_with_nothing(tmp_path, capsys, monkeypatch) -> None:
    """ignite: the library's `torch.cuda.amp.autocast` keeps no fix for its floor (torch>=1.3); a test mocks
    it by name. Renaming the mock (even as an unsafe fix) would leave the library's call unmocked on
    every release, so neither the mock nor the other calls of the name move."""
    monkeypatch.chdir(project(tmp_path, {
        "requirements.txt": "torch>=1.3\n",
        "lib/__init__.py": "",
        "lib/engine.py": "import torch\n\n\ndef step(model, x):\n    with torch.cuda.amp.autocast(enabled=True):\n"
                         "        return model(x)\n",
        "examples/requirements.txt": "torch\n",  # (no lower bound: its own call is held to no floor)
        "examples/main.py": "import torch\n\nwith torch.cuda.amp.autocast(enabled=True):\n    pass\n",
        "tests/test_engine.py": """\
            from unittest import mock

            from lib.engine import step


            def test_autocast():
                with mock.patch("torch.cuda.amp.autocast") as autocast_mock:
                    step(lambda x: x, 1)
                assert autocast_mock.called
            """,
    }))
    code, out, _ = run(capsys, "fix", "--no-cache", "--unsafe-fixes", "--diff", ".")
    assert out == "" and code == 0
    notes = run(capsys, "check", "--no-cache", ".")[1]
    assert "its use at lib/engine.py:5:10 keeps no fix for the project's floor" in notes
