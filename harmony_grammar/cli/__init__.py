"""The ``harmony-grammar`` command line: one module per command, on top of everything.

Theory of operation
-------------------
:mod:`.main` builds the argument parser from the command modules (each exposes
``register(subparsers)``) and turns :class:`.errors.CliError` into one line on stderr and exit
status 2. :mod:`.inputs` is the one place that reads files, standard input, token ids, JSON and
tools files, so every command reads its input alike.

Imports: this package may use every other subpackage; nothing imports it.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
