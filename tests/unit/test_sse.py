"""app.runner_client.client.iter_sse: the event-stream rules that matter to a chat stream."""

from __future__ import annotations

from app.runner_client.client import iter_sse


def _events(text: str) -> list[str]:
    # httpx2's iter_lines() strips line endings; so does splitlines().
    return list(iter_sse(iter(text.splitlines())))


def test_one_event_per_blank_line() -> None:
    assert _events("data: a\n\ndata: b\n\n") == ["a", "b"]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert _events("data: first\ndata: second\ndata:third\n\n") == ["first\nsecond\nthird"]


def test_comments_and_keepalives_are_skipped() -> None:
    assert _events(": keep-alive\n\ndata: x\n: inside an event\ndata: y\n\n:\n\n") == ["x\ny"]


def test_last_event_without_trailing_blank_line() -> None:
    assert _events("data: a\n\ndata: tail") == ["a", "tail"]
    assert _events("data: only") == ["only"]


def test_only_one_leading_space_is_removed() -> None:
    assert _events("data:  two spaces\n\ndata:none\n\n") == [" two spaces", "none"]


def test_other_fields_are_ignored() -> None:
    text = "event: message\nid: 7\nretry: 1000\ndata: payload\n\nevent: ping\n\n"
    assert _events(text) == ["payload"]


def test_colon_inside_value_is_kept() -> None:
    payload = '{"choices": [{"delta": {"content": "a: b"}}]}'
    assert _events(f"data: {payload}\n\n") == [payload]


def test_empty_data_line_makes_an_empty_line_in_the_event() -> None:
    assert _events("data:\ndata: x\n\n") == ["\nx"]


def test_done_sentinel_and_repeated_blank_lines() -> None:
    assert _events("data: a\n\n\n\ndata: [DONE]\n\n") == ["a", "[DONE]"]


def test_empty_stream() -> None:
    assert _events("") == []
    assert _events("\n\n: only comments\n\n") == []


def test_lazy() -> None:
    """Events come out as soon as their blank line arrives, not when the stream ends."""
    seen: list[str] = []

    def lines():  # type: ignore[no-untyped-def]
        yield "data: 1"
        yield ""
        seen.append("consumed second event's lines")
        yield "data: 2"
        yield ""

    it = iter_sse(lines())
    assert next(it) == "1"
    assert seen == []
    assert next(it) == "2"
