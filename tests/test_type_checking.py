"""The type checker's configuration: ``mypy --strict`` covers rxacp/ and tests/ (CI) with no
per-module exceptions, so a typing hole cannot be switched off for one module."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# The official SDKs the interop and field peers drive live only in those peers' virtualenvs.
EXTERNAL_PEER_SDKS = {"acp", "acp.*", "acp_client", "acp_client.*"}


def _mypy() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        config: dict[str, Any] = tomllib.load(f)["tool"]["mypy"]
    return config


def test_mypy_is_strict_and_every_ignore_is_used_and_names_its_error_code() -> None:
    config = _mypy()
    assert config["strict"] is True and config["warn_unused_ignores"] is True
    assert "ignore-without-code" in config["enable_error_code"]


def test_no_module_switches_an_error_code_off_and_only_the_peer_sdks_may_be_missing() -> None:
    overrides: list[dict[str, Any]] = _mypy().get("overrides", [])
    assert [o["module"] for o in overrides if "disable_error_code" in o] == []
    assert [o for o in overrides if o.get("warn_unused_ignores") is False] == []
    missing_ok = {m for o in overrides if o.get("ignore_missing_imports") for m in o["module"]}
    assert missing_ok <= EXTERNAL_PEER_SDKS
