"""Suppressions: `# noqa` forms, `# torchup: noqa`, TU002 (unused) with its fix, and --add-noqa."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import check, codes, fix
from torchup.check.checker import Checker
from torchup.check.suppressions import parse
from torchup.cli.add_noqa import add_noqa, add_noqa_to_source
from torchup.core.source import SourceFile
from torchup.discover.discovery import Discovery
from torchup.rules import all_rules, rule_by_code
from torchup.settings.selection import select_rules

ROOT = Path(__file__).resolve().parent.parent
WITH_UNUSED = ["TU1", "TU002"]
QR = "import torch\n"


def unused(code: str, select: list[str] | None = None) -> list[str]:
    return [d.message for d in check(code, select=select or WITH_UNUSED) if d.code == "TU002"]


# -- the forms of a suppression -------------------------------------------------------------------
@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: TU103",
        "# noqa:TU103",
        "# NOQA: tu103",
        "#noqa : TU103",
        "# noqa: TU101, TU103",
        "# noqa: TU101,TU103",
        "# noqa: TU101 TU103",
        "# noqa: E501, TU103 legacy path, see issue 12",
        "# noqa: TU103 - legacy path",
        "# type: ignore  # noqa: TU103",
        "# noqa",
        "# NoQA",
        "# noqa: legacy path",  # no code after the colon: every code, as in flake8
        "# noqa TU101",  # no colon: every code, as in flake8
    ],
)
def test_line_suppression_forms(comment: str) -> None:
    assert codes(f"{QR}Q, R = torch.qr(A)  {comment}\n") == []


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: TU101",
        "# noqa: TU1031",
        "# noqa: TU10",
        "# noqa: E501",
        "# noqa: E501 TU101 TU103x",
        "# a comment about noqa",
        "# noqas: TU103",
        "# torchup: noqa",  # the file-level form counts only on a line of its own
    ],
)
def test_comments_that_do_not_suppress(comment: str) -> None:
    assert codes(f"{QR}Q, R = torch.qr(A)  {comment}\n") == ["TU103"]


def test_noqa_inside_a_string_is_not_a_comment() -> None:
    assert codes(f'{QR}Q, R = torch.qr(A, "# noqa")\n') == ["TU103"]
    assert codes(f'{QR}Q, R = torch.qr(A, "x  # noqa: TU103")\n') == ["TU103"]
    assert codes(f'{QR}s = """\n# torchup: noqa\n"""\nQ, R = torch.qr(A)\n') == ["TU103"]


def test_file_level_suppression() -> None:
    body = "Q, R = torch.qr(A)\nL = torch.cholesky(A)\n"
    assert codes(f"{QR}# torchup: noqa: TU103\n{body}") == ["TU101"]
    assert codes(f"{QR}{body}# Torchup: NOQA: tu101, TU103\n") == []
    assert codes(f"{QR}{body}    # torchup: noqa: TU101 legacy module\n") == ["TU103"]
    assert codes(f"{QR}# torchup: noqa\n{body}") == []
    assert codes(f"{QR}# torchup: noqa -- generated file\n{body}") == []
    assert codes(f"{QR}x = 1  # torchup: noqa\n{body}") == ["TU103", "TU101"]  # not on its own line


def test_multi_line_finding_is_suppressed_on_its_first_line() -> None:
    first = f"{QR}Q, R = torch.qr(  # noqa: TU103\n    A,\n    some=True,\n)\n"
    assert codes(first) == []
    last = f"{QR}Q, R = torch.qr(\n    A,\n    some=True,\n)  # noqa: TU103\n"
    assert codes(last) == ["TU103"]


def test_line_ending_in_a_string_is_covered_by_the_comment_where_the_string_ends() -> None:
    source = f'{QR}Q, R = torch.qr(A, """\ndocs\n""")  # noqa: TU103\n'
    assert codes(source) == []
    continued = f"{QR}Q = torch.qr(A)[0] + \\\n    0  # noqa: TU103\n"
    assert codes(continued) == []


SHORTCUT_CASES = [
    f"{QR}Q, R = torch.qr(A)  # noqa: TU103\nL = torch.cholesky(A)\n",
    f"{QR}# noqa: TU103\nQ, R = torch.qr(A)\n",  # the line before covers nothing
    f"{QR}Q, R = torch.qr(A)\nx = 1  # noqa: TU103\n",  # nor the line after
    f'{QR}Q, R = torch.qr(A, """\n# noqa\n""")  # noqa: TU101\n',
    f'{QR}Q, R = torch.qr(A, """\ndocs\n""")\n# noqa: TU103\n',
    f"{QR}Q = torch.qr(A)[0] + \\\n    \\\n    0  # NOQA\n",
    f"{QR}Q, R = torch.qr(\n    A,  # noqa: TU103\n)\n",
    f"{QR}s = '# noqa: TU103'; Q, R = torch.qr(A)\n",
    f"{QR}Q, R = torch.qr(A)  # noqa: TU103\r\nL = torch.cholesky(A)  # noqa\r\n",
    f"{QR}Q, R = torch.qr(A)\n    # torchup: noqa: TU103\n",
    f'{QR}x = f"{{1}}  # noqa"; Q, R = torch.qr(A)\n',
]


@pytest.mark.parametrize("source", SHORTCUT_CASES)
def test_the_shortcut_past_tokenizing_agrees_with_it(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file with findings and a `noqa` somewhere is tokenized only where a directive may stand
    on the line that covers a finding (``_may_silence``); the answer is the same either way."""
    from torchup.check import suppressions

    quick = codes(source)
    monkeypatch.setattr(suppressions, "_may_silence", lambda *args: True)
    assert quick == codes(source)


def test_a_noqa_elsewhere_in_the_file_is_not_tokenized_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchup.check import suppressions

    def refuse(source: SourceFile) -> None:
        raise AssertionError("tokenized")

    monkeypatch.setattr(suppressions, "parse", refuse)
    assert codes(f'{QR}"""# noqa"""\nx = 1  # noqa: E501\nQ, R = torch.qr(A)\n') == ["TU103"]
    with pytest.raises(AssertionError, match="tokenized"):
        codes(f"{QR}Q, R = torch.qr(A)  # noqa: E501\n")


def test_crlf_and_lone_cr_line_endings() -> None:
    crlf = f"{QR}Q, R = torch.qr(A)  # noqa: TU103\r\nL = torch.cholesky(A)\r\n".replace("torch\n", "torch\r\n")
    assert codes(crlf) == ["TU101"]
    source = SourceFile.from_bytes("cr.py", b"import torch\rQ, R = torch.qr(A)  # noqa: TU103\rL = torch.cholesky(A)\r")
    assert [d.code for d in Checker(select_rules(all_rules())).analyze(source).diagnostics] == ["TU101"]


def test_parse_records_codes_and_positions() -> None:
    source = SourceFile.from_bytes("p.py", b"x = 1  # noqa: e501, TU101 why\n# torchup: noqa: TU103\n")
    found = parse(source)
    directive = found.lines[1]
    assert [c.code for c in directive.codes or ()] == ["E501", "TU101"]
    assert source.text[directive.start:directive.end] == "# noqa: e501, TU101"
    assert [[c.code for c in d.codes or ()] for d in found.files] == [["TU103"]]


# -- TU002 ----------------------------------------------------------------------------------------
def test_unused_noqa_is_off_by_default() -> None:
    rule = rule_by_code("TU002")
    assert rule is not None and not rule.enabled_by_default and rule.engine_emitted
    assert "TU002" not in {r.code for r in select_rules(all_rules())}
    assert codes(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103\n") == []
    assert "On by default: no" in rule.render_docs()


def test_unused_code_is_reported() -> None:
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103\n") == [
        "unused `noqa` directive: TU103 (nothing to silence)"
    ]
    # The other code on the line is used; only TU101 is not.
    assert unused(f"{QR}Q, R = torch.qr(A)  # noqa: TU101, TU103\n") == ["unused `noqa` code: TU101 (nothing to silence)"]


def test_what_is_not_reported() -> None:
    assert unused(f"{QR}Q, R = torch.qr(A)  # noqa: TU103\n") == []  # used
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa\n") == []  # bare: maybe for another tool
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: legacy\n") == []  # bare too
    assert unused(f"{QR}import os  # noqa: F401, E501\n") == []  # other tools' codes
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU201\n") == []  # TU201 is not selected
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103\n", ["TU002"]) == []  # TU103 not selected


def test_unknown_and_repeated_codes() -> None:
    assert unused(f"{QR}Q, R = torch.qr(A)  # noqa: TU103, TU999\n") == [
        "unused `noqa` code: TU999 (not a torchup rule)"
    ]
    assert unused(f"{QR}Q, R = torch.qr(A)  # noqa: TU103, tu103\n") == ["unused `noqa` code: TU103 (named twice)"]


def test_rules_that_did_not_run_on_the_file_do_not_count() -> None:
    source = SourceFile.from_bytes("t.py", f"{QR}fast = torch.compile(f)  # noqa: TU301\n".encode())
    old = Checker(select_rules(all_rules(), ["TU301", "TU002"]), target_python="3.11")
    assert old.analyze(source).diagnostics == []  # TU301 does not apply to Python 3.11: not judged
    new = Checker(select_rules(all_rules(), ["TU301", "TU002"]), target_python="3.15")
    assert new.analyze(source).diagnostics == []  # applies, and silences a finding
    stale = SourceFile.from_bytes("t.py", f"{QR}fast = f  # noqa: TU301\n".encode())
    assert [d.code for d in new.analyze(stale).diagnostics] == ["TU002"]
    assert old.analyze(stale).diagnostics == []


def test_unused_file_level_codes() -> None:
    messages = unused(f"{QR}# torchup: noqa: TU101, TU103\nQ, R = torch.qr(A)\n")
    assert messages == ["unused `torchup: noqa` code: TU101 (nothing to silence)"]
    assert unused(f"{QR}# torchup: noqa\nQ, R = torch.linalg.qr(A)\n") == []  # bare: never reported


def test_tu002_findings_are_silenced_only_by_tu002() -> None:
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103, TU002\n") == []
    assert unused(f"{QR}# torchup: noqa: TU002\nQ, R = torch.linalg.qr(A)  # noqa: TU103\n") == []
    assert unused(f"{QR}# torchup: noqa\nQ, R = torch.linalg.qr(A)  # noqa: TU103\n") == []
    # TU002 in a directive is never itself unused: no finding about the finding.
    assert unused(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU002\n") == []


def test_unused_noqa_is_found_in_a_file_the_prefilter_would_skip() -> None:
    # No rule's trigger word in the file: with TU002 selected, a noqa comment still gets it parsed.
    assert [d.code for d in check("x = 1  # noqa: TU101\n", select=WITH_UNUSED)] == ["TU002"]
    checker = Checker(select_rules(all_rules()))
    assert not checker.could_match("x = 1  # noqa: TU101\n", "x.py")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103\n", "Q, R = torch.linalg.qr(A)\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: E501, TU103\n", "Q, R = torch.linalg.qr(A)  # noqa: E501\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103, E501 long line\n", "Q, R = torch.linalg.qr(A)  # noqa: E501 long line\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103 E501 TU101\n", "Q, R = torch.linalg.qr(A)  # noqa: E501\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103 legacy path\n", "Q, R = torch.linalg.qr(A)  # legacy path\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103 - legacy path\n", "Q, R = torch.linalg.qr(A)  # legacy path\n"),
        ("Q, R = torch.linalg.qr(A)  # noqa: TU103  # why\n", "Q, R = torch.linalg.qr(A)  # why\n"),
        ("Q, R = torch.linalg.qr(A)  # type: ignore  # noqa: TU103\n", "Q, R = torch.linalg.qr(A)  # type: ignore\n"),
        ("Q, R = torch.qr(A)  # noqa: TU103, TU999\n", "Q, R = torch.qr(A)  # noqa: TU103\n"),
        ("Q, R = torch.qr(A)  # noqa: TU101, TU103\n", "Q, R = torch.qr(A)  # noqa: TU103\n"),
        ("# torchup: noqa: TU101\nQ, R = torch.linalg.qr(A)\n", "Q, R = torch.linalg.qr(A)\n"),
        ("Q, R = torch.linalg.qr(\n    # noqa: TU103\n    A)\n", "Q, R = torch.linalg.qr(\n    A)\n"),
        ("    # torchup: noqa: TU101\nQ, R = torch.linalg.qr(A)\n".lstrip(), "Q, R = torch.linalg.qr(A)\n"),
        ("# torchup: noqa: TU101, TU103 generated\nQ, R = torch.qr(A)\n", "# torchup: noqa: TU103 generated\nQ, R = torch.qr(A)\n"),
        ("# torchup: noqa: TU101 generated\nQ, R = torch.linalg.qr(A)\n", "# generated\nQ, R = torch.linalg.qr(A)\n"),
    ],
)
def test_unused_noqa_fix(before: str, after: str) -> None:
    assert fix(QR + before, select=WITH_UNUSED) == QR + after


def test_fix_migrates_and_removes_the_stale_code_in_one_run() -> None:
    before = f"{QR}Q, R = torch.qr(A)  # noqa: TU101\r\n".replace("torch\n", "torch\r\n")
    after = f"{QR}Q, R = torch.linalg.qr(A)\r\n".replace("torch\n", "torch\r\n")
    assert fix(before, select=WITH_UNUSED) == after


def test_unused_noqa_fix_is_safe() -> None:
    found = [d for d in check(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103\n", select=WITH_UNUSED)]
    assert [d.fix.applicability.value for d in found if d.fix] == ["safe"]
    assert found[0].line == 2 and found[0].column == 28


def test_cli_reports_and_fixes_unused_noqa(tmp_path: Path) -> None:
    path = tmp_path / "stale.py"
    path.write_text(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103, E501\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-m", "torchup"]
    quiet = subprocess.run([*run, "check", "--isolated", str(path)], capture_output=True, text=True, env=env)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    found = subprocess.run(
        [*run, "check", "--isolated", "--extend-select", "TU002", str(path)], capture_output=True, text=True, env=env
    )
    assert found.returncode == 1 and "TU002" in found.stdout, found.stdout + found.stderr
    fixed = subprocess.run(
        [*run, "fix", "--isolated", "--extend-select", "TU002", str(path)], capture_output=True, text=True, env=env
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert path.read_text() == f"{QR}Q, R = torch.linalg.qr(A)  # noqa: E501\n"


def test_per_file_ignored_rules_do_not_make_a_noqa_unused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchup]\nextend-select = ["TU002"]\nper-file-ignores = { "legacy.py" = ["TU103"] }\n'
    )
    for name in ("legacy.py", "other.py"):
        (tmp_path / name).write_text(f"{QR}Q, R = torch.linalg.qr(A)  # noqa: TU103\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "torchup", "check", "--output-format", "concise", "."],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "other.py:2:28: TU002" in result.stdout and "legacy.py" not in result.stdout, result.stdout


# -- --add-noqa ----------------------------------------------------------------------------------
def _add(paths: list[Path], select: list[str] | None = None) -> tuple[int, list]:
    checker = Checker(select_rules(all_rules(), select))
    return add_noqa(checker, [str(p) for p in paths], Discovery())


def _remaining(path: Path, select: list[str] | None = None) -> list[str]:
    source = SourceFile.from_bytes(str(path), path.read_bytes())
    return [d.code for d in Checker(select_rules(all_rules(), select)).analyze(source).diagnostics]


def test_add_noqa_writes_a_comment_per_line(tmp_path: Path) -> None:
    path = tmp_path / "legacy.py"
    path.write_text(
        textwrap.dedent(
            '''\
            import torch
            Q, R = torch.qr(A); L = torch.cholesky(A)
            x = torch.qr(A)  # noqa: E501
            y = torch.cholesky(A)  # a comment
            z = torch.qr(A, """
            docs
            """)
            w = torch.qr(
                B,
            )
            s = "torch.qr(A)"
            '''
        )
    )
    added, remaining = _add([tmp_path])
    assert (added, remaining) == (5, [])
    assert path.read_text() == textwrap.dedent(
        '''\
        import torch
        Q, R = torch.qr(A); L = torch.cholesky(A)  # noqa: TU101, TU103
        x = torch.qr(A)  # noqa: E501, TU103
        y = torch.cholesky(A)  # a comment  # noqa: TU101
        z = torch.qr(A, """
        docs
        """)  # noqa: TU103
        w = torch.qr(  # noqa: TU103
            B,
        )
        s = "torch.qr(A)"
        '''
    )
    assert _remaining(path) == []
    assert _add([tmp_path]) == (0, [])  # nothing left to add
    # The new comments are used: TU002 has nothing to say.
    assert _remaining(path, ["TU1", "TU002"]) == []


def test_add_noqa_keeps_bytes_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "crlf.py"
    original = "\ufeffimport torch\r\n\r\nQ, R = torch.qr(A)   \r\nprint('é')\r\n".encode()
    path.write_bytes(original)
    os.chmod(path, 0o640)
    assert _add([path])[0] == 1
    assert path.read_bytes() == original.replace(b"torch.qr(A)   \r\n", b"torch.qr(A)  # noqa: TU103\r\n")
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_add_noqa_after_a_backslash_continuation(tmp_path: Path) -> None:
    path = tmp_path / "cont.py"
    path.write_text("import torch\nQ = torch.qr(A)[0] + \\\n    0\n")
    assert _add([path])[0] == 1
    assert path.read_text() == "import torch\nQ = torch.qr(A)[0] + \\\n    0  # noqa: TU103\n"
    assert _remaining(path) == []


def test_add_noqa_leaves_what_it_cannot_silence(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nprint 'x', torch.qr(A)\n")
    good = tmp_path / "good.py"
    good.write_text("import torch\nQ, R = torch.qr(A)\n")
    added, remaining = _add([tmp_path])
    assert added == 1
    assert [(Path(d.path).name, d.code) for d in remaining] == [("broken.py", "TU001")]
    assert broken.read_text() == "import torch\nprint 'x', torch.qr(A)\n"


def test_add_noqa_reports_a_file_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ro.py"
    path.write_text("import torch\nQ, R = torch.qr(A)\n")

    def refuse(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("torchup.cli.add_noqa.write_atomic", refuse)
    added, remaining = _add([path])
    assert added == 0
    assert [d.code for d in remaining] == ["TU000", "TU103"]
    assert "cannot write" in remaining[0].message


def test_add_noqa_to_source_never_writes_inside_a_string() -> None:
    # A line that ends inside a string: the comment goes where the string ends, never inside it.
    text = 'import torch\nQ = torch.qr(A, """a\nb""")[0]; L = torch.cholesky(\nA)\n'
    source = SourceFile.from_bytes("s.py", text.encode())
    diagnostics = Checker(select_rules(all_rules())).analyze(source).diagnostics
    new_text, count, left = add_noqa_to_source(source, diagnostics)
    assert left == [] and count == 1
    assert new_text == 'import torch\nQ = torch.qr(A, """a\nb""")[0]; L = torch.cholesky(  # noqa: TU101, TU103\nA)\n'


def test_add_noqa_never_writes_inside_an_f_string_replacement_field() -> None:
    # Python 3.12+ tokenizes the line break inside `{...}`; a comment there would not parse on 3.11.
    text = 'import torch\nQ = torch.qr(A, f"""{\nx}""")[0]\n'
    source = SourceFile.from_bytes("f.py", text.encode())
    diagnostics = Checker(select_rules(all_rules())).analyze(source).diagnostics
    new_text, count, _ = add_noqa_to_source(source, diagnostics)
    assert count == 1
    assert new_text == 'import torch\nQ = torch.qr(A, f"""{\nx}""")[0]  # noqa: TU103\n'
    assert codes(new_text) == []


def test_add_noqa_does_not_suppress_unused_noqa(tmp_path: Path) -> None:
    path = tmp_path / "stale.py"
    path.write_text("import torch\nQ, R = torch.qr(A)\nx = 1  # noqa: TU101\n")
    added, remaining = _add([path], ["TU1", "TU002"])
    assert added == 1
    assert [d.code for d in remaining] == ["TU002"]
    assert path.read_text() == "import torch\nQ, R = torch.qr(A)  # noqa: TU103\nx = 1  # noqa: TU101\n"


LEXED_AS_TOKENIZED = {
    "a trailing directive": "x = 1  # noqa: TU101\n",
    "a directive after other text in the comment": "x = 1  # why # noqa: TU101\n",
    "a file directive on its own line": "# torchup: noqa: TU101\nx = 1\n",
    "noqa in a one-line string": "x = '# noqa'  # noqa: TU102\n",
    "noqa in a docstring": 'def f():\n    """\n    # noqa: TU101\n    """\n    return 1  # noqa\n',
    "a string that ends on a line with a comment": 'x = """a\nb"""  # noqa: TU101\ny = 2\n',
    "a backslash continuation": "x = 1 + \\\n    2  # noqa\n",
    "lines inside brackets": "x = f(\n    1,  # noqa: TU101\n    2,\n)\n",
    "CRLF": "x = 1  # noqa: TU101\r\ny = '''a\r\nb'''  # noqa\r\n",
    "no final line break": "x = 1\ny = 2  # noqa",
    "blank and comment-only lines": "\n# noqa\n\nx = 1\n",
}


@pytest.mark.parametrize("text", LEXED_AS_TOKENIZED.values(), ids=LEXED_AS_TOKENIZED.keys())
def test_the_lexer_finds_the_directive_comments_tokenize_finds(text: str) -> None:
    """``parse`` reads comments with the lexer; ``tokenize`` (``_comments``) is what it must agree
    with: the same directive comments at the same places, the same lines a comment can end."""
    from torchup.check import suppressions

    source = SourceFile.from_bytes("m.py", text.encode())
    lexed = suppressions._directive_comments(source)
    assert lexed is not None
    comments, ends = suppressions._comments(text)
    directives = [c for c in comments if suppressions._LINE_DIRECTIVE.search(c[2])
                  or suppressions._FILE_DIRECTIVE.search(c[2])]
    assert lexed == (directives, ends)


def test_an_f_string_leaves_the_comments_to_tokenize_where_fields_may_nest(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchup.check import suppressions

    source = SourceFile.from_bytes("m.py", b'x = f"{a}"  # noqa: TU101\n')
    assert suppressions._directive_comments(source) is not None  # (before 3.12 a field holds no quote)
    monkeypatch.setattr(suppressions, "_NESTED_FIELDS", True)
    assert suppressions._directive_comments(source) is None
    assert [d.line for d in parse(source).lines.values()] == [1]
