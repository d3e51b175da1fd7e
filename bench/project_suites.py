"""Real projects' own test suites before and after `torchup fix` (issues 24, 38): a maintainer run, not CI.

For every project of MANIFEST (a real repository at an old commit that calls APIs a newer torch
removes or moves), the script:

1. re-creates the project's tree at its commit from a fetched mirror (a bare git directory:
   `git archive COMMIT`), nothing of the project is kept in this repository;
2. makes (once, then reuses) one virtualenv per project and torch release: a `.pth` file puts the
   site-packages of the shared torch venvs (`tests/differential/envs.py`, `$TORCHUP_TORCH_ENVS`) on
   the path, and only the project's pinned pure-Python dependencies are installed into it (numpy
   pinned per baseline release, the same in both of a project's venvs);
3. copies the tree twice and runs `python3 -m torchup fix` (this checkout) over one copy, and
   `fix --unsafe-fixes` over the other;
4. runs the project's test selection on the original tree under its baseline release (torch 2.13.0
   unless the project names its own: the release that stands for its floor, such as 2.0.1 for
   ignite, whose floor is torch 1.3), and on the original, the `fix` and the `fix --unsafe-fixes`
   trees under torch 2.14.1, with pytest-xdist; a project that names its own baseline also runs the
   two fixed trees under that baseline ("fixed@floor": a fix must keep the floor working);
5. reads per-test outcomes from pytest's junit XML and compares every run with the baseline
   (pass->fail, fail->pass, pass->pass, fail->fail), and every fixed tree with the original tree under
   the same release (a pass->fail there is a test the fix broke); pass->fail tests are run once more,
   alone, and those that pass then are reported as flaky; each pass->fail test of a fixed tree is said
   to be broken by the fix (it passes in the unfixed tree under the same release) or not rescued by it
   (it fails there too).

    python3 bench/project_suites.py                      # all projects; prints the results section
    python3 bench/project_suites.py --write-results      # also appends it to bench/RESULTS.md
    python3 bench/project_suites.py --projects nflows --jobs 1 --no-reference
    python3 bench/project_suites.py --projects ignite     # baseline 2.0.1, also fixed@2.0.1

Mirrors: `--mirrors DIR` (default `$TORCHUP_MIRRORS`, else `~/.cache/torchup/mirrors`) holds one bare repository
per project as `DIR/<owner>+<name>/repo` (what the search tool's `fetch github:<owner>/<name>` makes).
Work files (venvs, trees, junit files, logs, a JSON of every outcome): `--work DIR` (default
`$TORCHUP_PROJECTS_WORK`, else `~/.cache/torchup/projects`). Torch venvs: `--envs DIR` (default
`$TORCHUP_TORCH_ENVS`, else `~/.cache/torchup/envs`); CI's two (2.13.0, 2.14.1) are waited for, never
created or changed here; any other release a project names is made once, as `tests/differential/envs.py`
makes it (`torch==X` alone, with pip), and reused.
"""

from __future__ import annotations

import argparse
import difflib
import fcntl
import filecmp
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from results import publish  # noqa: E402

from differential import envs as torch_envs  # noqa: E402

BASELINE_TORCH = "2.13.0"  # the baseline of a project that names none
TARGET_TORCH = "2.14.1"
# The torch venvs CI makes (tests/differential/envs.py): waited for, never made here.
CI_TORCH = ("2.13.0", "2.14.1")
# The tools every project venv gets.
COMMON_DEPS = ("pytest==9.2.0", "pytest-xdist==3.8.0", "pytest-timeout==2.4.0")
# numpy, pinned per baseline release and the same in both of a project's venvs, so that both torch
# releases see the same one: torch 2.0 to 2.2 were built against numpy 1 and cannot use numpy 2.
NUMPY_PIN = "numpy==2.2.6"
NUMPY_PIN_FOR_BASELINE = {"2.0.1": "numpy==1.26.4", "2.1.2": "numpy==1.26.4", "2.2.2": "numpy==1.26.4"}
TEST_TIMEOUT_S = 600  # per test (pytest-timeout)
SUITE_TIMEOUT_S = 3600  # per pytest run
RECHECK_LIMIT = 200  # pass->fail tests re-run alone, at most, per run
# A pytest plugin (written to the work directory, loaded with -p) that seeds Python, numpy and torch
# before every test: many of these suites draw unseeded random matrices, and a comparison of two runs
# must not hinge on the draw. The same seeds in every run, whatever the worker or the order.
SEED_PLUGIN = "torchup_project_suites_seed"
SEED_PLUGIN_SOURCE = '''\
import random

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    random.seed(0)
    try:
        import numpy
        numpy.random.seed(0)
    except ImportError:
        pass
    import torch
    torch.manual_seed(0)
'''


@dataclass(frozen=True)
class Project:
    name: str
    repo: str  # owner/name on GitHub
    commit: str
    date: str  # the commit's date
    label: str  # tag or why this commit
    tests: tuple[str, ...]  # pytest arguments that select the tests, relative to the tree
    deps: tuple[str, ...] = ()  # pinned, besides COMMON_DEPS
    pythonpath: tuple[str, ...] = ()  # tree-relative directories put on PYTHONPATH
    pytest_args: tuple[str, ...] = ()
    uses: str = ""  # the old APIs its code calls
    # The torch release that stands for the project's floor: its baseline instead of BASELINE_TORCH,
    # and its fixed trees run under it too (fixed@floor). None: BASELINE_TORCH, no fixed@floor run.
    floor_torch: str | None = None
    floor: str = ""  # where the floor comes from (`setup.py: torch>=1.3,<3`), for the report
    left_out: str = ""  # tests of the selection not run, and why

    @property
    def baseline(self) -> str:
        return self.floor_torch or BASELINE_TORCH

    @property
    def numpy(self) -> str:
        return NUMPY_PIN_FOR_BASELINE.get(self.baseline, NUMPY_PIN)

    @property
    def pins(self) -> tuple[str, ...]:
        """What pip installs into both of the project's venvs."""
        return (*COMMON_DEPS, self.numpy, *self.deps)


MANIFEST: tuple[Project, ...] = (
    Project(
        name="gpytorch",
        repo="cornellius-gp/gpytorch",
        commit="7ecb72b65206c5100f56edd92855a8fbafd88b5a",
        date="2021-04-15",
        label="v1.4.1",
        tests=("test",),
        deps=("scipy==1.13.1", "scikit-learn==1.6.1"),  # scipy 1.13: the last with integrate.cumtrapz
        uses="torch.cholesky (also patched by name: `patch(\"torch.cholesky\", new=MagicMock(wraps=...))`), "
        "torch.qr, Tensor.cholesky in tests, its own LazyTensor.cholesky/.symeig, torch.symeig, torch.solve",
    ),
    Project(
        name="nflows",
        repo="bayesiains/nflows",
        commit="909509e606e6330a6b7b600401e9e275deb0f1d0",
        date="2022-09-04",
        label="parent of d040416, the commit that replaces torch.solve",
        tests=("tests",),
        deps=("torchtestcase==2018.2", "umnn==1.71", "matplotlib==3.10.8"),
        uses="torch.qr, `x, lu = torch.solve(B, A)`",
    ),
    Project(
        name="geotorch",
        repo="Lezcano/geotorch",
        commit="541d0428287f543867127e902857bc7764b68072",
        date="2021-01-13",
        label="0.2.0, the newest commit of the mirror",
        tests=("test",),
        uses="torch.qr, Tensor.qr().Q, torch.solve(...).solution, Tensor.symeig",
    ),
    Project(
        name="kornia",
        repo="kornia/kornia",
        commit="a66610d5402f4c6853b0e983ffe58cafaf96c802",
        date="2021-10-11",
        label="parent of a9e383f, the commit that replaces torch.qr",
        tests=("test/geometry", "test/utils"),
        deps=("packaging==26.0",),
        uses="torch.qr; `from torch import solve as _solve` in a version-gated shim; torch.svd",
    ),
    Project(
        name="ignite",
        repo="pytorch/ignite",
        commit="0671b36ce9e44abeeb906d443930721d485c1ef2",
        date="2023-02-18",
        label="v0.4.11",
        tests=("tests/ignite/engine", "tests/ignite/handlers", "tests/ignite/base", "tests/ignite/test_utils.py"),
        # packaging: ignite's own; matplotlib: test_lr_finder; pandas: the profilers' write_results
        deps=("packaging==26.0", "matplotlib==3.10.8", "pandas==2.2.3"),
        pytest_args=(
            # What its CI runs on CPU without a distributed launcher (tests/run_cpu_tests.sh, SKIP_DISTRIB_TESTS=1).
            "-m", "not distributed and not tpu and not multinode_distributed",
            # torchvision (a binary build tied to each torch release) and downloads: the MNIST data set, and
            # squeezenet's weights from download.pytorch.org.
            *(f"--deselect=tests/ignite/handlers/test_lr_finder.py::{name}" for name in (
                "test_lr_suggestion_mnist", "test_apply_suggested_lr_unmatched_optimizers",
                "test_apply_suggested_lr_single_param_groups", "test_plot_single_param_group",
            )),
            "--deselect=tests/ignite/test_utils.py::test_hash_checkpoint",
        ),
        uses="torch.cuda.amp.GradScaler / autocast (also mocked by name: `mock.patch(\"torch.cuda.amp.autocast\")`, "
        "and `sys.modules` entries set to None to test its `except ImportError` path), `isinstance(..., "
        "torch.cuda.amp.GradScaler)`, torch.load without weights_only=, torch.jit.script",
        floor_torch="2.0.1",
        floor="setup.py `torch>=1.3,<3`, torch 1.3; 2.0.1 is the newest patch of 2.0, the oldest minor with cp311 "
        "wheels",
        left_out="the tests marked `distributed`, `multinode_distributed` or `tpu` (ignite's CI runs them apart, "
        "with WORLD_SIZE=2 and `--dist=each`: several processes meeting over TCP, GPUs, XLA, Horovod); 4 tests of "
        "test_lr_finder.py (`test_lr_suggestion_mnist`, `test_apply_suggested_lr_unmatched_optimizers`, "
        "`test_apply_suggested_lr_single_param_groups`, `test_plot_single_param_group`: torchvision, whose build is "
        "tied to each torch release, and the MNIST download) and test_utils.py's `test_hash_checkpoint` "
        "(torchvision, and squeezenet's weights downloaded from download.pytorch.org); the tests skip themselves "
        "without CUDA, apex, XLA, Horovod or a multi-node launch",
    ),
)

# A tree's label and the fix mode that made it (None: the unfixed tree). Every tree runs under
# TARGET_TORCH; the original also under the project's baseline.
RUNS: dict[str, list[str] | None] = {
    "original": None,
    "fix": [],
    "fix --unsafe-fixes": ["--unsafe-fixes"],
}
# The fixed trees that also run under the baseline of a project that names its floor_torch
# (or of every project, with --fixed-at-baseline): a fix must keep the floor working.
FLOOR_RUNS = ("fix", "fix --unsafe-fixes")


@dataclass
class Outcome:
    status: str  # passed / failed / skipped (an error, in a fixture or at collection, is failed)
    message: str = ""
    error: bool = False  # junit <error> (setup, teardown, collection), not <failure>


@dataclass
class Comparison:
    reference: str = ""  # the run compared with, `tree@torch`
    counts: Counter[str] = field(default_factory=Counter)
    pass_to_fail: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    fail_to_pass: list[str] = field(default_factory=list)


@dataclass
class SuiteRun:
    tree: str  # a RUNS label
    torch: str
    seconds: float
    exit_code: int
    outcomes: dict[str, Outcome]
    # With the baseline (original@baseline), and for a fixed tree with the original tree under the
    # same release; by the reference's key.
    comparisons: dict[str, Comparison] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return run_key(self.tree, self.torch)

    def statuses(self) -> Counter[str]:
        """passed / failed / errors / skipped."""
        counted = Counter(o.status for o in self.outcomes.values())
        counted["errors"] = sum(1 for o in self.outcomes.values() if o.error)
        counted["failed"] -= counted["errors"]
        return counted


def run_key(tree: str, version: str) -> str:
    return f"{tree}@{version}"


# --- locations -----------------------------------------------------------------------------------


def find_mirror(mirrors: Path, project: Project) -> Path:
    """The bare git directory of the project's mirror that holds its commit."""
    slug = project.repo.replace("/", "+")
    candidates = (mirrors / slug / "repo", mirrors / slug / "repo" / ".git", mirrors / slug, mirrors / f"{slug}.git")
    for candidate in candidates:
        probe = subprocess.run(
            ["git", f"--git-dir={candidate}", "cat-file", "-e", f"{project.commit}^{{commit}}"],
            capture_output=True,
        )
        if candidate.is_dir() and probe.returncode == 0:
            return candidate
    raise SystemExit(
        f"{project.name}: no mirror of {project.repo} with commit {project.commit[:10]} under {mirrors} "
        f"(fetch github:{project.repo}, or pass --mirrors)"
    )


def make_torch_env(envs: Path, version: str) -> None:
    """A torch venv CI does not make (a project's baseline, such as 2.0.1), made once as
    tests/differential/envs.py makes it: `pip install torch==X` alone into `envs/torch-X` (under a
    lock: two runs of this script may want it at once)."""
    envs.mkdir(parents=True, exist_ok=True)
    with open(envs / f"torch-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        torch_envs.ENV_ROOT = envs  # ensure_env makes its venvs under the module's ENV_ROOT
        if not torch_envs.env_ready(version):
            print(f"creating {envs / f'torch-{version}'} (pip install torch=={version})", file=sys.stderr)
            torch_envs.ensure_env(version)


def wait_for_torch_env(envs: Path, version: str, wait_s: float) -> Path:
    """The site-packages of the shared torch venv, once its `.torchup-ready` marker exists; a release
    other than CI's two is made here first if it is missing."""
    if version not in CI_TORCH:
        make_torch_env(envs, version)
    env = envs / f"torch-{version}"
    deadline = time.monotonic() + wait_s
    announced = False
    while not (env / ".torchup-ready").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{env} is not ready (no .torchup-ready): run `python3 tests/differential/envs.py` first")
        if not announced:
            print(f"waiting for {env}/.torchup-ready (another process is creating it)", file=sys.stderr)
            announced = True
        time.sleep(10)
    found = sorted(env.glob("lib/python3.*/site-packages"))
    if not found:
        raise SystemExit(f"{env} has no lib/python3.*/site-packages")
    return found[0]


def installed_dists(site: Path) -> list[str]:
    return sorted(p.name for p in site.glob("*.dist-info"))


def project_venv(work: Path, envs: Path, project: Project, version: str, wait_s: float) -> Path:
    """A venv that sees the shared torch venv through a .pth file and holds the project's deps."""
    torch_site = wait_for_torch_env(envs, version, wait_s)
    venv = work / "venvs" / f"{project.name}-torch-{version}"
    python = venv / "bin" / "python"
    wanted = json.dumps({"torch_site": str(torch_site), "deps": list(project.pins)})
    ready = venv / ".project-suites-ready"
    if ready.exists() and ready.read_text() == wanted and python.exists():
        return python
    print(f"creating {venv}", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    # The shared venv's interpreter makes a venv on the same base Python (the wheels are cp311).
    subprocess.run([str(torch_site.parents[2] / "bin" / "python"), "-m", "venv", str(venv)], check=True)
    own_site = next(venv.glob("lib/python3.*/site-packages"))
    (own_site / "zz_torchup_torch_env.pth").write_text(f"{torch_site}\n")
    before = installed_dists(torch_site)
    # torch is already there (through the .pth), so pip never installs another one; pip leaves
    # packages outside this venv alone ("outside environment"), which the check below confirms.
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *project.pins],
        capture_output=True, text=True,
    )
    if installed.returncode != 0:
        raise SystemExit(f"pip install failed in {venv}:\n{installed.stdout}{installed.stderr}")
    if installed_dists(torch_site) != before:
        raise SystemExit(f"pip changed the shared torch venv {torch_site}: recreate it with tests/differential/envs.py")
    if any(own_site.glob("torch-*.dist-info")):
        raise SystemExit(f"pip installed a torch into {venv}: a dependency pins one")
    found = subprocess.run(
        [str(python), "-c", "import numpy, torch; print(torch.__version__, torch.__file__, numpy.__version__)"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    if not found[0].startswith(version) or not found[1].startswith(str(torch_site)):
        raise SystemExit(f"{venv} imports torch {found}, not {version} from {torch_site}")
    if f"numpy=={found[2]}" != project.numpy:
        raise SystemExit(f"{venv} imports numpy {found[2]}, not {project.numpy}")
    ready.write_text(wanted)
    return python


# --- trees ---------------------------------------------------------------------------------------


def export_tree(mirror: Path, commit: str, destination: Path) -> None:
    shutil.rmtree(destination, ignore_errors=True)
    destination.mkdir(parents=True)
    command = ["git", f"--git-dir={mirror}", "archive", "--format=tar", commit]
    archive = subprocess.Popen(command, stdout=subprocess.PIPE)
    assert archive.stdout is not None
    with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
        tar.extractall(destination, filter="data")
    if archive.wait() != 0:
        raise SystemExit(f"git archive {commit} failed in {mirror}")


def copy_tree(source: Path, destination: Path) -> Path:
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(source, destination, symlinks=True)
    return destination


def snapshot_torchup(work: Path) -> tuple[Path, str]:
    """A copy of this checkout's torchup package, so that every fix of a run uses the same code even
    while torchup/ is being edited; and a hash of its files, to tell runs apart."""
    destination = work / "torchup-snapshot"
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(ROOT / "torchup", destination / "torchup", ignore=shutil.ignore_patterns("__pycache__"))
    digest = hashlib.sha256()
    for path in sorted((destination / "torchup").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(destination)).encode() + b"\0" + path.read_bytes())
    return destination, digest.hexdigest()[:12]


def run_torchup(snapshot: Path, tree: Path, flags: list[str], log: Path) -> dict[str, object]:
    """`python3 -m torchup fix` (this checkout's, as snapshotted) over the tree; what it reported."""
    command = [sys.executable, "-m", "torchup", "fix", "--no-cache", *flags, "."]
    env = {**os.environ, "PYTHONPATH": str(snapshot), "NO_COLOR": "1"}
    completed = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    log.write_text(f"$ {' '.join(command)}\n{completed.stdout}\n{completed.stderr}")
    if completed.returncode not in (0, 1) or "Traceback" in completed.stderr:
        raise SystemExit(f"torchup fix failed on {tree} (exit {completed.returncode}); see {log}")
    text = completed.stdout + completed.stderr
    fixed = re.search(r"Fixed (\d+) findings? in (\d+) files?", text)
    remaining = re.search(r"(\d+) findings? remaining", text)
    return {
        "exit_code": completed.returncode,
        "fixed": int(fixed.group(1)) if fixed else 0,
        "remaining": int(remaining.group(1)) if remaining else 0,
    }


def tree_diff(original: Path, fixed: Path) -> tuple[int, int, str]:
    """(files changed, lines changed, unified diff) between two trees."""
    files = lines = 0
    chunks: list[str] = []

    def walk(comparison: filecmp.dircmp[str], relative: Path) -> None:
        nonlocal files, lines
        if comparison.left_only or comparison.right_only:
            raise SystemExit(f"torchup added or removed files: {comparison.left_only} {comparison.right_only}")
        for name in sorted(comparison.diff_files):
            before = (original / relative / name).read_text(encoding="utf-8", errors="replace").splitlines(True)
            after = (fixed / relative / name).read_text(encoding="utf-8", errors="replace").splitlines(True)
            diff = list(difflib.unified_diff(before, after, f"a/{relative / name}", f"b/{relative / name}"))
            files += 1
            lines += sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
            chunks.extend(diff)
        for name, sub in sorted(comparison.subdirs.items()):
            walk(sub, relative / name)

    walk(filecmp.dircmp(original, fixed, ignore=[]), Path())
    return files, lines, "".join(chunks)


# --- suites --------------------------------------------------------------------------------------


def test_env(tree: Path, project: Project, plugin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    env.update(
        OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0", MPLBACKEND="Agg",
    )
    env["PYTHONPATH"] = os.pathsep.join([*(str(tree / p) for p in project.pythonpath), str(plugin_dir)])
    return env


def seed_plugin(work: Path) -> Path:
    directory = work / "plugin"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{SEED_PLUGIN}.py").write_text(SEED_PLUGIN_SOURCE)
    return directory


def pytest_command(python: Path, selection: list[str], junit: Path, jobs: int, project: Project) -> list[str]:
    return [
        str(python), "-m", "pytest", *selection, "--rootdir=.", "-p", "no:cacheprovider", "-q", "-rN",
        f"--junitxml={junit}", f"--timeout={TEST_TIMEOUT_S}",
        "-n", str(jobs if jobs > 1 else 0), "-p", SEED_PLUGIN, *project.pytest_args,
    ]


def node_id(case: ET.Element, tree: Path) -> str:
    """pytest's node id back from a junit testcase: `path/to/module.py::Class::name`. The classname is
    the node id's dotted form; the module is its longest prefix that is a file of the tree (a test
    inherited from a base class elsewhere has that class's file in `file`, so `file` cannot tell)."""
    name, parts = case.get("name", ""), case.get("classname", "").split(".")
    for end in range(len(parts), 0, -1):
        module = "/".join(parts[:end]) + ".py"
        if (tree / module).is_file():
            return "::".join([module, *parts[end:], name])
    return f"{case.get('classname', '')}::{name}"  # a collection error, or a module outside the tree


def read_junit(junit: Path, tree: Path) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    for case in ET.parse(junit).iter("testcase"):
        problems = [c for c in case if c.tag in ("failure", "error")]
        skipped = case.find("skipped")
        if problems:
            message = (problems[0].get("message") or problems[0].text or "").strip().splitlines()
            outcome = Outcome("failed", message[0][:200] if message else "", problems[0].tag == "error")
        elif skipped is not None:
            outcome = Outcome("skipped")
        else:
            outcome = Outcome("passed")
        key = node_id(case, tree)
        if key not in outcomes or outcome.status == "failed":  # a teardown error adds a second entry
            outcomes[key] = outcome
    return outcomes


def run_suite(
    python: Path, tree: Path, project: Project, selection: list[str], junit: Path, log: Path, jobs: int,
    plugin_dir: Path,
) -> tuple[int, float, dict[str, Outcome]]:
    junit.unlink(missing_ok=True)
    command = pytest_command(python, selection, junit, jobs, project)
    start = time.perf_counter()
    with open(log, "w") as handle:
        handle.write(f"$ cd {tree} && {' '.join(command)}\n")
        handle.flush()
        try:
            code = subprocess.run(
                command, cwd=tree, env=test_env(tree, project, plugin_dir), stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=SUITE_TIMEOUT_S,
            ).returncode
        except subprocess.TimeoutExpired:
            code = -1
    seconds = time.perf_counter() - start
    if not junit.exists():
        raise SystemExit(f"{project.name}: pytest wrote no junit file (exit {code}); see {log}")
    return code, seconds, read_junit(junit, tree)


def compare(baseline: dict[str, Outcome], run: dict[str, Outcome], reference: str = "") -> Comparison:
    result = Comparison(reference)
    for test, before in baseline.items():
        after = run.get(test, Outcome("failed", "(not run: missing from this run)"))
        if before.status == "skipped" or after.status == "skipped":
            result.counts["other"] += 1
            continue
        kind = f"{before.status[:4]}->{after.status[:4]}"
        result.counts[kind] += 1
        if kind == "pass->fail":
            result.pass_to_fail.append(test)
        elif kind == "fail->pass":
            result.fail_to_pass.append(test)
    return result


# --- one project ---------------------------------------------------------------------------------


def compare_run(run: SuiteRun, runs: dict[str, SuiteRun], baseline_key: str) -> None:
    """Fills run.comparisons: with the baseline, and for a fixed tree with the original tree under the
    same release (where that ran)."""
    references = [baseline_key] if run.key != baseline_key else []
    if RUNS[run.tree] is not None and run_key("original", run.torch) in runs:
        references.append(run_key("original", run.torch))
    for reference in dict.fromkeys(references):
        run.comparisons[reference] = compare(runs[reference].outcomes, run.outcomes, reference)


def plan_runs(project: Project, no_reference: bool = False, fixed_at_baseline: bool = False) -> list[tuple[str, str]]:
    """The (tree, torch release) pairs to run, in an order where each run's references come before it:
    the original under the baseline; every tree under the target; the fixed trees under the baseline
    where the project names its floor's release."""
    plan = [("original", project.baseline)]
    plan += [(label, TARGET_TORCH) for label in RUNS if not (label == "original" and no_reference)]
    if project.floor_torch or fixed_at_baseline:
        plan += [(label, project.baseline) for label in FLOOR_RUNS if (label, project.baseline) not in plan]
    return plan


def run_project(project: Project, args: argparse.Namespace) -> dict[str, object]:
    work: Path = args.work
    base = work / "trees" / project.name
    logs = work / "logs" / project.name
    logs.mkdir(parents=True, exist_ok=True)
    export_tree(find_mirror(args.mirrors, project), project.commit, base / "export")
    pythons = {version: project_venv(work, args.envs, project, version, args.wait)
               for version in dict.fromkeys((project.baseline, TARGET_TORCH))}

    edits: dict[str, dict[str, object]] = {}
    trees: dict[str, Path] = {}
    for label, flags in RUNS.items():
        tree = copy_tree(base / "export", base / label.replace(" ", "").replace("--", "-"))
        if flags is not None:
            report = run_torchup(args.snapshot, tree, flags, logs / f"torchup-{tree.name}.log")
            files, lines, diff = tree_diff(base / "export", tree)
            (logs / f"torchup-{tree.name}.diff").write_text(diff)
            edits[label] = {**report, "files": files, "lines": lines}
        trees[label] = tree

    plan = plan_runs(project, args.no_reference, args.fixed_at_baseline)
    baseline_key = run_key("original", project.baseline)
    selection = list(project.tests)
    plugin_dir = seed_plugin(work)
    runs: dict[str, SuiteRun] = {}
    for label, version in plan:
        # Every run in a copy of its own: suites write files into their trees.
        tree = copy_tree(trees[label], base / f"{trees[label].name}-{version}")
        print(f"{project.name}: torch {version}, {label} tree", file=sys.stderr)
        stem = tree.name
        code, seconds, outcomes = run_suite(
            pythons[version], tree, project, selection, logs / f"{stem}.xml", logs / f"{stem}.log", args.jobs,
            plugin_dir,
        )
        run = SuiteRun(label, version, seconds, code, outcomes)
        compare_run(run, runs, baseline_key)
        suspects = list(dict.fromkeys(t for c in run.comparisons.values() for t in c.pass_to_fail))
        if RUNS[label] is not None and 0 < len(suspects) <= RECHECK_LIMIT:
            # Each pass->fail test once more, alone: one that passes now is flaky, not broken.
            _, _, again = run_suite(
                pythons[version], tree, project, suspects, logs / f"{stem}-recheck.xml",
                logs / f"{stem}-recheck.log", 1, plugin_dir,
            )
            for comparison in run.comparisons.values():
                comparison.flaky = [
                    t for t in comparison.pass_to_fail if t in again and again[t].status == "passed"
                ]
        runs[run.key] = run
    return {"project": project, "edits": edits, "runs": runs}


# --- report --------------------------------------------------------------------------------------


def git_revision() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "torchup"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() + (" + uncommitted changes under torchup/" if dirty.stdout.strip() else "")


def normalise(message: str) -> str:
    """A failure message as a group key: no terminal colours (pytest's junit writes ESC as `#x1B`), no
    addresses, no decimals, no backquotes (it goes in code)."""
    message = re.sub(r"(\x1b|#x1B)\[[0-9;]*m", "", message)
    message = re.sub(r"0x[0-9a-f]+", "0x…", message.replace("`", "'"))
    return re.sub(r"\d+\.\d+(e-?\d+)?", "N", message)[:160]


def failure_cause(test: str, run: SuiteRun, comparison: Comparison, runs: dict[str, SuiteRun]) -> str:
    """Why a pass->fail test of a fixed tree fails: flaky, broken by the fix, or not rescued by it."""
    if test in comparison.flaky:
        return "flaky: passed when run alone"
    unfixed = runs.get(run_key("original", run.torch))
    if unfixed is None:
        return f"unfixed tree not run under {run.torch}"
    if unfixed.outcomes.get(test, Outcome("failed")).status == "passed":
        return f"broken by the fix: passes in the unfixed tree under {run.torch}"
    return f"not rescued: fails in the unfixed tree under {run.torch} too"


def report(results: list[dict[str, object]], args: argparse.Namespace, seconds: float) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"## Real projects: tests after `torchup fix`, {stamp}",
        "",
        f"torchup {git_revision()} (torchup/ files hashed: `{args.torchup_hash}`); Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, pytest-xdist `-n {args.jobs}`, OMP_NUM_THREADS=1, "
        f"every test seeded (random, numpy, torch: 0); {seconds / 60:.0f} min in all. Baseline: each project's "
        f"original tree under its baseline release ({BASELINE_TORCH} unless the table names the release that "
        f"stands for the project's floor). Every tree runs under torch {TARGET_TORCH}; `original` is the unfixed "
        "tree (what breaks without torchup). Where a project names its floor's release, its fixed trees also run "
        "under that release (fixed@floor). Every run is compared test by test with the baseline (junit XML), and "
        "every fixed tree with the unfixed tree under the same release: a pass→fail there is a test the fix "
        "broke. A test skipped on either side counts as `other`; one missing from a run counts as failed. "
        "`torchup fix` runs with its defaults (target 2.15; each file's floor read from the nearest project "
        "metadata).",
        "",
        "| project | repository | commit | date | tests run | baseline torch | pinned dependencies "
        "| old APIs in the code |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        p: Project = result["project"]  # type: ignore[assignment]
        baseline = f"{p.baseline} (floor: {p.floor})" if p.floor_torch else p.baseline
        shown = [f"'{a}'" if " " in a else a for a in p.pytest_args if not a.startswith("--deselect")]
        deselected = sum(1 for a in p.pytest_args if a.startswith("--deselect"))
        selection = f"`{' '.join([*p.tests, *shown])}`" + (f" less {deselected} tests (below)" if deselected else "")
        out.append(
            f"| {p.name} | {p.repo} | `{p.commit[:10]}` ({p.label}) | {p.date} | {selection} | {baseline} "
            f"| {', '.join((p.numpy, *p.deps))} | {p.uses} |"
        )
    out += ["", f"Every venv also has {', '.join(COMMON_DEPS)}; numpy is pinned per baseline release, the same "
            "in both of a project's venvs."]
    for result in results:
        p = result["project"]  # type: ignore[assignment]
        if p.left_out:
            out.append(f"Not run in {p.name}: {p.left_out}.")
    out += [
        "",
        "| project | tree | torch | tests | passed | failed | errors | skipped | files / lines changed "
        "| findings fixed / remaining | suite s |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for result in results:
        p = result["project"]  # type: ignore[assignment]
        runs: dict[str, SuiteRun] = result["runs"]  # type: ignore[assignment]
        for run in runs.values():
            statuses = run.statuses()
            edit = result["edits"].get(run.tree)  # type: ignore[union-attr]
            changed = f"{edit['files']} / {edit['lines']}" if edit else "-"
            findings = f"{edit['fixed']} / {edit['remaining']}" if edit else "-"
            out.append(
                f"| {p.name} | `{run.tree}` | {run.torch} | {len(run.outcomes)} | {statuses['passed']} "
                f"| {statuses['failed']} | {statuses['errors']} | {statuses['skipped']} | {changed} | {findings} "
                f"| {run.seconds:.0f} |"
            )
    out += [
        "",
        "| project | run | compared with | tests | pass→fail | fail→pass | pass→pass | fail→fail | other "
        "| flaky (pass→fail that passed alone) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        p = result["project"]  # type: ignore[assignment]
        runs = result["runs"]  # type: ignore[assignment]
        for run in runs.values():
            for reference, c in run.comparisons.items():
                counts = c.counts
                flaky = str(len(c.flaky)) if RUNS[run.tree] is not None else "-"
                out.append(
                    f"| {p.name} | `{run.key}` | `{reference}` | {sum(counts.values())} "
                    f"| **{len(c.pass_to_fail) - len(c.flaky)}** | {counts['fail->pass']} | {counts['pass->pass']} "
                    f"| {counts['fail->fail']} | {counts['other']} | {flaky} |"
                )
    out += ["", "pass→fail bolded: flaky tests left out. The pass→fail tests of the fixed trees:", ""]
    any_listed = False
    for result in results:
        p = result["project"]  # type: ignore[assignment]
        runs = result["runs"]  # type: ignore[assignment]
        for run in runs.values():
            if RUNS[run.tree] is None:
                continue
            for reference, c in run.comparisons.items():
                if not c.pass_to_fail:
                    continue
                any_listed = True
                groups: dict[tuple[str, str], list[str]] = defaultdict(list)
                for test in c.pass_to_fail:
                    message = normalise(run.outcomes.get(test, Outcome("failed", "(missing)")).message)
                    groups[(failure_cause(test, run, c, runs), message)].append(test)
                out.append(f"- {p.name}, `{run.key}` against `{reference}`: {len(c.pass_to_fail)} pass→fail")
                for (cause, message), tests in sorted(groups.items(), key=lambda item: -len(item[1])):
                    shown = ", ".join(f"`{t}`" for t in tests[:8])
                    shown += f" and {len(tests) - 8} more" if len(tests) > 8 else ""
                    out.append(f"  - {len(tests)} × {cause}; `{message}`: {shown}")
    if not any_listed:
        out.append("- none")
    flags = [f"--mirrors {args.mirrors}"] if args.mirrors != args.default_mirrors else []
    flags += [f"--projects {args.projects}"] if args.projects else []
    flags += ["--no-reference"] if args.no_reference else []
    flags += ["--fixed-at-baseline"] if args.fixed_at_baseline else []
    flags += [f"--jobs {args.jobs}"] if args.jobs != 2 else []
    flags += ["--write-results"] if args.write_results else []
    out += [
        "",
        f"Command: `{' '.join(['python3 bench/project_suites.py', *flags])}` "
        f"(mirrors {args.mirrors}, work {args.work}, torch venvs {args.envs}); logs, junit files and the "
        f"diffs torchup made: `{args.work}/logs/<project>/`.",
        "",
    ]
    return "\n".join(out)


def save_json(results: list[dict[str, object]], path: Path) -> None:
    def plain(value: object) -> object:
        if isinstance(value, Comparison):  # not asdict: it rebuilds a Counter from (key, value) pairs
            return {**vars(value), "counts": dict(value.counts)}
        if isinstance(value, Project | Outcome):
            return asdict(value)
        if isinstance(value, SuiteRun):
            return plain({**vars(value), "key": value.key, "statuses": dict(value.statuses())})
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    path.write_text(json.dumps([plain(r) for r in results], indent=1, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mirrors = os.environ.get("TORCHUP_MIRRORS", str(Path.home() / ".cache" / "torchup" / "mirrors"))
    parser.add_argument("--mirrors", type=Path, default=Path(mirrors))
    parser.add_argument(
        "--work", type=Path,
        default=Path(os.environ.get("TORCHUP_PROJECTS_WORK", Path.home() / ".cache" / "torchup" / "projects")),
    )
    parser.add_argument(
        "--envs", type=Path,
        default=Path(os.environ.get("TORCHUP_TORCH_ENVS", Path.home() / ".cache" / "torchup" / "envs")),
    )
    names = ", ".join(p.name for p in MANIFEST)
    parser.add_argument("--projects", help=f"comma-separated names (default: all): {names}")
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers per run (default 2)")
    parser.add_argument("--no-reference", action="store_true", help=f"skip the unfixed tree under torch {TARGET_TORCH}")
    parser.add_argument(
        "--fixed-at-baseline", action="store_true",
        help="also run the fixed trees under the baseline of every project (by default only of those that name "
        "their floor's release)",
    )
    parser.add_argument("--wait", type=float, default=3600, help="seconds to wait for CI's torch venvs' markers")
    parser.add_argument("--write-results", action="store_true", help="append the section to bench/RESULTS.md")
    args = parser.parse_args()
    args.default_mirrors = parser.get_default("mirrors")
    args.work = args.work.resolve()
    wanted = set(args.projects.split(",")) if args.projects else {p.name for p in MANIFEST}
    unknown = wanted - {p.name for p in MANIFEST}
    if unknown:
        parser.error(f"unknown project(s): {', '.join(sorted(unknown))}")
    start = time.perf_counter()
    args.snapshot, args.torchup_hash = snapshot_torchup(args.work)
    results = [run_project(p, args) for p in MANIFEST if p.name in wanted]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M")
    save_json(results, args.work / f"results-{stamp}.json")
    publish(report(results, args, time.perf_counter() - start), args.write_results)


if __name__ == "__main__":
    main()
