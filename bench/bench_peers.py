"""Time ``torchup check`` against its peers on the same files: ruff (one rule), TorchFix 0.7.0 and grep.

This is a benchmark, not a test. One command times, on the same staged copy of each corpus:

- ``torchup check`` cold (``--no-cache``), with the default ``--jobs`` (CPU count) and with ``--jobs 1``;
- ``torchup check`` warm (a second run over the unchanged tree, with the cache filled);
- ``ruff check --select NPY201 --no-cache`` (one rule: the speed reference for a fast linter);
- ``grep -rlwE`` over torchup's trigger words (the floor: reading the bytes);
- TorchFix 0.7.0 (installed by this script into its own venv) on a fixed, deterministic sample of files,
  with ``torchup check`` timed on the same sample;
- 1x, 2x and 4x copies of the corpus (how time grows), and ``torchup --version`` (start-up).

torchup runs as a user has it: installed (``pip install``, not editable) from this checkout into a
venv of its own, made by this script and refreshed on every run. So every torchup row pays the
start-up of a plain venv, not whatever ``.pth`` files the harness's interpreter carries (on the
machine these figures come from, its site-packages import ``certifi`` at every start: about 30 ms).
``--in-place`` runs the checkout with the harness's own interpreter instead.

    python3 bench/bench_peers.py                    # torch 2.14.1 and transformers, 3 runs each
    python3 bench/bench_peers.py --write-results    # also append a dated section to bench/RESULTS.md
    python3 bench/bench_peers.py --runs 1 --corpora torch --scale none --torchfix-lines 5000   # quick look

Only the standard library is used by the harness itself. Flags that torchup lacks (``--no-cache``,
``--jobs``) are detected from ``torchup check --help`` and the affected rows say so.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import bench_check as bc  # noqa: E402  (shared helpers: corpus walk, GNU time, machine description)

RESULTS_FILE = BENCH_DIR / "RESULTS.md"
CACHE_ROOT = Path(os.environ.get("TORCHUP_BENCH_CACHE", Path.home() / ".cache" / "torchup" / "bench"))
TORCHFIX_VERSION = "0.7.0"
CACHE_DIR_NAME = ".torchup_cache"
TREE_SETTLE_SECONDS = 2.5  # torchup.run.replay.SETTLE_SECONDS (2 s), and a little more
RSS_POLL_SECONDS = 0.05
SOURCE_SUFFIXES = (".py", ".pyi")
MIB = 1024 * 1024
# The targets of issue 6.
TARGET_TORCHFIX_RATIO = 30.0
TARGET_WARM_FRACTION = 0.10
TARGET_RSS_MB = 300  # decimal megabytes
TARGET_VERSION_SECONDS = 0.100
TARGET_GROWTH_EXPONENT = 1.10  # t(4x)/t(1x) = 4**exponent; 1.0 is linear, start-up pulls it below 1


class BenchError(Exception):
    """Something the benchmark cannot go on without: no torch, no network for the downloads, ..."""


# --------------------------------------------------------------------------- running one command


@dataclass(frozen=True)
class Sample:
    seconds: float
    cpu_seconds: float
    max_rss_kib: int  # largest single process (GNU time %M)
    tree_pss_kib: int  # sampled sum over the process tree (0: not sampled)
    returncode: int
    stdout: str
    stderr: str


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            pass
    return found


def _memory_kib(pid: int) -> int:
    """PSS of ``pid`` (pages shared between forked workers counted once overall), else RSS."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


class TreeSampler(threading.Thread):
    """Polls the memory of every process under ``root`` (not ``root`` itself when it is GNU time)."""

    def __init__(self, root: int, *, include_root: bool) -> None:
        super().__init__(daemon=True)
        self.root, self.include_root = root, include_root
        self.peak_kib = 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(RSS_POLL_SECONDS):
            pending, total, seen = _children(self.root), 0, set()
            if self.include_root:
                total += _memory_kib(self.root)
            while pending:
                pid = pending.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                total += _memory_kib(pid)
                pending.extend(_children(pid))
            self.peak_kib = max(self.peak_kib, total)


TREE_SAMPLING = os.path.isdir("/proc/self/task")


def run_once(command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> Sample:
    with (
        tempfile.TemporaryFile("w+", errors="replace") as out,
        tempfile.TemporaryFile("w+", errors="replace") as err,
        tempfile.NamedTemporaryFile("r", suffix=".rss") as rss,
    ):
        wrapped = [bc.GNU_TIME, "-f", "%M", "-o", rss.name, *command] if bc.GNU_TIME else list(command)
        start = time.perf_counter()
        child = subprocess.Popen(wrapped, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        sampler = None
        if TREE_SAMPLING:
            sampler = TreeSampler(child.pid, include_root=bc.GNU_TIME is None)
            sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        if sampler is not None:
            sampler.halt.set()
            sampler.join()
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Sample(
            seconds,
            usage.ru_utime + usage.ru_stime,
            bc.peak_rss_kib(rss.read(), usage.ru_maxrss),
            sampler.peak_kib if sampler is not None else 0,
            child.returncode,
            out.read(),
            err.read(),
        )


@dataclass
class Series:
    label: str
    command: list[str]
    lines: int
    files: int
    samples: list[Sample] = field(default_factory=list)
    failure: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.samples) and not self.failure

    @property
    def median(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def best(self) -> float:
        return min(s.seconds for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu_seconds for s in self.samples)

    @property
    def rss_mib(self) -> float:
        return max(s.max_rss_kib for s in self.samples) / 1024

    @property
    def tree_mib(self) -> float:
        return max(s.tree_pss_kib for s in self.samples) / 1024


@dataclass
class Tool:
    """How to run and judge one kind of command."""

    name: str
    env: dict[str, str]
    ok_codes: tuple[int, ...]
    # exit 1 counts as "findings" only with something on stdout (python -m fails with exit 1 too)
    needs_stdout_for_1: bool = False
    before: Callable[[], None] | None = None  # e.g. drop torchup's cache before a cold run

    def judge(self, sample: Sample) -> str:
        if sample.returncode in self.ok_codes:
            if sample.returncode == 1 and self.needs_stdout_for_1 and not sample.stdout.strip():
                return f"exit 1 with nothing on stdout; stderr:\n{sample.stderr.rstrip()}"
            return ""
        return f"exit {sample.returncode}; stderr:\n{sample.stderr.rstrip()[-4000:]}"


def timed(series: Series, tool: Tool, cwd: Path) -> None:
    """One timed run of ``series``; a failed run marks the series failed (its figures are then not used)."""
    if series.failure:
        return
    if tool.before is not None:
        tool.before()
    sample = run_once(series.command, cwd=cwd, env=tool.env)
    problem = tool.judge(sample)
    series.samples.append(sample)
    if problem:
        series.failure = problem
    log(f"  {series.label}: {sample.seconds:.2f} s{'  FAILED' if problem else ''}")


def busy_seconds() -> tuple[float, float]:
    """(CPU seconds the whole machine has been busy, CPU seconds this process and its children used)."""
    import resource

    own = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(value) for value in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return float("nan"), own
    busy = sum(fields[:3]) + sum(fields[5:8])  # user nice system + irq softirq steal (not idle, iowait)
    return busy / os.sysconf("SC_CLK_TCK"), own


def other_work(start: tuple[float, float], wall: float) -> tuple[str, float]:
    """How much CPU other processes took while the benchmark ran, and that as a share of the machine."""
    end = busy_seconds()
    other = max((end[0] - start[0]) - (end[1] - start[1]), 0.0)
    if math.isnan(other):
        return "unknown", 0.0
    cores = os.cpu_count() or 1
    share = other / (wall * cores)
    return f"{other:.0f} CPU-s over the {wall:.0f} s run ({share:.0%} of {cores} cores)", share


OTHER_WORK_WARNING = 0.10  # a share of the machine above which the report warns that its times are noisy


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- corpora


@dataclass
class Corpus:
    key: str
    title: str  # "torch 2.14.1+cu130"
    origin: Path
    files: list[str]  # relative paths, sorted
    lines: int
    size: int
    copies: list[Path] = field(default_factory=list)  # staged copies; copy 0 is byte-identical to origin
    staged_at: float = 0.0  # when the last copy was written (time.time())
    copy_lines: list[int] = field(default_factory=list)

    def paths(self, scale: int) -> list[str]:
        return [str(copy) for copy in self.copies[:scale]]

    def lines_at(self, scale: int) -> int:
        return sum(self.copy_lines[:scale])


def list_sources(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in bc.iter_sources(root))


def load_corpus(key: str, title: str, origin: Path) -> Corpus:
    files = list_sources(origin)
    lines = size = 0
    for name in files:
        raw = (origin / name).read_bytes()
        lines += bc.count_lines(raw)
        size += len(raw)
    if not files:
        raise BenchError(f"no .py/.pyi files under {origin}")
    return Corpus(key, title, origin, files, lines, size)


def stage(corpus: Corpus, work: Path, copies: int) -> None:
    """Real copies (not links) of the corpus's sources under ``work``. Copies after the first get one
    comment line appended to every file, so no content-keyed cache can recognise a file of another copy."""
    while len(corpus.copies) < copies:
        index = len(corpus.copies)
        root = work / corpus.key / f"copy{index}"
        lines = 0
        for name in corpus.files:
            raw = (corpus.origin / name).read_bytes()
            if index:
                raw += (b"" if not raw or raw.endswith(b"\n") else b"\n") + f"# torchup bench copy {index}\n".encode()
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
            lines += bc.count_lines(raw)
        corpus.copies.append(root)
        corpus.copy_lines.append(lines)
    corpus.staged_at = time.time()


def torch_corpus(torch_python: str | None) -> Corpus:
    origin = bc.locate_torch(bc.find_torch_python(torch_python)).resolve()
    return load_corpus("torch", f"torch {bc.torch_version(origin)}", origin)


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.name.partition("-")[2]))


def transformers_corpus(version: str | None) -> Corpus:
    """transformers' sources from the package index's wheel, unpacked once into the bench cache."""
    corpora = CACHE_ROOT / "corpora"
    if version:
        candidates = [corpora / f"transformers-{version}"]
    else:
        candidates = sorted(corpora.glob("transformers-*"), key=_version_key, reverse=True)
    ready = [path for path in candidates if (path / ".complete").exists()]
    if not ready:
        downloads = CACHE_ROOT / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        requirement = f"transformers=={version}" if version else "transformers"
        log(f"downloading {requirement} (wheel only, no dependencies) ...")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", requirement]
        done = subprocess.run([*command, "-d", str(downloads)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BenchError(f"pip download {requirement} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        pattern = f"transformers-{version}-*.whl" if version else "transformers-*.whl"
        wheels = sorted(downloads.glob(pattern), key=lambda p: _version_key(Path(p.name.replace("-py3", ""))))
        saved = re.findall(r"(?:Saved|File was already downloaded) (\S+\.whl)", done.stdout)
        wheel = Path(saved[-1]) if saved else (wheels[-1] if wheels else None)
        if wheel is None or not wheel.exists():
            raise BenchError(f"pip download printed no wheel:\n{done.stdout[-2000:]}")
        wheel_version = wheel.name.split("-")[1]
        target = corpora / f"transformers-{wheel_version}"
        if not (target / ".complete").exists():
            shutil.rmtree(target, ignore_errors=True)
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.infolist():
                    if member.filename.startswith("transformers/") and member.filename.endswith(SOURCE_SUFFIXES):
                        archive.extract(member, target)
            (target / ".complete").write_text(wheel.name + "\n", encoding="utf-8")
        ready = [target]
    root = ready[0]
    return load_corpus("transformers", root.name.replace("-", " ", 1), root / "transformers")


# --------------------------------------------------------------------------- tools


@dataclass
class TorchupFeatures:
    help_text: str
    no_cache: bool
    jobs: bool
    isolated: bool
    clean: bool

    def describe(self) -> str:
        flags = [
            f"`{flag}` {'yes' if have else 'no'}"
            for flag, have in (
                ("--no-cache", self.no_cache),
                ("--jobs", self.jobs),
                ("--isolated", self.isolated),
                ("torchup clean", self.clean),
            )
        ]
        return ", ".join(flags)


# The interpreter that runs torchup (``ensure_torchup``): a venv's, or the harness's with --in-place.
TORCHUP_PYTHON = sys.executable
IN_PLACE = True


def torchup_env() -> dict[str, str]:
    if IN_PLACE:
        return bc.torchup_env(REPO_ROOT)
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def ensure_torchup(venv: Path) -> str:
    """Install this checkout into ``venv`` (made once), as ``pip install`` would for a user; return
    what to say of it. Every later torchup command runs that venv's interpreter."""
    global TORCHUP_PYTHON, IN_PLACE
    python = venv / "bin" / "python"
    if not python.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise BenchError(f"python -m venv {venv} failed:\n{made.stderr}")
    log(f"installing torchup from {REPO_ROOT} into {venv} ...")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(REPO_ROOT)],
        capture_output=True,
        text=True,
        check=False,
        env={name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
    )
    where = subprocess.run(
        [str(python), "-c", "import torchup; print(torchup.__file__)"],
        capture_output=True,
        text=True,
        cwd=venv,
        env={name: value for name, value in os.environ.items() if name != "PYTHONPATH"},
        check=False,
    ).stdout.strip()
    if done.returncode != 0 or not where.startswith(str(venv)):
        raise BenchError(f"pip install {REPO_ROOT} into {venv} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    TORCHUP_PYTHON, IN_PLACE = str(python), False
    return f"installed by pip (not editable) into {venv}"


def detect_features() -> TorchupFeatures:
    env = torchup_env()
    check = subprocess.run(
        [TORCHUP_PYTHON, "-m", "torchup", "check", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        check=False,
    )
    if check.returncode != 0:
        raise BenchError(f"`torchup check --help` failed (exit {check.returncode}):\n{check.stderr}")
    top = subprocess.run(
        [TORCHUP_PYTHON, "-m", "torchup", "--help"], capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=False
    ).stdout
    text = check.stdout
    return TorchupFeatures(
        text,
        "--no-cache" in text,
        re.search(r"--jobs\b", text) is not None,
        "--isolated" in text,
        re.search(r"^\s+clean\b", top, re.MULTILINE) is not None,
    )


def torchup_command(
    paths: Sequence[str], features: TorchupFeatures, *, jobs: int | None = None, cold: bool = True, quiet: bool = True
) -> list[str]:
    command = [TORCHUP_PYTHON, "-m", "torchup", "check", "--output-format", "concise"]
    if quiet:
        command.append("--quiet")
    command.append("--no-respect-gitignore")
    if features.isolated:
        command.append("--isolated")
    if jobs is not None and features.jobs:
        command += ["--jobs", str(jobs)]
    if cold and features.no_cache:
        command.append("--no-cache")
    return [*command, *paths]


def find_caches(work: Path) -> list[Path]:
    found = []
    for directory, subdirectories, _ in os.walk(work):
        if CACHE_DIR_NAME in subdirectories:
            found.append(Path(directory, CACHE_DIR_NAME))
        subdirectories[:] = [d for d in subdirectories if d != CACHE_DIR_NAME]
    return found


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def find_ruff() -> tuple[list[str] | None, str]:
    """ruff's binary (the one `python -m ruff` would exec), else `ruff` on PATH."""
    done = subprocess.run(
        [sys.executable, "-c", "from ruff.__main__ import find_ruff_bin; print(find_ruff_bin())"],
        capture_output=True,
        text=True,
        check=False,
    )
    binary = done.stdout.strip() if done.returncode == 0 else shutil.which("ruff")
    if not binary:
        return None, "not installed (`pip install ruff`; it is in torchup's test extras)"
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return [binary], f"{version} ({binary})"


def ruff_command(ruff: list[str], paths: Sequence[str]) -> list[str]:
    return [
        *ruff,
        "check",
        "--select",
        "NPY201",
        "--no-cache",
        "--isolated",
        "--no-respect-gitignore",
        "--output-format",
        "concise",
        *paths,
    ]


def ensure_torchfix(venv: Path) -> tuple[Path, str]:
    """TorchFix ``TORCHFIX_VERSION`` in its own venv (made once, then reused)."""
    exe = venv / "bin" / "torchfix"
    python = venv / "bin" / "python"

    def installed() -> str:
        if not exe.exists():
            return ""
        done = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False)
        return done.stdout.strip()

    if installed() != TORCHFIX_VERSION:
        log(f"installing torchfix=={TORCHFIX_VERSION} into {venv} ...")
        if not python.exists():
            made = subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, check=False
            )
            if made.returncode != 0:
                raise BenchError(f"python -m venv {venv} failed:\n{made.stderr}")
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"torchfix=={TORCHFIX_VERSION}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or installed() != TORCHFIX_VERSION:
            raise BenchError(
                f"pip install torchfix=={TORCHFIX_VERSION} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
    libcst = subprocess.run([str(python), "-m", "pip", "show", "libcst"], capture_output=True, text=True, check=False)
    match = re.search(r"^Version: (\S+)", libcst.stdout, re.MULTILINE)
    return exe, f"{TORCHFIX_VERSION} (libcst {match.group(1) if match else '?'}, {venv})"


def torchfix_sample(corpus: Corpus, target_lines: int) -> tuple[list[str], int, int]:
    """Every Nth ``.py`` file of copy 0, sorted by path, N chosen so the sample has about ``target_lines``.
    (TorchFix skips ``.pyi`` files found in directories, so the sample has none.)"""
    py = [name for name in corpus.files if name.endswith(".py")]
    counts = {name: bc.count_lines((corpus.origin / name).read_bytes()) for name in py}
    stride = max(1, math.ceil(sum(counts.values()) / max(target_lines, 1)))
    chosen = py[::stride]
    return [str(corpus.copies[0] / name) for name in chosen], sum(counts[name] for name in chosen), stride


# --------------------------------------------------------------------------- per-corpus benchmark


CONCISE = re.compile(r"^.+?:\d+:\d+: ([A-Z]+[0-9]+)\b", re.MULTILINE)


@dataclass
class CorpusResult:
    corpus: Corpus
    main: dict[str, Series] = field(default_factory=dict)
    sample: dict[str, Series] = field(default_factory=dict)
    sample_files: int = 0
    sample_lines: int = 0
    sample_stride: int = 0
    scaling: dict[int, dict[str, Series]] = field(default_factory=dict)
    facts: list[str] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    cache_note: str = ""


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.features = detect_features()
        self.ruff, self.ruff_version = (None, "skipped (--no-ruff)") if args.no_ruff else find_ruff()
        self.torchfix: Path | None = None
        self.torchfix_version = "skipped (--no-torchfix)"
        if not args.no_torchfix:
            self.torchfix, self.torchfix_version = ensure_torchfix(args.torchfix_venv)
        self.pattern, self.pattern_origin = bc.trigger_pattern(REPO_ROOT)
        self.cwd = work / "cwd"  # torchup keeps .torchup_cache in the directory it runs from
        self.cwd.mkdir()
        self.torchup_cold = Tool(
            "torchup",
            torchup_env(),
            (0, 1),
            needs_stdout_for_1=True,
            before=None if self.features.no_cache else self.drop_caches,
        )
        self.torchup_warm = Tool("torchup", torchup_env(), (0, 1), needs_stdout_for_1=True)
        self.ruff_tool = Tool("ruff", dict(os.environ), (0, 1))
        self.grep_tool = Tool("grep", {**os.environ, "LC_ALL": "C"}, (0, 1))
        self.torchfix_tool = Tool("torchfix", {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, (0,))
        self.loads: list[str] = []
        self.busy_start = busy_seconds()
        self.torchup_install = "run in place from the checkout"

    def drop_caches(self) -> None:
        for cache in find_caches(self.work):
            shutil.rmtree(cache, ignore_errors=True)

    def note_load(self, when: str) -> None:
        self.loads.append(f"{when}: {bc.load_average()}")

    # ---------------------------------------------------------------- 1x: all tools, same files

    def run_corpus(self, corpus: Corpus, scale_it: bool) -> CorpusResult:
        result = CorpusResult(corpus)
        stage(corpus, self.work, 4 if scale_it else 1)
        self.note_load(f"before {corpus.key}")
        paths, lines, files = corpus.paths(1), corpus.lines_at(1), len(corpus.files)
        runs = self.args.runs
        self.prepare(result, paths)

        jobs_note = "" if self.features.jobs else "no `--jobs` flag: torchup runs in one process"
        cold = Series(
            "torchup check, cold",
            torchup_command(paths, self.features),
            lines,
            files,
        )
        cold.note = f"default `--jobs`, {os.cpu_count()} here" if self.features.jobs else jobs_note
        series = [(cold, self.torchup_cold)]
        if self.features.jobs:
            single = Series(
                "torchup check, cold, --jobs 1", torchup_command(paths, self.features, jobs=1), lines, files
            )
            series.append((single, self.torchup_cold))
        warm = Series("torchup check, warm", torchup_command(paths, self.features, cold=False), lines, files)
        series.append((warm, self.torchup_warm))
        if self.ruff:
            series.append(
                (Series("ruff check --select NPY201", ruff_command(self.ruff, paths), lines, files), self.ruff_tool)
            )
        grep = Series("grep -rlwE (floor)", bc.grep_command(Path(paths[0]), self.pattern), lines, files)
        series.append((grep, self.grep_tool))

        result.cache_note = self.fill_cache(result, warm)
        log(f"{corpus.key} 1x: {runs} rounds")
        for _ in range(runs):  # rounds, so drifting load hits every tool alike
            for one, tool in series:  # without --no-cache, a cold run drops the cache and refills it
                timed(one, tool, self.cwd)
        result.main = {one.label: one for one, _ in series}
        if self.torchfix:
            self.run_sample(result)
        if scale_it:
            self.run_scaling(result, cold, grep)
        self.note_load(f"after {corpus.key}")
        for one in [
            *result.main.values(),
            *result.sample.values(),
            *(s for table in result.scaling.values() for s in table.values()),
        ]:
            if one.failure:
                result.anomalies.append(
                    f"{one.label} failed: `{shlex.join(one.command[:12])} ...`\n\n```\n{one.failure}\n```"
                )
        return result

    def prepare(self, result: CorpusResult, paths: list[str]) -> None:
        """Untimed: what each tool sees (file counts, findings), and a warm page cache for all of them."""
        corpus = result.corpus
        result.facts.append(
            f"files staged: {len(corpus.files):,} .py/.pyi files, {corpus.lines:,} lines, "
            f"{corpus.size / MIB:.1f} MiB, copied from `{corpus.origin}` to `{corpus.copies[0]}`"
        )
        command = torchup_command(paths, self.features, quiet=False)
        done = run_once(command, cwd=self.cwd, env=torchup_env())
        problem = self.torchup_cold.judge(done)
        if problem:
            result.anomalies.append(f"untimed `torchup check` (summary run) failed:\n\n```\n{problem}\n```")
        summary = done.stdout.rstrip().splitlines()[-1] if done.stdout.strip() else ""
        codes = Counter(CONCISE.findall(done.stdout))
        checked = re.search(r"(\d+) files? checked", summary)
        result.facts.append(
            f"torchup: {checked.group(1) if checked else '?'} files checked, {sum(codes.values())} findings"
            f"{' (' + ', '.join(f'{c} {n}' for c, n in sorted(codes.items())) + ')' if codes else ''}; "
            f"summary `{summary.strip()}`"
        )
        if done.stderr.strip():
            result.anomalies.append(f"torchup wrote to stderr (untimed summary run):\n\n```\n{tail(done.stderr)}\n```")
        if self.ruff:
            shown = run_once([*ruff_command(self.ruff, paths), "--show-files"], cwd=self.cwd, env=self.ruff_tool.env)
            count = len([line for line in shown.stdout.splitlines() if line.strip()])
            result.facts.append(
                f"ruff: {count:,} files (`--show-files`)"
                + ("" if count == len(corpus.files) else f" -- NOT the {len(corpus.files):,} staged")
            )
            first = run_once(ruff_command(self.ruff, paths), cwd=self.cwd, env=self.ruff_tool.env)
            findings = len(CONCISE.findall(first.stdout))
            warnings = [line.replace("`", "'") for line in first.stderr.splitlines() if line.strip()]
            result.facts.append(
                f"ruff NPY201 findings: {findings}; ruff wrote {len(warnings)} lines to stderr"
                + (f' (first: "{warnings[0][:200]}")' if warnings else "")
            )
            if first.returncode not in (0, 1):
                result.anomalies.append(f"ruff exited {first.returncode}:\n\n```\n{tail(first.stderr)}\n```")
        matched = run_once(bc.grep_command(Path(paths[0]), self.pattern), cwd=self.cwd, env=self.grep_tool.env)
        result.facts.append(
            f"grep: {len(matched.stdout.splitlines()):,} files mention a trigger word "
            "(the candidates torchup's pre-filter passes on to a full parse)"
        )

    def fill_cache(self, result: CorpusResult, warm: Series) -> str:
        """Fill torchup's cache for the warm runs (untimed) and say where it went."""
        self.drop_caches()
        # torchup records no run to replay over files changed in the seconds before it (their
        # timestamps could hide a second change): a user's tree is older, a copy staged just now not.
        time.sleep(max(0.0, result.corpus.staged_at + TREE_SETTLE_SECONDS - time.time()))
        done = run_once(warm.command, cwd=self.cwd, env=torchup_env())
        if self.torchup_warm.judge(done):
            return "the run that fills the cache failed (see anomalies)"
        caches = find_caches(self.work)
        if not caches:
            return (
                "no `.torchup_cache` appeared: this torchup has no cache, so the warm rows are plain repeat runs"
                if not self.features.no_cache
                else "`--no-cache` exists but no `.torchup_cache` appeared under the directory torchup ran from"
            )
        where = ", ".join(f"`{c}` ({tree_size(c) / MIB:.1f} MiB)" for c in caches)
        how = "use `--no-cache`" if self.features.no_cache else "start after every `.torchup_cache` is deleted"
        saved = sum(len(list(c.glob("*/runs/*.bin"))) for c in caches)
        replay = (
            f"it saved {saved} run(s) to replay, so the warm rows time a replay (the status of every file "
            "compared, the report printed again)"
            if saved
            else "it saved no run to replay, so the warm rows time a run over the findings cache"
        )
        return f"cache filled by an untimed run: {where}; {replay}; cold runs {how}"

    # ---------------------------------------------------------------- TorchFix on a sample

    def run_sample(self, result: CorpusResult) -> None:
        corpus = result.corpus
        files, lines, stride = torchfix_sample(corpus, self.args.torchfix_lines)
        result.sample_files, result.sample_lines, result.sample_stride = len(files), lines, stride
        select = ["--select", self.args.torchfix_select] if self.args.torchfix_select else []
        torchfix = Series(
            f"TorchFix {TORCHFIX_VERSION}" + (f" --select {self.args.torchfix_select}" if select else ""),
            [str(self.torchfix), *select, *files],
            lines,
            len(files),
        )
        torchup = Series("torchup check, cold", torchup_command(files, self.features), lines, len(files))
        log(f"{corpus.key} TorchFix sample: {len(files)} files, {lines:,} lines, {self.args.torchfix_runs} rounds")
        for index in range(self.args.torchfix_runs):
            timed(torchup, self.torchup_cold, self.cwd)
            timed(torchfix, self.torchfix_tool, self.cwd)
            if index == 0 and torchfix.samples:
                first = torchfix.samples[0]
                parsed = re.search(r"Finished checking (\d+) files", first.stderr)
                result.facts.append(
                    f"TorchFix sample: 1 in every {stride} `.py` files sorted by path, {len(files)} files, "
                    f"{lines:,} lines; TorchFix parsed {parsed.group(1) if parsed else '?'} of them (it skips files "
                    f"that never say `torch`), printed {len(first.stdout.splitlines())} lines of diff/findings, "
                    f"exit {first.returncode}"
                )
        if torchfix.failure:
            rerun = run_once(
                [*torchfix.command[:1], "--show-stderr", *torchfix.command[1:]],
                cwd=self.cwd,
                env=self.torchfix_tool.env,
            )
            torchfix.failure += (
                f"\n--- rerun with --show-stderr (exit {rerun.returncode}) ---\n{tail(rerun.stderr, 80)}"
            )
        result.sample = {"torchup": torchup, "torchfix": torchfix}

    # ---------------------------------------------------------------- 1x, 2x, 4x

    def run_scaling(self, result: CorpusResult, cold1: Series, grep1: Series) -> None:
        corpus = result.corpus
        result.scaling[1] = {"torchup": cold1, "grep": grep1}
        if "ruff check --select NPY201" in result.main:
            result.scaling[1]["ruff"] = result.main["ruff check --select NPY201"]
        for scale in (2, 4):
            paths, lines, files = corpus.paths(scale), corpus.lines_at(scale), len(corpus.files) * scale
            table = {
                "torchup": Series(f"torchup check, cold, {scale}x", torchup_command(paths, self.features), lines, files)
            }
            tools = {"torchup": self.torchup_cold, "grep": self.grep_tool}
            if self.ruff:
                table["ruff"] = Series(f"ruff NPY201, {scale}x", ruff_command(self.ruff, paths), lines, files)
                tools["ruff"] = self.ruff_tool
            grep = bc.grep_command(Path(paths[0]), self.pattern)
            table["grep"] = Series(f"grep, {scale}x", [*grep[:-1], *paths], lines, files)
            log(f"{corpus.key} {scale}x: {self.args.scale_runs} rounds")
            for _ in range(self.args.scale_runs):
                for key, one in table.items():
                    timed(one, tools[key], self.cwd)
            result.scaling[scale] = table

    # ---------------------------------------------------------------- start-up

    def time_startup(self) -> list[tuple[str, list[str], Series]]:
        env = torchup_env()
        commands = [("python -c pass (interpreter floor)", [TORCHUP_PYTHON, "-c", "pass"])]
        if not IN_PLACE:  # (what the harness's own interpreter costs: its site-packages may add to it)
            harness = f"python -c pass (the harness's interpreter, {sys.executable})"
            commands.append((harness, [sys.executable, "-c", "pass"]))
        commands.append(("python -m torchup --version", [TORCHUP_PYTHON, "-m", "torchup", "--version"]))
        script = Path(TORCHUP_PYTHON).parent / "torchup"
        if script.exists():
            commands.append((f"torchup --version (console script {script})", [str(script), "--version"]))
        found = []
        tool = Tool("startup", env, (0,))
        for label, command in commands:
            series = Series(label, command, 0, 0)
            for _ in range(self.args.version_runs):
                sample = run_once(command, cwd=self.cwd, env=env)
                series.samples.append(sample)
                if not series.failure and tool.judge(sample):
                    series.failure = tool.judge(sample)
            found.append((label, command, series))
        return found

    def import_profile(self) -> list[str]:
        done = subprocess.run(
            [TORCHUP_PYTHON, "-X", "importtime", "-m", "torchup", "--version"],
            cwd=self.cwd,
            env=torchup_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        rows = []
        for line in done.stderr.splitlines():
            match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
            if match and not match.group(3):  # top-level imports only
                rows.append((int(match.group(2)), match.group(4)))
        return [f"{name} {micros / 1000:.1f} ms" for micros, name in sorted(rows, reverse=True)[:6]]


def tail(text: str, lines: int = 40) -> str:
    kept = text.rstrip().splitlines()
    return "\n".join((["..."] if len(kept) > lines else []) + kept[-lines:])


# --------------------------------------------------------------------------- report


def mib(value: float) -> str:
    return f"{value:.0f}" if value else "-"


def ratio(a: Series | None, b: Series | None) -> float | None:
    if a is None or b is None or not a.ok or not b.ok or b.median <= 0:
        return None
    return a.median / b.median


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else (f"{value:.1f}x" if value >= 0.995 else f"{value:.2f}x")


def series_table(rows: Sequence[Series], reference: Series | None) -> list[str]:
    out = [
        "| command | runs | median s | min s | CPU s | lines/s | peak RSS MiB (largest process) "
        "| peak PSS MiB (all processes) | time vs torchup cold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for one in rows:
        if not one.samples:
            continue
        status = " **FAILED**" if one.failure else ""
        note = f" ({one.note})" if one.note else ""
        out.append(
            f"| {one.label}{note}{status} | {len(one.samples)} | {one.median:.2f} | {one.best:.2f} | {one.cpu:.2f} | "
            f"{one.lines / one.median:,.0f} | {mib(one.rss_mib)} | {mib(one.tree_mib)} | "
            f"{fmt_ratio(ratio(one, reference))} |"
        )
    return out


def growth_rows(result: CorpusResult) -> tuple[list[str], dict[str, float]]:
    out = [
        "| tool | 1x s | 2x s | 4x s | 2x / 1x | 4x / 1x | growth exponent | largest process RSS MiB 1x / 4x "
        "| all processes PSS MiB 1x / 4x | lines/s at 4x |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    exponents = {}
    for key in ("torchup", "ruff", "grep"):
        row = [result.scaling.get(scale, {}).get(key) for scale in (1, 2, 4)]
        if any(one is None or not one.ok for one in row):
            continue
        one, two, four = row
        exponent = math.log(four.median / one.median, 4) if one.median > 0 else float("nan")
        exponents[key] = exponent
        out.append(
            f"| {key} | {one.median:.2f} | {two.median:.2f} | {four.median:.2f} | {two.median / one.median:.2f} | "
            f"{four.median / one.median:.2f} | {exponent:.2f} | {mib(one.rss_mib)} / {mib(four.rss_mib)} | "
            f"{mib(one.tree_mib)} / {mib(four.tree_mib)} | "
            f"{four.lines / four.median:,.0f} |"
        )
    return out, exponents


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**not met**")


def targets(results: Sequence[CorpusResult], startup: Sequence[tuple[str, list[str], Series]]) -> list[str]:
    out = ["| target | corpus | measured | verdict |", "|---|---|---|---|"]
    for result in results:
        name = result.corpus.title
        cold = next(
            (
                s
                for label, s in result.main.items()
                if label.startswith("torchup check, cold") and "--jobs 1" not in label
            ),
            None,
        )
        warm = result.main.get("torchup check, warm")
        ruff = result.main.get("ruff check --select NPY201")
        r = ratio(cold, ruff)
        out.append(
            f"| cold `torchup check` no slower than `ruff --select NPY201` | {name} | "
            f"{cold.median:.2f} s vs {ruff.median:.2f} s ({fmt_ratio(r)} ruff's time) | {verdict(r <= 1)} |"
            if r is not None
            else f"| cold `torchup check` no slower than ruff | {name} | not measured | n/a |"
        )
        if result.sample:
            tf = ratio(result.sample["torchfix"], result.sample["torchup"])
            measured = (
                "-"
                if tf is None
                else f"TorchFix {result.sample['torchfix'].median:.1f} s / torchup "
                f"{result.sample['torchup'].median:.2f} s = {tf:.1f}x on {result.sample_files} files"
            )
            out.append(
                f"| >= {TARGET_TORCHFIX_RATIO:.0f}x faster than TorchFix (same files) | {name} | {measured} | "
                f"{verdict(None if tf is None else tf >= TARGET_TORCHFIX_RATIO)} |"
            )
        w = ratio(warm, cold)
        out.append(
            f"| warm re-run <= {TARGET_WARM_FRACTION:.0%} of cold | {name} | "
            f"{'-' if w is None else f'{warm.median:.2f} s / {cold.median:.2f} s = {w:.0%}'} | "
            f"{verdict(None if w is None else w <= TARGET_WARM_FRACTION)} |"
        )
        torchups = [s for label, s in result.main.items() if label.startswith("torchup")]
        torchups += [s for table in result.scaling.values() for k, s in table.items() if k == "torchup"]
        torchups = [s for s in torchups if s.samples]
        if torchups:
            single = max(torchups, key=lambda s: s.rss_mib)
            total = max(torchups, key=lambda s: s.tree_mib)
            single_mb, total_mb = single.rss_mib * MIB / 1e6, total.tree_mib * MIB / 1e6
            out.append(
                f"| peak RSS <= {TARGET_RSS_MB} MB (judged on all processes together) | {name} | "
                f"all processes (summed PSS) {total_mb:.0f} MB ({total.label}); largest single process "
                f"{single_mb:.0f} MB ({single.label}) | {verdict(max(single_mb, total_mb) <= TARGET_RSS_MB)} |"
            )
        if result.scaling:
            _, exponents = growth_rows(result)
            if "torchup" in exponents:
                e = exponents["torchup"]
                t = result.scaling
                out.append(
                    f"| time linear in corpus size | {name} | 1x {t[1]['torchup'].median:.2f} s, "
                    f"2x {t[2]['torchup'].median:.2f} s, 4x {t[4]['torchup'].median:.2f} s: "
                    f"exponent {e:.2f} | {verdict(e <= TARGET_GROWTH_EXPONENT)} |"
                )
    for label, _, series in startup:
        if "torchup" in label and series.samples:
            out.append(
                f"| `torchup --version` < {TARGET_VERSION_SECONDS * 1000:.0f} ms | - | {label}: median "
                f"{series.median * 1000:.0f} ms | "
                f"{verdict(series.median < TARGET_VERSION_SECONDS and not series.failure)} |"
            )
    return out


def machine_lines(bench: Bench, load_before: str, elapsed: float) -> list[str]:
    return [
        f"- CPU: {bc.cpu_model()}, {os.cpu_count()} logical cores",
        f"- other work on the machine during the benchmark: {other_work(bench.busy_start, elapsed)[0]} "
        "(it slows every tool; compare with the load averages)",
        f"- RAM: {bc.memory_total()}; OS: {platform.system()} {platform.release()}",
        f"- Python: {platform.python_version()} ({sys.executable})",
        f"- load average (1/5/15 min) before: {load_before}; {'; '.join(bench.loads)}; at the end: {bc.load_average()}",
        f"- torchup: {bc.torchup_version(REPO_ROOT)}, git {bc.git_revision(REPO_ROOT)}, {bench.torchup_install}, "
        f"run by {TORCHUP_PYTHON}; flags found: "
        f"{bench.features.describe()}",
        f"- ruff: {bench.ruff_version}",
        f"- TorchFix: {bench.torchfix_version}",
        f"- grep: {bc.grep_version()}; trigger words {bench.pattern_origin}",
        f"- peak memory: {bc.rss_note().split(';')[0] if bc.GNU_TIME else 'os.wait4 ru_maxrss'} for the largest single "
        f"process; summed PSS of the whole process tree sampled every {RSS_POLL_SECONDS * 1000:.0f} ms "
        f"(`-` for runs too short to sample)",
    ]


def build_report(
    bench: Bench, results: Sequence[CorpusResult], startup, profile: list[str], load_before: str, elapsed: float
) -> str:
    stamp = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    parts = [
        f"## Peers: torchup vs ruff, TorchFix and grep, {stamp}",
        "",
        f"`python3 bench/bench_peers.py` ({shlex.join(sys.argv[1:]) or 'defaults'}): medians of "
        f"{bench.args.runs} runs (TorchFix {bench.args.torchfix_runs}, 2x/4x {bench.args.scale_runs}, start-up "
        f"{bench.args.version_runs}), run in rounds so drifting load hits every tool alike; whole benchmark "
        f"{elapsed / 60:.1f} min.",
        "",
        "Machine:",
        "",
        *machine_lines(bench, load_before, elapsed),
        "",
    ]
    _, share = other_work(bench.busy_start, elapsed)
    if share > OTHER_WORK_WARNING:
        parts += [
            f"**Warning: other work took {share:.0%} of the machine during this run.** Every time here is inflated "
            "and noisy. Ratios between tools at 1x suffer less, because the tools ran in alternating rounds. The "
            "growth rows suffer most, because each scale ran in its own block, so their exponents mix load with "
            "corpus size. Rerun on a quiet machine before judging the speed and linearity targets.",
            "",
        ]
    parts += ["### Targets", "", *targets(results, startup), ""]
    for result in results:
        corpus = result.corpus
        cold = next((s for label, s in result.main.items() if label.startswith("torchup check, cold")), None)
        parts += [f"### {corpus.title}: {len(corpus.files):,} files, {corpus.lines:,} lines", ""]
        parts += [f"- {fact}" for fact in result.facts]
        parts += [f"- cache: {result.cache_note}", ""]
        parts += series_table(list(result.main.values()), cold)
        ruff = result.main.get("ruff check --select NPY201")
        grep = result.main.get("grep -rlwE (floor)")
        single = result.main.get("torchup check, cold, --jobs 1")
        parts += [
            "",
            f"- torchup cold / ruff: {fmt_ratio(ratio(cold, ruff))}; torchup cold / grep: "
            f"{fmt_ratio(ratio(cold, grep))}; ruff / grep: {fmt_ratio(ratio(ruff, grep))}",
        ]
        if single is not None:
            parts.append(f"- `--jobs 1` / default jobs: {fmt_ratio(ratio(single, cold))}")
        if result.sample:
            tf, tu = result.sample["torchfix"], result.sample["torchup"]
            parts += [
                "",
                f"TorchFix sample ({result.sample_files} files, {result.sample_lines:,} lines, 1 in every "
                f"{result.sample_stride} `.py` files by path; both tools get the same file list, TorchFix "
                f"with its default jobs = CPU count):",
                "",
            ]
            parts += series_table([tu, tf], tu)
            parts += ["", f"- TorchFix / torchup on the sample: {fmt_ratio(ratio(tf, tu))}"]
            if cold is not None and cold.ok and tf.ok:
                throughput = (cold.lines / cold.median) / (tf.lines / tf.median)
                parts.append(
                    f"- throughput instead (lines/s of cold torchup on the whole corpus / TorchFix's lines/s on the "
                    f"sample; start-up weighs less): {throughput:.0f}x"
                )
        if result.scaling:
            rows, _ = growth_rows(result)
            parts += [
                "",
                "Growth (cold torchup, ruff and grep over 1, 2 and 4 copies of the corpus, passed as 1, 2 "
                "and 4 directory arguments; copies after the first have one comment line appended to each "
                "file; growth exponent = log4(t4x / t1x), 1.00 is linear):",
                "",
                *rows,
            ]
        parts.append("")
    parts += ["### Start-up", "", "| command | runs | median ms | min ms | peak RSS MiB |", "|---|---:|---:|---:|---:|"]
    for label, _, series in startup:
        parts.append(
            f"| {label}{' **FAILED**' if series.failure else ''} | {len(series.samples)} | "
            f"{series.median * 1000:.0f} | {series.best * 1000:.0f} | {mib(series.rss_mib)} |"
        )
    if profile:
        parts += [
            "",
            f"- largest top-level imports of `python -X importtime -m torchup --version`: {', '.join(profile)}",
        ]
    parts += ["", "### Anomalies", ""]
    anomalies = [a for result in results for a in result.anomalies]
    anomalies += [f"{label} failed:\n\n```\n{s.failure}\n```" for label, _, s in startup if s.failure]
    parts += [f"- {a}" for a in anomalies] if anomalies else ["- none: no tool crashed or printed a traceback"]
    parts += ["", "Commands (1x, paths shortened to the first):", ""]
    for result in results:
        for one in [*result.main.values(), *result.sample.values()]:
            shown = one.command if len(one.command) < 16 else [*one.command[:14], f"... ({len(one.command) - 14} more)"]
            parts.append(f"- `{shlex.join(shown)}`")
    parts.append("")
    return "\n".join(parts)


def append_results(report: str) -> None:
    existing = RESULTS_FILE.read_text(encoding="utf-8") if RESULTS_FILE.exists() else "# torchup benchmark results\n"
    RESULTS_FILE.write_text(existing.rstrip("\n") + "\n\n" + report, encoding="utf-8")


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per command at 1x (default: 3)")
    parser.add_argument("--corpora", default="torch,transformers", help="comma-separated: torch, transformers")
    parser.add_argument(
        "--scale",
        default="torch",
        help="corpora to time at 2x and 4x too: comma-separated keys, 'all' or 'none' (default: torch)",
    )
    parser.add_argument("--scale-runs", type=int, default=None, help="timed runs at 2x and 4x (default: --runs)")
    parser.add_argument(
        "--torchfix-lines",
        type=int,
        default=25_000,
        help="about how many lines the TorchFix sample has (default: 25000; 30-50 s a run on 2 cores)",
    )
    parser.add_argument("--torchfix-runs", type=int, default=None, help="timed TorchFix runs (default: --runs)")
    parser.add_argument(
        "--torchfix-select",
        default="ALL",
        help="TorchFix --select (default: ALL, every rule as torchup runs every rule; '' for its default)",
    )
    parser.add_argument("--torchfix-venv", type=Path, default=CACHE_ROOT / "torchfix-venv")
    parser.add_argument(
        "--torchup-venv", type=Path, default=CACHE_ROOT / "torchup-venv", help="the venv torchup is installed into"
    )
    parser.add_argument(
        "--in-place", action="store_true", help="run the checkout with this interpreter, not an installed copy"
    )
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--no-ruff", action="store_true")
    parser.add_argument("--version-runs", type=int, default=10, help="timed `torchup --version` runs (default: 10)")
    parser.add_argument("--torch-python", help="interpreter whose torch is corpus (a) (default: the torch-2.14.1 env)")
    parser.add_argument(
        "--transformers-version", help="default: the newest already unpacked, else the newest on the index"
    )
    parser.add_argument("--work-dir", type=Path, help="where the staged copies go (default: a temporary directory)")
    parser.add_argument("--keep-work", action="store_true", help="leave the staged copies behind")
    parser.add_argument("--write-results", action="store_true", help=f"append a dated section to {RESULTS_FILE}")
    args = parser.parse_args(argv)
    args.scale_runs = args.runs if args.scale_runs is None else args.scale_runs
    args.torchfix_runs = args.runs if args.torchfix_runs is None else args.torchfix_runs
    if min(args.runs, args.scale_runs, args.torchfix_runs, args.version_runs) < 1:
        parser.error("run counts must be at least 1")
    args.corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    unknown = set(args.corpora) - {"torch", "transformers"}
    if unknown:
        parser.error(f"unknown corpora: {', '.join(sorted(unknown))}")
    args.scale = (
        {*args.corpora}
        if args.scale == "all"
        else set()
        if args.scale == "none"
        else {c.strip() for c in args.scale.split(",") if c.strip()}
    )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started, busy_start = time.perf_counter(), busy_seconds()
    load_before = bc.load_average()
    if args.work_dir:
        args.work_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="torchup-bench-", dir=args.work_dir))
    # Bytecode first, as an installed copy has it (pip compiles on install): with
    # PYTHONDONTWRITEBYTECODE set, every timed run would otherwise compile the edited modules again.
    compileall.compile_dir(str(REPO_ROOT / "torchup"), quiet=1)
    try:
        install = "run in place from the checkout" if args.in_place else ensure_torchup(args.torchup_venv)
        bench = Bench(args, work)
        bench.torchup_install = install
        bench.busy_start = busy_start
        corpora = []
        for key in args.corpora:
            corpora.append(
                torch_corpus(args.torch_python) if key == "torch" else transformers_corpus(args.transformers_version)
            )
            log(f"corpus {corpora[-1].title}: {len(corpora[-1].files):,} files, {corpora[-1].lines:,} lines")
        results = [bench.run_corpus(corpus, corpus.key in args.scale) for corpus in corpora]
        log("start-up")
        startup = bench.time_startup()
        profile = bench.import_profile()
        report = build_report(bench, results, startup, profile, load_before, time.perf_counter() - started)
    except BenchError as exc:
        print(f"bench_peers: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep_work:
            log(f"staged copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report)
    if args.write_results:
        append_results(report)
        log(f"appended to {RESULTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
