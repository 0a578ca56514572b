"""The ``krpc-lint`` command line (``linter.cli.main:main``)."""
