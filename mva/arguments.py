"""The command lines' argument parser: a usage error is one line naming the option and
exit status 2 (argparse prints its whole usage block and the message below it).

Shared by ``mva`` and every ``python -m`` study and report of the project.
"""
from __future__ import annotations

import argparse

__all__ = ["OneLineParser", "INPUT_ERROR"]

#: Exit status of bad input: a file, field, option or usage the user gave.
INPUT_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message):
        from .errors import printable      # a control character the user typed stays one line

        self.exit(INPUT_ERROR, printable(f"{self.prog}: {message} (see {self.prog} --help)") + "\n")
