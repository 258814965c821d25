"""Raw handlers and ``handler_executor`` on the client builders (issue 19.8)."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

import pytest

from rxacp.client import AcpClient
from rxacp.schema import PromptRequest
from tests.session.conftest import ScriptedTransport

from .conftest import Rig, texts

pytestmark = pytest.mark.timeout(30)

SID = "sess-1"


def test_a_raw_request_handler_answers_an_agent_request_with_raw_json(rig: Rig) -> None:
    seen: list[Any] = []

    def raw_read(params: Any) -> Any:
        seen.append(params)
        return {"content": f"raw {params['path']}"}

    updates: list[Any] = []
    client = (
        rig.sync_builder()
        .session_update_consumer(updates.append)
        .request_handler("fs/read_text_file", raw_read)
        .client_capabilities({"fs": {"readTextFile": True}})
        .build()
    )
    rig.on_close(client.close)
    client.prompt(PromptRequest.text(SID, "read /etc/x"))
    assert texts(updates) == ["read:raw /etc/x"]
    assert seen and seen[0]["path"] == "/etc/x" and isinstance(seen[0], dict)


def test_the_sync_clients_handlers_run_on_the_handler_executor(rig: Rig) -> None:
    threads: list[str] = []
    executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="client-exec")
    try:

        def read(req: Any) -> Any:
            threads.append(threading.current_thread().name)
            return {"content": "x"}

        client = rig.sync_builder().read_text_file_handler(read).handler_executor(executor).build()
        rig.on_close(client.close)
        client.prompt(PromptRequest.text(SID, "read /etc/y"))
        assert threads and threads[0].startswith("client-exec")
    finally:
        executor.shutdown(wait=False)


def test_client_methods_with_sdk_rules_are_refused() -> None:
    builder = AcpClient.sync(ScriptedTransport())
    with pytest.raises(ValueError, match="session_update_consumer"):
        builder.notification_handler("session/update", lambda p: None)
    with pytest.raises(ValueError, match="request_permission_handler"):
        builder.request_handler("session/request_permission", lambda p: None)
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises(TypeError, match="Executor"):
        builder.handler_executor(4)  # type: ignore[arg-type]
