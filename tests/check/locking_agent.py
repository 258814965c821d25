"""An ACP agent whose start-up holds a lock on its home, like gemini-cli's project registry.

From its start until it has answered ``initialize`` (one second later: a slow start-up) it
holds an exclusive, non-blocking ``flock`` on ``LOCKFILE`` (its first argument). A second
instance started meanwhile cannot take it and exits with code 3, as an agent whose lock wait
gave up would. After ``initialize`` it answers every request ``-32601`` and exits on stdin EOF.
Standard library only; never imported by rxacp.
"""

from __future__ import annotations

import fcntl
import json
import sys
import time

__all__ = ["main"]

HOLD_S = 1.0


def main() -> None:
    lock = open(sys.argv[1], "a")  # noqa: SIM115 - held for the start-up, closed below
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.stderr.write("locking-agent: another start-up holds the registry lock\n")
        sys.exit(3)
    for line in sys.stdin:
        message = json.loads(line)
        rid = message.get("id")
        if message.get("method") == "initialize":
            time.sleep(HOLD_S)  # the agent's own slow start-up, with the lock held
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
            sys.stdout.flush()
            lock.close()  # start-up done: the lock is released
        elif rid is not None:
            error = {"code": -32601, "message": "Method not found"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
