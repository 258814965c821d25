"""The copied schema is the published one: SOURCE.json's hashes and the method tables agree."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "rxacp" / "schema" / "spec"
sys.path.insert(0, str(ROOT / "scripts"))

from update_schema import method_tables  # noqa: E402


def test_source_record_names_the_npm_package_and_hashes_every_copied_schema() -> None:
    record = json.loads((SPEC / "SOURCE.json").read_text("utf-8"))
    assert record["package"] == "@agentclientprotocol/sdk"
    assert record["version"] == "2.4.0"
    copied = {info["copiedTo"]: info["sha256"] for info in record["files"].values()}
    copied.pop(None, None)
    assert set(copied) == {
        "schema.json",
        "schema.unstable.json",
        "v2/schema.json",
        "v2/schema.unstable.json",
    }
    for name, digest in copied.items():
        assert hashlib.sha256((SPEC / name).read_bytes()).hexdigest() == digest, name


def test_check_mode_passes_on_the_checked_in_spec() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update_schema.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_method_tables_read_the_ts_sdk_constants_into_the_meta_json_shape() -> None:
    js = (
        'export const AGENT_METHODS = {\n    initialize: "initialize",\n'
        '    session_new: "session/new",\n};\n'
        'export const CLIENT_METHODS = {\n    session_update: "session/update",\n};\n'
        "export const PROTOCOL_VERSION = 1;\n"
    )
    assert method_tables(js) == {
        "version": 1,
        "agentMethods": {"initialize": "initialize", "session_new": "session/new"},
        "clientMethods": {"session_update": "session/update"},
    }
    with pytest.raises(ValueError, match="AGENT_METHODS"):
        method_tables("export const X = 1;")


def test_meta_files_match_the_spec_method_annotations() -> None:
    for meta_name, schema_name in (
        ("meta.json", "schema.json"),
        ("meta.unstable.json", "schema.unstable.json"),
        ("v2/meta.json", "v2/schema.json"),
        ("v2/meta.unstable.json", "v2/schema.unstable.json"),
    ):
        meta = json.loads((SPEC / meta_name).read_text("utf-8"))
        defs = json.loads((SPEC / schema_name).read_text("utf-8"))["$defs"]
        annotated = {d["x-method"] for d in defs.values() if "x-method" in d}
        listed = {n for group, table in meta.items() if group != "version" for n in table.values()}
        assert listed == annotated, meta_name
