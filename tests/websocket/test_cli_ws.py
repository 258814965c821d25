"""`rxacp prompt --agent ws://...` talks to a WebSocket agent."""

from __future__ import annotations

import io

from rxacp.cli import main

from .conftest import reference_server


def test_rxacp_prompt_streams_from_a_websocket_agent() -> None:
    server = reference_server("sync")
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["prompt", "--agent", server.url, "echo over websockets"], out=out, err=err)
    finally:
        server.close()
    assert code == 0, err.getvalue()
    assert "over websockets" in out.getvalue()


def test_rxacp_prompt_reports_an_unreachable_websocket_agent() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["prompt", "--agent", "ws://127.0.0.1:9/acp", "hi"], out=out, err=err)
    assert code == 1
    assert "ws://127.0.0.1:9/acp" in err.getvalue()
