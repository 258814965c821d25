"""A hostile agent that asks for a large file many times and does not read the answers.

``python unread_answers_agent.py N PATH`` answers ``initialize`` and ``session/new`` (session
``s1``), then writes ``N`` ``fs/read_text_file`` requests for ``PATH`` at once and reads nothing
more until it gets ``SIGUSR1``. Then it reads the ``N`` answers (one line each), and sends the
notification ``_test/answered`` with how many arrived and how many held the whole file
(``{"answered": n, "complete": m}``). No rxacp import: the wire is written by hand.
"""

from __future__ import annotations

import json
import signal
import sys
import threading


def main() -> None:
    count, path = int(sys.argv[1]), sys.argv[2]
    size = int(sys.argv[3])
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # every thread: sigwait below
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    lock = threading.Lock()

    def send(obj: dict[str, object]) -> None:
        with lock:
            out.write(json.dumps({"jsonrpc": "2.0", **obj}).encode() + b"\n")
            out.flush()

    init = json.loads(inp.readline())
    send({"id": init["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    new = json.loads(inp.readline())
    send({"id": new["id"], "result": {"sessionId": "s1"}})

    def flood() -> None:  # blocks in write() once the client stops reading
        for i in range(count):
            params = {"sessionId": "s1", "path": path}
            send({"id": 1000 + i, "method": "fs/read_text_file", "params": params})

    threading.Thread(target=flood, daemon=True).start()
    signal.sigwait([signal.SIGUSR1])
    answered = complete = 0
    while answered < count:
        line = inp.readline()
        if not line:
            break
        answered += 1
        complete += len(line) > size and b'"result"' in line
    send({"method": "_test/answered", "params": {"answered": answered, "complete": complete}})
    for _ in inp:  # until the client closes
        pass


if __name__ == "__main__":
    main()
