"""Exceptions of the public API and the CLI."""

from __future__ import annotations

__all__ = ["CliError"]


class CliError(Exception):
    """A usage or I/O problem the CLI reports as one line with exit status 2."""
