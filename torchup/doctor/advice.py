"""Verdicts and install commands: an ``Environment`` and the build matrix in, a ``Report`` out.

Every check carries ``verified``: false when any fact it rests on is unverified, and then the report says
"unverified". Nothing here probes the machine; tests drive it with hand-built environments.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from torchup.doctor.matrix import Fact, Matrix, PlatformBuild, Variant, arch_key, python_key, version_key
from torchup.doctor.probes import Environment, Gpu, Package

OK, WARN, ERROR = "ok", "warn", "error"
PYPI = "the package index (PyPI)"
PYTORCH_INDEX = "the PyTorch index (download.pytorch.org)"


@dataclass(frozen=True)
class Check:
    """One of the doctor's verdicts, with the facts it rests on."""

    name: str
    verdict: str  # ok / warn / error
    reason: str
    verified: bool = True
    facts: tuple[str, ...] = ()  # paths of the facts it rests on
    blocking: bool = False  # an error that leaves no build to install for the target


@dataclass(frozen=True)
class Plan:
    """One install: what, from where, and the commands for pip and uv."""

    release: str
    version: str
    python: str  # Python tag, "3.15t"
    platform: str
    variant: str
    from_pypi: bool
    pip: str
    uv: str
    verified: bool
    summary: str
    unverified: tuple[str, ...] = ()  # the unverified facts it rests on, as sentences
    facts: tuple[Fact, ...] = ()
    cost: float = 0.0


@dataclass(frozen=True)
class Installed:
    """The installed torch measured against the target: whether it fits this machine, and why (not)."""

    version: str
    variant: str | None  # the data's name for its build; None when not known
    source: str | None  # "pypi", "pytorch-index"; None when not told
    label: str  # "torch 2.14.1 (cu130 build, from the package index)"
    fits: bool
    why: str  # why it does not fit, or a note on why it does
    verdict: str = OK
    facts: tuple[Fact, ...] = ()


@dataclass
class Report:
    """Everything the doctor found and advises for one environment and target."""

    environment: Environment
    target: str
    version: str
    accelerator: str | None  # asked for with --accelerator
    variant: str | None  # chosen
    variant_reason: str
    checks: list[Check] = field(default_factory=list)
    plan: Plan | None = None
    alternative: Plan | None = None
    alternative_label: str = ""
    facts_used: dict[str, Fact] = field(default_factory=dict)
    installed: Installed | None = None  # None: torch not installed, or the packages not checked

    @property
    def nothing_to_install(self) -> bool:
        return self.installed is not None and self.installed.fits and self.plan is None

    @property
    def errors(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == ERROR]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == WARN]

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


# small helpers -----------------------------------------------------------------------------------------------


def _all_verified(facts: Iterable[Fact | None]) -> bool:
    return all(f is None or f.verified for f in facts)


def _paths(facts: Iterable[Fact | None]) -> tuple[str, ...]:
    return tuple(f.path for f in facts if f is not None)


def sm(arch: str) -> str:
    return "sm_" + arch.replace(".", "")


def describe_variant(variant: Variant) -> str:
    if variant.kind == "cuda":
        return f"CUDA {variant.cuda}{' (legacy)' if variant.legacy else ''} build ({variant.name})"
    if variant.kind == "rocm":
        return f"ROCm build ({variant.name})"
    if variant.kind == "xpu":
        return "Intel XPU build (xpu)"
    if variant.kind == "mps":
        return "macOS Apple Silicon build (CPU + MPS)"
    return "CPU-only build (cpu)"


def python_where(matrix: Matrix, release: str, tag: str) -> tuple[str | None, list[Fact]]:
    """("pypi" | "pytorch_index" | None, the facts that say so)."""
    on_pypi = matrix.python_on(release, "pypi", tag)
    if on_pypi is not None:
        return "pypi", [on_pypi]
    on_index = matrix.python_on(release, "pytorch_index", tag)
    if on_index is not None:
        return "pytorch_index", [*matrix.python_facts(release, "pypi"), on_index]
    return None, []


@dataclass(frozen=True)
class Support:
    """Whether a build runs on a GPU, and how that is known."""

    status: str  # "yes", "no", "unknown"
    kernel: str = ""  # the kernel architecture that runs, "10.0"
    how: str = ""
    facts: tuple[Fact, ...] = ()


def cuda_support(matrix: Matrix, arch: str, build: PlatformBuild) -> Support:
    """Whether a CUDA build's kernels run on a GPU of compute capability ``arch``."""
    archs = build.cuda_archs
    if archs is None:
        floor = matrix.cuda_arch_floor(build.release)
        if floor is not None and arch_key(arch) < arch_key(str(floor.value)):
            return Support("no", facts=(build.fact, floor))
        return Support("unknown", facts=(build.fact,))
    if arch in archs:
        return Support("yes", arch, f"its {sm(arch)} kernels", (build.fact,))
    runs = matrix.runs_kernels_of(arch)
    if runs is not None and runs.raw["runs"] in archs:
        target = runs.raw["runs"]
        return Support("yes", target, f"its {sm(target)} kernels ({sm(arch)} runs {sm(target)} code, "
                       f"per {matrix.cite(runs)})", (build.fact, runs))
    compat = matrix.binary_compatibility()
    major, minor = arch_key(arch)
    same_major = [a for a in archs if arch_key(a)[0] == major and arch_key(a)[1] <= minor]
    if same_major:
        best = max(same_major, key=arch_key)
        return Support("yes", best, f"its {sm(best)} kernels (same major version)", (build.fact, compat))
    if build.ptx is not None and arch_key(arch) > arch_key(build.ptx):
        return Support("yes", build.ptx, f"its PTX for {sm(build.ptx)}, JIT-compiled at first use (slow start)",
                       (build.fact, compat))
    return Support("no", facts=(build.fact,))


def _gpu_label(matrix: Matrix, gpu: Gpu) -> str:
    if gpu.vendor == "nvidia" and gpu.arch:
        return f"{gpu.name} ({sm(gpu.arch)}, {matrix.generation(gpu.arch)})"
    return gpu.name


def builds_supporting(matrix: Matrix, arch: str, platform: str) -> list[tuple[str, str]]:
    """Every (release, variant) with kernels for ``arch`` on ``platform`` that the data says exist."""
    found = []
    for release in matrix.releases:
        for variant in matrix.variants(release).values():
            build = variant.on(platform)
            if variant.kind == "cuda" and variant.available.value is True and build is not None \
                    and cuda_support(matrix, arch, build).status == "yes":
                found.append((release, variant.name))
    return found


def shell_join(words: Sequence[str], platform: str) -> str:
    if platform.startswith("windows"):
        return subprocess.list2cmdline(list(words))
    return shlex.join(words)


# choosing the build ------------------------------------------------------------------------------------------


def choose_variant(env: Environment, matrix: Matrix, release: str, platform: str) -> tuple[str | None, str]:
    """The build this machine should get, and why."""
    usable = {name: v for name, v in matrix.variants(release).items()
              if platform in v.platforms and v.available.value is not False}
    if not usable:
        return None, f"no build of torch {release} for {platform}"
    default = matrix.pypi_default(release, platform)
    nvidia = env.gpus_of("nvidia")
    if nvidia:
        cuda = [v for v in usable.values() if v.kind == "cuda"]
        archs = [g.arch for g in nvidia if g.arch]
        if cuda:
            def covers(v: Variant) -> int:  # 2: yes, 1: not known, 0: no
                build = v.on(platform)
                statuses = {cuda_support(matrix, a, build).status for a in archs} if build is not None else {"no"}
                return 0 if "no" in statuses else 1 if "unknown" in statuses else 2

            primary = {str(f.value) for p in matrix.platforms if (f := matrix.pypi_default(release, p)) is not None}

            def rank(v: Variant) -> tuple[int, bool, bool, bool, tuple[int, ...]]:
                is_default = default is not None and default.value == v.name
                return (covers(v), v.available.value is True, is_default, v.name in primary,
                        version_key(v.cuda or "0.0"))

            best = max(cuda, key=rank)
            gpu_text = ", ".join(sm(a) for a in archs) or "compute capability unknown"
            if covers(best) == 1:
                return best.name, (f"the data does not know which GPU architectures torch {release}'s CUDA builds "
                                   f"carry on {platform} ({gpu_text}); the CUDA version of its package-index build")
            if covers(best) == 0:
                return best.name, f"no CUDA build of torch {release} has kernels for this GPU ({gpu_text})"
            if default is not None and default.value == best.name:
                return best.name, f"the package-index default, with kernels for this GPU ({gpu_text})"
            if best.name in primary:
                return best.name, (f"the CUDA version of torch {release}'s package-index build, with kernels for this "
                                   f"GPU ({gpu_text})")
            if best.legacy:
                return best.name, f"the only CUDA build of torch {release} with kernels for this GPU ({gpu_text})"
            return best.name, f"the newest CUDA build with kernels for this GPU ({gpu_text})"
    for vendor, kind, label in (("amd", "rocm", "AMD GPU"), ("intel", "xpu", "Intel GPU"),
                                ("apple", "mps", "Apple Silicon")):
        if env.gpus_of(vendor):
            found = sorted((v for v in usable.values() if v.kind == kind),
                           key=lambda v: (v.available.value is True, v.name), reverse=True)
            if found:
                return found[0].name, f"{label} found"
    if "cpu" in usable:
        return "cpu", "no GPU found: the CPU-only build is the smallest"
    if "mps" in usable:
        return "mps", "the macOS wheel"
    if default is not None and default.value in usable:
        return str(default.value), "the package-index default"
    return sorted(usable)[0], "the only build for this platform"


def make_plan(env: Environment, matrix: Matrix, release: str, tag: str, platform: str, variant_name: str,
              with_torchvision: bool = False, torch_version: str | None = None, reinstall: bool = False) -> Plan | None:
    """The install of ``release`` for Python ``tag`` on ``platform``; None when the data has no such build.
    ``reinstall``: the same version of another build is installed, which pip and uv would keep (``==2.14.1``
    matches ``2.14.1+cpu``), so the commands force the swap."""
    variant = matrix.variant(release, variant_name)
    if variant is None or variant.available.value is False or platform not in variant.platforms:
        return None
    on_pypi = matrix.python_on(release, "pypi", tag)
    on_index = matrix.python_on(release, "pytorch_index", tag)
    default = matrix.pypi_default(release, platform)
    from_pypi = on_pypi is not None and default is not None and default.value == variant_name
    if not from_pypi and on_index is None:
        return None
    version = torch_version or str(matrix.latest(release).value)
    facts = [on_pypi if from_pypi else on_index, variant.available, variant.platforms[platform].fact,
             matrix.latest(release)]
    if from_pypi:
        facts.append(default)
    requirements = [f"torch=={version}"]
    vision = matrix.torchvision_for(release) if with_torchvision else None
    if vision is not None and vision.raw.get("latest"):
        requirements.append(f"torchvision=={vision.raw['latest']}")
        facts.append(vision)
    real_python = bool(env.executable) and "python" not in env.simulated and "platform" not in env.simulated
    python = env.executable if real_python and env.executable else "python"
    pip = [python, "-m", "pip", "install", *requirements] + ([] if from_pypi else ["--index-url", variant.index_url])
    pip += ["--force-reinstall"] if reinstall else []
    uv = ["uv", "pip", "install"]
    if real_python:
        uv += ["--python", python]
    uv += [*requirements, f"--torch-backend={variant.uv_backend}"] + (["--reinstall-package", "torch"] if reinstall
                                                                        else [])
    source = PYPI if from_pypi else PYTORCH_INDEX
    summary = f"torch {version}, {describe_variant(variant)}, Python {tag}, {platform}, from {source}"
    if from_pypi:
        summary += " (the package-index default build)"
    if variant.kind == "cuda" and not env.gpus_of("nvidia"):
        summary += "; it runs on the CPU when there is no GPU (a larger download than the cpu build)"
    if reinstall:
        summary += f"; forced over the installed torch {version} of another build, which pip and uv would keep"
    used = tuple(f for f in facts if f is not None)
    unverified = tuple(dict.fromkeys(matrix.describe(f) for f in used if not f.verified))
    return Plan(release, version, tag, platform, variant_name, from_pypi, shell_join(pip, platform),
                shell_join(uv, platform), _all_verified(used) and variant.available.value is True, summary,
                unverified, used)


def _gpu_kept(env: Environment, matrix: Matrix, variant: Variant, platform: str) -> bool | None:
    """True: the GPU is used; False: the build ignores it; None: the build has no kernels for it (no go)."""
    nvidia = env.gpus_of("nvidia")
    if nvidia:
        if variant.kind != "cuda":
            return False
        build = variant.on(platform)
        for gpu in nvidia:
            if gpu.arch and (build is None or cuda_support(matrix, gpu.arch, build).status != "yes"):
                return None
        return True
    for vendor, kind in (("amd", "rocm"), ("intel", "xpu"), ("apple", "mps")):
        if env.gpus_of(vendor):
            return variant.kind == kind
    return True


def nearest(env: Environment, matrix: Matrix, target: str, tag: str, platform: str, variant_name: str | None,
            *, require_verified: bool = False, keep_gpu: bool = False,
            exclude: tuple[str, str, str] | None = None, with_torchvision: bool = False) -> Plan | None:
    """The closest combination that the data says exists and works here: fewest changes, verified first."""
    wanted_kind = None
    if variant_name is not None and matrix.variant(target, variant_name) is not None:
        wanted_kind = matrix.variant(target, variant_name).kind  # type: ignore[union-attr]
    elif variant_name is not None:
        for release in matrix.releases:
            other = matrix.variant(release, variant_name)
            if other is not None:
                wanted_kind = other.kind
    _, minor, ft = python_key(tag)
    best: Plan | None = None
    for release in matrix.releases:
        for cand_tag in matrix.python_tags(release):
            for name, variant in matrix.variants(release).items():
                if variant.available.value is not True or platform not in variant.platforms:
                    continue
                if exclude == (release, cand_tag, name):
                    continue
                kept = _gpu_kept(env, matrix, variant, platform)
                if kept is None or (keep_gpu and not kept):
                    continue
                plan = make_plan(env, matrix, release, cand_tag, platform, name, with_torchvision)
                if plan is None or (require_verified and not plan.verified):
                    continue
                cost = 0.0
                if release != target:
                    cost += 2 + 0.1 * abs(version_key(release)[1] - version_key(target)[1])
                if cand_tag != tag:
                    _, cand_minor, cand_ft = python_key(cand_tag)
                    cost += 4 + 0.5 * abs(cand_minor - minor) + (1 if cand_ft != ft else 0)
                if variant_name is not None and name != variant_name:
                    cost += 1 if variant.kind == wanted_kind else 3
                if not kept:
                    cost += 6
                elif variant.kind in ("cuda", "rocm", "xpu") and not env.gpus:
                    cost += 0.5  # a GPU build with no GPU to use: a larger download for nothing
                cost += 0.25 * len(plan.unverified)
                plan = Plan(**{**plan.__dict__, "cost": cost})
                if best is None or cost < best.cost:
                    best = plan
    return best


# the checks --------------------------------------------------------------------------------------------------


class _Checks:
    def __init__(self, report: Report) -> None:
        self.report = report

    def add(self, name: str, verdict: str, reason: str, facts: Iterable[Fact | None] = (),
            blocking: bool = False) -> None:
        used = [f for f in facts if f is not None]
        for fact in used:
            self.report.facts_used.setdefault(fact.path, fact)
        self.report.checks.append(Check(name, verdict, reason, _all_verified(used), _paths(used), blocking))


def diagnose(env: Environment, matrix: Matrix, target: str | None = None, accelerator: str | None = None) -> Report:
    """Every check for installing ``target`` (default: the newest release in the data) on ``env``."""
    target = target or matrix.newest
    platform = env.platform_key
    tag = env.python_tag
    version = str(matrix.latest(target).value)
    report = Report(env, target, version, accelerator, None, "")
    checks = _Checks(report)
    known_platform = platform in matrix.platforms

    # platform
    if not known_platform:
        names = ", ".join(f"{info['title']} ({key})" for key, info in matrix.platforms.items())
        checks.add("platform", ERROR, f"torch {target} has no wheels for {env.os} {env.machine}: the build matrix "
                   f"knows {names}", blocking=True)
    else:
        on_platform = [v for v in matrix.variants(target).values()
                       if platform in v.platforms and v.available.value is True]
        best = [v.platforms[platform].fact for v in on_platform if v.available.verified]
        facts = best[:1] or [v.platforms[platform].fact for v in on_platform][:1]
        title = matrix.platforms[platform]["title"]
        checks.add("platform", OK, f"torch {target} is built for {title} ({platform})", facts)

    _check_python(checks, env, matrix, target, tag)
    if env.python_minor >= python_key(str(matrix.requires_python(target).value))[:2]:
        _check_compile(checks, env, matrix, target)

    # the build
    if accelerator is not None:
        report.variant, report.variant_reason = accelerator, "asked for with --accelerator"
    elif known_platform:
        report.variant, report.variant_reason = choose_variant(env, matrix, target, platform)
    report.installed = installed_fit(env, matrix, target, platform, report.variant, accelerator)
    fits = report.installed is not None and report.installed.fits
    chosen = report.variant
    if fits:  # the checks below are then about the build that is there
        assert report.installed is not None
        report.variant = report.installed.variant
        report.variant_reason = "the installed build, which fits"
    if known_platform and report.variant is not None:
        _check_build(checks, matrix, target, platform, report.variant)
        variant = matrix.variant(target, report.variant)
        if variant is not None and platform in variant.platforms and variant.available.value is not False:
            _check_gpus(checks, env, matrix, target, platform, variant, installed=fits)
    _check_runtime(checks, env)
    torchvision = env.packages_checked and "torchvision" in env.packages
    if env.packages_checked:
        _check_installed(checks, report, matrix)

    # what to run
    blocked = any(c.blocking for c in report.checks)
    if fits:  # nothing to install but a torchvision that must move; torch stays at its version
        assert report.installed is not None
        if vision_must_move(env, matrix, target, report.variant):
            report.plan = make_plan(env, matrix, target, tag, platform, report.variant or chosen or "", True,
                                    torch_version=report.installed.version.split("+", 1)[0])
        return report
    if known_platform and report.variant is not None and not blocked:
        report.plan = make_plan(env, matrix, target, tag, platform, report.variant, torchvision)
    if known_platform:
        if report.plan is None:
            report.alternative = nearest(env, matrix, target, tag, platform, report.variant,
                                         with_torchvision=torchvision)
            report.alternative_label = "nearest build that works here"
        else:
            variant = matrix.variant(target, report.variant or "")
            if variant is not None and variant.available.value is None:
                report.alternative = nearest(env, matrix, target, tag, platform, report.variant,
                                             exclude=(target, tag, report.variant or ""), with_torchvision=torchvision)
                report.alternative_label = "nearest build known to exist"
            elif not report.plan.verified:
                report.alternative = nearest(env, matrix, target, tag, platform, report.variant,
                                             require_verified=True, keep_gpu=True, with_torchvision=torchvision)
                report.alternative_label = "verified alternative"
    report.plan = _over_installed(env, matrix, report.installed, report.plan, torchvision)
    report.alternative = _over_installed(env, matrix, report.installed, report.alternative, torchvision)
    if report.alternative is not None and report.installed is not None \
            and report.alternative.version == report.installed.version.split("+", 1)[0] \
            and report.alternative.variant == report.installed.variant:
        report.alternative_label += ", the build installed now"
    return report


def _over_installed(env: Environment, matrix: Matrix, installed: Installed | None, plan: Plan | None,
                    torchvision: bool) -> Plan | None:
    """``plan`` with the commands forced to replace an installed torch of the same version and another build."""
    if plan is None or installed is None or installed.version.split("+", 1)[0] != plan.version \
            or installed.variant == plan.variant:
        return plan
    swapped = make_plan(env, matrix, plan.release, plan.python, plan.platform, plan.variant, torchvision,
                        reinstall=True)
    return plan if swapped is None else Plan(**{**swapped.__dict__, "cost": plan.cost})


def _check_python(checks: _Checks, env: Environment, matrix: Matrix, target: str, tag: str) -> None:
    requires = matrix.requires_python(target)
    where, facts = python_where(matrix, target, tag)
    if python_key(tag)[:2] < python_key(str(requires.value))[:2]:
        checks.add("python", ERROR, f"Python {env.python} cannot take torch {target}: it requires Python >= "
                   f"{requires.value}" + (f" ({requires.note})" if requires.note else ""), [requires], blocking=True)
        return
    if where == "pypi":
        checks.add("python", OK, f"torch {target} has wheels for Python {tag} on {PYPI}", facts)
    elif where == "pytorch_index":
        checks.add("python", WARN, f"torch {target} wheels for Python {tag} are only on {PYTORCH_INDEX}, not on "
                   "PyPI: a plain `pip install torch` will not find them; the command below names the index", facts)
    else:
        listed = ", ".join(matrix.python_tags(target))
        checks.add("python", ERROR, f"torch {target} has no wheels for Python {tag}: its build matrix lists {listed}",
                   [*matrix.python_facts(target, "pypi"), *matrix.python_facts(target, "pytorch_index")],
                   blocking=True)


def _check_compile(checks: _Checks, env: Environment, matrix: Matrix, target: str) -> None:
    below = matrix.compile_python_below(target)
    ft_min = matrix.compile_free_threaded_min(target)
    if env.python_minor >= python_key(str(below.value))[:2]:
        newer = [r for r in matrix.releases if version_key(r) > version_key(target)
                 and env.python_minor < python_key(str(matrix.compile_python_below(r).value))[:2]]
        advice = f"; use torch {newer[0]} for torch.compile on Python {env.python_tag}" if newer else ""
        later = matrix.compile_python_below(newer[0]) if newer else None
        checks.add("torch.compile", WARN, f"torch.compile is unavailable on Python {env.python_tag} with torch "
                   f"{target}: it raises RuntimeError (Python >= {below.value}); eager mode, non-strict torch.export, "
                   f"make_fx and torch.jit work{advice}", [below, later])
        return
    if env.free_threaded:
        parts = env.python.split(".")
        minimum = tuple(int(p) for p in str(ft_min.value).split("."))
        if len(parts) < 3:
            if env.python_minor <= minimum[:2]:
                checks.add("torch.compile", WARN, f"free-threaded Python {env.python_tag}: torch.compile refuses "
                           f"free-threaded builds below {ft_min.value}; the patch level is not known here", [ft_min])
                return
        elif tuple(int(p) for p in parts[:3] if p.isdigit()) < minimum:
            checks.add("torch.compile", WARN, f"free-threaded Python {env.python} is below {ft_min.value}: "
                       f"torch.compile refuses it; use {ft_min.value} or later", [ft_min])
            return
    checks.add("torch.compile", OK, f"torch.compile works on Python {env.python_tag} with torch {target}",
               [below] + ([ft_min] if env.free_threaded else []))


def _check_build(checks: _Checks, matrix: Matrix, target: str, platform: str, name: str) -> None:
    variant = matrix.variant(target, name)
    if variant is None:
        known = ", ".join(matrix.variants(target))
        checks.add("build", ERROR, f"the data knows no {name} build of torch {target} (it knows: {known})",
                   blocking=True)
        return
    available = variant.available
    if available.value is False:
        checks.add("build", ERROR, f"torch {target} has no {name} build" + (f": {available.note}" if available.note
                                                                             else ""), [available], blocking=True)
        return
    build = variant.on(platform)
    if build is None:
        made = ", ".join(variant.platforms) or "no platform"
        checks.add("build", ERROR, f"the {name} build of torch {target} is not made for {platform} (it is made for "
                   f"{made})", [available], blocking=True)
        return
    if available.value is None:
        checks.add("build", WARN, f"whether torch {target} has a {name} build is not known: {available.note}",
                   [available, build.fact])
        return
    checks.add("build", OK, f"{describe_variant(variant)} of torch {target} for {platform}"
               + (f" ({available.note})" if available.note and not available.verified else ""),
               [available, build.fact])


def _check_gpus(checks: _Checks, env: Environment, matrix: Matrix, target: str, platform: str,
                variant: Variant, installed: bool = False) -> None:
    """The GPUs against ``variant``; ``installed``: it is already there, so a GPU build on a machine without the
    GPU is no download to warn about."""
    nvidia = env.gpus_of("nvidia")
    build = variant.on(platform)
    for gpu in nvidia:
        label = _gpu_label(matrix, gpu)
        if variant.kind != "cuda":
            checks.add("gpu", WARN, f"{label}: the {variant.name} build will not use this NVIDIA GPU")
            continue
        if not gpu.arch:
            checks.add("gpu", WARN, f"{label}: compute capability not known (nvidia-smi did not report it), so "
                       f"whether the {variant.name} kernels run on it cannot be told")
            continue
        assert build is not None
        support = cuda_support(matrix, gpu.arch, build)
        if support.status == "unknown":
            checks.add("gpu", WARN, f"{label}: the data does not know which GPU architectures the {variant.name} "
                       f"build of torch {target} carries on {platform}", support.facts)
        elif support.status == "yes":
            extra = ""
            if gpu.arch == "10.7":
                inductor = matrix.rubin_inductor()
                extra = (f"; Inductor code generation for {sm(gpu.arch)} needs ptxas "
                         f"{inductor.value['ptxas']}+ and Triton {inductor.value['triton']}")
                support = Support(support.status, support.kernel, support.how, (*support.facts, inductor))
            checks.add("gpu", OK, f"{label} runs the {variant.name} build: {support.how}{extra}", support.facts)
            _check_extension_archs(checks, matrix, target, gpu.arch, support.kernel)
        else:
            floor = matrix.cuda_arch_floor(target)
            kernels = (f"it has {', '.join(sm(a) for a in build.cuda_archs)}" if build.cuda_archs is not None
                       else f"no torch {target} build has kernels below {sm(str(floor.value))}" if floor is not None
                       else "its kernels are not known")
            others = builds_supporting(matrix, gpu.arch, platform)
            same_release = [v for r, v in others if r == target]
            if same_release:
                hint = f"pick the {same_release[0]} build (--accelerator {same_release[0]})"
            elif others:
                hint = f"no build of torch {target} supports it; only " + ", ".join(
                    f"torch {r}'s {v} build" for r, v in others) + " does"
            else:
                hint = "no build in the data supports it"
            dropped = [v for v in matrix.variants(target).values() if v.available.value is False and v.kind == "cuda"]
            why = "".join(f"; torch {target} has no {v.name} build ({v.available.note or matrix.cite(v.available)})"
                          for v in dropped)
            if floor is not None and arch_key(gpu.arch) < arch_key(str(floor.value)):
                support = Support(support.status, facts=(*support.facts, floor))
            checks.add("gpu", ERROR, f"{label}: the {variant.name} build of torch {target} has no kernels for it "
                       f"({kernels}); {hint}{why}", [*support.facts, *(v.available for v in dropped)],
                       blocking=True)
    if variant.kind == "cuda" and not nvidia:
        checks.add("gpu", OK if installed else WARN, f"no NVIDIA GPU found ({_probe_text(env, 'nvidia-smi')}): "
                   f"the {variant.name} build runs, on the CPU only")
    vendors = (("amd", "rocm", "AMD GPU", "rocminfo"), ("intel", "xpu", "Intel GPU", "xpu-smi"))
    for vendor, kind, label, probe in vendors:
        gpus = env.gpus_of(vendor)
        if variant.kind == kind:
            if gpus:
                checks.add("gpu", OK, f"{', '.join(g.name for g in gpus)}: the {variant.name} build; the data does "
                           f"not list which {label} architectures it supports", [variant.available])
            else:
                checks.add("gpu", OK if installed else WARN, f"no {label} found ({_probe_text(env, probe)}): the "
                           f"{variant.name} build runs, on the CPU only")
        elif gpus:
            checks.add("gpu", WARN, f"{', '.join(g.name for g in gpus)}: the {variant.name} build will not use it")


def _check_extension_archs(checks: _Checks, matrix: Matrix, target: str, arch: str, kernel: str) -> None:
    """TORCH_CUDA_ARCH_LIST for building extensions for this GPU, as the target's cpp_extension accepts it."""
    fact = matrix.cpp_extension_archs(target)
    if fact is None or fact.value is None:
        known = [r for r in matrix.releases if (f := matrix.cpp_extension_archs(r)) is not None and f.value
                 and arch in f.value]
        also = f" ({', '.join(known)} accepts it)" if known else ""
        checks.add("extensions", OK, f'to build CUDA extensions for this GPU: TORCH_CUDA_ARCH_LIST="{arch}"; whether '
                   f"torch {target}'s torch.utils.cpp_extension accepts it is not in the data{also}", [fact])
        return
    names = [name for name, value in (fact.raw.get("named") or {}).items() if value.split("+")[0] == arch]
    if arch in fact.value:
        spelled = " or ".join(f'TORCH_CUDA_ARCH_LIST="{a}"' for a in [arch, *names])
        extra = f" (this GPU runs the {sm(kernel)} kernels of the torch build)" if kernel != arch else ""
        checks.add("extensions", OK, f"to build CUDA extensions for this GPU: {spelled}, accepted by torch {target}'s "
                   f"torch.utils.cpp_extension{extra}", [fact])
    else:
        checks.add("extensions", WARN, f"torch {target}'s torch.utils.cpp_extension does not accept \"{arch}\" in "
                   f'TORCH_CUDA_ARCH_LIST; build extensions with TORCH_CUDA_ARCH_LIST="{kernel}+PTX"', [fact])


def _probe_text(env: Environment, name: str) -> str:
    for probe in env.probes:
        if probe.name == name:
            return f"{name}: {probe.status}"
    return f"{name}: not run" if not env.simulated else "simulated machine"


def _check_runtime(checks: _Checks, env: Environment) -> None:
    info = env.torch_runtime
    if info is None:
        return
    builds = [f"{key.upper()} {info[key]}" for key in ("cuda", "hip", "xpu") if info.get(key)]
    text = f"torch {info.get('version')} imports ({', '.join(builds) or 'CPU build'})"
    arch_list = info.get("arch_list")
    if isinstance(arch_list, list) and arch_list:
        text += f"; kernels {' '.join(str(a) for a in arch_list)}"
    if info.get("cuda") and env.gpus_of("nvidia") and not info.get("cuda_available"):
        checks.add("torch runtime", WARN, text + "; but torch.cuda.is_available() is False (driver too old?)")
    else:
        count = info.get("device_count") or 0
        checks.add("torch runtime", OK, text + (f"; sees {count} GPU(s)" if count else ""))


# the installed torch -----------------------------------------------------------------------------------------

RELEASE_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
INDEX_LABEL = re.compile(r"^(cpu|cu\d+|rocm\d+(\.\d+)*|xpu)$")  # the local labels of the PyTorch index's wheels
GPU_VENDOR = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel", "mps": "apple"}


def _runtime_variant(runtime: Mapping[str, object] | None) -> str | None:
    """The build as the imported torch told it (--import-torch), for when the metadata names none."""
    if not runtime or not runtime.get("version"):
        return None
    if runtime.get("cuda"):
        major, _, minor = str(runtime["cuda"]).partition(".")
        return f"cu{major}{minor[:1]}"
    if runtime.get("hip"):
        found = re.match(r"\d+\.\d+", str(runtime["hip"]))
        return f"rocm{found.group(0)}" if found else None
    return "xpu" if runtime.get("xpu") else "cpu"


def _data_variant(matrix: Matrix, release: str, platform: str, name: str | None) -> Variant | None:
    """The data's variant for an installed build; the macOS wheel's torch/version.py reads as a CPU build."""
    if name is None:
        return None
    variant = matrix.variant(release, name)
    if name == "cpu" and (variant is None or platform not in variant.platforms):
        variant = next((v for v in matrix.variants(release).values() if v.kind == "mps" and platform in v.platforms),
                       None)
    return variant if variant is not None and platform in variant.platforms else None


def installed_source(torch: Package, matrix: Matrix, platform: str) -> str | None:
    """"pytorch-index" for a local label like +cu130 (PyPI refuses local labels); "pypi" for an unlabelled
    build that is the package index's default there; None when the metadata does not tell."""
    if "+" in torch.version:
        return "pytorch-index" if INDEX_LABEL.match(torch.version.split("+", 1)[1]) else None
    default = matrix.pypi_default(torch.release, platform) if torch.release in matrix.releases else None
    return "pypi" if default is not None and torch.variant == default.value else None


def _gpu_text(matrix: Matrix, gpus: Sequence[Gpu]) -> str:
    return ", ".join(_gpu_label(matrix, g) for g in gpus)


def _gpus_for(env: Environment, variant: Variant) -> list[Gpu]:
    return env.gpus_of(GPU_VENDOR.get(variant.kind, ""))


def _gpus_used(env: Environment, matrix: Matrix, variant: Variant | None, platform: str) -> list[Gpu]:
    """The GPUs of this machine that ``variant`` puts to work (a CUDA build: none when it lacks kernels for one)."""
    gpus = _gpus_for(env, variant) if variant is not None else []
    build = variant.on(platform) if variant is not None else None
    if build is None or (variant is not None and variant.kind == "cuda"
                         and any(cuda_support(matrix, g.arch, build).status == "no" for g in gpus if g.arch)):
        return []
    return gpus


def installed_fit(env: Environment, matrix: Matrix, target: str, platform: str, chosen: str | None,
                  accelerator: str | None) -> Installed | None:
    """Whether the installed torch already is what doctor would install: the newest patch of the target (or a
    later one) and a build that works here and uses the GPU the chosen build would use. A GPU build on a machine
    without that GPU fits (it runs on the CPU); a CPU build fits a GPU only when no build of the target has kernels
    for it. None when torch is not installed or the packages were not read (a simulated Python or platform)."""
    torch = env.packages.get("torch") if env.packages_checked else None
    if torch is None or platform not in matrix.platforms:
        return None
    version = str(matrix.latest(target).value)
    name = torch.variant or _runtime_variant(env.torch_runtime)
    release = torch.release if torch.release in matrix.releases else target  # its build, judged by its own data
    variant = _data_variant(matrix, release, platform, name)
    if variant is not None:
        name = variant.name  # macOS: "cpu" read from torch/version.py is the data's mps build
    source = installed_source(torch, matrix, platform)
    details = ([f"{name} build"] if name and "+" not in torch.version else []) + (
        ["from the package index"] if source == "pypi" else ["from the PyTorch index"] if source else [])
    label = f"torch {torch.version}" + (f" ({', '.join(details)})" if details else "")
    facts: list[Fact] = [matrix.latest(target)]  # what a fit rests on
    problem_facts: list[Fact] = [matrix.latest(target)]  # what a misfit rests on
    problems: list[str] = []
    notes: list[str] = []
    verdict = OK

    # the version: the target's newest patch; a later patch of the same release still fits
    if not RELEASE_VERSION.match(torch.public):
        problems.append(f"{torch.public} is not a release (a pre-release or a source build?)")
        verdict = WARN
    elif version_key(torch.public)[:2] != version_key(version)[:2]:
        newer = version_key(torch.public) > version_key(version)
        problems.append(f"{'newer' if newer else 'older'} than the target, torch {target}")
        verdict = WARN if newer else verdict
    elif version_key(torch.public) < version_key(version):
        problems.append(f"an older patch than {version}, the newest of torch {target}")
    elif torch.public != version:
        notes.append(f"a later patch than {version}, the newest the data knows")

    # the build
    wanted = matrix.variant(target, chosen) if chosen else None
    wanted_gpus = _gpus_used(env, matrix, wanted, platform)  # the GPUs the build doctor would install uses
    if accelerator is not None and name != accelerator:
        problems.append(f"--accelerator asks for the {accelerator} build")
    elif variant is None:
        unknown = f"the data knows no {name} build of torch {release} for {platform}" if name else \
            "its build is not known from its metadata (--import-torch reads it)"
        if wanted_gpus:
            problems.append(f"{unknown}, so whether it uses {_gpu_text(matrix, wanted_gpus)} cannot be told")
            verdict = WARN
        else:
            notes.append(f"{unknown}; with no GPU for a build to use here, any build of it runs on the CPU")
    else:
        facts += [variant.available, variant.platforms[platform].fact]
        build = variant.platforms[platform]
        for gpu in env.gpus_of("nvidia") if variant.kind == "cuda" else []:
            support = cuda_support(matrix, gpu.arch, build) if gpu.arch else Support("unknown")
            facts += support.facts
            if support.status == "no":
                problems.append(f"it has no kernels for {_gpu_label(matrix, gpu)}")
                verdict = WARN
                problem_facts += support.facts
            elif support.status == "unknown" and wanted_gpus and wanted is not None and wanted.name != variant.name:
                problems.append(f"the data does not know whether its kernels run on {_gpu_label(matrix, gpu)}")
                verdict = WARN
                problem_facts += support.facts
        if wanted_gpus and wanted is not None and wanted.kind != variant.kind:
            problems.append(f"it does not use this machine's GPU, {_gpu_text(matrix, wanted_gpus)}")
            verdict = WARN
        elif not wanted_gpus and variant.kind == "cpu" and env.gpus_of("nvidia"):
            others = [f"torch {r}'s {v} build" for g in env.gpus_of("nvidia") if g.arch
                      for r, v in builds_supporting(matrix, g.arch, platform)]
            notes.append(f"no build of torch {target} has kernels for {_gpu_text(matrix, env.gpus_of('nvidia'))}"
                         + (f"; {', '.join(dict.fromkeys(others))} does" if others else ""))
    if problems:
        return Installed(torch.version, name, source, label, False, "; ".join(problems), verdict,
                         tuple(dict.fromkeys(problem_facts)))
    return Installed(torch.version, variant.name if variant else None, source, label, True, "; ".join(notes), OK,
                     tuple(dict.fromkeys(facts)))


def vision_must_move(env: Environment, matrix: Matrix, target: str, variant: str | None) -> bool:
    """Whether the installed torchvision must be reinstalled to go with torch ``target`` (``variant`` build)."""
    vision = env.packages.get("torchvision") if env.packages_checked else None
    pair = matrix.torchvision_for(target)
    if vision is None or pair is None:
        return False
    return vision.release != pair.raw["torchvision"] or bool(vision.variant and variant and vision.variant != variant)


def _check_torch(checks: _Checks, report: Report, matrix: Matrix) -> None:
    installed, version = report.installed, str(matrix.latest(report.target).value)
    if installed is None:
        checks.add("torch", OK, "torch is not installed here")
        return
    if installed.fits:
        vision = vision_must_move(report.environment, matrix, report.target, report.variant)
        text = f"{installed.label} is installed and fits: " + (
            "only torchvision must move with it (the command below)" if vision else "nothing to install")
        checks.add("torch", OK, text + (f" ({installed.why})" if installed.why else ""), installed.facts)
        return
    if any(c.blocking for c in report.checks):
        action = "see below"
    elif report.variant is not None and report.variant != installed.variant:
        action = f"the command below installs the {report.variant} build of torch {version} instead"
    else:
        action = f"the command below installs torch {version}"
    checks.add("torch", installed.verdict, f"{installed.label} is installed but does not fit: {installed.why}; "
               f"{action}", installed.facts)


def _check_installed(checks: _Checks, report: Report, matrix: Matrix) -> None:
    """Checks on torch, torchvision, torchaudio, triton and torchcodec as installed."""
    env, target, variant = report.environment, report.target, report.variant
    stays = report.installed is not None and report.installed.fits and not vision_must_move(env, matrix, target,
                                                                                            variant)
    packages = env.packages
    torch = packages.get("torch")
    _check_torch(checks, report, matrix)
    vision = packages.get("torchvision")
    if vision is not None:
        if torch is not None:
            pair = matrix.torchvision_for(torch.release)
            if pair is None:
                checks.add("torchvision", WARN, f"torchvision {vision.version}: the data has no torchvision pairing "
                           f"for the installed torch {torch.version}")
            elif vision.release != pair.raw["torchvision"]:
                checks.add("torchvision", ERROR, f"torchvision {vision.version} does not match the installed torch "
                           f"{torch.version}, which needs torchvision {pair.raw['torchvision']}", [pair])
            else:
                checks.add("torchvision", OK, f"torchvision {vision.version} matches the installed torch "
                           f"{torch.version}", [pair])
        pair = matrix.torchvision_for(target)
        if pair is None:
            checks.add("torchvision", WARN, f"the data has no torchvision for torch {target}")
        else:
            pin = pair.raw.get("latest")
            how = "declared ABI-compatible with" if pair.raw.get("abi_compatible") else "pairs with"
            verdict = OK if vision.release == pair.raw["torchvision"] else WARN
            reason = (f"torchvision {pair.raw['torchvision']} {how} torch {target}"
                      + (f"; the installed {vision.version} must move with torch: the command below pins "
                         f"torchvision=={pin}" if verdict == WARN else f"; the installed {vision.version} goes "
                         "with it" if stays else f"; the command keeps it at {pin}"))
            checks.add("torchvision", verdict, reason, [pair])
            if vision.variant and variant and vision.variant != variant:
                checks.add("torchvision", WARN, f"torchvision {vision.version} is the {vision.variant} build; install "
                           f"the {variant} one with torch (the command below does)")
    audio = packages.get("torchaudio")
    if audio is not None:
        fact = matrix.torchaudio()
        raw = fact.raw
        checks.add("torchaudio", ERROR, f"torchaudio {audio.version} is installed, but torchaudio is discontinued: its "
                   f"last release, {raw['last_release']} ({raw['last_release_date']}), matches torch "
                   f"{raw['last_torch']}; nothing matches torch 2.12 or later, so none matches {target}: uninstall "
                   "it (pip uninstall torchaudio) and move its uses elsewhere", [fact])
    triton = next((packages[n] for n in ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu")
                   if n in packages), None)
    if triton is not None and torch is not None:
        wanted = matrix.triton(torch.release) if torch.release in matrix.releases else None
        if wanted is not None and wanted.value:
            if triton.release != wanted.value:
                checks.add("triton", WARN, f"{triton.name} {triton.version} does not match the installed torch "
                           f"{torch.version}, which requires triton {wanted.value}", [wanted])
            else:
                checks.add("triton", OK, f"{triton.name} {triton.version} matches the installed torch {torch.version}",
                           [wanted])
    codec = packages.get("torchcodec")
    if codec is not None:
        pairing = matrix.torchcodec_for(target)
        if pairing is None:
            checks.add("torchcodec", WARN, f"torchcodec {codec.version}: the data has no torchcodec pairing for torch "
                       f"{target}")
        else:
            verdict = OK if codec.release == pairing.raw["torchcodec"] else WARN
            checks.add("torchcodec", verdict, f"torchcodec {pairing.raw['torchcodec']} pairs with torch {target}; "
                       f"installed: {codec.version}", [pairing])
