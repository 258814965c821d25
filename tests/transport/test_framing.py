"""LineFramer: splitting, CRLF, blank lines, the size cap and throughput."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxacp.transport.framing import LineFramer


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for c in chunks:
        out += framer.feed(c)
    return out + framer.finish()


def chunked(data: bytes, sizes: list[int]) -> list[bytes]:
    chunks, i = [], 0
    for s in sizes:
        chunks.append(data[i : i + s])
        i += s
    chunks.append(data[i:])
    return chunks


frame_st = st.binary(min_size=1, max_size=200).filter(
    lambda b: b"\n" not in b and not b.isspace() and not b.endswith(b"\r")
)


@settings(max_examples=100, deadline=None)
@given(frames=st.lists(frame_st, max_size=30), sizes=st.lists(st.integers(0, 64), max_size=60))
def test_frames_survive_any_chunking_of_the_stream(frames: list[bytes], sizes: list[int]) -> None:
    stream = b"".join(f + b"\n" for f in frames)
    assert feed_all(LineFramer(1024), chunked(stream, sizes)) == frames


def test_one_trailing_carriage_return_is_removed_even_split_from_its_newline() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\r\n{"b":2}\r') == [b'{"a":1}']
    assert framer.feed(b"\n") == [b'{"b":2}']
    assert framer.feed(b'{"c":3}\r\r\n') == [b'{"c":3}\r']


def test_blank_and_whitespace_only_lines_are_skipped() -> None:
    assert LineFramer().feed(b'\n\r\n  \t \n{"a":1}\n\n') == [b'{"a":1}']


def test_oversized_line_across_chunks_is_reported_once_and_the_next_line_arrives() -> None:
    framer = LineFramer(1024)
    got: list[object] = []
    framer.dispatch(b'{"first":1}\n' + b"x" * 700, got.append, lambda n: got.append(("big", n)))
    for _ in range(5):
        framer.dispatch(b"x" * 700, got.append, lambda n: got.append(("big", n)))
        assert framer.buffered == 0  # nothing of the oversized line is kept
    framer.dispatch(b'x\n{"next":2}\n', got.append, lambda n: got.append(("big", n)))
    assert got == [b'{"first":1}', ("big", 6 * 700 + 1), b'{"next":2}']


def test_oversized_line_inside_one_chunk_is_reported_in_stream_order() -> None:
    framer = LineFramer(16)
    got: list[object] = []
    framer.dispatch(b"a\n" + b"b" * 40 + b"\nc\n", got.append, lambda n: got.append(("big", n)))
    assert got == [b"a", ("big", 40), b"c"]


def test_a_line_of_exactly_the_cap_is_delivered_and_one_byte_more_is_not() -> None:
    framer = LineFramer(8)
    assert framer.feed(b"12345678\r\n" + b"123456789\n") == [b"12345678"]
    assert framer.take_oversized() == [9]


def test_line_reaching_the_cap_through_buffered_pieces_is_rejected() -> None:
    framer = LineFramer(8)
    assert framer.feed(b"12345") == []
    assert framer.feed(b"6789\nok\n") == [b"ok"]
    assert framer.take_oversized() == [9]


def test_end_of_stream_delivers_an_unterminated_last_line_and_reports_a_cut_oversized_one() -> None:
    framer = LineFramer(4)
    assert framer.feed(b"ab\ncd") == [b"ab"]
    assert framer.finish() == [b"cd"]
    framer.feed(b"toolong")
    assert framer.finish() == []
    assert framer.take_oversized() == [7]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_invalid_cap_is_rejected_with_a_clear_error(bad: object) -> None:
    # deliberately the wrong type: proves the runtime refusal
    with pytest.raises((ValueError, TypeError), match="max_frame_bytes"):
        LineFramer(bad)  # type: ignore[arg-type]


def test_a_64_mib_line_in_64_kib_chunks_is_framed_whole_at_the_default_cap() -> None:
    # its speed (linear in the input, no re-scanning) is measured in benchmarks/framing.py
    framer = LineFramer()  # default cap: 64 MiB
    chunk = b"a" * 65536
    for _ in range(1023):
        assert framer.feed(chunk) == []
    assert framer.buffered == 1023 * 65536
    frames = framer.feed(b"a" * (65536 - 2) + b"\n")
    assert [len(f) for f in frames] == [64 * 1024 * 1024 - 2]
    assert framer.buffered == 0


def test_many_small_lines_across_chunk_borders_are_split_exactly() -> None:
    lines = [
        b'{"jsonrpc":"2.0","method":"session/update","params":{"n":%d}}' % i for i in range(100_000)
    ]
    data = b"\n".join(lines) + b"\n"
    chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    framer = LineFramer()
    frames = [frame for c in chunks for frame in framer.feed(c)]
    assert frames == lines
