"""Virtual environments with real torch releases, made on first use and reused afterwards.

Located in $TORCHUP_TORCH_ENVS (default ~/.cache/torchup/envs), outside the repository, so that
CI runs and developers share them. pip (not uv) installs torch: it finds the local wheels.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ENV_ROOT = Path(os.environ.get("TORCHUP_TORCH_ENVS", Path.home() / ".cache" / "torchup" / "envs"))
# The two releases CI installs (2.13.0 as the CPU wheel on the machine's disk); any other release is
# installed only by the maintainer command, tools/run_examples.py.
TORCH_VERSIONS = ("2.13.0", "2.14.1")

# The release an example names (``Example.versions``: a minor, "2.5") -> the newest patch of it,
# the one the harness installs.
NEWEST_PATCH = {
    "2.0": "2.0.1", "2.1": "2.1.2", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1",
    "2.6": "2.6.0", "2.7": "2.7.1", "2.8": "2.8.0", "2.9": "2.9.1", "2.10": "2.10.0", "2.11": "2.11.0",
    "2.12": "2.12.1", "2.13": "2.13.0", "2.14": "2.14.1", "2.15": "2.15.0",
}
# Releases above the cap of the machine's pip configuration: installed without it (from the index).
UNCAPPED = frozenset({"2.15.0"})


def release(version: str) -> str:
    """``"2.5"`` -> ``"2.5.1"``; a full version (``"2.5.0"``) stays as it is."""
    if version.count(".") >= 2:
        return version
    if version not in NEWEST_PATCH:
        raise KeyError(f"torch {version}: no newest patch known (add it to NEWEST_PATCH in {__file__})")
    return NEWEST_PATCH[version]


def env_path(version: str) -> Path:
    return ENV_ROOT / f"torch-{version}"


def env_ready(version: str) -> bool:
    env = env_path(version)
    return (env / ".torchup-ready").exists() and (env / "bin" / "python").exists()


def base_python() -> str:
    """Python 3.11: the interpreter the local torch wheels are built for."""
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if found is None:
        raise RuntimeError("the differential tests need python3.11 on PATH (the torch wheels are cp311)")
    return found


def ensure_env(version: str) -> Path:
    """The interpreter of a venv with torch ``version`` (a full version), made if missing.

    CI's two releases get numpy beside torch, as they always had; other releases get torch alone
    (all probe.py imports): the numpy 2 pip would pick does not work with releases built against
    numpy 1 (2.0 to 2.2).
    """
    env = env_path(version)
    python = env / "bin" / "python"
    ready = env / ".torchup-ready"
    if env_ready(version):
        return python
    ENV_ROOT.mkdir(parents=True, exist_ok=True)
    subprocess.run([base_python(), "-m", "venv", "--clear", str(env)], check=True)
    packages = [f"torch=={version}", *(["numpy"] if version in TORCH_VERSIONS else [])]
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *packages],
        check=True,
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull} if version in UNCAPPED else None,
    )
    installed = subprocess.run(
        [str(python), "-c", "import torch; print(torch.__version__)"], check=True, capture_output=True, text=True
    ).stdout.strip()
    if not installed.startswith(version):
        raise RuntimeError(f"asked for torch {version} in {env}, got {installed}")
    ready.write_text(installed + "\n")
    return python


def ensure_sources(version: str) -> Path:
    """The Python sources of a torch release, for tests that read what a release defines without
    installing it (torch 2.15.0: parsed, never imported or run). Taken from the release's wheel,
    fetched once with `pip download --no-deps` into ``<envs>/../wheels`` and unpacked (``.py`` and
    ``.pyi`` files under ``torch/`` only) into ``<envs>/../src-<version>/torch``; raises when that fails.
    """
    root = ENV_ROOT.parent / f"src-{version}"
    if (root / "torch" / "__init__.py").exists():
        return root / "torch"
    wheels = ENV_ROOT.parent / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"torch-{version}-*.whl"))
    if not found:
        subprocess.run(
            [base_python(), "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             f"torch=={version}", "-d", str(wheels)],
            check=True, timeout=1800,
            # The machine's pip configuration may cap torch below this release; only this download
            # (sources to read, nothing installed) steps around it.
            env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
        )
        found = sorted(wheels.glob(f"torch-{version}-*.whl"))
    if not found:
        raise RuntimeError(f"pip download found no torch {version} wheel")
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as wheel:
        for member in wheel.namelist():
            if member.startswith("torch/") and member.endswith((".py", ".pyi")) and ".." not in member.split("/"):
                wheel.extract(member, partial)
    if root.exists():
        shutil.rmtree(root)  # an earlier, incomplete unpacking (it has no torch/__init__.py)
    partial.rename(root)
    return root / "torch"


if __name__ == "__main__":
    for wanted in TORCH_VERSIONS:
        print(wanted, ensure_env(wanted))
