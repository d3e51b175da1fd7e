"""Builds the optional fused-loss CUDA kernel; `pip install .` skips it on machines without CUDA."""
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, include_paths

extensions = []
if torch.cuda.is_available():
    extensions.append(
        CUDAExtension(
            "legacy_project._fused_loss",
            ["csrc/fused_loss.cu"],
            include_dirs=include_paths(cuda=True),
        )
    )

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExtension})
