"""The cold-start floor (issue 27): what any agent on asyncio + pydantic + reactivex pays.

Imports asyncio, pydantic and reactivex, reads one line from stdin, validates it with a tiny
pydantic model (so pydantic's first-validation costs are paid, as by any pydantic agent) and
writes the ``initialize`` answer. Not an ACP implementation: ``benchmarks/cold_start.py`` times
spawn -> answer of this script against the README agent's.
"""

from __future__ import annotations

import asyncio  # noqa: F401 - the floor pays for it, as an asyncio agent does
import json
import sys

import reactivex  # noqa: F401 - the floor pays for it, as an rxacp agent does
from pydantic import BaseModel


class Request(BaseModel):
    """The fields of an ``initialize`` request the answer needs."""

    jsonrpc: str
    id: int | str
    method: str
    params: dict[str, object]


def main() -> None:
    """Answer one ``initialize`` line, then wait for EOF."""
    request = Request.model_validate_json(sys.stdin.buffer.readline())
    result = {"protocolVersion": 1, "agentCapabilities": {}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request.id, "result": result}) + "\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()


if __name__ == "__main__":
    main()
