"""Jupyter notebooks: code cells are checked and fixed; IPython syntax, outputs, metadata and the
file's JSON layout are left byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import torchup.cli.commands
from torchup.check.checker import Checker, applies_to_release
from torchup.cli.main import main
from torchup.discover.discovery import Discovery
from torchup.rules import all_rules
from torchup.run import replay
from torchup.run.notebook import dedent, load, mask_cell, reindent
from torchup.run.runner import RunOptions, run
from torchup.settings.selection import select_rules

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_NOTEBOOK = REPO_ROOT / "examples" / "legacy-project" / "notebooks" / "explore.ipynb"


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def code_cell(source, outputs=(), count=None) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": list(outputs), "source": source}


def markdown_cell(source) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def notebook(*cells: dict, language: str = "python") -> dict:
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.7"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def jupyter_dumps(data: dict) -> str:
    """What Jupyter (nbformat) writes: indent 1, sorted keys, raw UTF-8, a final newline."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


STREAM = {"name": "stdout", "output_type": "stream", "text": ["Wall time: 1.02 ms — ok ✓\n"]}
IMAGE = {"data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
         "metadata": {}, "output_type": "display_data"}

# Magics, shell escapes, help, outputs and non-ASCII text; `torch.qr` in cell 3 resolves through
# the `import torch` of cell 1.
RICH = notebook(
    markdown_cell(["# Données — exploration\n", "Uses torch.qr (old)."]),
    code_cell(["%matplotlib inline\n", "!pip install -q torch\n", "import torch\n", "from torch import cholesky"],
              [STREAM], 1),
    code_cell(["files = !ls *.pt\n", "A = torch.randn(4, 4)  # matrice de covariance σ²\n", "A = A @ A.T"], [], 2),
    code_cell(["%%time\n", "Q, R = torch.qr(A)\n", "torch.qr?\n", "for f in files:\n", "    !echo {f}\n",
               "L = cholesky(A)  # « facteur »"], [STREAM, IMAGE], 3),
    code_cell(["%%bash\n", "python -c 'import torch; torch.qr(A)'\n", "  if true; then echo ok; fi"], [], 4),
    code_cell(["%time Q2, R2 = torch.qr(A)\n", "!python -c \"torch.qr(A)\"\n", "?torch.qr\n",
               "print(\"naïve ‖Q‖\", Q.norm())"], [], 5),
)
RICH_FIXED_CELLS = {
    2: "%matplotlib inline\n!pip install -q torch\nimport torch",
    4: "%%time\nQ, R = torch.linalg.qr(A)\ntorch.qr?\nfor f in files:\n    !echo {f}\nL = torch.linalg.cholesky(A)  # « facteur »",
}


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def findings(capsys, *args: str) -> list[dict]:
    _, out, _ = cli(capsys, "check", "--output-format", "json", *args)
    return [{"cell": None, **finding} for finding in json.loads(out)]  # `cell` is only in notebook findings


def cell_sources(raw: bytes) -> list[str]:
    data = json.loads(raw)
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in data["cells"]
    ]


# -- check -------------------------------------------------------------------------------------


def test_check_locates_findings_by_cell(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    found = findings(capsys, str(path))
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in found] == [
        ("TU101", 1, 4, 19),  # the import of `cholesky` (as TorchFix's TOR103)
        ("TU103", 3, 2, 8),
        ("TU101", 3, 6, 5),
    ]
    assert all(f["path"] == str(path) for f in found)


def test_text_output_names_the_cell(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 1
    assert f"{path}:cell 3:2:8: TU103 [*] " in out
    assert f"{path}:cell 3:6:5: TU101 [*] " in out
    assert "6 | L = cholesky(A)  # « facteur »" in out  # the cell's own line, not the joined text
    assert "2 | Q, R = torch.qr(A)\n  |        ^^^^^^^^" in out
    _, concise, _ = cli(capsys, "check", "--output-format", "concise", str(path))
    assert f"{path}:cell 3:2:8: TU103" in concise


def test_json_output_has_cell_for_notebooks_only(capsys, tmp_path):
    write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    write(tmp_path / "mod.py", "import torch\ntorch.qr(A)\n")
    _, out, _ = cli(capsys, "check", "--output-format", "json", str(tmp_path))
    found = json.loads(out)
    by_path = {(Path(f["path"]).name, f["code"]): f for f in found}
    assert "cell" not in by_path["mod.py", "TU103"]
    assert by_path["nb.ipynb", "TU103"]["cell"] == 3
    edit = by_path["nb.ipynb", "TU103"]["fix"]["edits"][0]  # fix edits are located within the cell too
    assert edit["location"] == {"line": 2, "column": 8}


def test_ipython_syntax_never_causes_a_syntax_finding(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    found = findings(capsys, "--select", "ALL", "--no-prefilter", str(path))
    assert "TU001" not in {f["code"] for f in found}
    uses = [f for f in found if "(imported)" not in f["message"]]  # (cell 1 imports `cholesky`)
    assert {f["cell"] for f in uses} == {3}  # nothing in the %%bash cell, nor behind %time, ! or ?


def test_cross_cell_imports_resolve(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell("import torch as T"),
        markdown_cell("text"),
        code_cell("A = T.randn(3, 3)"),
        code_cell("Q, R = T.qr(A)"),
    )))
    assert [(f["code"], f["cell"], f["line"]) for f in findings(capsys, str(path))] == [("TU103", 3, 1)]
    # without the import, `T` is unknown: nothing to report
    write(path, jupyter_dumps(notebook(code_cell("A = T.randn(3, 3)"), code_cell("Q, R = T.qr(A)"))))
    assert findings(capsys, str(path)) == []


def test_sample_notebook(capsys):
    found = findings(capsys, str(SAMPLE_NOTEBOOK))
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in found] == [
        ("TU101", 3, 2, 5),
        ("TU103", 4, 2, 8),
    ]


def test_noqa_in_a_cell(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell("import torch"), code_cell("Q, R = torch.qr(A)  # noqa: TU103\nL = torch.cholesky(A)"),
    )))
    assert [(f["code"], f["cell"], f["line"]) for f in findings(capsys, str(path))] == [("TU101", 2, 2)]


# -- fix ---------------------------------------------------------------------------------------


def test_fix_rewrites_only_the_edited_cell_sources(capsys, tmp_path):
    before = jupyter_dumps(RICH)
    path = write(tmp_path / "nb.ipynb", before)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0, out
    after = path.read_bytes()
    sources = cell_sources(after)
    for index, text in RICH_FIXED_CELLS.items():
        assert sources[index - 1] == text
    old, new = json.loads(before), json.loads(after)
    for position, (old_cell, new_cell) in enumerate(zip(old["cells"], new["cells"], strict=True)):
        if position + 1 not in RICH_FIXED_CELLS:
            assert new_cell == old_cell
        assert {k: v for k, v in new_cell.items() if k != "source"} == {
            k: v for k, v in old_cell.items() if k != "source"
        }
    # Byte for byte, the file is what Jupyter would write for the fixed notebook.
    expected = json.loads(before)
    expected["cells"][1]["source"] = ["%matplotlib inline\n", "!pip install -q torch\n", "import torch"]
    expected["cells"][3]["source"] = [line for line in RICH_FIXED_CELLS[4].splitlines(keepends=True)]
    assert after.decode("utf-8") == jupyter_dumps(expected)


def test_fix_twice_is_a_no_op(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    cli(capsys, "fix", str(path))
    once = path.read_bytes()
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0
    assert path.read_bytes() == once
    assert "Fixed" not in out


# The same notebook as other writers lay it out. `torch.qr(` is fixed in place; everything else
# (indentation, key order, separators, escaping, the final newline) must stay as it was.
FIXABLE = notebook(
    markdown_cell("Décomposition QR"),
    code_cell(["import torch\n", "A = torch.randn(3, 3)  # « matrice »\n"], [STREAM], 1),
    code_cell(["Q, R = torch.qr(A)  # é\n", "!nvidia-smi\n", "print('ok ✓')"], [STREAM, IMAGE], 2),
    code_cell("B = torch.qr(A)[0]  # single-string source, σ\nB.shape", [IMAGE], 3),
)
LAYOUTS = {
    "jupyter-indent-1": jupyter_dumps,
    "indent-2-ascii": lambda d: json.dumps(d, indent=2) + "\n",
    "indent-4-unsorted-no-final-newline": lambda d: json.dumps(d, indent=4, ensure_ascii=False),
    "compact": lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False),
    "default-separators": lambda d: json.dumps(d),
    "crlf": lambda d: jupyter_dumps(d).replace("\n", "\r\n"),
    "tabs": lambda d: json.dumps(d, indent="\t", ensure_ascii=False) + "\n",
}


@pytest.mark.parametrize("dumps", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_fix_keeps_the_json_layout(capsys, tmp_path, dumps):
    before = dumps(FIXABLE).encode("utf-8")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0, out
    assert path.read_bytes() == before.replace(b"torch.qr(", b"torch.linalg.qr(")


@pytest.mark.parametrize("dumps", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_untouched_notebooks_stay_byte_identical(capsys, tmp_path, dumps):
    clean = json.loads(json.dumps(FIXABLE).replace("torch.qr(", "torch.linalg.qr("))
    clean["cells"].append(code_cell(["%%bash\n", "echo torch.qr\n"]))
    clean["cells"].append(code_cell("torch.linalg.qr?"))
    clean["cells"].extend([code_cell([]), code_cell(""), markdown_cell([])])
    before = dumps(clean).encode("utf-8")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    for args in (["check"], ["fix"], ["fix", "--unsafe-fixes"], ["fix", "--diff"]):
        code, out, _ = cli(capsys, *args, "--select", "ALL", str(path))
        assert code == 0, out
        assert path.read_bytes() == before


def test_a_byte_order_mark_is_kept(capsys, tmp_path):
    before = b"\xef\xbb\xbf" + jupyter_dumps(FIXABLE).encode("utf-8")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(before)
    cli(capsys, "fix", str(path))
    assert path.read_bytes() == before.replace(b"torch.qr(", b"torch.linalg.qr(")


def test_a_fix_that_only_has_findings_without_fixes_leaves_the_file(capsys, tmp_path):
    before = jupyter_dumps(notebook(code_cell("import torch\nx = torch.symeig(A, eigenvectors=some_flag())")))
    path = write(tmp_path / "nb.ipynb", before)
    cli(capsys, "fix", str(path))
    assert path.read_text(encoding="utf-8") == before


def test_fix_inserts_an_import_in_an_earlier_cell(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell(["import torch\n", "import numpy as np"]),
        code_cell(["%time y = 1\n", "x = torch.randn(3, requires_grad=True)\n", "y = torch.clamp(x, lo, hi)"]),
    )))
    code, out, _ = cli(capsys, "fix", "--unsafe-fixes", "--select", "TU201", str(path))
    assert code == 0, out
    assert cell_sources(path.read_bytes()) == [
        "import torch\nimport numpy as np\nimport torchup.compat",
        '%time y = 1\nx = torch.randn(3, requires_grad=True)\ny = torchup.compat.clamp(x, lo, hi, boundary_grad="legacy")',
    ]


def test_fix_does_not_put_code_above_a_cell_magic(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell(["%%time\n", "import torch\n", "x = torch.randn(3, requires_grad=True)\n",
                   "y = torch.clamp(x, lo, hi)"]),
    )))
    code, out, _ = cli(capsys, "fix", "--unsafe-fixes", "--select", "TU201", str(path))
    assert code == 0, out
    assert cell_sources(path.read_bytes())[0].startswith("%%time\nimport torch\nimport torchup.compat\n")


def test_diff_shows_the_json_change_and_writes_nothing(capsys, tmp_path):
    before = jupyter_dumps(RICH)
    path = write(tmp_path / "nb.ipynb", before)
    code, out, err = cli(capsys, "fix", "--diff", str(path))
    assert code == 1
    assert '-    "Q, R = torch.qr(A)\\n",\n+    "Q, R = torch.linalg.qr(A)\\n",\n' in out
    assert out.startswith(f"--- {path}\n+++ {path}\n")
    assert path.read_text(encoding="utf-8") == before
    assert "Would fix 2 findings in 1 file." in err


def test_a_cell_that_does_not_parse_is_a_finding_and_the_others_are_fixed(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell("import torch"),
        code_cell("def broken(:\n    torch.qr(A)"),
        code_cell("Q, R = torch.qr(A)"),
    )))
    found = findings(capsys, str(path))
    assert [(f["code"], f["cell"], f["line"]) for f in found] == [("TU001", 2, 1), ("TU103", 3, 1)]
    cli(capsys, "fix", str(path))
    assert cell_sources(path.read_bytes()) == ["import torch", "def broken(:\n    torch.qr(A)", "Q, R = torch.linalg.qr(A)"]


# -- IPython syntax ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "masked_lines"),
    [
        ("%time x = torch.qr(A)", [1]),
        ("!pip install torch\nimport torch", [1]),
        ("!!ls\nfiles = !ls\nx, y = %sx ls\nself.out = !cmd", [1, 2, 3, 4]),
        ("torch.qr?\n??torch.qr\ntorch.linalg.qr??", [1, 2, 3]),
        ("for i in range(3):\n    !echo $i\n    %time f(i)", [2, 3]),
        ("%config InlineBackend.figure_format = \\\n    'retina'\nx = 1", [1, 2]),
        ("x = f(1,\n      2)?", [1, 2]),
        ('s = """\n!not a shell escape\n%not a magic\n"""\n!ls', [5]),
        ("x = a != b\ny = c % d\n!ls", [3]),
        ("%%time\nx = torch.qr(A)\n!ls", [1, 3]),
    ],
)
def test_masking(cell, masked_lines):
    masks: dict = {}
    masked = mask_cell(cell, 1, "NONCE", masks)
    assert masked is not None
    text, _ = masked
    lines = text.splitlines()
    assert len(lines) == len(cell.splitlines())
    assert [n for n, line in enumerate(lines, 1) if "NONCE" in line] == masked_lines
    compile(text, "cell", "exec")


def test_other_cell_magics_are_not_python():
    assert mask_cell("%%bash\nif true; then\n  echo torch.qr\nfi", 1, "NONCE", {}) is None
    assert mask_cell("\n%%writefile train.py\nimport torch\ntorch.qr(A)", 1, "NONCE", {}) is None


# -- indented cells: IPython removes a cell's indentation before running it ------------------------

INDENTED = notebook(
    code_cell(["    import numpy as np\n", "    from torch import cholesky, nn\n"], [STREAM], 1),
    code_cell(["    A = np.eye(3)  # σ\n", "\n", "    if True:\n", "        L = cholesky(A)\n",
               "    layer = nn.Linear(3, 3)"], [], 2),
)


def test_an_indented_cell_is_checked_as_ipython_runs_it(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(INDENTED))
    found = findings(capsys, str(path))
    imported = found.pop(0)  # `from torch import cholesky, nn` (as TorchFix's TOR103), in cell 1
    assert (imported["cell"], imported["line"], imported["column"]) == (1, 2, 23)
    # columns in the cell's own text, indentation included
    assert [(f["code"], f["cell"], f["line"], f["column"], f["end_column"]) for f in found] == [("TU101", 2, 4, 13, 21)]
    edit = found[0]["fix"]["edits"][-1]
    assert (edit["location"], edit["end_location"]) == ({"line": 4, "column": 13}, {"line": 4, "column": 21})
    _, out, _ = cli(capsys, "check", str(path))
    assert "4 |         L = cholesky(A)\n  |             ^^^^^^^^" in out


def test_fix_edits_the_indented_cell_and_indents_what_it_adds(capsys, tmp_path):
    before = jupyter_dumps(INDENTED)
    path = write(tmp_path / "nb.ipynb", before)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0, out
    expected = json.loads(before)
    expected["cells"][0]["source"][1:] = ["    from torch import nn\n", "    import torch\n"]  # the cell's indentation
    expected["cells"][1]["source"][3] = "        L = torch.linalg.cholesky(A)\n"
    assert path.read_text(encoding="utf-8") == jupyter_dumps(expected)  # every other byte as it was
    code, out, _ = cli(capsys, "fix", "--select", "ALL", str(path))
    assert code == 0 and "Fixed" not in out


@pytest.mark.parametrize(
    ("cell", "fixed"),
    [
        ("\timport torch\n\tif True:\n\t\tQ, R = torch.qr(A)\n", "\timport torch\n\tif True:\n\t\tQ, R = torch.linalg.qr(A)\n"),
        ("\n  \n    import torch\n    Q, R = torch.qr(A)", "\n  \n    import torch\n    Q, R = torch.linalg.qr(A)"),
        # IPython 7 and 8 remove the first line's indentation only, from the lines that have it:
        ("    import torch\n    Q, R = f(A,\n  torch.qr(A))", "    import torch\n    Q, R = f(A,\n  torch.linalg.qr(A))"),
        ("%%time\n    import torch\n    Q, R = torch.qr(A)", "%%time\n    import torch\n    Q, R = torch.linalg.qr(A)"),
        ("  %%timeit\n  import torch\n  torch.qr(A)", "  %%timeit\n  import torch\n  torch.linalg.qr(A)"),
        ("\n%%time\nimport torch\nQ, R = torch.qr(A)", "\n%%time\nimport torch\nQ, R = torch.linalg.qr(A)"),
        ("    import torch\n    !ls\n    torch.qr?\n    Q, R = torch.qr(A)",
         "    import torch\n    !ls\n    torch.qr?\n    Q, R = torch.linalg.qr(A)"),
    ],
    ids=["tabs", "leading-blank-lines", "ipython-8-rule", "magic-body", "indented-magic", "blank-line-above-magic",
         "masked-lines"],
)
def test_indented_cells_are_fixed_in_place(capsys, tmp_path, cell, fixed):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(code_cell(cell))))
    found = findings(capsys, str(path))
    assert [f["code"] for f in found] == ["TU103"]
    line = cell.splitlines()[found[0]["line"] - 1]
    assert line[found[0]["column"] - 1:].startswith("torch.qr(")
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0, out
    assert cell_sources(path.read_bytes()) == [fixed]


def test_a_fix_that_cannot_be_mapped_back_onto_the_indented_cell_is_dropped(capsys, tmp_path):
    """Removing the first line leaves the less indented comment first: IPython would then remove
    only its two spaces, and run other code than the fix made. That cell stays as it is."""
    unmappable = "    from torch import cholesky\n  # a note\n    import torch\n    L = cholesky(A)\n"
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(code_cell(unmappable), code_cell("Q, R = torch.qr(A)"))))
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 1
    assert cell_sources(path.read_bytes()) == [unmappable, "Q, R = torch.linalg.qr(A)"]
    assert "cell 1:4:9: TU101 " in out and "cannot be mapped back exactly onto this cell's indented text" in out
    # The fix of cell 2 edits the imports of cell 1 so: nothing can be fixed.
    before = jupyter_dumps(notebook(code_cell("    from torch import cholesky\n  # a note\n    import numpy as np\n"),
                                    code_cell("L = cholesky(A)")))
    write(path, before)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 1 and path.read_text(encoding="utf-8") == before
    assert "cell 2:1:5: TU101 " in out and "the notebook was left as it was" in out


@pytest.mark.parametrize(
    "cell",
    ["    x = 1\n      y = (2,\n  3)\n\n    z = 4", "\tx = 1\n\t\ty", "  a\n    b\n   \n  c", "x = 1", "", "\n\n",
     "%%time\n    x = 1\n     y = 2", "    %%capture\n    x = 1\n    y = 2\n"],
)
def test_reindent_gives_back_the_cell_it_was_given(cell):
    for first_line in (False, True):
        cleaned = dedent(cell, first_line)
        assert [len(line) - len(removed) for line, removed in zip(cell.splitlines(True), cleaned.removed, strict=True)] \
            == [len(line) for line in cleaned.text.splitlines(True)]
        assert reindent(cleaned.text, cleaned) == cell


def test_reindent_refuses_what_would_not_run_as_fixed():
    cleaned = dedent("    a = f(x,\n  y)\n", first_line=True)
    assert cleaned.text == "a = f(x,\n  y)\n"
    assert reindent("a = g(x,\n  y)\n", cleaned) == "    a = g(x,\n  y)\n"
    assert reindent("a = g(x,\n    y)\n", cleaned) is None  # the edited line would lose 4 spaces


# -- a cell that does not parse ----------------------------------------------------------------------


def test_the_syntax_error_of_a_cell_says_what_torchup_cannot_tell(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell("import torch"), code_cell("    def broken(:\n        torch.qr(A)"),
        code_cell(">>> import torch\n>>> torch.qr(A)"), code_cell("In [1]: import torch"),
    )))
    found = findings(capsys, str(path))
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in found] == [
        ("TU001", 2, 1, 16), ("TU001", 3, 1, 1), ("TU001", 4, 1, 9),
    ]
    assert "torchup reads a cell as IPython runs it" in found[0]["message"]
    assert "if the cell runs in Jupyter as it is, it uses IPython syntax torchup does not handle" in found[0]["message"]
    assert "interpreter prompts (`>>>`), which IPython strips" in found[1]["message"]
    assert "interpreter prompts (`In [1]:`)" in found[2]["message"]
    write(tmp_path / "mod.py", "def broken(:\n    torch.qr(A)\n")  # a Python file's message is its own
    assert "torchup parses with the Python running it" in findings(capsys, str(tmp_path / "mod.py"))[0]["message"]


# -- a finding depends on the file and the settings, not on the pre-filter or earlier runs -----------

# Issue 24: with the notebook pre-filtered on its words, a cell's TU001 hung on the other cells' words
# and on the target release that decides them (the 2.15-only `load_nvprof` let the notebook through
# for 2.15, not for 2.14); and the words were looked for in the raw cells joined, where the `'''` of
# two `%%bash` cells (never analysed) made the `torch.qr` between them a string's: lost with the
# pre-filter on, whatever the target.
ORDER_NOTEBOOKS = {
    "a.ipynb": notebook(
        code_cell(["    import torch\n", "    from torch.autograd.profiler import load_nvprof\n",
                   "    events = load_nvprof('trace.prof')\n"]),
        code_cell("def broken(:\n    pass"),
    ),
    "b.ipynb": notebook(code_cell(["    import torch\n", "    L = torch.cholesky(A)"])),
    "c.ipynb": notebook(code_cell("%%bash\necho '''"), code_cell("import torch\nQ, R = torch.qr(A)"),
                        code_cell("%%bash\necho '''")),
}
SHARED = {rule.code for rule in all_rules()
          if rule.engine_emitted or (applies_to_release(rule, "2.14") and applies_to_release(rule, "2.15"))}
RUNS = [("--target-version", "2.14"), ("--target-version", "2.15"), ("--no-prefilter", "--target-version", "2.14"),
        ("--no-prefilter", "--target-version", "2.15"), (), ("--no-prefilter",), ("--no-cache",)]


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_findings_do_not_depend_on_the_order_of_runs(capsys, tmp_path, monkeypatch, order):
    monkeypatch.undo()  # (conftest's patches: replays are off in the test process; this test wants them)
    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)  # (settled at once: warm runs are replayed)
    full_runs: list[int] = []
    original = torchup.cli.commands.run_check
    monkeypatch.setattr(torchup.cli.commands, "run_check", lambda *a, **k: full_runs.append(1) or original(*a, **k))
    monkeypatch.chdir(tmp_path)
    for name, data in ORDER_NOTEBOOKS.items():
        write(tmp_path / name, jupyter_dumps(data))
    write(tmp_path / "mod.py", "import torch\nQ, R = torch.qr(A)\n")  # (the cache is written for it)
    seen = {}
    for options in RUNS if order == "forward" else RUNS[::-1]:
        for attempt in ("first", "again"):  # (again: replayed, or mod.py from the findings cache)
            _, out, _ = cli(capsys, "check", "--output-format", "json", *options, ".")
            seen[options, attempt] = sorted(
                (Path(f["path"]).name, f.get("cell"), f["line"], f["column"], f["code"])
                for f in json.loads(out) if f["code"] in SHARED
            )
    assert len(full_runs) < 2 * len(RUNS)  # some warm runs were answered from the replay
    expected = [
        ("a.ipynb", 2, 1, 12, "TU001"),
        ("b.ipynb", 1, 2, 9, "TU101"),
        ("c.ipynb", 2, 2, 8, "TU103"),
        ("mod.py", None, 2, 8, "TU103"),
    ]
    assert {key: found for key, found in seen.items() if found != expected} == {}


# -- files that are not notebooks ------------------------------------------------------------------

BROKEN = {
    "invalid-json": (b'{\n "cells": [\n  {"cell_type": "code", "source": "torch.qr(A)"\n', "not valid JSON"),
    "merge-conflict": (
        jupyter_dumps(notebook(code_cell("import torch\ntorch.qr(A)"))).replace(
            ' "nbformat": 4,', '<<<<<<< HEAD\n "nbformat": 4,\n=======\n "nbformat": 3,\n>>>>>>> branch'
        ).encode(),
        "not valid JSON",
    ),
    "not-a-notebook": (b'{"name": "torch.qr", "cells": "none"}\n', "not a Jupyter notebook"),
    "json-list": (b'["torch.qr"]\n', "not a Jupyter notebook"),
    "nbformat-3": (b'{"worksheets": [{"cells": [{"input": "torch.qr(A)"}]}], "nbformat": 3}\n', "nbformat 3"),
    "not-utf-8": (b'{"cells": [{"cell_type": "code", "source": "torch.qr(A)  # \xe9"}]}\n', "not UTF-8"),
    "empty": (b"", "not valid JSON"),
}


@pytest.mark.parametrize(("content", "message"), BROKEN.values(), ids=BROKEN.keys())
def test_a_file_that_is_not_a_notebook_is_reported_and_left_alone(capsys, tmp_path, content, message):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(content)
    found = findings(capsys, "--no-prefilter", str(path))
    assert [(f["code"], f["cell"]) for f in found] == [("TU001", None)]
    assert message in found[0]["message"]
    for args, exit_code in ((["check"], 1), (["fix"], 1), (["fix", "--unsafe-fixes"], 1), (["fix", "--diff"], 0)):
        code, out, _ = cli(capsys, *args, "--no-prefilter", str(path))
        assert code == exit_code
        assert path.read_bytes() == content
        assert out == "" if "--diff" in args else "TU001" in out


def test_invalid_json_is_located_in_the_file(capsys, tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b'{\n "cells": [\n  torch.qr\n ]\n}\n')
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 1
    assert f"{path}:3:3: TU001 not a valid notebook: the file is not valid JSON" in out


def test_a_notebook_in_another_language_is_skipped(capsys, tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(code_cell("library(torch)\ntorch.qr(A) <- 1"),
                                                               language="R")))
    assert findings(capsys, "--no-prefilter", str(path)) == []


def test_a_malformed_code_cell_is_a_finding(capsys, tmp_path):
    data = notebook(code_cell("import torch"), code_cell("torch.qr(A)"))
    data["cells"][0]["source"] = 42
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(data))
    found = findings(capsys, str(path))
    assert [(f["code"], f["cell"]) for f in found] == [("TU001", 1)]


# -- discovery and the pre-filter ------------------------------------------------------------------


def test_directories_are_walked_for_notebooks_but_not_their_checkpoints(capsys, tmp_path):
    text = jupyter_dumps(notebook(code_cell("import torch\ntorch.qr(A)")))
    write(tmp_path / "a.ipynb", text)
    (tmp_path / "sub" / ".ipynb_checkpoints").mkdir(parents=True)
    write(tmp_path / "sub" / "b.ipynb", text)
    write(tmp_path / "sub" / ".ipynb_checkpoints" / "b-checkpoint.ipynb", text)
    found = findings(capsys, str(tmp_path))
    assert sorted(Path(f["path"]).relative_to(tmp_path).as_posix() for f in found) == ["a.ipynb", "sub/b.ipynb"]


def test_the_prefilter_sees_words_behind_json_escapes(tmp_path):
    # Every `qr` follows a `\n` escape in the JSON text (`...(\nqr`), so a plain byte search misses it.
    source = "from torch import (\nqr,\n)\nQ, R = (\nqr(A))\n"
    path = write(tmp_path / "nb.ipynb", json.dumps(notebook(code_cell(source))))
    results = []
    for prefilter in (True, False):
        checker = Checker(select_rules(all_rules(), None), prefilter=prefilter)
        result = run([str(path)], checker, Discovery(), RunOptions())
        results.append([(d.code, d.cell, d.line, d.column) for d in result.diagnostics])
    assert results[0] == results[1] == [("TU103", 1, 2, 1), ("TU103", 1, 5, 1)]  # the import, the call


def test_findings_are_ordered_by_cell(tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(notebook(
        code_cell("import torch"), code_cell("\n\n\nQ, R = torch.qr(A)"), code_cell("L = torch.cholesky(A)"),
    )))
    checker = Checker(select_rules(all_rules(), None))
    result = run([str(path)], checker, Discovery(), RunOptions())
    assert [(d.cell, d.line) for d in result.diagnostics] == [(2, 4), (3, 1)]


def test_load_locates_each_source_value():
    text = jupyter_dumps(RICH)
    loaded = load("nb.ipynb", text.encode())
    assert [cell.index for cell in loaded.cells] == [1, 2, 3, 4, 5]
    for cell in loaded.cells:
        start, end = cell.span
        assert json.loads(text[start:end]) == cell.value


def test_subprocess_check_and_fix(tmp_path):
    path = write(tmp_path / "nb.ipynb", jupyter_dumps(RICH))
    env_path = str(REPO_ROOT)
    completed = subprocess.run(
        [sys.executable, "-m", "torchup", "check", "--output-format", "concise", str(path)],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": env_path, "PATH": ""}, timeout=60,
    )
    assert completed.returncode == 1
    assert "nb.ipynb:cell 3:2:8: TU103" in completed.stdout  # named absolute, shown relative to the cwd
    completed = subprocess.run(
        [sys.executable, "-m", "torchup", "fix", str(path)],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": env_path, "PATH": ""}, timeout=60,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert cell_sources(path.read_bytes())[3] == RICH_FIXED_CELLS[4]


def test_a_notebook_on_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`--stdin-filename x.ipynb` reads stdin as a notebook, as editors send it; `fix -` writes the JSON."""
    import io

    raw = SAMPLE_NOTEBOOK.read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code = main(["check", "-", "--stdin-filename", "nb.ipynb", "--output-format", "concise", "--isolated"])
    out = capsys.readouterr().out
    assert code == 1 and "nb.ipynb:cell 3:2:5: TU101" in out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code = main(["fix", "-", "--stdin-filename", "nb.ipynb", "--isolated"])
    fixed = json.loads(capsys.readouterr().out)
    cells = ["".join(cell["source"]) for cell in fixed["cells"] if cell["cell_type"] == "code"]
    assert any("torch.linalg.cholesky(cov)" in cell for cell in cells)
    assert not any("torch.cholesky(" in cell for cell in cells)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{not json")))
    code = main(["check", "-", "--stdin-filename", "nb.ipynb", "--output-format", "concise", "--isolated"])
    assert code == 1 and "nb.ipynb:" in capsys.readouterr().out
