"""The `ober` Python package: pure Python over ober's tools.

Installs offline (no build backend to fetch): pip install ./python
"""
from setuptools import setup

setup(
    name="ober",
    version="0.1.0",
    description="Ober-Train from Python: compile, plan and export PyTorch "
                "models for distributed training",
    packages=["ober"],
    python_requires=">=3.9",
    install_requires=[],  # numpy and torch from Debian (python3-numpy, python3-torch)
)
