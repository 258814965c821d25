"""Refresh ``rxacp/schema/spec/`` from a published ACP schema and regenerate the models.

The source is the npm package ``@agentclientprotocol/sdk``, which bundles the protocol's JSON
Schemas (``schema/v1/schema.json``, ``schema/v1/schema.unstable.json`` and an experimental
``schema/v2/``) plus the method-name tables its TypeScript code exports. The package is fetched
with the ordinary npm client (``npm pack``) into a temporary directory; nothing is installed.

Usage::

    python scripts/update_schema.py --from-npm 2.4.0        # fetch, copy, regenerate
    python scripts/update_schema.py --from-dir PACKAGE_DIR  # an already unpacked package
    python scripts/update_schema.py --check                 # verify spec/ against SOURCE.json

What it writes:

- ``rxacp/schema/spec/schema.json`` and ``schema.unstable.json``: the v1 stable and unstable
  schemas, byte for byte as published; ``spec/v2/schema.json`` and ``schema.unstable.json``
  the same for the ACP v2 Draft (``schema/v2/``);
- ``rxacp/schema/spec/meta.json`` and ``meta.unstable.json``: the method tables
  (``AGENT_METHODS``/``CLIENT_METHODS``/``PROTOCOL_METHODS``/``PROXY_METHODS``) read from the
  package's ``dist/v1/schema/index.js`` and ``dist/v1/unstable/schema/index.js`` (and
  ``spec/v2/meta.json``/``meta.unstable.json`` from ``dist/v2/...``);
- ``rxacp/schema/spec/SOURCE.json``: package name, version, the tarball's npm integrity and the
  sha256 of every schema file in the package (copied or not), so the provenance is reviewable;
- the generated modules (``scripts/generate_schema.py``).

Not responsible for: hand-written code that depends on the schema (``_method_table.py``,
factories, Java aliases); a schema change that breaks them makes the test suite fail, which is
the point.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "rxacp" / "schema" / "spec"
PACKAGE = "@agentclientprotocol/sdk"

__all__ = ["main", "method_tables", "source_record"]

COPIED = {
    "schema/v1/schema.json": "schema.json",
    "schema/v1/schema.unstable.json": "schema.unstable.json",
    "schema/v2/schema.json": "v2/schema.json",
    "schema/v2/schema.unstable.json": "v2/schema.unstable.json",
}
META = {
    "dist/v1/schema/index.js": "meta.json",
    "dist/v1/unstable/schema/index.js": "meta.unstable.json",
    "dist/v2/schema/index.js": "v2/meta.json",
    "dist/v2/unstable/schema/index.js": "v2/meta.unstable.json",
}
_TABLE = re.compile(r"export const ([A-Z]+)_METHODS = \{(.*?)\};", re.S)
_ENTRY = re.compile(r"^\s*(\w+): \"([^\"]+)\",?\s*$", re.M)
_VERSION = re.compile(r"export const PROTOCOL_VERSION = (\d+);")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def method_tables(js: str) -> dict[str, Any]:
    """The ``*_METHODS`` objects of a generated ``schema/index.js``, as ``meta.json`` shapes them.

    ``AGENT_METHODS`` becomes ``agentMethods`` and so on; ``PROTOCOL_VERSION`` becomes
    ``version``. Raises ``ValueError`` if the file has no method table.
    """
    version = _VERSION.search(js)
    out: dict[str, Any] = {"version": int(version.group(1)) if version else 1}
    for side, body in _TABLE.findall(js):
        out[side.lower() + "Methods"] = dict(_ENTRY.findall(body))
    if "agentMethods" not in out:
        raise ValueError("no AGENT_METHODS table found")
    return out


def source_record(package_dir: Path, version: str, integrity: str | None) -> dict[str, Any]:
    """Provenance of the copied schema: package, version, tarball integrity, file hashes."""
    files = sorted(p for p in (package_dir / "schema").rglob("*.json"))
    return {
        "package": PACKAGE,
        "version": version,
        "integrity": integrity,
        "files": {
            str(p.relative_to(package_dir)): {
                "sha256": sha256(p),
                "copiedTo": COPIED.get(str(p.relative_to(package_dir))),
            }
            for p in files
        },
    }


def _npm(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        ["npm", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    if proc.returncode != 0:
        raise SystemExit(f"npm {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def fetch_from_npm(version: str, workdir: Path) -> tuple[Path, str | None]:
    """``npm pack`` the package into ``workdir`` and unpack it; return (package dir, integrity)."""
    spec = f"{PACKAGE}@{version}"
    info = json.loads(_npm("pack", spec, "--json", "--pack-destination", str(workdir), cwd=workdir))
    entry = info[0] if isinstance(info, list) else info
    tarball = workdir / entry["filename"]
    with tarfile.open(tarball) as tar:
        tar.extractall(workdir / "unpacked", filter="data")
    return workdir / "unpacked" / "package", entry.get("integrity")


def install(package_dir: Path, integrity: str | None) -> None:
    manifest = json.loads((package_dir / "package.json").read_text("utf-8"))
    if manifest.get("name") != PACKAGE:
        raise SystemExit(f"{package_dir} is not {PACKAGE} (name {manifest.get('name')!r})")
    SPEC_DIR.mkdir(parents=True, exist_ok=True)
    for src, dst in COPIED.items():
        (SPEC_DIR / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package_dir / src, SPEC_DIR / dst)
    for src, dst in META.items():
        tables = method_tables((package_dir / src).read_text("utf-8"))
        (SPEC_DIR / dst).parent.mkdir(parents=True, exist_ok=True)
        (SPEC_DIR / dst).write_text(json.dumps(tables, indent=2) + "\n", "utf-8")
    record = source_record(package_dir, manifest["version"], integrity)
    (SPEC_DIR / "SOURCE.json").write_text(json.dumps(record, indent=2) + "\n", "utf-8")


def check() -> int:
    """Verify the copied schema files against the hashes ``SOURCE.json`` records."""
    record = json.loads((SPEC_DIR / "SOURCE.json").read_text("utf-8"))
    bad = [
        info["copiedTo"]
        for info in record["files"].values()
        if info["copiedTo"] and sha256(SPEC_DIR / info["copiedTo"]) != info["sha256"]
    ]
    for name in bad:
        print(f"{name} does not match SOURCE.json", file=sys.stderr)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--from-npm", metavar="VERSION", help=f"fetch {PACKAGE}@VERSION with npm")
    group.add_argument("--from-dir", type=Path, metavar="DIR", help="an unpacked package")
    group.add_argument("--check", action="store_true", help="verify spec/ against SOURCE.json")
    parser.add_argument("--no-generate", action="store_true", help="copy only, do not generate")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    with tempfile.TemporaryDirectory(prefix="rxacp-schema-") as tmp:
        if args.from_npm:
            package_dir, integrity = fetch_from_npm(args.from_npm, Path(tmp))
        else:
            package_dir, integrity = args.from_dir, None
        install(package_dir, integrity)
    print(f"copied {', '.join(COPIED.values())} into {SPEC_DIR}")
    if not args.no_generate:
        sys.path.insert(0, str(ROOT / "scripts"))
        from generate_schema import main as generate_main

        return generate_main([])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
