"""Benchmark ``torchup check`` over the Python sources of an installed torch package.

This is a benchmark, not a test: it times whole ``python -m torchup check`` runs as subprocesses and
compares them with a forced full parse (``--no-prefilter``) and with ``grep`` for the trigger words,
the floor any pre-filtering checker has to read through.

    python bench/bench_check.py                      # torch of the default interpreter, 3 runs
    python bench/bench_check.py --corpus DIR --runs 5
    python bench/bench_check.py --write-results      # also append a dated section to bench/RESULTS.md

Only the standard library is used. Peak RSS is measured per child with ``os.wait4``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_FILE = BENCH_DIR / "RESULTS.md"
# The torch venvs the differential tests make (tests/differential/envs.py), wherever this machine keeps them.
TORCH_ENVS = Path(os.environ.get("TORCHUP_TORCH_ENVS", Path.home() / ".cache" / "torchup" / "envs"))
DEFAULT_TORCH_PYTHONS = (
    str(TORCH_ENVS / "torch-2.14.1" / "bin" / "python"),
    str(TORCH_ENVS / "torch-2.13.0" / "bin" / "python"),
)
# The words torchup's rules pre-filter on, as one extended regular expression for grep; used when the
# words cannot be read from torchup's rules themselves (see ``trigger_pattern``).
FALLBACK_TRIGGERS = "cholesky|qr|symeig|eig|lstsq|solve|matrix_rank|potr|gesv|trtrs|btri|use_cuda|balanced|shapes_spec"
READ_TRIGGERS = (
    "from torchup.rules import all_rules\n"
    "words = {w for rule in all_rules() if not rule.engine_emitted for w in rule.triggers}\n"
    "print('|'.join(sorted(words)))\n"
)
SOURCE_SUFFIXES = (".py", ".pyi")
SKIPPED_DIRS = ("__pycache__",)
EXIT_FINDINGS, EXIT_ERROR = 1, 2
FIND_TORCH = (
    "import importlib.util, sys\n"
    "spec = importlib.util.find_spec('torch')\n"
    "if spec is None or not spec.submodule_search_locations:\n"
    "    sys.exit('torch is not installed for this interpreter')\n"
    "print(list(spec.submodule_search_locations)[0])\n"
)


class BenchError(Exception):
    """A run that cannot be benchmarked: torchup crashed, the corpus is missing, and so on."""


@dataclass(frozen=True)
class CorpusStats:
    path: Path
    files: int
    lines: int
    size: int
    torch_version: str


@dataclass(frozen=True)
class Sample:
    seconds: float
    cpu_seconds: float
    max_rss_kib: int
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Series:
    label: str
    command: list[str]
    samples: list[Sample] = field(default_factory=list)

    @property
    def times(self) -> list[float]:
        return [sample.seconds for sample in self.samples]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def peak_rss_mib(self) -> float:
        return max(sample.max_rss_kib for sample in self.samples) / 1024

    @property
    def median_cpu(self) -> float:
        return statistics.median(sample.cpu_seconds for sample in self.samples)


@dataclass(frozen=True)
class Findings:
    total: int
    by_code: dict[str, int]
    files_checked: str
    summary: str
    stderr: str


# --------------------------------------------------------------------------- corpus


def find_torch_python(given: str | None) -> str:
    candidates = (given,) if given else DEFAULT_TORCH_PYTHONS
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BenchError(f"no usable torch interpreter among {', '.join(c for c in candidates if c)}")


def locate_torch(python: str) -> Path:
    """The torch package directory of ``python``, found without importing torch."""
    done = subprocess.run([python, "-c", FIND_TORCH], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"{python} cannot locate torch: {done.stderr.strip() or done.stdout.strip()}")
    return Path(done.stdout.strip())


def iter_sources(corpus: Path) -> list[Path]:
    found = []
    for directory, subdirectories, files in os.walk(corpus):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRS)
        found.extend(Path(directory, name) for name in sorted(files) if name.endswith(SOURCE_SUFFIXES))
    return found


def count_lines(raw: bytes) -> int:
    """Lines as an editor counts them: a last line without a newline still counts."""
    return raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)


def torch_version(corpus: Path) -> str:
    try:
        text = (corpus / "version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    match = re.search(r"^__version__\s*(?::\s*\w+\s*)?=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    return match.group(1) if match else "unknown"


def corpus_stats(corpus: Path) -> CorpusStats:
    files = iter_sources(corpus)
    lines = size = 0
    for path in files:
        raw = path.read_bytes()
        lines += count_lines(raw)
        size += len(raw)
    return CorpusStats(corpus, len(files), lines, size, torch_version(corpus))


# --------------------------------------------------------------------------- running


def gnu_time() -> str | None:
    """GNU time, if present: it measures the peak RSS of exactly the command it runs."""
    path = shutil.which("time") or ("/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None)
    if path is None:
        return None
    probe = subprocess.run([path, "-f", "%M", "true"], capture_output=True, text=True, check=False)
    return path if probe.returncode == 0 and probe.stderr.strip().isdigit() else None


GNU_TIME = gnu_time()


def torchup_env(root: Path) -> dict[str, str]:
    """The environment for torchup runs: ``root`` first on the path, ahead of any installed torchup."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{path}" if path else str(root)}


def run_once(command: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None) -> Sample:
    """Run ``command`` once: wall time, CPU time and peak RSS of this one child."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r", suffix=".rss") as rss,
    ):
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss.name, *command] if GNU_TIME else list(command)
        start = time.perf_counter()
        env = env if env is not None else torchup_env(cwd)
        child = subprocess.Popen(wrapped, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting again
        out.seek(0)
        err.seek(0)
        return Sample(
            seconds,
            usage.ru_utime + usage.ru_stime,
            peak_rss_kib(rss.read(), usage.ru_maxrss),
            child.returncode,
            out.read(),
            err.read(),
        )


def peak_rss_kib(time_output: str, wait4_maxrss: int) -> int:
    """GNU time's %M (its last line; it may first say "Command exited with non-zero status N").

    Without GNU time, ``ru_maxrss`` from ``os.wait4``: on Linux it keeps the high-water mark of the forked
    Python from before ``exec`` (about 15 MiB), so it overstates small commands such as grep.
    """
    lines = time_output.strip().splitlines()
    if lines and lines[-1].strip().isdigit():
        return int(lines[-1])
    return wait4_maxrss // 1024 if sys.platform == "darwin" else wait4_maxrss  # bytes on macOS, KiB on Linux


def torchup_command(corpus: Path, *extra: str, output_format: str = "concise", quiet: bool = True) -> list[str]:
    command = [sys.executable, "-m", "torchup", "check", "--output-format", output_format]
    if quiet:
        command.append("--quiet")
    return [*command, "--no-respect-gitignore", *extra, str(corpus)]


def trigger_pattern(cwd: Path) -> tuple[str, str]:
    """The rules' trigger words as ``a|b|c``, and where they came from."""
    command = [sys.executable, "-c", READ_TRIGGERS]
    done = subprocess.run(command, cwd=cwd, env=torchup_env(cwd), capture_output=True, text=True, check=False)
    words = done.stdout.strip()
    if done.returncode == 0 and re.fullmatch(r"\w+(\|\w+)*", words):
        return words, "read from torchup's rules"
    return FALLBACK_TRIGGERS, "built-in list (could not read torchup's rules)"


def grep_command(corpus: Path, pattern: str) -> list[str]:
    """Grep for whole trigger words, as the pre-filter does, in the files torchup reads (not torch's .so files)."""
    includes = [f"--include=*{suffix}" for suffix in SOURCE_SUFFIXES]
    excludes = [f"--exclude-dir={name}" for name in SKIPPED_DIRS]
    return ["grep", "-rlwE", pattern, *includes, *excludes, str(corpus)]


def check_torchup(sample: Sample, command: Sequence[str], *, cwd: Path) -> None:
    if sample.returncode == 0 or (sample.returncode == EXIT_FINDINGS and sample.stdout.strip()):
        return  # exit 1 with nothing on stdout is not "findings": `python -m` fails that way too
    verbose = run_once([*command[:4], "--verbose", *command[4:]], cwd=cwd)
    raise BenchError(
        f"torchup exited with {sample.returncode}: {shlex.join(command)}\n{sample.stderr.rstrip()}\n"
        f"--- rerun with --verbose (exit {verbose.returncode}) ---\n{verbose.stderr.rstrip()}"
    )


def check_grep(sample: Sample, command: Sequence[str]) -> None:
    if sample.returncode not in (0, 1):
        raise BenchError(f"grep exited with {sample.returncode}: {shlex.join(command)}\n{sample.stderr.rstrip()}")


def time_series(series: Series, runs: int, *, cwd: Path, is_grep: bool = False, progress: bool = True) -> Series:
    env = {**os.environ, "LC_ALL": "C"} if is_grep else None
    for index in range(runs):
        sample = run_once(series.command, cwd=cwd, env=env)
        if is_grep:
            check_grep(sample, series.command)
        else:
            check_torchup(sample, series.command, cwd=cwd)
        series.samples.append(sample)
        if progress:
            print(f"  {series.label}: run {index + 1}/{runs}: {sample.seconds:.2f} s", file=sys.stderr)
    return series


def collect_findings(corpus: Path, *, cwd: Path) -> Findings:
    """Two untimed runs: ``--output-format json`` for the findings, a non-quiet one for the summary line."""
    command = torchup_command(corpus, output_format="json", quiet=False)
    done = run_once(command, cwd=cwd)
    check_torchup(done, command, cwd=cwd)
    try:
        diagnostics = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise BenchError(f"torchup printed invalid JSON ({exc}); stderr:\n{done.stderr}") from exc
    by_code = Counter(str(item.get("code", "?")) for item in diagnostics)
    summary_command = torchup_command(corpus, quiet=False)
    summary_run = run_once(summary_command, cwd=cwd)
    check_torchup(summary_run, summary_command, cwd=cwd)
    summary = summary_run.stdout.rstrip().splitlines()[-1] if summary_run.stdout.strip() else ""
    checked = re.search(r"(\d+) files? checked", summary)
    stderr = "\n".join(text for text in (done.stderr.rstrip(), summary_run.stderr.rstrip()) if text)
    return Findings(
        len(diagnostics), dict(sorted(by_code.items())), checked.group(1) if checked else "?", summary, stderr
    )


# --------------------------------------------------------------------------- machine


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def memory_total() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def torchup_version(cwd: Path) -> str:
    """``torchup X.Y.Z`` and the directory it is imported from."""
    env = torchup_env(cwd)
    done = subprocess.run(
        [sys.executable, "-m", "torchup", "--version"], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    version = done.stdout.strip() or f"unknown (exit {done.returncode}: {done.stderr.strip()})"
    where = subprocess.run(
        [sys.executable, "-c", "import os, torchup; print(os.path.dirname(torchup.__file__))"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{version} from {where or '?'}"


def git_revision(cwd: Path) -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True, text=True, check=False
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "torchup"], cwd=cwd, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}{' + uncommitted changes in torchup/' if dirty else ''}" if head else "unknown"


def load_average() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def machine_lines(cwd: Path, load_before: str) -> list[str]:
    return [
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores (torchup runs single-threaded)",
        f"- load average (1/5/15 min) before: {load_before}; after: {load_average()} "
        "(other work on the machine inflates wall and CPU times alike)",
        f"- RAM: {memory_total()}",
        f"- OS: {platform.system()} {platform.release()}",
        f"- Python: {platform.python_version()} ({sys.executable})",
        f"- torchup: {torchup_version(cwd)}, git {git_revision(cwd)}",
        f"- grep: {grep_version()}",
    ]


def grep_version() -> str:
    if shutil.which("grep") is None:
        return "not found"
    done = subprocess.run(["grep", "--version"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines()[0] if done.stdout else "unknown"


# --------------------------------------------------------------------------- report


def series_row(series: Series, stats: CorpusStats, grep: Series | None) -> str:
    versus_grep = f"{series.median / grep.median:.1f}x" if grep is not None and grep.median > 0 else "-"
    return (
        f"| {series.label} | {len(series.samples)} | {series.median:.2f} | {series.best:.2f} | "
        f"{series.median_cpu:.2f} | {stats.lines / series.median:,.0f} | {stats.files / series.median:,.0f} | "
        f"{series.peak_rss_mib:.0f} | {versus_grep} |"
    )


def results_table(all_series: Sequence[Series], stats: CorpusStats, grep: Series | None) -> list[str]:
    lines = [
        "| command | runs | median s | min s | CPU s (median) | lines/s | files/s | peak RSS MiB | vs grep |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines.extend(series_row(series, stats, grep) for series in all_series)
    return lines


def ratio_lines(prefilter: Series, full: Series | None, grep: Series | None) -> list[str]:
    lines = []
    if full is not None:
        lines.append(
            f"- prefilter / no-prefilter (median): {prefilter.median / full.median:.2f} "
            f"(the pre-filter saves {100 * (1 - prefilter.median / full.median):.0f}% of the wall time)"
        )
    if grep is not None:
        lines.append(f"- torchup / grep (median): {prefilter.median / grep.median:.1f}x")
        if full is not None:
            lines.append(f"- torchup --no-prefilter / grep (median): {full.median / grep.median:.1f}x")
        matched = len(grep.samples[0].stdout.splitlines())
        lines.append(f"- files grep matches (those the pre-filter lets through to a full parse): {matched}")
    return lines


def findings_lines(findings: Findings | None, first: Sample) -> list[str]:
    concise = len(first.stdout.splitlines())
    lines = [f"- findings in the timed concise run: {concise} (exit {first.returncode})"]
    if findings is None:
        return lines
    codes = ", ".join(f"{code} {count}" for code, count in findings.by_code.items()) or "none"
    lines.append(f"- findings (`--output-format json`): {findings.total}; by code: {codes}")
    lines.append(f"- files torchup checked: {findings.files_checked}; summary line: `` {findings.summary} ``")
    return lines


def prefilter_difference(prefilter: Series, full: Series | None) -> list[str]:
    """Findings that only one of the two timed commands printed (the pre-filter should hide none but TU001)."""
    if full is None:
        return []
    with_filter = set(prefilter.samples[0].stdout.splitlines())
    without = set(full.samples[0].stdout.splitlines())
    lines = [f"- findings with --no-prefilter: {len(without)} (with the pre-filter: {len(with_filter)})"]
    only = [f"only with --no-prefilter: {line}" for line in sorted(without - with_filter)]
    only += [f"only with the pre-filter: {line}" for line in sorted(with_filter - without)]
    if only:
        lines.extend(["", "```", *only[:20], *([f"... and {len(only) - 20} more"] if len(only) > 20 else []), "```"])
        lines.append("")
    return lines


def stderr_lines(all_series: Sequence[Series], findings: Findings | None) -> list[str]:
    texts = {sample.stderr.rstrip() for series in all_series for sample in series.samples if sample.stderr.strip()}
    if findings is not None and findings.stderr.strip():
        texts.add(findings.stderr.strip())
    if not texts:
        return ["- torchup wrote nothing to stderr"]
    lines = ["- stderr output (verbatim):", "", "```"]
    for text in sorted(texts):
        lines.extend(text.splitlines()[:60])
    lines.append("```")
    return lines


def rss_note() -> str:
    how = (
        f"GNU time's `%M` (`{GNU_TIME} -f %M`) around each command"
        if GNU_TIME
        else "`ru_maxrss` from `os.wait4` (includes the forked Python from before `exec`, about 15 MiB)"
    )
    return (
        f"Peak RSS is {how}, the maximum over that command's runs; it is per process, unlike "
        "`getrusage(RUSAGE_CHILDREN)`, whose `ru_maxrss` is the maximum over every child so far."
    )


def build_report(
    stats: CorpusStats, all_series: Sequence[Series], findings: Findings | None, cwd: Path, load_before: str
) -> str:
    by_label = {series.label: series for series in all_series}
    prefilter = by_label["torchup check"]
    full = by_label.get("torchup check --no-prefilter")
    grep = by_label.get("grep -rlwE")
    stamp = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    parts = [
        f"## {stamp}",
        "",
        "Machine:",
        "",
        *machine_lines(cwd, load_before),
        "",
        f"Corpus: torch {stats.torch_version}, `{stats.path}`: {stats.files:,} .py/.pyi files "
        f"(excluding `__pycache__`), {stats.lines:,} lines, {stats.size / 1024 / 1024:.1f} MiB.",
        "",
        *results_table(all_series, stats, grep),
        "",
        *ratio_lines(prefilter, full, grep),
        *findings_lines(findings, prefilter.samples[0]),
        *prefilter_difference(prefilter, full),
        *stderr_lines([s for s in all_series if s is not grep], findings),
        "",
        "Commands:",
        "",
        *[f"- `{shlex.join(series.command)}`" for series in all_series],
        "",
        f"{rss_note()} "
        "grep runs with `LC_ALL=C`. Wall times include interpreter start-up; the page cache is warm "
        "(the untimed findings runs read the corpus first).",
        "",
    ]
    return "\n".join(parts)


def append_results(report: str, path: Path = RESULTS_FILE) -> None:
    header = (
        "# torchup check benchmark results\n\n"
        "Sections are appended by `python bench/bench_check.py --write-results`; newest last.\n\n"
    )
    existing = path.read_text(encoding="utf-8") if path.exists() else header
    path.write_text(existing.rstrip("\n") + "\n\n" + report, encoding="utf-8")


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="directory to check (default: the torch package of --torch-python)")
    parser.add_argument(
        "--torch-python",
        help=f"interpreter whose torch is the corpus (default: {DEFAULT_TORCH_PYTHONS[0]}, "
        f"then {DEFAULT_TORCH_PYTHONS[1]})",
    )
    parser.add_argument("--runs", type=int, default=3, help="timed runs of `torchup check` and of grep (default: 3)")
    parser.add_argument("--full-runs", type=int, default=1, help="timed runs with --no-prefilter (default: 1)")
    parser.add_argument("--no-grep", action="store_true", help="skip the grep floor")
    parser.add_argument("--no-findings", action="store_true", help="skip the untimed runs that count findings")
    parser.add_argument("--write-results", action="store_true", help=f"append a dated section to {RESULTS_FILE}")
    parser.add_argument(
        "--torchup-root",
        type=Path,
        default=REPO_ROOT,
        help="directory that `python -m torchup` runs from (default: this repository)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.full_runs < 0:
        parser.error("--runs must be at least 1 and --full-runs at least 0")
    return args


def resolve_corpus(args: argparse.Namespace) -> Path:
    corpus = args.corpus if args.corpus else locate_torch(find_torch_python(args.torch_python))
    corpus = corpus.resolve()
    if not corpus.is_dir():
        raise BenchError(f"corpus {corpus} is not a directory")
    return corpus


def benchmark(args: argparse.Namespace) -> str:
    load_before = load_average()
    corpus = resolve_corpus(args)
    cwd = args.torchup_root.resolve()
    stats = corpus_stats(corpus)
    print(f"corpus {corpus}: {stats.files} files, {stats.lines:,} lines", file=sys.stderr)
    findings = None if args.no_findings else collect_findings(corpus, cwd=cwd)
    all_series = [time_series(Series("torchup check", torchup_command(corpus)), args.runs, cwd=cwd)]
    if args.full_runs:
        full = Series("torchup check --no-prefilter", torchup_command(corpus, "--no-prefilter"))
        all_series.append(time_series(full, args.full_runs, cwd=cwd))
    if not args.no_grep and shutil.which("grep"):
        pattern, origin = trigger_pattern(cwd)
        print(f"grep trigger words ({origin}): {pattern}", file=sys.stderr)
        grep = Series("grep -rlwE", grep_command(corpus, pattern))
        all_series.append(time_series(grep, args.runs, cwd=cwd, is_grep=True))
    return build_report(stats, all_series, findings, cwd, load_before)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        report = benchmark(args)
    except BenchError as exc:
        print(f"bench_check: {exc}", file=sys.stderr)
        return 1
    print(report)
    if args.write_results:
        append_results(report)
        print(f"appended to {RESULTS_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
