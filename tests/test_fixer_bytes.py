"""``torchup fix`` changes only what its edits cover: every other byte of the file survives.

Each case gives the file's exact bytes before and after ``torchup fix``. The expected text follows
the engine's rules: ``import torch`` goes after the last import of the module's leading block of
imports (or after the docstring, or after the comment header), uses the file's first line ending,
and a ``from torch import name`` whose every use was rewritten is dropped.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from torchup.cli.main import main

# name: (before, after, exit code of the first `fix`)
CASES: dict[str, tuple[bytes, bytes, int]] = {
    "crlf": (
        b'import torch\r\nQ, R = torch.qr(A, False)\r\nx = 1\r\n',
        b'import torch\r\nQ, R = torch.linalg.qr(A, mode="complete")\r\nx = 1\r\n',
        0,
    ),
    "crlf-inserted-import-uses-crlf": (
        b"import os\r\nfrom torch import cholesky\r\n\r\nL = cholesky(A)\r\n",
        b"import os\r\nimport torch\r\n\r\nL = torch.linalg.cholesky(A)\r\n",
        0,
    ),
    "crlf-docstring-and-partial-from-import": (
        b'"""Doc."""\r\nimport os\r\nfrom torch import cholesky, eye\r\nL = cholesky(eye(2))\r\n',
        b'"""Doc."""\r\nimport os\r\nfrom torch import eye\r\nimport torch\r\nL = torch.linalg.cholesky(eye(2))\r\n',
        0,
    ),
    "utf8-bom": (
        b"\xef\xbb\xbf# comment\nimport torch\nL = torch.cholesky(A)\n",
        b"\xef\xbb\xbf# comment\nimport torch\nL = torch.linalg.cholesky(A)\n",
        0,
    ),
    "utf8-bom-import-replaced-at-the-start": (
        b"\xef\xbb\xbffrom torch import qr\r\nQ, R = qr(A)\r\n",
        b"\xef\xbb\xbfimport torch\r\nQ, R = torch.linalg.qr(A)\r\n",
        0,
    ),
    "tabs": (
        b"import torch\n\ndef f(A):\n\tif A is not None:\n\t\treturn torch.cholesky(A,\tTrue)\n",
        b"import torch\n\ndef f(A):\n\tif A is not None:\n\t\treturn torch.linalg.cholesky(A,\tupper=True)\n",
        0,
    ),
    "latin1-coding-cookie": (
        b'# -*- coding: latin-1 -*-\n"""Caf\xe9."""\nfrom torch import qr\nQ, R = qr(A)  # \xe9\n',
        b'# -*- coding: latin-1 -*-\n"""Caf\xe9."""\nimport torch\nQ, R = torch.linalg.qr(A)  # \xe9\n',
        0,
    ),
    "comments-inside-arguments": (
        b"import torch\nQ, R = torch.qr(\n    A,  # the matrix\n    False,  # complete\n)\n",
        b'import torch\nQ, R = torch.linalg.qr(\n    A,  # the matrix\n    mode="complete",  # complete\n)\n',
        0,
    ),
    "comment-after-the-open-parenthesis": (
        b"import torch\nU = torch.cholesky(  # factor\n    A,\n    True,  # upper\n)\n",
        b"import torch\nU = torch.linalg.cholesky(  # factor\n    A,\n    upper=True,  # upper\n)\n",
        0,
    ),
    "trailing-whitespace": (
        b"import torch   \nL = torch.cholesky(A)  \t\n\n\nx = 1 \n",
        b"import torch   \nL = torch.linalg.cholesky(A)  \t\n\n\nx = 1 \n",
        0,
    ),
    "no-final-newline": (
        b"import torch\nL = torch.cholesky(A)",
        b"import torch\nL = torch.linalg.cholesky(A)",
        0,
    ),
    "no-final-newline-with-inserted-import": (
        b"import os\nfrom torch import qr\nQ, R = qr(A)",
        b"import os\nimport torch\nQ, R = torch.linalg.qr(A)",
        0,
    ),
    "from-import-one-of-two": (
        b"from torch import cholesky, eye\nL = cholesky(A + eye(3))\n",
        b"from torch import eye\nimport torch\nL = torch.linalg.cholesky(A + eye(3))\n",
        0,
    ),
    "from-import-last-of-two": (
        b"from torch import eye, cholesky\nL = cholesky(A + eye(3))\n",
        b"from torch import eye\nimport torch\nL = torch.linalg.cholesky(A + eye(3))\n",
        0,
    ),
    "from-import-parenthesised": (
        b"from torch import (\n    cholesky,\n    eye,  # identity\n)\nL = cholesky(A + eye(3))\n",
        b"from torch import (\n    eye,  # identity\n)\nimport torch\nL = torch.linalg.cholesky(A + eye(3))\n",
        0,
    ),
    "from-import-alone-is-removed": (
        b"from torch import qr\nQ, R = qr(A)\n",
        b"import torch\nQ, R = torch.linalg.qr(A)\n",
        0,
    ),
    "from-import-with-alias": (
        b"from torch import cholesky as chol\nL = chol(A)\n",
        b"import torch\nL = torch.linalg.cholesky(A)\n",
        0,
    ),
    "from-import-with-torch-alias-in-scope": (
        b"import torch as th\nfrom torch import qr\nQ, R = qr(A)\n",
        b"import torch as th\nQ, R = th.linalg.qr(A)\n",
        0,
    ),
    "from-import-inside-a-function": (
        b"import os\n\n\ndef f(A):\n    from torch import qr\n    return qr(A)\n",
        b"import os\nimport torch\n\n\ndef f(A):\n    return torch.linalg.qr(A)\n",
        0,
    ),
    "from-import-inside-a-function-comment-header": (
        b"#!/usr/bin/env python\n# header\n\ndef f(A):\n    from torch import qr\n    return qr(A)\n",
        b"#!/usr/bin/env python\n# header\n\nimport torch\ndef f(A):\n    return torch.linalg.qr(A)\n",
        0,
    ),
    "from-import-kept-while-still-used": (
        b"import functools\nfrom torch import qr\nQ, R = qr(A)\ng = functools.partial(qr, some=False)\n",
        b"import functools\nfrom torch import qr\nimport torch\nQ, R = torch.linalg.qr(A)\n"
        b"g = functools.partial(qr, some=False)\n",
        1,  # the reference in functools.partial has no automatic fix
    ),
    "star-import": (
        b"from torch import *\nL = cholesky(A)\n",
        b"from torch import *\nimport torch\nL = torch.linalg.cholesky(A)\n",
        0,
    ),
    "star-import-with-torch-imported": (
        b"from torch import *\nimport torch\nL = cholesky(A)\n",
        b"from torch import *\nimport torch\nL = torch.linalg.cholesky(A)\n",
        0,
    ),
}


def fix(path: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["fix", *extra, str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out


def temporary_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".torchup-") or p.suffix == ".tmp")


@pytest.mark.parametrize(("before", "after", "exit_code"), CASES.values(), ids=CASES.keys())
def test_fix_changes_only_the_edited_bytes(capsys, tmp_path, before, after, exit_code):
    path = tmp_path / "module.py"
    path.write_bytes(before)
    code, _ = fix(path, capsys)
    assert path.read_bytes() == after
    assert code == exit_code
    assert temporary_files(tmp_path) == []


@pytest.mark.parametrize(("before", "after", "exit_code"), CASES.values(), ids=CASES.keys())
def test_fixing_twice_is_a_no_op(capsys, tmp_path, before, after, exit_code):
    path = tmp_path / "module.py"
    path.write_bytes(before)
    fix(path, capsys)
    once = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    code, out = fix(path, capsys)
    assert path.read_bytes() == once
    assert path.stat().st_mtime_ns == mtime  # not rewritten either
    assert "Fixed" not in out
    assert code == exit_code


@pytest.mark.parametrize(("before", "after", "exit_code"), CASES.values(), ids=CASES.keys())
def test_diff_writes_nothing(capsys, tmp_path, before, after, exit_code):
    path = tmp_path / "module.py"
    path.write_bytes(before)
    code, out = fix(path, capsys, "--diff")
    assert path.read_bytes() == before
    assert code == (1 if after != before else 0)
    assert out.count("\n@@ ") == (1 if after != before else 0)


def test_fix_over_a_directory_gives_the_same_bytes(capsys, tmp_path):
    """All cases side by side, fixed in one run over their directory; every result parses."""
    for name, (before, _, _) in CASES.items():
        path = tmp_path / f"{name}.py"
        path.write_bytes(before)
    main(["fix", str(tmp_path)])
    capsys.readouterr()
    for name, (_, after, _) in CASES.items():
        assert (tmp_path / f"{name}.py").read_bytes() == after, name
        ast.parse((tmp_path / f"{name}.py").read_bytes())


# -- file metadata ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o640, 0o755, 0o600])
def test_fix_keeps_the_file_mode(capsys, tmp_path, mode):
    path = tmp_path / "module.py"
    path.write_bytes(b"import torch\nL = torch.cholesky(A)\n")
    os.chmod(path, mode)
    code, _ = fix(path, capsys)
    assert code == 0
    assert path.read_bytes() == b"import torch\nL = torch.linalg.cholesky(A)\n"
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_fix_leaves_no_temporary_files(capsys, tmp_path):
    for index in range(3):
        (tmp_path / f"m{index}.py").write_bytes(b"import torch\nQ, R = torch.qr(A)\n")
    (tmp_path / "unchanged.py").write_bytes(b"x = 1\n")
    code, out = fix(tmp_path, capsys)
    assert code == 0
    assert "Fixed 3 findings in 3 files." in out
    assert temporary_files(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m0.py", "m1.py", "m2.py", "unchanged.py"]


def test_fix_through_a_symlink_edits_the_target_and_keeps_the_link(capsys, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "module.py"
    target.write_bytes(b"import torch\nQ, R = torch.qr(A)\n")
    link = tmp_path / "link.py"
    os.symlink(os.path.join("real", "module.py"), link)
    code, _ = fix(link, capsys)
    assert code == 0
    assert link.is_symlink()
    assert target.read_bytes() == b"import torch\nQ, R = torch.linalg.qr(A)\n"
    assert temporary_files(tmp_path) == []
    assert temporary_files(real) == []


# -- a fix must not move an import after its use ------------------------------------------------


def _first_statement_index(tree: ast.Module, predicate) -> int:
    for index, statement in enumerate(tree.body):
        if any(predicate(node) for node in ast.walk(statement)):
            return index
    raise AssertionError("not found")


@pytest.mark.parametrize(
    "before",
    [b"from torch import qr; Q = qr(A)\n", b"from torch import qr; Q = qr(A)"],
    ids=["newline", "no-final-newline"],
)
def test_inserted_import_comes_before_its_first_use(capsys, tmp_path, before):
    """``from torch import qr; Q = qr(A)``: ``import torch`` must precede ``torch.linalg.qr(A)``."""
    path = tmp_path / "module.py"
    path.write_bytes(before)
    code, _ = fix(path, capsys)
    assert code == 0
    tree = ast.parse(path.read_bytes())
    imported = _first_statement_index(
        tree, lambda n: isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
    )
    used = _first_statement_index(tree, lambda n: isinstance(n, ast.Attribute) and n.attr == "qr")
    assert imported < used, path.read_text()
