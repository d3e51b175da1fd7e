"""What this machine has, found without importing torch.

Every probe is soft: a missing tool is "not found", a hanging one is "timed out" after a few seconds, a crash
or unreadable output is "failed"; none raises. ``detect()`` returns an ``Environment``, a plain dataclass that
tests build directly to simulate other machines.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

DEFAULT_TIMEOUT = 3.0
PACKAGES = ("torch", "torchvision", "torchaudio", "torchcodec", "triton", "pytorch-triton", "pytorch-triton-rocm",
            "pytorch-triton-xpu")
NVIDIA_QUERY = ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"]
NVIDIA_QUERY_OLD = ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
INTEL_PCI_VENDOR = "0x8086"


@dataclass(frozen=True)
class Probe:
    """One look at the machine: what was run or read, and what came of it."""

    name: str  # what was checked, e.g. "nvidia-smi" or "/sys/class/drm (Intel render nodes)"
    status: str  # "found", "not found", "timed out", "failed"
    detail: str = ""


@dataclass(frozen=True)
class Gpu:
    """One GPU a probe found."""

    vendor: str  # "nvidia", "amd", "intel", "apple"
    name: str
    arch: str | None = None  # NVIDIA compute capability "8.6"; AMD "gfx90a"; None when not known
    driver: str | None = None


@dataclass(frozen=True)
class Package:
    """An installed distribution, read from its metadata (never imported)."""

    name: str
    version: str  # as installed, e.g. "2.14.1+cu130" or "2.14.1"
    variant: str | None = None  # "cpu", "cu130", "rocm7.14", "xpu"...; None when not known
    variant_from: str = ""  # how the variant was found

    @property
    def public(self) -> str:
        return self.version.split("+", 1)[0]

    @property
    def release(self) -> str:
        """``"2.14.1+cu130"`` -> ``"2.14"``."""
        parts = re.findall(r"\d+", self.public)[:2]
        return ".".join(parts)


@dataclass(frozen=True)
class Environment:
    """The machine doctor reasons about: detected, or built by a test or by the what-if options."""

    os: str  # platform.system(): "Linux", "Windows", "Darwin"
    machine: str  # normalised: "x86_64", "aarch64" (Linux), "arm64" (macOS)
    python: str  # "3.11.7", or "3.15" when simulated without a patch level
    free_threaded: bool = False
    env_kind: str = "system"  # "venv", "uv venv", "conda", "system"
    env_detail: str = ""
    executable: str | None = None  # the interpreter doctor would install into; None when simulated
    packages: Mapping[str, Package] = field(default_factory=dict)
    gpus: tuple[Gpu, ...] = ()
    probes: tuple[Probe, ...] = ()
    torch_runtime: Mapping[str, object] | None = None  # from --import-torch
    simulated: tuple[str, ...] = ()  # what the what-if options replaced
    packages_checked: bool = True

    @property
    def platform_key(self) -> str:
        system = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}.get(self.os, self.os.lower())
        return f"{system}-{self.machine}"

    @property
    def python_minor(self) -> tuple[int, int]:
        major, minor = self.python.split(".")[:2]
        return int(major), int(minor)

    @property
    def python_tag(self) -> str:
        return f"{self.python_minor[0]}.{self.python_minor[1]}" + ("t" if self.free_threaded else "")

    def gpus_of(self, vendor: str) -> list[Gpu]:
        return [gpu for gpu in self.gpus if gpu.vendor == vendor]


# running probes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """What running one probe gave."""

    status: str  # "found", "not found", "timed out", "failed"
    stdout: str = ""
    detail: str = ""


def run_probe(command: Sequence[str], timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None) -> Output:
    """Run ``command`` with a deadline; never raises. The whole process group is killed on timeout."""
    exe = shutil.which(command[0], path=(env or os.environ).get("PATH"))
    if exe is None:
        return Output("not found")  # not on PATH
    kwargs: dict[str, object] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen(
            [exe, *command[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=None if env is None else dict(env),
            **kwargs,  # type: ignore[call-overload]
        )
    except (OSError, ValueError) as exc:
        return Output("failed", detail=f"{command[0]}: {exc}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return Output("timed out", detail=f"{command[0]} gave no answer within {timeout:g} s")
    except OSError as exc:  # pragma: no cover - pipes failing
        _kill(proc)
        return Output("failed", detail=f"{command[0]}: {exc}")
    if proc.returncode != 0:
        first = (err or out).strip().splitlines()
        return Output("failed", stdout=out, detail=f"{command[0]} exited {proc.returncode}"
                      + (f": {first[0][:160]}" if first else ""))
    return Output("found", stdout=out)


def _kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError):
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired, OSError):
        proc.communicate(timeout=1)


# the probes --------------------------------------------------------------------------------------------------


def probe_nvidia(timeout: float = DEFAULT_TIMEOUT) -> tuple[list[Gpu], Probe]:
    """``nvidia-smi --query-gpu=name,driver_version,compute_cap``: one GPU per line."""
    result = run_probe(NVIDIA_QUERY, timeout)
    old_driver = False
    if result.status == "failed" and "compute_cap" in result.detail + result.stdout:
        result, old_driver = run_probe(NVIDIA_QUERY_OLD, timeout), True  # drivers before 510 lack compute_cap
    if result.status != "found":
        return [], Probe("nvidia-smi", result.status, result.detail)
    gpus = parse_nvidia_smi(result.stdout, with_arch=not old_driver)
    if not gpus:
        return [], Probe("nvidia-smi", "found", "no GPU listed")
    detail = "; ".join(f"{g.name}, driver {g.driver or '?'}, compute capability {g.arch or 'unknown'}" for g in gpus)
    return gpus, Probe("nvidia-smi", "found", detail)


def parse_nvidia_smi(text: str, with_arch: bool = True) -> list[Gpu]:
    gpus = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        parts = [p.strip() for p in line.rsplit(",", 2 if with_arch else 1)]
        if with_arch and len(parts) == 3:
            name, driver, cap = parts
            arch = cap if re.fullmatch(r"\d+\.\d+", cap) else None
        elif len(parts) >= 2:
            name, driver, arch = parts[0], parts[1], None
        else:
            continue
        gpus.append(Gpu("nvidia", name, arch, driver or None))
    return gpus


def probe_rocm(timeout: float = DEFAULT_TIMEOUT) -> tuple[list[Gpu], list[Probe]]:
    """``rocminfo`` (GPU agents, gfx names), else ``hipconfig --version`` (ROCm present, GPUs unknown)."""
    result = run_probe(["rocminfo"], timeout)
    if result.status == "found":
        names = sorted(set(re.findall(r"^\s*Name:\s*(gfx[0-9a-z]+)\s*$", result.stdout, flags=re.MULTILINE)))
        gpus = [Gpu("amd", f"AMD GPU {name}", name) for name in names]
        return gpus, [Probe("rocminfo", "found", ", ".join(names) or "no GPU agent listed")]
    probes = [Probe("rocminfo", result.status, result.detail)]
    hip = run_probe(["hipconfig", "--version"], timeout)
    detail = hip.stdout.strip().splitlines()[0][:80] if hip.status == "found" and hip.stdout.strip() else hip.detail
    probes.append(Probe("hipconfig", hip.status, f"HIP {detail}" if hip.status == "found" else detail))
    if hip.status == "found":
        return [Gpu("amd", "ROCm installation (hipconfig), GPU not identified")], probes
    return [], probes


def probe_intel(timeout: float = DEFAULT_TIMEOUT, drm: Path = Path("/sys/class/drm")) -> tuple[list[Gpu], list[Probe]]:
    """``xpu-smi discovery``, ``sycl-ls``, and Intel (PCI vendor 0x8086) render nodes under /sys/class/drm."""
    probes = []
    gpus: list[Gpu] = []
    smi = run_probe(["xpu-smi", "discovery"], timeout)
    names = re.findall(r"Device Name:\s*(.+?)\s*\|", smi.stdout) if smi.status == "found" else []
    probes.append(Probe("xpu-smi", smi.status, ", ".join(names) if smi.status == "found" else smi.detail))
    gpus += [Gpu("intel", name) for name in names]
    sycl = run_probe(["sycl-ls"], timeout)
    sycl_gpus = re.findall(r"\[level_zero:gpu\]\S*\s+(.+)", sycl.stdout) if sycl.status == "found" else []
    probes.append(Probe("sycl-ls", sycl.status, "; ".join(s.strip() for s in sycl_gpus)
                        if sycl.status == "found" else sycl.detail))
    if not gpus:
        gpus += [Gpu("intel", name.strip()) for name in sycl_gpus]
    nodes = intel_render_nodes(drm)
    label = "/sys/class/drm (Intel render nodes, PCI vendor 0x8086)"
    probes.append(Probe(label, "found" if nodes else "not found", ", ".join(nodes) if nodes else "none"))
    if not gpus and nodes:
        gpus.append(Gpu("intel", f"Intel GPU ({nodes[0]}; model not identified)"))
    return gpus, probes


def intel_render_nodes(drm: Path = Path("/sys/class/drm")) -> list[str]:
    try:
        entries = sorted(drm.glob("renderD*"))
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            vendor = (entry / "device" / "vendor").read_text(encoding="ascii").strip()
        except OSError:
            continue
        if vendor.lower() == INTEL_PCI_VENDOR:
            found.append(entry.name)
    return found


def probe_apple(system: str, machine: str) -> tuple[list[Gpu], Probe]:
    if system != "Darwin":
        return [], Probe("Apple Silicon (platform)", "not found", "not macOS")
    if machine == "arm64":
        return [Gpu("apple", "Apple Silicon GPU (MPS)")], Probe("Apple Silicon (platform)", "found", "arm64")
    return [], Probe("Apple Silicon (platform)", "not found", f"macOS on {machine}")


# Python and packages -----------------------------------------------------------------------------------------


def normalise_machine(system: str, machine: str) -> str:
    m = machine.lower()
    if m in ("x86_64", "amd64", "x64"):
        return "x86_64"
    if m in ("aarch64", "arm64", "armv8l"):
        return "arm64" if system == "Darwin" else "aarch64"
    return m


def is_free_threaded() -> bool:
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def detect_env_kind(prefix: str, base_prefix: str, environ: Mapping[str, str]) -> tuple[str, str]:
    """("venv" | "uv venv" | "conda" | "system", how it was told): from sys.prefix, CONDA_PREFIX, pyvenv.cfg."""
    marks = []
    if environ.get("UV"):
        marks.append("running under uv (UV is set)")
    conda = environ.get("CONDA_PREFIX")
    if prefix != base_prefix:
        cfg = Path(prefix) / "pyvenv.cfg"
        uv_version = None
        try:
            for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "uv":
                    uv_version = value.strip()
        except OSError:
            pass
        if uv_version is not None:
            return "uv venv", "; ".join([f"{prefix} (pyvenv.cfg: created by uv {uv_version})", *marks])
        return "venv", "; ".join([f"{prefix} (sys.prefix differs from sys.base_prefix)", *marks])
    if conda and os.path.normcase(os.path.realpath(conda)) == os.path.normcase(os.path.realpath(prefix)):
        return "conda", "; ".join([f"{prefix} (CONDA_PREFIX)", *marks])
    if (Path(prefix) / "conda-meta").is_dir():
        return "conda", "; ".join([f"{prefix} (conda-meta)", *marks])
    return "system", "; ".join([f"{prefix}: not a virtual environment", *marks])


def read_package(name: str) -> Package | None:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    except Exception:  # a broken .dist-info must not stop doctor
        return None
    version = dist.version or "?"
    variant, how = variant_of(version, dist if name == "torch" else None)
    return Package(name, version, variant, how)


def variant_of(version: str, dist: metadata.Distribution | None = None) -> tuple[str | None, str]:
    """The build variant: the local label (``+cu130``), else torch/version.py, else the CUDA dependency."""
    if "+" in version:
        return version.split("+", 1)[1], "version label"
    if dist is None:
        return None, ""
    try:
        path = Path(str(dist.locate_file("torch/version.py")))
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
    except OSError:
        text = ""
    values = _literal_assignments(text)
    label = str(values.get("__version__") or "")
    if "+" in label:
        return label.split("+", 1)[1], "torch/version.py"
    if values.get("cuda"):
        major, _, minor = str(values["cuda"]).partition(".")
        return f"cu{major}{minor[:1]}", "torch/version.py"
    if values.get("rocm") or values.get("hip"):
        rocm = re.match(r"\d+\.\d+", str(values.get("rocm") or ""))
        return (f"rocm{rocm.group(0)}" if rocm else "rocm"), "torch/version.py"
    if values.get("xpu"):
        return "xpu", "torch/version.py"
    for requirement in dist.requires or []:
        match = re.match(r"(?:cuda-toolkit|nvidia-cuda-runtime(?:-cu\d+)?)\b[^=]*==\s*(\d+)\.(\d+)", requirement)
        if match:
            return f"cu{match.group(1)}{match.group(2)}", "CUDA dependency"
    if "cuda" in values and "__version__" in values:  # it names no GPU runtime: the CPU build (macOS: CPU + MPS)
        return "cpu", "torch/version.py"
    return None, ""


def _literal_assignments(text: str) -> dict[str, object]:
    values: dict[str, object] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return values
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is not None and isinstance(value, ast.Constant):
            values[target] = value.value
    return values


TORCH_RUNTIME_SCRIPT = """
import json, torch
info = {"version": torch.__version__, "cuda": torch.version.cuda, "hip": torch.version.hip,
        "xpu": getattr(torch.version, "xpu", None)}
try:
    info["cuda_available"] = bool(torch.cuda.is_available())
    info["device_count"] = torch.cuda.device_count() if info["cuda_available"] else 0
    flags = torch._C._cuda_getArchFlags() if hasattr(torch._C, "_cuda_getArchFlags") else ""
    info["arch_list"] = (flags or "").split()
except Exception as exc:
    info["cuda_error"] = repr(exc)
try:
    info["mps_available"] = bool(torch.backends.mps.is_available())
except Exception:
    info["mps_available"] = False
print("TORCHUP-DOCTOR " + json.dumps(info))
"""


def import_torch(python: str, timeout: float) -> tuple[dict[str, object] | None, Probe]:
    """Import torch in a child interpreter (never in doctor's own process) and read its build."""
    result = run_probe([python, "-c", TORCH_RUNTIME_SCRIPT], timeout)
    if result.status != "found":
        return None, Probe("import torch", result.status, result.detail or "torch is not importable")
    for line in result.stdout.splitlines():
        if line.startswith("TORCHUP-DOCTOR "):
            try:
                info = json.loads(line[len("TORCHUP-DOCTOR "):])
            except ValueError:
                break
            return info, Probe("import torch", "found", f"torch {info.get('version')}")
    return None, Probe("import torch", "failed", "no answer from the child interpreter")


def detect(timeout: float = DEFAULT_TIMEOUT, import_torch_too: bool = False) -> Environment:
    """This machine, probed."""
    system = platform.system()
    machine = normalise_machine(system, platform.machine())
    kind, detail = detect_env_kind(sys.prefix, getattr(sys, "base_prefix", sys.prefix), os.environ)
    packages = {name: pkg for name in PACKAGES if (pkg := read_package(name)) is not None}
    gpus: list[Gpu] = []
    probes: list[Probe] = []
    nvidia, probe = probe_nvidia(timeout)
    gpus += nvidia
    probes.append(probe)
    amd, rocm_probes = probe_rocm(timeout)
    gpus += amd
    probes += rocm_probes
    intel, intel_probes = probe_intel(timeout)
    gpus += intel
    probes += intel_probes
    apple, apple_probe = probe_apple(system, machine)
    gpus += apple
    probes.append(apple_probe)
    runtime = None
    if import_torch_too:
        runtime, probe = import_torch(sys.executable, max(timeout, 60.0))
        probes.append(probe)
    return Environment(
        os=system,
        machine=machine,
        python=platform.python_version(),
        free_threaded=is_free_threaded(),
        env_kind=kind,
        env_detail=detail,
        executable=sys.executable or None,
        packages=packages,
        gpus=tuple(gpus),
        probes=tuple(probes),
        torch_runtime=runtime,
    )
