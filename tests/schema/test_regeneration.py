"""The checked-in generated modules are exactly what the generator produces from the spec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = (
    "_generated.py",
    "unstable/_generated.py",
    "_capabilities.py",
    "_exports.py",
    "_generated_rest.py",
    "v2/_generated.py",
    "v2/unstable/_generated.py",
)


def test_regenerating_into_a_tmp_dir_gives_byte_identical_modules(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_schema.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for rel in GENERATED:
        fresh = (tmp_path / rel).read_bytes()
        checked_in = (ROOT / "rxacp" / "schema" / rel).read_bytes()
        assert fresh == checked_in, f"{rel} is stale: run python scripts/generate_schema.py"


def test_generated_output_is_ruff_format_stable(tmp_path: Path) -> None:
    for rel in GENERATED:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "format",
                "--isolated",
                "--line-length",
                "100",
                "--target-version",
                "py311",
                "--check",
                str(ROOT / "rxacp" / "schema" / rel),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
