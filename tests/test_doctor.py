"""``torchup doctor``: verdicts and install commands for simulated machines (every supported combination in the
build matrix, and unsupported ones), the probes against fake tools on PATH, and real runs on this machine.

Simulated machines are ``Environment`` dataclasses built here; no GPU is needed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchup.doctor import main
from torchup.doctor import probes as probes_module
from torchup.doctor.advice import ERROR, OK, WARN, Report, diagnose
from torchup.doctor.matrix import load, python_key
from torchup.doctor.probes import Environment, Gpu, Package, Probe
from torchup.doctor.report import render_json, render_text

REPO_ROOT = Path(__file__).resolve().parent.parent
MATRIX = load()
INDEX = "https://download.pytorch.org/whl/"
PLATFORM_OS = {"linux-x86_64": ("Linux", "x86_64"), "linux-aarch64": ("Linux", "aarch64"),
               "windows-x86_64": ("Windows", "x86_64"), "macos-arm64": ("Darwin", "arm64")}
PASCAL = "NVIDIA GeForce GTX 1080, 550.54, 6.1"


def machine(platform_key: str = "linux-x86_64", python: str = "3.11.7", *, free_threaded: bool = False,
            gpus: tuple[Gpu, ...] = (), packages: dict[str, Package] | None = None,
            executable: str | None = None) -> Environment:
    system, arch = PLATFORM_OS.get(platform_key, ("Linux", platform_key.split("-", 1)[-1]))
    return Environment(os=system, machine=arch, python=python, free_threaded=free_threaded, env_kind="venv",
                       env_detail="/venv", executable=executable, packages=packages or {}, gpus=gpus,
                       probes=(Probe("nvidia-smi", "found" if gpus else "not found"),))


def nvidia(arch: str | None, name: str = "GPU") -> Gpu:
    return Gpu("nvidia", name, arch, "580.10")


def checks_of(report: Report, name: str) -> list:
    return [c for c in report.checks if c.name == name]


def verdict(report: Report, name: str) -> str:
    found = checks_of(report, name)
    assert found, f"no {name} check in {[c.name for c in report.checks]}"
    order = {OK: 0, WARN: 1, ERROR: 2}
    return max((c.verdict for c in found), key=order.__getitem__)


def rendered(report: Report) -> str:
    text = render_text(report, MATRIX)
    data = json.loads(render_json(report, MATRIX))
    assert data["exit_code"] == report.exit_code
    assert "Traceback" not in text
    return text


# Every supported combination in the data --------------------------------------------------------------------


def _hardware_for(release: str, platform_key: str, name: str) -> tuple[Gpu, ...]:
    variant = MATRIX.variant(release, name)
    assert variant is not None
    if variant.kind == "cuda":
        archs = variant.platforms[platform_key].cuda_archs
        return (nvidia(archs[-1] if archs else "8.6"),)
    return {"rocm": (Gpu("amd", "AMD GPU gfx942", "gfx942"),), "xpu": (Gpu("intel", "Intel Arc B580"),),
            "mps": (Gpu("apple", "Apple Silicon GPU (MPS)"),)}.get(variant.kind, ())


def _combinations(availability: object) -> list[tuple[str, str, str, str]]:
    combos = []
    for release in MATRIX.releases:
        for name, variant in MATRIX.variants(release).items():
            if variant.available.value is not availability:
                continue
            for platform_key in variant.platforms:
                for tag in MATRIX.python_tags(release):
                    combos.append((release, tag, platform_key, name))
    return combos


SUPPORTED = _combinations(True)
UNKNOWN = _combinations(None)


def test_the_combinations_cover_the_data():
    assert len(SUPPORTED) > 150
    assert {c[3] for c in SUPPORTED} == {"cpu", "mps", "cu126", "cu130", "cu132", "rocm7.14", "xpu"}
    assert {c[2] for c in SUPPORTED} == set(PLATFORM_OS)
    assert ("2.14", "3.15t", "linux-x86_64", "cu130") in SUPPORTED
    assert not any(c[0] == "2.15" and c[3] == "cu126" for c in SUPPORTED)


def _python_of(tag: str) -> tuple[str, bool]:
    _, minor, ft = python_key(tag)
    return f"3.{minor}.{5 if minor == 13 else 0}", ft


@pytest.mark.parametrize(("release", "tag", "platform_key", "name"), SUPPORTED,
                         ids=["-".join(c) for c in SUPPORTED])
def test_supported_combination(release, tag, platform_key, name):
    python, ft = _python_of(tag)
    env = machine(platform_key, python, free_threaded=ft, gpus=_hardware_for(release, platform_key, name))
    report = diagnose(env, MATRIX, release, accelerator=name)
    assert report.exit_code == 0, [(c.name, c.reason) for c in report.errors]
    plan = report.plan
    assert plan is not None and plan.variant == name and plan.python == tag
    version = MATRIX.latest(release).value
    variant = MATRIX.variant(release, name)
    default = MATRIX.pypi_default(release, platform_key)
    from_pypi = MATRIX.python_on(release, "pypi", tag) is not None and default is not None and default.value == name
    assert plan.from_pypi is from_pypi
    assert plan.pip.startswith(f"python -m pip install torch=={version}")
    if from_pypi:
        assert "--index-url" not in plan.pip
    else:
        assert plan.pip.endswith(f"--index-url {variant.index_url}")
        assert variant.index_url == INDEX + variant.uv_backend
    assert plan.uv == f"uv pip install torch=={version} --torch-backend={variant.uv_backend}"
    # "unverified" is printed exactly when a fact behind the plan is unverified
    text = rendered(report)
    assert plan.verified is all(f.verified for f in plan.facts)
    install_header = text.split("\n\nInstall: ")[1].split("\n  pip  ")[0]
    assert ("[unverified]" in install_header) is not plan.verified
    # the machine's hardware picks the same kind of build without --accelerator
    auto = diagnose(env, MATRIX, release)
    assert MATRIX.variant(release, auto.variant).kind == variant.kind
    if tag.startswith("3.15") and release == "2.14":
        assert verdict(report, "python") == WARN and verdict(report, "torch.compile") == WARN
        assert "--index-url" in plan.pip


@pytest.mark.parametrize(("release", "tag", "platform_key", "name"), UNKNOWN, ids=["-".join(c) for c in UNKNOWN])
def test_a_build_not_known_to_exist_is_unverified_with_the_nearest_known(release, tag, platform_key, name):
    python, ft = _python_of(tag)
    env = machine(platform_key, python, free_threaded=ft, gpus=_hardware_for(release, platform_key, name))
    report = diagnose(env, MATRIX, release, accelerator=name)
    build = checks_of(report, "build")[0]
    assert build.verdict == WARN and not build.verified and "not known" in build.reason
    assert report.plan is not None and not report.plan.verified
    assert "[unverified]" in rendered(report)
    assert report.alternative is not None and report.alternative_label == "nearest build known to exist"
    assert MATRIX.variant(report.alternative.release, report.alternative.variant).available.value is True


def test_the_verified_default_needs_no_index_and_no_unverified_mark():
    report = diagnose(machine(gpus=(nvidia("8.6"),)), MATRIX, "2.14")
    assert report.variant == "cu130" and report.exit_code == 0
    assert report.plan.verified and report.plan.from_pypi
    assert report.plan.pip == "python -m pip install torch==2.14.1"
    assert report.plan.uv == "uv pip install torch==2.14.1 --torch-backend=cu130"
    assert all(c.verified for c in report.checks)
    assert "unverified" not in rendered(report).lower()


# The warnings the issue names -------------------------------------------------------------------------------


def test_python_315_with_214_compile_unavailable_and_pytorch_index_only():
    report = diagnose(machine(python="3.15.0"), MATRIX, "2.14")
    assert verdict(report, "torch.compile") == WARN
    assert "use torch 2.15" in checks_of(report, "torch.compile")[0].reason
    python = checks_of(report, "python")[0]
    assert python.verdict == WARN and "only on the PyTorch index" in python.reason and not python.verified
    assert report.plan.pip == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cpu"
    assert report.exit_code == 0
    later = diagnose(machine(python="3.15.0"), MATRIX, "2.15")
    assert verdict(later, "torch.compile") == OK and verdict(later, "python") == OK


@pytest.mark.parametrize("arch", ["5.0", "5.2", "6.0", "6.1", "7.0"])
def test_pre_turing_gpus_need_214_cu126(arch):
    report = diagnose(machine(gpus=(nvidia(arch),)), MATRIX, "2.15")
    gpu = checks_of(report, "gpu")[0]
    assert gpu.verdict == ERROR and report.exit_code == 1 and report.plan is None
    assert "no build of torch 2.15 supports it" in gpu.reason and "torch 2.14's cu126 build" in gpu.reason
    assert (report.alternative.release, report.alternative.variant) == ("2.14", "cu126")
    assert report.alternative.pip.endswith("--index-url https://download.pytorch.org/whl/cu126")
    text = rendered(report)
    assert "No build of torch 2.15 works" in text and "Nearest build that works here" in text
    ok = diagnose(machine(gpus=(nvidia(arch),)), MATRIX, "2.14")
    assert ok.variant == "cu126" and verdict(ok, "gpu") == OK and ok.exit_code == 0


def test_a_pre_turing_gpu_with_the_wrong_214_build_is_told_the_variant_to_pick():
    report = diagnose(machine(gpus=(nvidia("6.1"),)), MATRIX, "2.14", accelerator="cu130")
    gpu = checks_of(report, "gpu")[0]
    assert gpu.verdict == ERROR and "--accelerator cu126" in gpu.reason
    assert report.alternative.variant == "cu126" and report.alternative.release == "2.14"


def test_rubin_runs_the_sm100_kernels_and_gets_arch_list_advice():
    report = diagnose(machine(gpus=(nvidia("10.7", "NVIDIA Rubin"),)), MATRIX, "2.14")
    gpu = checks_of(report, "gpu")[0]
    assert gpu.verdict == OK and gpu.verified and "sm_100 kernels" in gpu.reason and "Triton 3.8" in gpu.reason
    ext = checks_of(report, "extensions")[0]
    assert 'TORCH_CUDA_ARCH_LIST="10.7"' in ext.reason and 'TORCH_CUDA_ARCH_LIST="Rubin"' in ext.reason
    assert ext.verified
    later = diagnose(machine(gpus=(nvidia("10.7"),)), MATRIX, "2.15")
    assert verdict(later, "gpu") == OK and not checks_of(later, "extensions")[0].verified


def test_a_gpu_no_build_anywhere_supports_falls_back_to_cpu():
    report = diagnose(machine("linux-aarch64", gpus=(nvidia("7.0", "Jetson"),)), MATRIX, "2.14")
    assert verdict(report, "gpu") == ERROR and "no build in the data supports it" in checks_of(report, "gpu")[0].reason
    assert report.alternative.variant == "cpu"


def test_unknown_compute_capability_is_a_warning():
    report = diagnose(machine(gpus=(nvidia(None, "Tesla K80"),)), MATRIX, "2.14")
    assert verdict(report, "gpu") == WARN and "compute capability not known" in checks_of(report, "gpu")[0].reason


def test_torchvision_must_match_torch_and_torchaudio_is_discontinued():
    packages = {"torch": Package("torch", "2.14.1+cu130", "cu130", "version label"),
                "torchvision": Package("torchvision", "0.28.0+cu130", "cu130", "version label"),
                "torchaudio": Package("torchaudio", "2.11.0")}
    report = diagnose(machine(gpus=(nvidia("9.0"),), packages=packages), MATRIX, "2.14")
    vision = checks_of(report, "torchvision")
    assert vision[0].verdict == ERROR and "needs torchvision 0.29" in vision[0].reason
    assert vision[1].verdict == WARN and "torchvision==0.29.2" in vision[1].reason
    audio = checks_of(report, "torchaudio")[0]
    assert audio.verdict == ERROR and "discontinued" in audio.reason and "2.11.0" in audio.reason
    assert report.exit_code == 1
    assert report.plan.pip == "python -m pip install torch==2.14.1 torchvision==0.29.2"
    matching = {"torch": packages["torch"], "torchvision": Package("torchvision", "0.29.2")}
    report = diagnose(machine(gpus=(nvidia("9.0"),), packages=matching), MATRIX, "2.15")
    assert [c.verdict for c in checks_of(report, "torchvision")] == [OK, OK]
    assert "declared ABI-compatible" in checks_of(report, "torchvision")[1].reason
    assert not checks_of(report, "torchvision")[1].verified


def test_python_310_cannot_take_215():
    report = diagnose(machine(python="3.10.14"), MATRIX, "2.15")
    python = checks_of(report, "python")[0]
    assert python.verdict == ERROR and "requires Python >= 3.11" in python.reason and python.verified
    assert report.plan is None and (report.alternative.release, report.alternative.python) == ("2.14", "3.10")
    assert not checks_of(report, "torch.compile")


@pytest.mark.parametrize(("python", "expected"), [("3.13.2", WARN), ("3.13.3", OK), ("3.15.0", OK)])
def test_free_threaded_below_3133_refuses_compile(python, expected):
    report = diagnose(machine(python=python, free_threaded=True), MATRIX, "2.15")
    assert verdict(report, "torch.compile") == expected
    if expected == WARN:
        assert "below 3.13.3" in checks_of(report, "torch.compile")[0].reason


def test_installed_torch_is_compared_with_the_target():
    cpu_torch = {"torch": Package("torch", "2.13.0+cpu", "cpu", "version label")}
    report = diagnose(machine(gpus=(nvidia("8.9"),), packages=cpu_torch), MATRIX, "2.14")
    torch = checks_of(report, "torch")[0]
    assert torch.verdict == WARN and "does not use this machine's GPU" in torch.reason
    assert "older than the target, torch 2.14" in torch.reason and report.plan.variant == "cu130"
    same = {"torch": Package("torch", "2.14.1", "cu130", "torch/version.py")}
    assert verdict(diagnose(machine(gpus=(nvidia("8.9"),), packages=same), MATRIX, "2.14"), "torch") == OK


# The installed torch: fits (nothing to install) or not (and why) ----------------------------------------------


def torch_pkg(version: str, variant: str | None = None, how: str = "") -> dict[str, Package]:
    if variant is not None and not how:
        how = "version label" if "+" in version else "torch/version.py"
    return {"torch": Package("torch", version, variant, how)}


def test_the_package_index_cuda_build_fits_a_machine_without_gpu():
    """Issue 24: torch 2.14.1 from PyPI (its cu130 build) on a GPU-less machine, --target 2.14."""
    report = diagnose(machine(packages=torch_pkg("2.14.1", "cu130")), MATRIX, "2.14")
    assert report.installed.fits and report.nothing_to_install and report.exit_code == 0
    assert report.plan is None and report.alternative is None
    torch = checks_of(report, "torch")[0]
    assert torch.verdict == OK
    assert torch.reason == "torch 2.14.1 (cu130 build, from the package index) is installed and fits: nothing to install"
    # the checks are about the build that is there, and a CUDA build on a machine without GPU is no warning
    assert report.variant == "cu130" and verdict(report, "gpu") == OK and not report.warnings
    text = rendered(report)
    assert "Install:" not in text and "alternative" not in text.lower() and "No build of torch" not in text
    assert ("Nothing to install: torch 2.14.1 (cu130 build, from the package index) is installed and fits torch 2.14"
            in " ".join(text.split()))
    assert text.startswith("torchup doctor: torch 2.14.1 (target 2.14) on this machine: the installed torch 2.14.1 "
                           "fits")
    assert "Result: ready, nothing to install: 0 error(s), 0 warning(s) (exit 0)" in text
    data = json.loads(render_json(report, MATRIX))
    assert data["nothing_to_install"] is True and data["plan"] is None and data["alternative"] is None
    assert data["installed"] == {"torch": "2.14.1", "variant": "cu130", "index": "pypi", "fits": True, "why": None}


@pytest.mark.parametrize(("env", "target", "accelerator", "label"), [
    (machine(packages=torch_pkg("2.14.1+cu130", "cu130")), "2.14", None, "torch 2.14.1+cu130 (from the PyTorch index)"),
    (machine(packages=torch_pkg("2.14.1+cpu", "cpu")), "2.14", None, "torch 2.14.1+cpu (from the PyTorch index)"),
    (machine(packages=torch_pkg("2.14.1", "cu130")), "2.14", "cu130", "torch 2.14.1 (cu130 build, from the package "
     "index)"),
    (machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.14.1+cu126", "cu126")), "2.14", None,
     "torch 2.14.1+cu126 (from the PyTorch index)"),  # not the default build, but it has sm_86 kernels
    (machine(gpus=(nvidia("6.1"),), packages=torch_pkg("2.14.1+cu126", "cu126")), "2.14", None,
     "torch 2.14.1+cu126 (from the PyTorch index)"),
    (machine(gpus=(nvidia("9.0"),), packages=torch_pkg("2.15.0", "cu132")), "2.15", None,
     "torch 2.15.0 (cu132 build, from the package index)"),
    (machine("macos-arm64", gpus=(Gpu("apple", "M4"),), packages=torch_pkg("2.14.1", "cpu")), "2.14", None,
     "torch 2.14.1 (mps build)"),  # the macOS wheel's version.py names no GPU runtime
    (machine(gpus=(Gpu("amd", "AMD GPU gfx942", "gfx942"),), packages=torch_pkg("2.14.1+rocm7.14", "rocm7.14")),
     "2.14", None, "torch 2.14.1+rocm7.14 (from the PyTorch index)"),
])
def test_an_installed_build_that_fits_needs_nothing(env, target, accelerator, label):
    report = diagnose(env, MATRIX, target, accelerator)
    assert report.nothing_to_install and report.plan is None and report.alternative is None, report.installed
    assert report.exit_code == 0 and checks_of(report, "torch")[0].reason.startswith(f"{label} is installed and fits: "
                                                                                     "nothing to install")
    assert json.loads(render_json(report, MATRIX))["nothing_to_install"] is True
    assert "Nothing to install" in rendered(report)


@pytest.mark.parametrize(("env", "target", "accelerator", "why", "torch_verdict", "variant"), [
    (machine(packages=torch_pkg("2.14.0", "cu130")), "2.14", None,
     "an older patch than 2.14.1, the newest of torch 2.14", OK, "cpu"),
    (machine(packages=torch_pkg("2.13.0+cpu", "cpu")), "2.14", None, "older than the target, torch 2.14", OK, "cpu"),
    (machine(packages=torch_pkg("2.15.0", "cu132")), "2.14", None, "newer than the target, torch 2.14", WARN, "cpu"),
    (machine(packages=torch_pkg("2.15.0a0+git1234", "git1234")), "2.15", None,
     "2.15.0a0 is not a release (a pre-release or a source build?)", WARN, "cpu"),
    (machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.14.1+cpu", "cpu")), "2.14", None,
     "it does not use this machine's GPU, GPU (sm_86, Ampere)", WARN, "cu130"),
    (machine(gpus=(nvidia("6.1"),), packages=torch_pkg("2.14.1", "cu130")), "2.14", None,
     "it has no kernels for GPU (sm_61, Pascal)", WARN, "cu126"),
    (machine(gpus=(Gpu("amd", "AMD GPU gfx942", "gfx942"),), packages=torch_pkg("2.14.1", "cu130")), "2.14", None,
     "it does not use this machine's GPU, AMD GPU gfx942", WARN, "rocm7.14"),
    (machine(packages=torch_pkg("2.14.1", "cu130")), "2.14", "cpu", "--accelerator asks for the cpu build", OK, "cpu"),
    (machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.14.1")), "2.14", None,
     "its build is not known from its metadata (--import-torch reads it), so whether it uses GPU (sm_86, Ampere) "
     "cannot be told", WARN, "cu130"),
    (machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.15.0+cu130", "cu130")), "2.15", None,
     "the data does not know whether its kernels run on GPU (sm_86, Ampere)", WARN, "cu132"),
])
def test_an_installed_build_that_does_not_fit_is_replaced_and_says_why(env, target, accelerator, why, torch_verdict,
                                                                       variant):
    report = diagnose(env, MATRIX, target, accelerator)
    assert not report.installed.fits and not report.nothing_to_install
    torch = checks_of(report, "torch")[0]
    assert torch.verdict == torch_verdict and "is installed but does not fit: " + why in torch.reason, torch.reason
    assert report.plan is not None and report.plan.variant == variant
    data = json.loads(render_json(report, MATRIX))
    assert data["installed"]["fits"] is False and data["installed"]["why"] == why and not data["nothing_to_install"]
    assert "Install: " in rendered(report)


def test_replacing_the_same_version_of_another_build_forces_the_reinstall():
    """pip and uv keep an installed 2.14.1+cpu for torch==2.14.1 (the local label matches), so the swap is forced."""
    report = diagnose(machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.14.1+cpu", "cpu")), MATRIX, "2.14")
    assert report.plan.pip == "python -m pip install torch==2.14.1 --force-reinstall"
    assert report.plan.uv == "uv pip install torch==2.14.1 --torch-backend=cu130 --reinstall-package torch"
    assert "forced over the installed torch 2.14.1" in report.plan.summary
    report = diagnose(machine(packages=torch_pkg("2.14.1", "cu130")), MATRIX, "2.14", "cpu")
    assert report.plan.pip.endswith("--index-url https://download.pytorch.org/whl/cpu --force-reinstall")
    assert report.alternative.variant == "cu130" and "--force-reinstall" not in report.alternative.pip
    assert report.alternative_label == "verified alternative, the build installed now"
    older = diagnose(machine(packages=torch_pkg("2.14.0", "cu130")), MATRIX, "2.14")  # the version moves anyway
    assert "--force-reinstall" not in older.plan.pip and "reinstall" not in older.plan.uv


def test_a_cpu_build_fits_a_gpu_no_build_of_the_target_supports():
    report = diagnose(machine(gpus=(nvidia("6.1"),), packages=torch_pkg("2.15.0+cpu", "cpu")), MATRIX, "2.15")
    assert report.nothing_to_install and report.exit_code == 0
    assert "torch 2.14's cu126 build does" in checks_of(report, "torch")[0].reason
    assert verdict(report, "gpu") == WARN  # the GPU stays unused, and the report says so
    cuda = diagnose(machine(gpus=(nvidia("6.1"),), packages=torch_pkg("2.15.0", "cu132")), MATRIX, "2.15")
    assert not cuda.installed.fits and cuda.exit_code == 1 and cuda.alternative.variant == "cu126"
    assert "has no kernels for GPU (sm_61, Pascal); see below" in checks_of(cuda, "torch")[0].reason


def test_a_fitting_torch_with_torchvision_to_move_installs_torchvision_only():
    packages = {**torch_pkg("2.14.1", "cu130"), "torchvision": Package("torchvision", "0.28.0")}
    report = diagnose(machine(packages=packages), MATRIX, "2.14")
    assert report.installed.fits and not report.nothing_to_install and report.alternative is None
    assert "only torchvision must move with it" in checks_of(report, "torch")[0].reason
    assert report.plan.pip == "python -m pip install torch==2.14.1 torchvision==0.29.2"  # torch stays as it is
    matching = {**torch_pkg("2.14.1", "cu130"), "torchvision": Package("torchvision", "0.29.2")}
    report = diagnose(machine(packages=matching), MATRIX, "2.14")
    assert report.nothing_to_install and "the installed 0.29.2 goes with it" in checks_of(report, "torchvision")[1].reason


def test_a_later_patch_or_an_unknown_build_without_gpu_fits():
    later = diagnose(machine(packages=torch_pkg("2.14.2", "cu130")), MATRIX, "2.14")
    assert later.nothing_to_install and "a later patch than 2.14.1" in checks_of(later, "torch")[0].reason
    unknown = diagnose(machine(packages=torch_pkg("2.14.1")), MATRIX, "2.14")
    assert unknown.nothing_to_install and unknown.variant is None and "any build of it runs on the CPU" in \
        checks_of(unknown, "torch")[0].reason
    runtime = dataclasses.replace(machine(gpus=(nvidia("8.6"),), packages=torch_pkg("2.14.1")),
                                  torch_runtime={"version": "2.14.1", "cuda": "13.0"})
    assert diagnose(runtime, MATRIX, "2.14").nothing_to_install  # --import-torch told the build


def test_what_if_python_or_platform_does_not_judge_the_installed_torch():
    env = dataclasses.replace(machine(packages=torch_pkg("2.14.1", "cu130")), packages_checked=False,
                              simulated=("python",))
    report = diagnose(env, MATRIX, "2.14")
    assert report.installed is None and report.plan is not None
    assert json.loads(render_json(report, MATRIX))["installed"] is None


def test_doctor_cli_says_nothing_to_install(capsys, monkeypatch):
    env = machine(executable="/opt/py/bin/python3", packages=torch_pkg("2.14.1", "cu130"))
    monkeypatch.setattr(probes_module, "detect", lambda timeout=3.0, import_torch_too=False: env)
    code, out, _ = run_main(capsys, "--target", "2.14")
    assert code == 0 and "Nothing to install" in out and "Install:" not in out and " pip " not in out
    code, out, _ = run_main(capsys, "--target", "2.14", "--output-format", "json")
    assert code == 0 and json.loads(out)["nothing_to_install"] is True
    code, out, _ = run_main(capsys, "--target", "2.14", "--gpu-arch", "6.1")  # what if: a Pascal GPU here
    flat = " ".join(out.split())
    assert code == 0 and "it has no kernels for simulated NVIDIA GPU (sm_61, Pascal)" in flat and "cu126" in out


# Combinations that have no build: a clear message, the nearest that works ----------------------------------


UNSUPPORTED = [
    ("2.15", machine(python="3.10.12"), None, "python", "cannot take torch 2.15", ("2.14", "3.10", "cpu")),
    ("2.15", machine(), "cu126", "build", "has no cu126 build", ("2.15", "3.11", "cu132")),
    ("2.15", machine("macos-arm64", gpus=(Gpu("apple", "M4"),)), "cu132", "build",
     "not made for macos-arm64", ("2.15", "3.11", "mps")),
    ("2.14", machine("windows-x86_64"), "rocm7.14", "build", "not made for windows-x86_64",
     ("2.14", "3.11", "cpu")),
    ("2.14", machine(python="3.14.0", free_threaded=True), None, "python", "no wheels for Python 3.14t",
     ("2.14", "3.15t", "cpu")),
    ("2.15", machine(python="3.16.0"), None, "python", "no wheels for Python 3.16", ("2.15", "3.15", "cpu")),
    ("2.14", machine(python="3.9.18"), None, "python", "requires Python >= 3.10", ("2.14", "3.10", "cpu")),
    ("2.15", machine("linux-aarch64", gpus=(nvidia("6.1"),)), None, "gpu", "has no kernels", None),
    ("2.14", machine("linux-x86_64", gpus=(nvidia("9.0"),)), "mps", "build", "not made for linux-x86_64",
     ("2.14", "3.11", "cu130")),
]


@pytest.mark.parametrize(("target", "env", "accelerator", "check", "message", "nearest"), UNSUPPORTED,
                         ids=[f"{u[0]}-{u[1].python_tag}-{u[1].platform_key}-{u[2]}" for u in UNSUPPORTED])
def test_unsupported_combination(target, env, accelerator, check, message, nearest):
    report = diagnose(env, MATRIX, target, accelerator)
    failing = [c for c in report.errors if c.name == check]
    assert failing and message in failing[0].reason, [(c.name, c.reason) for c in report.checks]
    assert report.exit_code == 1 and report.plan is None
    text = rendered(report)
    assert f"No build of torch {target} works for this combination" in text
    if nearest is None:
        assert report.alternative is not None and report.alternative.variant == "cpu"
    else:
        alt = report.alternative
        assert (alt.release, alt.python, alt.variant) == nearest
        assert f"torch=={MATRIX.latest(alt.release).value}" in alt.pip


def test_an_unknown_platform_says_so_and_offers_nothing():
    env = Environment(os="Linux", machine="ppc64le", python="3.12.1")
    report = diagnose(env, MATRIX, "2.15")
    assert verdict(report, "platform") == ERROR and "no wheels for Linux ppc64le" in report.checks[0].reason
    assert report.plan is None and report.alternative is None
    assert "No other build in the data works here either." in rendered(report)


# The command line (in process, with a simulated machine) ----------------------------------------------------


@pytest.fixture
def this_machine(monkeypatch):
    """``detect()`` returns a fixed, GPU-less Linux x86-64 machine with Python 3.11.7."""
    env = machine(executable="/opt/py/bin/python3")
    monkeypatch.setattr(probes_module, "detect", lambda timeout=3.0, import_torch_too=False: env)
    return env


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("argv", [["--target", "2.16"], ["--python", "three"], ["--python", "2.7"],
                                  ["--platform", "solaris-sparc"], ["--accelerator", "cu999"], ["--gpu-arch", "x"],
                                  ["--output-format", "yaml"], ["--probe-timeout", "0"], ["--frobnicate"]])
def test_usage_errors_exit_2_with_a_message(capsys, this_machine, argv):
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == "" and "torchup doctor: error:" in err


def test_help_exits_0(capsys, this_machine):
    code, out, _ = run_main(capsys, "--help")
    assert code == 0 and "--accelerator" in out and "cu126" in out and "--gpu-arch" in out


def test_this_machine_uses_its_interpreter_in_the_commands(capsys, this_machine):
    code, out, _ = run_main(capsys, "--target", "2.14", "--output-format", "json")
    data = json.loads(out)
    assert code == 0 and data["variant"] == "cpu"
    assert data["plan"]["pip"] == ("/opt/py/bin/python3 -m pip install torch==2.14.1 "
                                   "--index-url https://download.pytorch.org/whl/cpu")
    assert data["plan"]["uv"] == "uv pip install --python /opt/py/bin/python3 torch==2.14.1 --torch-backend=cpu"


def test_what_if_options(capsys, this_machine):
    code, out, _ = run_main(capsys, "--target", "2.14", "--python", "3.15t", "--platform", "linux-aarch64",
                            "--gpu-arch", "sm_90", "--output-format", "json")
    data = json.loads(out)
    assert code == 0
    assert data["environment"]["python_tag"] == "3.15t" and data["environment"]["platform"] == "linux-aarch64"
    assert data["environment"]["simulated"] == ["python", "platform", "gpu-arch"]
    assert data["environment"]["packages"] is None
    assert data["variant"] == "cu130"
    assert data["plan"]["pip"] == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu130"
    verdicts = {c["name"]: c["verdict"] for c in data["checks"]}
    assert verdicts["python"] == WARN and verdicts["torch.compile"] == WARN and verdicts["gpu"] == OK
    code, out, _ = run_main(capsys, "--gpu-arch", "6.1")
    assert code == 1 and "error  gpu" in out and "--index-url https://download.pytorch.org/whl/cu126" in out


def test_doctor_is_reached_through_the_torchup_cli(capsys, this_machine):
    from torchup.cli.main import main as cli_main

    code = cli_main(["doctor", "--platform", "macos-arm64", "--output-format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["variant"] == "mps" and data["environment"]["gpus"][0]["vendor"] == "apple"


def test_unverified_is_printed_for_unverified_facts(capsys, this_machine):
    code, out, _ = run_main(capsys)  # 2.15 cpu: the facts verify only 2.15's CUDA 13.2 build
    assert code == 0
    assert "[unverified]" in out and "Verified alternative: torch 2.14.1, CUDA 13.0 build (cu130)" in out
    # by default one line counts them; --verbose lists them, with their sources
    count = len(json.loads(run_main(capsys, "--output-format", "json")[1])["unverified_facts"])
    assert count > 1
    assert f"\n{count} facts behind this report are unverified (marked [unverified]); --verbose lists them\n" in out
    assert "Unverified facts behind this report" not in out and "sources:" not in out
    for flag in ("--verbose", "-v"):
        code, verbose, _ = run_main(capsys, flag)
        assert code == 0 and "--verbose lists them" not in verbose
        assert "Unverified facts behind this report (marked so in the data" in verbose and "  sources:" in verbose
        assert "torch 2.15 has a cpu build (the facts verify only the CUDA 13.2 build" in verbose
        listed = verbose.split("Unverified facts behind this report")[1].split("  sources:")[0]
        assert listed.count("\n  - ") == count


def test_one_unverified_fact_is_counted_in_the_singular():
    report = diagnose(machine(python="3.15.0"), MATRIX, "2.14", "cu130")  # 3.15 wheels: only the index says so
    text = render_text(report, MATRIX)
    assert "\n1 fact behind this report is unverified (marked [unverified]); --verbose lists them\n" in text
    assert "releases.2.14.python.pytorch_index[0]" in render_text(report, MATRIX, verbose=True)


def test_help_lists_verbose(capsys, this_machine):
    code, out, _ = run_main(capsys, "--help")
    assert code == 0 and "--verbose" in out


# Probes: fake tools on PATH ----------------------------------------------------------------------------------


def fake_tool(directory: Path, name: str, script: str) -> Path:
    path = directory / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)
    return path


posix_only = pytest.mark.skipif(os.name != "posix", reason="fake tools are shell scripts")


def doctor_subprocess(*argv: str, path_dir: Path | None = None, timeout: float = 60,
                      pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (pythonpath, REPO_ROOT) if p) + os.pathsep + env.get(
        "PYTHONPATH", "")
    env.pop("TORCHUP_DEBUG", None)
    if path_dir is not None:
        env["PATH"] = f"{path_dir}{os.pathsep}{env['PATH']}"
    return subprocess.run([sys.executable, "-m", "torchup", "doctor", *argv], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=timeout, check=False)


@posix_only
def test_fake_nvidia_smi_pascal_end_to_end(tmp_path):
    fake_tool(tmp_path, "nvidia-smi", f'echo "{PASCAL}"')
    result = doctor_subprocess("--output-format", "json", path_dir=tmp_path)
    data = json.loads(result.stdout)
    assert data["environment"]["gpus"][0] == {"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080", "arch": "6.1",
                                              "driver": "550.54"}
    gpu = next(c for c in data["checks"] if c["name"] == "gpu")
    assert gpu["verdict"] == "error" and "sm_61, Pascal" in gpu["reason"]
    assert result.returncode == 1 and data["plan"] is None
    assert (data["alternative"]["release"], data["alternative"]["variant"]) == ("2.14", "cu126")
    result = doctor_subprocess("--target", "2.14", path_dir=tmp_path)
    assert "CUDA 12.6 (legacy) build (cu126)" in result.stdout
    assert "--index-url https://download.pytorch.org/whl/cu126" in result.stdout and "Traceback" not in result.stderr


@posix_only
def test_a_hanging_probe_times_out_and_its_children_die(tmp_path):
    pidfile = tmp_path / "pid"
    fake_tool(tmp_path, "nvidia-smi", f"sleep 30 & echo $! > {pidfile}; wait")
    monkey_path = f"{tmp_path}{os.pathsep}{os.environ['PATH']}"
    start = time.monotonic()
    result = probes_module.run_probe(probes_module.NVIDIA_QUERY, timeout=0.5, env={"PATH": monkey_path})
    assert result.status == "timed out" and "0.5 s" in result.detail
    assert time.monotonic() - start < 5
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the probe's grandchild (sleep) survived the timeout")
    start = time.monotonic()
    run = doctor_subprocess("--probe-timeout", "0.5", path_dir=tmp_path)
    assert time.monotonic() - start < 20
    assert "nvidia-smi: timed out" in run.stdout and run.returncode in (0, 1) and "Traceback" not in run.stderr


@posix_only
def test_failing_and_old_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    fake_tool(tmp_path, "nvidia-smi", 'echo "NVIDIA-SMI has failed because it could not communicate with the '
              'NVIDIA driver." >&2; exit 9')
    gpus, probe = probes_module.probe_nvidia(timeout=3)
    assert gpus == [] and probe.status == "failed" and "exited 9: NVIDIA-SMI has failed" in probe.detail
    fake_tool(tmp_path, "nvidia-smi", 'case "$*" in *compute_cap*) echo \'Field "compute_cap" is not a valid field '
              'to query.\'; exit 2;; esac; echo "Tesla K80, 470.57"')
    gpus, probe = probes_module.probe_nvidia(timeout=3)
    assert gpus == [Gpu("nvidia", "Tesla K80", None, "470.57")] and probe.status == "found"


@posix_only
def test_rocm_and_intel_probes(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin")
    fake_tool(tmp_path, "rocminfo", 'echo "Agent 2"; echo "  Name:                    gfx942"; '
              'echo "  Marketing Name:          AMD Instinct MI300X"')
    gpus, found = probes_module.probe_rocm(timeout=3)
    assert gpus == [Gpu("amd", "AMD GPU gfx942", "gfx942")] and found[0] == Probe("rocminfo", "found", "gfx942")
    report = diagnose(machine(gpus=tuple(gpus)), MATRIX, "2.14")
    assert report.variant == "rocm7.14" and report.plan.uv.endswith("--torch-backend=rocm7.14")
    node = tmp_path / "drm" / "renderD128" / "device"
    node.mkdir(parents=True)
    (node / "vendor").write_text("0x8086\n")
    gpus, found = probes_module.probe_intel(timeout=3, drm=tmp_path / "drm")
    assert [p.status for p in found] == ["not found", "not found", "found"]
    assert gpus and gpus[0].vendor == "intel"
    assert diagnose(machine(gpus=tuple(gpus)), MATRIX, "2.14").variant == "xpu"
    (node / "vendor").write_text("0x10de\n")
    assert probes_module.probe_intel(timeout=3, drm=tmp_path / "drm")[0] == []


def test_apple_and_machine_names():
    assert probes_module.probe_apple("Darwin", "arm64")[0] == [Gpu("apple", "Apple Silicon GPU (MPS)")]
    assert probes_module.probe_apple("Linux", "x86_64")[1].status == "not found"
    assert probes_module.normalise_machine("Windows", "AMD64") == "x86_64"
    assert probes_module.normalise_machine("Darwin", "arm64") == "arm64"
    assert probes_module.normalise_machine("Linux", "arm64") == "aarch64"


def test_environment_kinds(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nuv = 0.9.5\n")
    assert probes_module.detect_env_kind(str(venv), "/usr", {})[0] == "uv venv"
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert probes_module.detect_env_kind(str(venv), "/usr", {})[0] == "venv"
    conda = tmp_path / "conda"
    conda.mkdir()
    assert probes_module.detect_env_kind(str(conda), str(conda), {"CONDA_PREFIX": str(conda)})[0] == "conda"
    kind, detail = probes_module.detect_env_kind(str(conda), str(conda), {"UV": "/usr/bin/uv"})
    assert kind == "system" and "UV is set" in detail


def _dist(site: Path, name: str, version: str, requires: str = "", files: dict[str, str] | None = None) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}")
    for rel, text in (files or {}).items():
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


@pytest.mark.parametrize(("version", "requires", "files", "variant", "how"), [
    ("2.14.1+cu130", "", None, "cu130", "version label"),
    ("2.14.1", "", {"torch/version.py": "__version__ = '2.14.1+cu130'\ncuda: str = '13.0'\n"}, "cu130",
     "torch/version.py"),
    ("2.14.1", "", {"torch/version.py": "__version__ = '2.14.1'\ncuda = None\nrocm = '7.14.1'\nhip = '7.14'\n"},
     "rocm7.14", "torch/version.py"),
    ("2.14.1", "Requires-Dist: cuda-toolkit[cublas]==13.0.3; platform_system == \"Linux\"\n", None, "cu130",
     "CUDA dependency"),
    ("2.14.1", "", {"torch/version.py": "__version__ = '2.14.1'\ncuda: Optional[str] = None\nhip = None\nxpu = None\n"},
     "cpu", "torch/version.py"),  # the macOS and Windows wheels on PyPI: no label, no GPU runtime
    ("2.14.1", "", None, None, ""),
])
def test_installed_variant_from_metadata_without_importing(tmp_path, monkeypatch, version, requires, files, variant,
                                                            how):
    _dist(tmp_path, "torch", version, requires, files)
    monkeypatch.syspath_prepend(str(tmp_path))
    package = probes_module.read_package("torch")
    assert package == Package("torch", version, variant, how)
    assert package.release == "2.14"


# Real runs on this machine -----------------------------------------------------------------------------------


def test_doctor_on_this_machine():
    start = time.monotonic()
    result = doctor_subprocess("--output-format", "json")
    elapsed = time.monotonic() - start
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == "" and elapsed < 20
    env = json.loads(result.stdout)["environment"]
    assert env["python"] == platform.python_version()
    assert env["python_tag"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert env["executable"] == sys.executable
    text = doctor_subprocess().stdout
    assert text.startswith("torchup doctor: installing torch 2.15.0") and "Result: " in text


@pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64" and sys.version_info[:2] == (3, 11)),
                    reason="the project's machines: Linux x86-64, Python 3.11")
@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a machine with an NVIDIA GPU")
def test_this_machine_is_linux_x86_64_python_311_without_gpu():
    result = doctor_subprocess("--output-format", "json")
    data = json.loads(result.stdout)
    env = data["environment"]
    assert (env["os"], env["machine"], env["platform"], env["python_tag"]) == ("Linux", "x86_64", "linux-x86_64",
                                                                              "3.11")
    assert env["gpus"] == [] and not env["free_threaded"]
    assert {p["name"]: p["status"] for p in env["probes"]}["nvidia-smi"] == "not found"
    assert result.returncode == data["exit_code"] and result.returncode in (0, 1)


TORCH_ENVS = Path(os.environ.get("TORCHUP_TORCH_ENVS", Path.home() / ".cache" / "torchup" / "envs"))
REAL_214 = TORCH_ENVS / "torch-2.14.1"


@pytest.mark.skipif(not (REAL_214 / ".torchup-ready").exists(), reason="no venv with the real torch 2.14.1 (the "
                    "differential tests make it: tests/differential/envs.py)")
@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a machine with an NVIDIA GPU")
def test_a_real_torch_214_from_the_package_index_needs_nothing():
    """Issue 24 on the real wheel: pip's torch 2.14.1 (its cu130 build, read from its metadata) on this GPU-less
    machine fits --target 2.14; doctor reads the metadata only, so this is quick."""
    python = REAL_214 / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([str(python), "-m", "torchup.doctor", "--target", "2.14", "--output-format", "json"],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60, check=False)
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["nothing_to_install"] is True, result.stdout
    assert data["installed"]["fits"] and data["installed"]["variant"] == "cu130" and data["plan"] is None
    text = subprocess.run([str(python), "-m", "torchup.doctor", "--target", "2.14"], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=60, check=False).stdout
    assert "is installed and fits: nothing to install" in text and "Install:" not in text


def test_python_m_torchup_doctor_module():
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([sys.executable, "-m", "torchup.doctor", "--platform", "windows-x86_64", "--gpu-arch",
                             "8.6", "--target", "2.14", "--output-format", "json"], capture_output=True, text=True,
                            env=env, cwd=REPO_ROOT, timeout=60, check=False)
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["variant"] == "cu130"
    assert data["plan"]["pip"] == "python -m pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu130"


def test_torch_is_imported_only_with_import_torch(tmp_path):
    marker = tmp_path / "imported"
    site = tmp_path / "site"
    _dist(site, "torch", "2.14.1+cpu", files={
        "torch/__init__.py": f"open({str(marker)!r}, 'w').close()\n__version__ = '2.14.1+cpu'\nfrom . import version\n",
        "torch/version.py": "__version__ = '2.14.1+cpu'\ncuda = None\nhip = None\nxpu = None\n",
    })
    result = doctor_subprocess("--target", "2.14", pythonpath=site)
    assert "torch 2.14.1+cpu" in result.stdout and not marker.exists()
    assert "torch runtime" not in result.stdout
    result = doctor_subprocess("--target", "2.14", "--import-torch", pythonpath=site)
    assert marker.exists() and "torch runtime" in result.stdout and "torch 2.14.1+cpu imports (CPU build)" in result.stdout
