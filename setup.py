"""The optional C accelerator of the codec; everything else is configured in pyproject.toml.

``optional=True``: without a C compiler the build skips it and the pure-Python codec is used.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("linter.codec._speedups", ["linter/codec/_speedups.c"], optional=True)])
