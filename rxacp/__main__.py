"""``python -m rxacp`` / the ``rxacp`` console script: the command-line entry point.

This module is *not* responsible for any command: it delegates to :mod:`rxacp.cli`.
"""

from __future__ import annotations

import sys

from .cli import main as _cli_main

__all__ = ["main"]


def main() -> None:
    """Run the ``rxacp`` command line with ``sys.argv`` and exit with its code."""
    sys.exit(_cli_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
