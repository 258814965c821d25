"""What a minimal stdio agent loads: the modules it does not use stay unimported (cold start).

Cold-start time itself is measured in ``benchmarks/cold_start.py``; these tests pin the
laziness that keeps it low, by ``sys.modules`` in a fresh interpreter (no timing).
"""

from __future__ import annotations

import json
import subprocess
import sys

# Imported only when used: the client side, the optional transports and tools, the stable
# models outside an agent's start-up (scripts/generate_schema.py START_ROOTS), the unstable
# models, the ACP v2 models, the strict validator and the package version lookup
# (importlib.metadata, ~15 ms).
NOT_NEEDED_BY_A_STDIO_AGENT = (
    "rxacp.schema._generated_rest",
    "rxacp.schema.helpers",
    "rxacp.client",
    "rxacp.cli",
    "rxacp.testing",
    "rxacp.agent.support",
    "rxacp.schema.unstable",
    "rxacp.schema.v2",
    "rxacp.agent.v2",
    "rxacp.schema.strict",
    "rxacp.transport.websocket",
    "rxacp.transport._websocket_agent",
    "rxacp.transport._websocket_common",
    "websockets",
    "opentelemetry",
)

README_AGENT_START = """
import json, sys
from rxacp import AcpAgent, StdioAcpAgentTransport, SyncPromptContext
from rxacp.schema import NewSessionResponse, PromptRequest, PromptResponse

agent = (
    AcpAgent.sync(StdioAcpAgentTransport())
    .new_session_handler(lambda req: NewSessionResponse(session_id="s"))
    .prompt_handler(lambda req, ctx: PromptResponse.end_turn())
    .build()
)
loaded = sorted(m for m in sys.modules if m in NOT_NEEDED or m.startswith(PREFIXES))
print(json.dumps({"loaded": loaded, "metadata": "importlib.metadata" in sys.modules}))
"""


def _loaded_after(code: str) -> dict[str, object]:
    prelude = (
        f"NOT_NEEDED = {NOT_NEEDED_BY_A_STDIO_AGENT!r}\n"
        "PREFIXES = tuple(m + '.' for m in NOT_NEEDED)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_building_a_stdio_agent_imports_no_client_cli_testing_websocket_or_unstable_module() -> (
    None
):
    result = _loaded_after(README_AGENT_START)
    assert result["loaded"] == []


def test_importing_rxacp_reads_no_package_metadata_until_the_version_is_asked_for() -> None:
    result = _loaded_after(
        "import sys, json, rxacp\n"
        "before = 'importlib.metadata' in sys.modules\n"
        "assert rxacp.__version__\n"
        "after = 'importlib.metadata' in sys.modules\n"
        "print(json.dumps({'loaded': [], 'metadata': [before, after]}))"
    )
    assert result["metadata"] == [False, True]


def test_importing_the_schema_builds_one_model_class_per_definition_and_no_mixin_models() -> None:
    # Every pydantic model class costs ~0.3 ms at import even with deferred schema building;
    # the factory mixins (InitializeResponse.ok(), PromptRequest.text()...) are plain classes.
    from pydantic import BaseModel

    import rxacp.schema._generated as stable
    import rxacp.schema._generated_rest as rest
    from rxacp.schema._base import AcpModel, PatchModel, UnknownVariant

    pending: list[type[BaseModel]] = [AcpModel]
    models: set[type[BaseModel]] = set()
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("rxacp.schema") and sub not in models:
                models.add(sub)
                pending.append(sub)
    homes = {stable.__name__, rest.__name__}
    extra = {
        m.__qualname__ for m in models if m.__module__ in homes and m.__name__ not in stable.__all__
    }
    outside = {m.__qualname__ for m in models if m.__module__ not in homes}
    assert extra == set()
    assert outside <= {UnknownVariant.__qualname__, PatchModel.__qualname__} | {
        m.__qualname__
        for m in models
        if m.__module__.startswith(("rxacp.schema.unstable", "rxacp.schema.v2"))
    }
