"""Virtual environments with real torch releases, made on first use and reused afterwards.

Located in $TORCHUP_TORCH_ENVS (default ~/.cache/torchup/envs), outside the repository, so that
CI runs and developers share them. pip (not uv) installs torch: it finds the local wheels.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


if __name__ == "__main__":
    for wanted in TORCH_VERSIONS:
        print(wanted, ensure_env(wanted))
