"""Hostile and odd input: each gets a clear message (or is passed over), the run goes on, and no
traceback reaches the user. (Undecodable UTF-8, NUL bytes, Python 2, coding cookies, missing paths
and symlink loops are in test_bad_input.py; notebooks that are not JSON in test_notebooks.py.)

Most tests run ``python -m torchup`` in a subprocess, as a user would, without ``TORCHUP_DEBUG``.
The read-only tests must not run with root's permissions: as root they run torchup as ``nobody``
through ``setpriv`` (keeping only CAP_DAC_READ_SEARCH, so that the interpreter under /root can be
read), or else under a read-only bind mount.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from torchup.run import runner

REPO_ROOT = Path(__file__).resolve().parent.parent
GOOD = b"import torch\nQ, R = torch.qr(A)\n"
GOOD_FIXED = b"import torch\nQ, R = torch.linalg.qr(A)\n"
CHOLESKY = "import torch\nL = torch.cholesky(A)\n"


def environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("TORCHUP_DEBUG", "FORCE_COLOR"):
        env.pop(name, None)
    return env


def torchup(*args: str, prefix: list[str] | None = None, timeout: float = 120) -> tuple[int, str, str]:
    """Run the CLI in a subprocess; the default output must never hold a traceback."""
    command = [*(prefix or []), sys.executable, "-m", "torchup", *args]
    result = subprocess.run(command, cwd=REPO_ROOT, env=environment(), capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    if "--verbose" not in args:
        assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
        assert "internal error" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result.returncode, result.stdout, result.stderr


def concise(*args: str, **kwargs) -> tuple[int, str]:
    code, out, err = torchup(*args, "--no-cache", "--output-format", "concise", **kwargs)
    return code, out + err


def temporaries(root: Path) -> list[Path]:
    return sorted(root.rglob(".torchup-*.tmp"))


# -- encodings ---------------------------------------------------------------------------------

WIDE = {
    "utf-16-bom": ("utf-16", "UTF-16 (it starts with a UTF-16 byte-order mark)"),
    "utf-16-be-bom": ("utf-16-be", None),  # (the BOM is added below)
    "utf-16-le-no-bom": ("utf-16-le", "UTF-16 (little-endian, without a byte-order mark)"),
    "utf-16-be-no-bom": ("utf-16-be", "UTF-16 (big-endian, without a byte-order mark)"),
    "utf-32-bom": ("utf-32", "UTF-32 (it starts with a UTF-32 byte-order mark)"),
}


@pytest.mark.parametrize(("codec", "description"), WIDE.values(), ids=WIDE.keys())
def test_a_utf16_or_utf32_file_is_reported_clearly_and_left_alone(tmp_path, codec, description):
    data = CHOLESKY.encode(codec)
    if description is None:
        data = b"\xfe\xff" + data
        description = "UTF-16 (it starts with a UTF-16 byte-order mark)"
    wide = tmp_path / "wide.py"
    wide.write_bytes(data)
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    for args in (["check"], ["fix"], ["fix", "--unsafe-fixes"], ["check", "--no-prefilter"]):
        code, out = concise(*args, str(tmp_path))
        assert code == 1, out
        # Reported even though the pre-filter cannot see `cholesky` in these bytes.
        assert f"{wide}:1:1: TU001 cannot decode the file: the file is encoded in {description}; " \
               "Python reads source files as UTF-8" in out
        assert "save it as UTF-8" in out
        assert wide.read_bytes() == data
    assert good.read_bytes() == GOOD_FIXED


@pytest.mark.parametrize("prefilter", [[], ["--no-prefilter"]], ids=["prefilter", "no-prefilter"])
def test_nul_bytes_without_a_trigger_word_are_reported_whatever_the_prefilter(tmp_path, prefilter):
    """A binary file named .py holds no trigger word, yet it is no clean source file: never passed
    over silently (issue 20)."""
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00" * 10)
    code, out = concise("check", *prefilter, str(binary))
    assert code == 1
    assert f"{binary}:1:1: TU001 cannot decode the file: source contains a NUL byte" in out


def test_a_latin1_file_with_a_cookie_is_fixed_in_latin1_beside_broken_files(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\ncaf\xe9 = torch.qr(A)  # \xe0\n")
    broken = tmp_path / "broken.py"
    broken.write_bytes(b"import torch\nQ = torch.qr(A)  # \xff\xfe\n")
    code, out = concise("fix", str(tmp_path))
    assert code == 1
    assert latin.read_bytes() == b"# -*- coding: latin-1 -*-\nimport torch\ncaf\xe9 = torch.linalg.qr(A)  # \xe0\n"
    assert f"{broken}:2:20: TU001 cannot decode the file: bytes are not valid utf-8" in out
    assert broken.read_bytes() == b"import torch\nQ = torch.qr(A)  # \xff\xfe\n"


# -- size and nesting ----------------------------------------------------------------------------

PEAK_RSS_LIMIT = 1536 * 1024 * 1024  # bytes

# Runs the CLI as its only child and prints that child's peak RSS (bytes on macOS, KiB on Linux).
MEASURE = (
    "import resource, subprocess, sys, time\n"
    "start = time.monotonic()\n"
    "code = subprocess.call([sys.executable, '-m', 'torchup', *sys.argv[1:]])\n"
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "rss *= 1 if sys.platform == 'darwin' else 1024\n"
    "print(f'MEASURE code={code} rss={rss} seconds={time.monotonic() - start:.2f}')\n"
)


def measured(*args: str) -> tuple[int, str, int, float]:
    result = subprocess.run([sys.executable, "-c", MEASURE, *args], cwd=REPO_ROOT, env=environment(),
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    line = next(line for line in result.stdout.splitlines() if line.startswith("MEASURE "))
    fields = dict(item.split("=") for item in line.split()[1:])
    return int(fields["code"]), output, int(fields["rss"]), float(fields["seconds"])


def generated_module(size: int) -> bytes:
    """``size`` bytes of generated-looking code (message classes, as API client generators write them),
    with one finding at the top."""
    head = b"import torch\nfrom apitools.base.protorpclite import messages as _messages\n\nL = torch.cholesky(A)\n"
    block = b"".join(
        b'\n\nclass Message%d(_messages.Message):\n'
        b'  r"""Message%d describes one resource of the service.\n\n  Fields:\n'
        b'    name: The name of the resource, unique within its project.\n'
        b'    sizeBytes: The size of the resource in bytes.\n    labels: Labels to apply to it.\n  """\n\n'
        b"  name = _messages.StringField(1)\n"
        b"  sizeBytes = _messages.IntegerField(2, variant=_messages.Variant.INT64)\n"
        b"  labels = _messages.MessageField('LabelsValue', 3, repeated=True)\n" % (i, i)
        for i in range(100)
    )
    body = block * (size // len(block) + 1)
    return head + body[: size - len(head)].rsplit(b"\n\n\nclass", 1)[0] + b"\n"


def test_a_50_mb_file_is_reported_without_being_read_and_memory_stays_bounded(tmp_path):
    big = tmp_path / "big.py"
    data = generated_module(50 * 1024 * 1024)
    big.write_bytes(data)
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    for command in ("check", "fix"):
        code, out, rss, seconds = measured(command, "--no-cache", "--output-format", "concise", str(tmp_path))
        assert code == 1, out
        assert f"{big}:1:1: TU000 {big} is 50.0 MB, more than the 8 MB torchup reads in one file" in out
        assert "skipped" in out
        assert rss < PEAK_RSS_LIMIT, f"peak RSS {rss / 2**20:.0f} MiB"
        assert seconds < 60
    assert big.read_bytes() == data
    assert good.read_bytes() == GOOD_FIXED


def test_a_large_file_under_the_limit_is_fixed_in_bounded_memory(tmp_path):
    big = tmp_path / "big.py"
    data = generated_module(4 * 1024 * 1024)  # about the largest generated modules seen in the wild
    big.write_bytes(data)
    code, out, rss, seconds = measured("fix", "--no-cache", "--output-format", "concise", str(big))
    assert code == 0, out
    assert big.read_bytes() == data.replace(b"torch.cholesky(A)", b"torch.linalg.cholesky(A)", 1)
    print(f"fix of {len(data) / 2**20:.0f} MB: peak RSS {rss / 2**20:.0f} MiB, {seconds:.1f} s")
    assert rss < PEAK_RSS_LIMIT, f"peak RSS {rss / 2**20:.0f} MiB"
    assert seconds < 120


def test_the_size_limit_bounds_what_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_SOURCE_BYTES", 100)
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n" * 20)  # 120 bytes
    with pytest.raises(runner.NotASourceFile, match="skipped"):
        runner._read(str(path))
    path.write_bytes(b"x = 1\n" * 16)  # 96 bytes
    assert runner._read(str(path)) == b"x = 1\n" * 16


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="needs Linux's /proc")
def test_a_file_longer_than_its_size_says_is_read_whole(tmp_path, monkeypatch):
    """A file is read by the size its status gives, and a byte more: where more comes (a file that
    grew, or says it is empty, as those of /proc do), it is read on, up to the limit."""
    assert os.stat("/proc/self/status").st_size == 0
    assert b"Name:" in runner._read("/proc/self/status")
    monkeypatch.setattr(runner, "MAX_SOURCE_BYTES", 100)
    with pytest.raises(runner.NotASourceFile, match="skipped"):
        runner._read("/proc/self/maps")  # (longer than 100 bytes, of size 0)


NESTED = {
    # (source, expected message): each beyond what one part of the pipeline can take
    "parentheses": ("x = " + "(" * 5000 + "torch.cholesky(A)" + ")" * 5000, "too many nested parentheses"),
    "unary-minus": ("x = " + "-" * 100_000 + "torch.cholesky(A)", "the parser gave up: the code is nested too deeply"),
    "long-sum": ("x = torch.cholesky(A" + " + A" * 100_000 + ")", "the parser gave up: the code is nested too deeply"),
    "brackets": ("x = torch.qr(" + "[" * 1000 + "]" * 1000 + ")", "too many nested parentheses"),
}


@pytest.mark.parametrize(("body", "message"), NESTED.values(), ids=NESTED.keys())
def test_deep_nesting_is_reported_and_the_run_goes_on(tmp_path, body, message):
    deep = tmp_path / "deep.py"
    data = f"import torch\n{body}\n".encode()
    deep.write_bytes(data)
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    for args in (["check"], ["fix", "--unsafe-fixes"]):
        code, out = concise(*args, str(tmp_path))
        assert code == 1, out
        assert f"{deep}:" in out
        assert message in out
        assert deep.read_bytes() == data
    assert good.read_bytes() == GOOD_FIXED


@pytest.mark.parametrize("terms", [600, 2000])
def test_a_long_sum_the_parser_takes_is_checked_and_fixed(tmp_path, terms):
    """Generated code joins thousands of terms with `+`: as deep as CPython's parser goes, and
    deeper than Python recursion; the resolver and the safety check walk it without recursing."""
    path = tmp_path / "deep.py"
    path.write_bytes(f"import torch\nx = torch.cholesky(A{' + A' * terms})\ny = torch.qr(B){' + B' * terms}\n".encode())
    code, out = concise("check", str(path))
    assert code == 1 and out.count("TU101") == 1 and out.count("TU103") == 1, out
    code, out = concise("fix", str(path))
    fixed = path.read_text()
    assert fixed.startswith("import torch\nx = torch.linalg.cholesky(A + A") and "y = torch.linalg.qr(B) + B" in fixed, out


# -- line endings ----------------------------------------------------------------------------------

MIXED = {
    "each-line-its-own": (
        b"import torch\r\nL = torch.cholesky(A)\nQ = torch.qr(A)\rx = 1\r\ny = torch.cholesky(B, True)",
        b"import torch\r\nL = torch.linalg.cholesky(A)\nQ = torch.linalg.qr(A)\rx = 1\r\n"
        b"y = torch.linalg.cholesky(B, upper=True)",
    ),
    "inserted-import-uses-the-first-ending": (
        b"import os\r\nfrom torch import cholesky\nL = cholesky(A)\r\nz = 2\r",
        b"import os\r\nimport torch\r\nL = torch.linalg.cholesky(A)\r\nz = 2\r",
    ),
    "dropped-import-on-a-cr-line": (
        b"import torch\rimport os\rfrom torch import qr\rQ = qr(A)\r",
        b"import torch\rimport os\rQ = torch.linalg.qr(A)\r",
    ),
    "dropped-import-before-a-cr-line-keeps-the-next-line": (
        b"import os\nfrom torch import qr\rimportant = 1\nQ = qr(A)\n",
        b"import os\nimport torch\nimportant = 1\nQ = torch.linalg.qr(A)\n",
    ),
    "dropped-last-argument-keeps-crlf": (
        b"import torch\r\nwith torch.autograd.profiler.profile(\r\n    record_shapes=True,\r\n    use_cuda=False\r\n) as p:\r\n"
        b"    pass\r\n",
        b"import torch\r\nwith torch.autograd.profiler.profile(\r\n    record_shapes=True\r\n) as p:\r\n    pass\r\n",
    ),
    "dropped-argument-on-its-own-cr-line": (
        b"import torch\rwith torch.autograd.profiler.profile(\r    use_cuda=False,\r    record_shapes=True,\r) as p:\r"
        b"    pass\r",
        b"import torch\rwith torch.autograd.profiler.profile(\r    record_shapes=True,\r) as p:\r    pass\r",
    ),
}


@pytest.mark.parametrize(("before", "after"), MIXED.values(), ids=MIXED.keys())
def test_fix_keeps_each_lines_ending(tmp_path, before, after):
    path = tmp_path / "mixed.py"
    path.write_bytes(before)
    code, out = concise("fix", str(path))
    assert code == 0, out
    assert path.read_bytes() == after
    code, out = concise("fix", str(path))
    assert code == 0 and re.fullmatch(
        r"Support window: [^\n]*\.\nAll checks passed \(1 file checked(; 1 without a trigger word, not parsed)?\)\.\n", out
    )
    assert path.read_bytes() == after


# -- read-only files and directories -------------------------------------------------------------


def _setpriv_prefix() -> list[str] | None:
    """As root: run as nobody with only CAP_DAC_READ_SEARCH (reads anything, writes by the rules)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
              "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import os; print(os.geteuid())"],
                           capture_output=True, text=True, env=environment(), timeout=60)
    return prefix if probe.returncode == 0 and probe.stdout.strip() == "65534" else None


@contextlib.contextmanager
def unprivileged(root: Path) -> Iterator[tuple[list[str], str]]:
    """A way to run torchup on ``root`` where permissions hold: (command prefix, how).

    Not root: nothing to do. Root: ``setpriv`` to nobody (``root`` is handed to nobody), else a
    read-only bind mount of ``root`` (then every file in it is read-only, whatever its mode).
    """
    if os.geteuid() != 0:
        yield [], "unprivileged"
        return
    prefix = _setpriv_prefix()
    if prefix is not None:
        for path in [root, *root.rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
        yield prefix, "setpriv"
        return
    mount = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(root)], capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.fail(f"running as root without setpriv or a read-only bind mount: {mount.stderr}")
    try:
        yield [], "read-only mount"
    finally:
        subprocess.run(["umount", str(root)], check=True)


def test_a_read_only_file_is_reported_not_rewritten():
    # Not under tmp_path: its parents are private to root, and access(2) ignores capabilities.
    base = Path(tempfile.mkdtemp(prefix="torchup-read-only-"))
    try:
        base.chmod(0o755)
        check_read_only_tree(base / "tree")
    finally:
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base)


def check_read_only_tree(root: Path) -> None:
    root.mkdir()
    good = root / "good.py"
    good.write_bytes(GOOD)
    frozen = root / "frozen.py"
    frozen.write_bytes(CHOLESKY.encode())
    frozen.chmod(0o444)
    shut = root / "shut"  # a directory nothing can be created in: the temporary file cannot be made
    shut.mkdir()
    inner = shut / "inner.py"
    inner.write_bytes(CHOLESKY.encode())
    shut.chmod(0o555)
    with unprivileged(root) as (prefix, how):
        code, out = concise("fix", str(root), prefix=prefix)
        check_code, check_out = concise("check", str(root), prefix=prefix)
    assert code == 1, out
    assert f"{frozen}:1:1: TU000 cannot write the fixed {frozen}: the file is read-only; the file was left as it was" \
        in out, how
    assert frozen.read_bytes() == CHOLESKY.encode()
    assert stat.S_IMODE(frozen.stat().st_mode) == 0o444
    assert inner.read_bytes() == CHOLESKY.encode()
    assert temporaries(root) == []
    if how == "read-only mount":  # nothing is writable there
        assert f"{good}:1:1: TU000 cannot write the fixed {good}: the file is not writable" in out
    else:
        assert f"{inner}:1:1: TU000 cannot write the fixed {inner}: Permission denied; the file was left as it was" \
            in out, how
        assert good.read_bytes() == GOOD_FIXED
    # Reading needs no write permission: check reports the findings as usual.
    assert check_code == 1
    assert f"{frozen}:2:5: TU101" in check_out
    assert f"{inner}:2:5: TU101" in check_out


# -- links, FIFOs, devices, directories named like files ----------------------------------------


def test_a_symlink_out_of_the_tree_is_not_followed_unless_asked(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    theirs = outside / "theirs.py"
    theirs.write_bytes(GOOD)
    (outside / "pkg.py").write_bytes(GOOD)
    (tree / "link.py").symlink_to(theirs)
    (tree / "linked_dir").symlink_to(outside)
    inside = tree / "real.py"
    inside.write_bytes(GOOD)
    (tree / "alias.py").symlink_to("real.py")  # a link that stays in the tree: followed (and counted once)

    code, out = concise("fix", str(tree))
    assert code == 0, out
    assert theirs.read_bytes() == GOOD
    assert (outside / "pkg.py").read_bytes() == GOOD
    assert inside.read_bytes() == GOOD_FIXED
    assert (tree / "link.py").is_symlink()
    assert "link.py" not in out and "theirs.py" not in out

    code, out = concise("check", "--follow-links", str(tree))
    assert code == 1
    # theirs.py through link.py (linked_dir/theirs.py is the same file: counted once), linked_dir/pkg.py
    assert out.count(": TU103") == 2, out
    assert f"{tree / 'linked_dir' / 'pkg.py'}:2:8: TU103" in out

    code, out = concise("fix", "--follow-links", str(tree))
    assert code == 0
    assert theirs.read_bytes() == GOOD_FIXED
    assert (outside / "pkg.py").read_bytes() == GOOD_FIXED
    assert (tree / "link.py").is_symlink()


def test_a_symlink_named_on_the_command_line_is_followed(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_bytes(GOOD)
    link = tmp_path / "tree" / "link.py"
    link.parent.mkdir()
    link.symlink_to(outside)
    code, _ = concise("fix", str(link))
    assert code == 0
    assert outside.read_bytes() == GOOD_FIXED


def test_follow_links_does_not_loop(tmp_path):
    (tmp_path / "good.py").write_bytes(GOOD)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "up").symlink_to("..")
    (sub / "self").symlink_to(".")
    code, out = concise("check", "--follow-links", str(tmp_path), timeout=60)
    assert code == 1
    assert out.count("TU103") == 1


@pytest.fixture
def specials(tmp_path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    null = tmp_path / "null.py"
    null.symlink_to(os.devnull)
    zero = tmp_path / "zero.py"
    zero.symlink_to("/dev/zero")  # endless: reading it would never stop
    fifo_notebook = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo_notebook)
    return {"fifo": fifo, "null": null, "zero": zero, "fifo-notebook": fifo_notebook}


def test_fifos_and_devices_in_a_walked_directory_are_passed_over(tmp_path, specials):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    for args in (["check"], ["fix"]):
        code, out = concise(*args, str(tmp_path), timeout=60)
        assert code == (1 if args == ["check"] else 0), out
        for path in specials.values():
            assert path.name not in out
    assert good.read_bytes() == GOOD_FIXED


KINDS = {"fifo": "a FIFO (named pipe)", "null": "a character device", "zero": "a character device",
         "fifo-notebook": "a FIFO (named pipe)"}


@pytest.mark.parametrize("name", KINDS)
def test_a_fifo_or_device_named_on_the_command_line_is_reported_without_hanging(tmp_path, specials, name):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    path = specials[name]
    for args in (["check"], ["fix"]):
        started = time.monotonic()
        code, out = concise(*args, str(path), str(good), timeout=60)
        assert time.monotonic() - started < 30
        assert code == 1, out
        assert f"{path}:1:1: TU000 {path} is {KINDS[name]}, not a source file; skipped" in out
    assert good.read_bytes() == GOOD_FIXED
    code, out = concise("check", str(path), timeout=60)
    assert code == 2  # nothing could be read
    with_cache = torchup("check", "--output-format", "concise", str(path), timeout=60)
    assert with_cache[0] == 2


def test_fix_over_a_directory_named_like_a_source_file(tmp_path):
    directory = tmp_path / "x.py"
    directory.mkdir()
    inner = directory / "inner.py"
    inner.write_bytes(GOOD)
    notebook_dir = tmp_path / "nb.ipynb"
    notebook_dir.mkdir()
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    code, out = concise("fix", str(tmp_path))
    assert code == 0, out
    assert inner.read_bytes() == GOOD_FIXED
    assert good.read_bytes() == GOOD_FIXED
    inner.write_bytes(GOOD)
    code, out = concise("fix", str(directory), str(notebook_dir))
    assert code == 0, out
    assert inner.read_bytes() == GOOD_FIXED
    assert directory.is_dir() and notebook_dir.is_dir()


# -- everything at once; --verbose ----------------------------------------------------------------


def test_a_tree_of_hostile_files_is_checked_and_fixed_in_one_run(tmp_path, specials):
    files = {
        "good.py": GOOD,
        "utf16.py": CHOLESKY.encode("utf-16"),
        "invalid_utf8.py": b"import torch\nL = torch.cholesky(A)  # \xc3\x28\n",
        "nul.py": b"import torch\nL = torch.cholesky(A)\x00\n",
        "latin1.py": b"# coding: latin-1\nimport torch\n\xe9 = torch.cholesky(A)\n",
        "deep.py": ("import torch\nx = torch.cholesky(A" + " + A" * 100_000 + ")\n").encode(),
        "py2.py": b"import torch\nprint 'x', torch.cholesky(A)\n",
        "mixed.py": b"import torch\r\nL = torch.cholesky(A)\nQ = torch.qr(A)\r",
        "big.py": generated_module(20 * 1024 * 1024),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "dir.py").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_bytes(GOOD)
    (tmp_path / "out.py").symlink_to(outside)
    try:
        code, out = concise("fix", "--diff", str(tmp_path), timeout=180)
        assert code == 1, out
        assert all((tmp_path / name).read_bytes() == data for name, data in files.items())
        for args in (["check"], ["fix", "--unsafe-fixes"], ["check", "--jobs", "2"]):
            code, out = concise(*args, str(tmp_path), timeout=180)
            assert code == 1, out
            for name in ("utf16.py", "invalid_utf8.py", "nul.py", "deep.py", "py2.py", "big.py"):
                assert f"{tmp_path / name}:" in out, (name, out)
        fixed = {name: (tmp_path / name).read_bytes() for name in files}
        assert fixed["good.py"] == GOOD_FIXED
        assert fixed["latin1.py"] == b"# coding: latin-1\nimport torch\n\xe9 = torch.linalg.cholesky(A)\n"
        assert fixed["mixed.py"] == b"import torch\r\nL = torch.linalg.cholesky(A)\nQ = torch.linalg.qr(A)\r"
        for name in ("utf16.py", "invalid_utf8.py", "nul.py", "deep.py", "py2.py", "big.py"):
            assert fixed[name] == files[name], name
        assert outside.read_bytes() == GOOD
        assert temporaries(tmp_path) == []
    finally:
        outside.unlink()


# Makes the checker fail on files that mention BOOM: a bug in a rule, as far as the run can tell.
CRASHING = (
    "import sys\n"
    "from torchup.check import checker\n"
    "_analyze = checker.Checker.analyze\n"
    "def analyze(self, source, *rest):\n"
    "    if 'BOOM' in source.text:\n"
    "        raise RuntimeError('boom')\n"
    "    return _analyze(self, source, *rest)\n"
    "checker.Checker.analyze = analyze\n"
    "from torchup.cli.main import main\n"
    "sys.exit(main())\n"
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_internal_error_is_a_message_by_default_and_a_traceback_with_verbose(tmp_path, jobs):
    for index in range(8):  # enough files for worker processes with --jobs 2
        (tmp_path / f"good{index}.py").write_bytes(GOOD)
    crash = tmp_path / "crash.py"
    crash.write_bytes(b"import torch\nL = torch.cholesky(A)  # BOOM\n")
    for verbose in ([], ["--verbose"]):
        for name in (f"good{index}.py" for index in range(8)):
            (tmp_path / name).write_bytes(GOOD)
        result = subprocess.run(
            [sys.executable, "-c", CRASHING, "fix", "--no-cache", "--jobs", jobs, "--output-format", "concise",
             *verbose, str(tmp_path)],
            cwd=REPO_ROOT, env=environment(), capture_output=True, text=True, timeout=120,
        )
        output = result.stdout + result.stderr
        assert result.returncode == 1, output
        assert f"{crash}:1:1: TU000 internal error while checking {crash}: RuntimeError: boom; the file was left " \
               "unchanged" in output
        assert "--verbose shows the traceback" in output
        assert ("Traceback" in result.stderr) == bool(verbose), output
        assert crash.read_bytes() == b"import torch\nL = torch.cholesky(A)  # BOOM\n"
        assert all((tmp_path / f"good{index}.py").read_bytes() == GOOD_FIXED for index in range(8))


def test_deep_chains_python_parses_are_checked_or_said_to_be_skipped() -> None:
    """Conditional-expression and attribute chains as deep as CPython parses them: the resolver
    walks them without recursing; what still recurses too deep is a TU000 finding, never an
    exception, in the library API as in the CLI."""
    import torchup

    chain = " if c else ".join(f"x{i}" for i in range(900))
    assert [f.code for f in torchup.check_source(f"import torch\nq = torch.qr(a)\ny = {chain}\n")] == ["TU103"]
    attributes = "import torch\nq = torch.qr(a)\ny = x" + ".a" * 900 + "\n"
    assert [f.code for f in torchup.check_source(attributes)] == ["TU103"]
    deep_reference = "import torch\nq = torch" + ".linalg" * 1400 + ".qr(a)\n"
    assert [f.code for f in torchup.check_source(deep_reference)] in (["TU000"], ["TU001"])
