"""A 10-line ACP client: spawns the README agent over stdio and streams its answer."""

import sys

from rxacp import AcpClient, AgentParameters, StdioAcpClientTransport
from rxacp.schema import NewSessionRequest, PromptRequest

agent = AgentParameters.builder(sys.executable).args("examples/readme_agent.py").build()
show = lambda note: print(note.message_text(), end="", flush=True)  # noqa: E731
with AcpClient.sync(StdioAcpClientTransport(agent)).session_update_consumer(show).build() as client:
    client.initialize()
    session = client.new_session(NewSessionRequest(cwd="/", mcp_servers=[]))
    answer = client.prompt(PromptRequest.text(session.session_id, "hello from rxacp"))
    print(f"\n[{answer.stop_reason}]")
