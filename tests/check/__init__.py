"""Tests of ``rxacp check``; :data:`RXACP_CHECK` is the command line that runs it."""

import sys

RXACP_CHECK = [sys.executable, "-m", "rxacp", "check"]
"""``rxacp check`` as a subprocess of this interpreter (append its options)."""
