"""A peer for engine tests: an AcpSession on its own stdin/stdout (or an in-memory transport).

Methods: ``echo`` (returns params), ``hang`` (never answers; when disposed by
``$/cancel_request`` it sends ``_disposed {"requestId": id}``), ``notify_then_answer``
(``n`` ``_note`` notifications, then answers), ``big`` (returns ``{"data": "x" * size}``).
"""

from __future__ import annotations

import sys
from typing import Any

import reactivex
from reactivex.disposable import Disposable

from rxacp.session import AcpSession, IncomingRequest
from rxacp.transport.base import AcpTransport


def serve(transport: AcpTransport) -> AcpSession:
    session = AcpSession(transport, role="echo-peer")

    def hang(req: IncomingRequest) -> reactivex.Observable[Any]:
        def subscribe(observer: Any, scheduler: Any = None) -> Disposable:
            return Disposable(lambda: session.send_notification("_disposed", {"requestId": req.id}))

        return reactivex.create(subscribe)

    def notify_then_answer(req: IncomingRequest) -> reactivex.Observable[Any]:
        for i in range(req.params["n"]):
            session.send_notification("_note", {"i": i})
        return reactivex.of({"done": req.params["n"]})

    session.set_request_handler("echo", lambda req: reactivex.of(req.params))
    session.set_request_handler("hang", hang)
    session.set_request_handler("notify_then_answer", notify_then_answer)
    session.set_request_handler("big", lambda req: reactivex.of({"data": "x" * req.params["size"]}))
    session.start()
    return session


if __name__ == "__main__":
    from rxacp.transport import StdioAcpAgentTransport

    peer = serve(StdioAcpAgentTransport())
    peer.wait_closed()
    peer.close()
    sys.exit(0)
