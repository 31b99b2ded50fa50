"""pyjms's version, in one place: the package, the command's --version and pyproject.toml
(setuptools reads it from here) all take it from this constant."""

__version__ = "0.1.0"
