"""Where a reply came from (app/chat/source.py): kept in the reply's meta and shown in the small
line under it, for a local model and a server."""

from __future__ import annotations

from app.chat.message import Message
from app.chat.render import Theme, render_footer, render_name
from app.chat.source import ReplySource

LIGHT = Theme.from_colors(text="#1f1d1b", base="#ffffff", link="#a8460f", muted="#625e59")


def test_sources_round_trip_through_meta() -> None:
    local = ReplySource("/home/me/models/Llama-3.2-3B-Q4_K_M.gguf")
    assert local.to_meta() == {"kind": "local", "model": "Llama-3.2-3B-Q4_K_M.gguf"}
    assert ReplySource.from_meta({"source": local.to_meta()}) == \
        ReplySource("Llama-3.2-3B-Q4_K_M.gguf")
    remote = ReplySource("gpt-oss-20b", "Office PC", "http://10.0.0.2:8080/v1")
    assert remote.remote and not local.remote
    assert ReplySource.from_meta({"source": remote.to_meta()}) == remote
    assert remote.label() == "gpt-oss-20b on Office PC"
    assert ReplySource.from_meta({}) is None
    assert ReplySource.from_meta({"source": "x"}) is None
    assert ReplySource.from_meta(None) is None


def test_a_reply_is_named_by_its_source_and_its_speed_is_under_it_as_plain_text() -> None:
    reply = Message("assistant", "Hi", meta={
        "tokens_per_s": 12.5, "source": ReplySource("<b>m</b>", "Box", "http://b/v1").to_meta()})
    assert "&lt;b&gt;m&lt;/b&gt; on Box" in render_name(reply, LIGHT)
    line = render_footer(reply, LIGHT, 1)
    assert "12.5 tokens/s" in line and "<b>" not in line
    whole = Message("assistant", "Hi", meta={
        "tokens_per_s": 9000.0, "streamed": False,
        "source": ReplySource("m", "Box", "http://b/v1").to_meta()})
    line = render_footer(whole, LIGHT, 1)
    assert "tokens/s" not in line and "m on Box (sent whole: the server does not stream)" in line
    question = Message("user", "q", meta=dict(reply.meta))
    assert "on Box" not in render_footer(question, LIGHT, 0) + render_name(question, LIGHT)
    assert ">You<" in render_name(question, LIGHT)
    assert ">Assistant<" in render_name(Message("assistant", "a"), LIGHT)  # no source kept
