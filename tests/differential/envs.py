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
TORCH_VERSIONS = ("2.13.0", "2.14.1")


def base_python() -> str:
    """Python 3.11: the interpreter the local torch wheels are built for."""
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if found is None:
        raise RuntimeError("the differential tests need python3.11 on PATH (the torch wheels are cp311)")
    return found


def ensure_env(version: str) -> Path:
    env = ENV_ROOT / f"torch-{version}"
    python = env / "bin" / "python"
    ready = env / ".torchup-ready"
    if ready.exists() and python.exists():
        return python
    ENV_ROOT.mkdir(parents=True, exist_ok=True)
    subprocess.run([base_python(), "-m", "venv", "--clear", str(env)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"torch=={version}", "numpy"],
        check=True,
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
