"""``SessionStats``: counters of what one connection skipped, refused or waited for.

This module is *not* responsible for acting on them; the engine only counts.
"""

from __future__ import annotations

__all__ = ["SessionStats"]


class SessionStats:
    """What the engine skipped or refused on one connection (counters, written on the loop).

    ``parse_errors``: incoming lines that were not JSON (answered ``-32700``, then skipped);
    ``invalid_messages``: JSON that is not a JSON-RPC message (answered ``-32600`` if it could
    be); ``oversized_frames``: lines over the transport's size cap (discarded);
    ``stray_responses``: responses to unknown or already settled ids (ignored);
    ``malformed_unanswered``: malformed lines left unanswered because the peer had sent
    nothing but malformed ones for a while (``rxacp.session.wire.MAX_MALFORMED_IN_A_ROW``);
    ``producer_waits``: times a producer thread blocked on back-pressure (docs/reliability.md);
    ``read_pauses``: times reading from the peer paused because consumers fell behind (or
    too many requests were held); ``requests_held``: incoming requests held because the
    outbound buffer was full (the peer was not reading) or their method was at
    ``max_workers``.
    """

    __slots__ = (
        "invalid_messages",
        "malformed_unanswered",
        "oversized_frames",
        "parse_errors",
        "producer_waits",
        "read_pauses",
        "requests_held",
        "stray_responses",
    )

    def __init__(self) -> None:
        self.parse_errors = 0
        self.invalid_messages = 0
        self.oversized_frames = 0
        self.stray_responses = 0
        self.malformed_unanswered = 0
        self.producer_waits = 0
        self.read_pauses = 0
        self.requests_held = 0

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"SessionStats({self.as_dict()})"
