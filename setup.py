"""The optional C accelerator of the codec; everything else is configured in pyproject.toml.

``optional=True``: without a C compiler the build skips it and the pure-Python codec is used.
"""

from setuptools import Extension, setup

# One module from three sources that share a private header (depends: editing it rebuilds, and the
# sdist carries it).
SOURCES = ["linter/codec/_speedups.c", "linter/codec/_speedups_decode.c", "linter/codec/_speedups_encode.c"]

setup(ext_modules=[Extension("linter.codec._speedups", SOURCES, depends=["linter/codec/_speedups.h"], optional=True)])
