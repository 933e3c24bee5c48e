"""Running the CLI in-process, for the tests of its commands."""

from __future__ import annotations

from harmony_grammar.cli.main import main


def run_cli(capsys, *argv):
    """``harmony-grammar *argv`` in-process: its exit status, stdout and stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err
