"""bench/compare_torchfix.py's matching: a TorchFix finding and a torchup one agree on the same line
when the torchup code stands for the TorchFix code; a line only one reports is judged by its label."""

from __future__ import annotations

from helpers import load_script


def test_findings_agree_by_line_and_mapped_code() -> None:
    tool = load_script("bench/compare_torchfix.py", "compare_torchfix")
    theirs = [
        ("a.py", 3, "TOR102", "`torch.load` without `weights_only` parameter is unsafe."),
        ("a.py", 5, "TOR101", "Use of deprecated function torch.norm"),  # torchup: no finding
        ("a.py", 9, "TOR102", "`torch.load` without `weights_only` parameter is unsafe."),  # torchup: another code
    ]
    ours = [
        {"path": "a.py", "line": 3, "code": "TU601"},
        {"path": "a.py", "line": 7, "code": "TU602"},  # TorchFix: nothing (a real use, by its label)
        {"path": "a.py", "line": 9, "code": "TU701"},
        {"path": "a.py", "line": 11, "code": "TU201"},  # no TorchFix code stands for it: not compared
    ]
    labels = {("a.py", 7): "report", ("a.py", 5): "lookalike"}
    rows = tool.compare(theirs, ours, labels)
    assert rows["TOR102"]["torchfix"] == 2 and rows["TOR102"]["both"] == 1
    assert rows["TOR102"]["only torchfix: unlabelled"] == 1
    assert rows["TOR101"]["only torchfix: lookalike"] == 1 and rows["TOR101"]["subject: torch.norm"] == 1
    assert rows["TOR101"]["only torchup: report"] == 1  # TU602 stands for TOR101
    assert rows["TOR002"]["only torchup: unlabelled"] == 1  # TU701 stands for TOR002
    assert not any("TU201" in key for row in rows.values() for key in row)
    section = tool.render(rows, files=1, trees=1, times=(2.0, 0.5), versions=("TorchFix 0.7.0", "torchup 0"))
    assert "| TOR102 | 2 | 1 | 1 |" in section and "`torch.norm` 1" in section
