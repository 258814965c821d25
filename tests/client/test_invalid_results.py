"""Issue 30 item 6: a result rxacp cannot accept is reported as the peer's, naming the field.

``protocolVersion: "one"`` in an ``initialize`` result used to surface as ``invalid initialize
result from the peer: 1 validation error(s) (code -32603)``, which read like rxacp's own
internal error; the message now says who sent it, which field is wrong and what was sent.
"""

from __future__ import annotations

import threading

import pytest

from rxacp.client import AcpClient
from rxacp.errors import AcpErrorCodes, AcpProtocolException, AcpRemoteException
from tests.session.conftest import ScriptedTransport


def test_an_invalid_initialize_result_names_the_sender_the_field_and_the_value() -> None:
    transport = ScriptedTransport()
    client = AcpClient.sync(transport).request_timeout(30).build()

    def agent() -> None:
        request = transport.sent(30.0)
        result = {"protocolVersion": "one", "agentCapabilities": {}}
        transport.inject({"jsonrpc": "2.0", "id": request["id"], "result": result})

    answering = threading.Thread(target=agent, daemon=True)
    answering.start()
    try:
        with pytest.raises(AcpProtocolException) as excinfo:
            client.initialize()
    finally:
        answering.join(30.0)
        client.close()
    error = excinfo.value
    assert not isinstance(error, AcpRemoteException)  # the agent answered no error
    assert error.message.startswith(
        "the agent sent an invalid initialize result: protocolVersion: Input should be a valid "
        "integer"
    )
    assert error.message.endswith("(sent 'one')")
    assert error.code == AcpErrorCodes.INTERNAL_ERROR
    assert tuple(error.data[0]["loc"]) == ("protocolVersion",)
    assert "input" not in error.data[0]  # the data, which may be forwarded, holds no values
