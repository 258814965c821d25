"""The production ACP agents of the field suite: how each is started and pointed at the fake model.

Each :class:`FieldAgent` knows its pinned package (``tests/field/peers/<folder>/package.json``,
installed by ``scripts/setup_field_agents.sh`` into ``.field-cache/<folder>``), its command line,
and how to configure a fresh home folder so the agent talks only to the fake model server on
127.0.0.1: its own provider configuration, a dummy key, telemetry / update checks / usage
statistics off, and ``HTTP(S)_PROXY`` pointing at the fake server (which refuses and counts any
proxied request, see :mod:`tests.field.fake_model`). Every agent is configured to ask the client
before it edits a file or runs a command, so permission requests reach the rxacp client.

This module is *not* responsible for installing the agents (the setup script) nor for any
scenario (``test_agents.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENTS", "CACHE", "PEERS", "FieldAgent", "Launch"]

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "field" / "peers"
CACHE = Path(
    os.environ.get("RXACP_FIELD_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rxacp" / "field-peers"
)
"""Where the peers are installed: a user cache outside the work tree (``RXACP_FIELD_CACHE``
overrides), as ``scripts/setup_field_agents.sh`` decides."""


@dataclass(frozen=True)
class Launch:
    """A command line and the environment additions of one agent process."""

    command: list[str]
    env: dict[str, str]


def _proxy_env(base_url: str) -> dict[str, str]:
    """Route every proxy-aware HTTP client to the fake server (which refuses proxying)."""
    env = {}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = base_url
        env[name.lower()] = base_url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _common_env(home: Path, base_url: str) -> dict[str, str]:
    env = _proxy_env(base_url)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        NO_UPDATE_NOTIFIER="1",
        NPM_CONFIG_UPDATE_NOTIFIER="false",
        DO_NOT_TRACK="1",
        NO_COLOR="1",
    )
    return env


def _bin(folder: str, name: str) -> str:
    return str(CACHE / folder / "node_modules" / ".bin" / name)


# ------------------------------------------------------------------------------------ codex
def _codex(home: Path, base_url: str) -> Launch:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""# written by tests/field: the only model is the fake server on 127.0.0.1
model = "field-model"
model_provider = "field"
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.field]
name = "field"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "FIELD_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
""",
        encoding="utf-8",
    )
    env = _common_env(home, base_url)
    env.update(
        CODEX_HOME=str(codex_home), FIELD_API_KEY="field-dummy-key", CODEX_API_KEY="field-dummy-key"
    )
    return Launch([_bin("codex-acp", "codex-acp")], env)


# ----------------------------------------------------------------------------------- gemini
def _gemini(home: Path, base_url: str) -> Launch:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "security": {"auth": {"selectedType": "gemini-api-key"}},
            }
        ),
        encoding="utf-8",
    )
    env = _common_env(home, base_url)
    env.update(
        GEMINI_API_KEY="field-dummy-key",
        GOOGLE_GEMINI_BASE_URL=base_url,
        GEMINI_TELEMETRY_ENABLED="false",
        GEMINI_CLI_NO_RELAUNCH="true",
    )
    return Launch([_bin("gemini-cli", "gemini"), "--experimental-acp"], env)


# --------------------------------------------------------------------------------- opencode
def _opencode(home: Path, base_url: str) -> Launch:
    config = home / "opencode.json"
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "field",
        "options": {"baseURL": f"{base_url}/v1", "apiKey": "field-dummy-key"},
        "models": {"field-model": {"name": "Field model", "tool_call": True}},
    }
    config.write_text(
        json.dumps(
            {
                "autoupdate": False,
                "share": "disabled",
                "model": "field/field-model",
                "small_model": "field/field-model",
                "provider": {"field": provider},
                "permission": {"edit": "ask", "bash": "ask"},
            }
        ),
        encoding="utf-8",
    )
    env = _common_env(home, base_url)
    # opencode installs @opencode-ai/plugin into its config folder at start-up: point it at the
    # copy the setup script pre-installed, so it never needs the registry during a test.
    xdg_config = home / ".config"
    xdg_config.mkdir(parents=True, exist_ok=True)
    link = xdg_config / "opencode"
    if not link.exists():
        link.symlink_to(CACHE / "opencode-config", target_is_directory=True)
    env.update(
        OPENCODE_CONFIG=str(config),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
        OPENCODE_DISABLE_EXTERNAL_SKILLS="1",
    )
    return Launch([_bin("opencode", "opencode"), "acp"], env)


# ------------------------------------------------------------------------------------ table
@dataclass(frozen=True)
class FieldAgent:
    """One production agent: ``name`` (matrix row), package folder and how to launch it."""

    name: str
    folder: str
    package: str
    configure: Callable[[Path, str], Launch]
    auth_method: str | None
    """The offline ``authenticate`` method the agent offers (None: it needs none)."""

    @property
    def version(self) -> str:
        """The pinned version (from the committed package.json)."""
        pkg = json.loads((PEERS / self.folder / "package.json").read_text(encoding="utf-8"))
        return str(pkg["dependencies"][self.package])

    @property
    def label(self) -> str:
        """``name version``."""
        return f"{self.name} {self.version}"


AGENTS: tuple[FieldAgent, ...] = (
    FieldAgent("codex-acp", "codex-acp", "@zed-industries/codex-acp", _codex, "codex-api-key"),
    FieldAgent("gemini-cli", "gemini-cli", "@google/gemini-cli", _gemini, "gemini-api-key"),
    FieldAgent("opencode", "opencode", "opencode-ai", _opencode, None),
)
