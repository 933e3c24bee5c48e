"""Subcommands of the ``harmony-grammar`` CLI, one module each."""
