"""torchwm: fast, safe vectorized reinforcement-learning environments with a Rust core."""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("torchwm")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
