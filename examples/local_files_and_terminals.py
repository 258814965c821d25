"""Ready-made client handlers: ``WorkspaceFileSystem`` (``fs/*``) and ``LocalTerminals``
(``terminal/*``), both confined to one workspace directory, installed with one call each.

Run from the repository root: ``python examples/local_files_and_terminals.py``. It spawns the
reference agent, lets it read a file of a temporary workspace and run ``pwd`` and ``ls`` in a
client terminal (the agent's ``read`` and ``terminal`` behaviours).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rxacp import AcpClient, AgentParameters, StdioAcpClientTransport
from rxacp.client import LocalTerminals, WorkspaceFileSystem
from rxacp.schema import NewSessionRequest, PromptRequest, SessionNotification

agent = AgentParameters.builder(sys.executable).args("-m", "rxacp.testing.reference_agent").build()


def show(note: SessionNotification) -> None:
    if note.update.session_update == "agent_message_chunk":
        print(note.update.content.text, end="", flush=True)


with tempfile.TemporaryDirectory() as workspace:
    (Path(workspace) / "notes.txt").write_text("milk, eggs\n", encoding="utf-8")
    # --8<-- [start:install]
    files = WorkspaceFileSystem(workspace)  # fs/* confined to the workspace
    terminals = LocalTerminals(workspace)  # commands run here, in their own process group
    builder = AcpClient.sync(StdioAcpClientTransport(agent)).session_update_consumer(show)
    files.install(builder)
    terminals.install(builder)  # all five terminal/* handlers; the client advertises terminal
    with builder.build() as client, terminals:
        client.initialize()
        session = client.new_session(NewSessionRequest.of(workspace)).session_id
        for text in (f"read {workspace}/notes.txt", "terminal pwd", "terminal ls"):
            client.prompt(PromptRequest.text(session, text))
    # --8<-- [end:install]
    print("terminals left running:", terminals.running_count)
