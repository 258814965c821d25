"""A client that asks for ACP v2 (Draft) and falls back to v1: a v2 turn is an Observable of
the turn's updates that completes on the ``idle`` ``state_update``.

Run it: ``python examples/v2_client.py`` (spawns ``examples/v2_dual_agent.py``; pass
``--v1-agent`` to spawn the v1-only reference agent and see the fallback).
"""

from __future__ import annotations

import sys
from pathlib import Path

from reactivex import operators as ops

from rxacp.client import AcpClient
from rxacp.transport import AgentParameters, StdioAcpClientTransport

HERE = Path(__file__).resolve().parent


def main() -> None:
    if "--v1-agent" in sys.argv:
        agent = ["-m", "rxacp.testing.reference_agent"]
    else:
        agent = [str(HERE / "v2_dual_agent.py")]
    params = AgentParameters.builder(sys.executable).args(*agent).build()
    # --8<-- [start:client]
    client = AcpClient.async_(StdioAcpClientTransport(params)).protocol_v2().build()
    with client:
        client.initialize().block(30)  # asks for 2; an agent that answers 1 gets v1
        print("protocol", client.protocol_version)
        sid = client.new_session({"cwd": str(HERE), "mcpServers": []}).block(30).session_id
        request = {"sessionId": sid, "prompt": [{"type": "text", "text": "echo one two"}]}
        items = client.prompt_turn(request).pipe(ops.to_list()).block(30)
        for item in items:  # v2: user_message, state_update running, chunks ..., idle
            print(getattr(item, "session_update", type(item).__name__), end=" ")
        last = items[-1]  # v2: the idle state_update; v1: the PromptResponse
        print("->", last.stop_reason)
    # --8<-- [end:client]


if __name__ == "__main__":
    main()
