"""The transcript state machine: replies begin, grow, end with a typed reason, and are kept."""

from __future__ import annotations

import pytest

from app.chat.message import Message
from app.chat.transcript import (
    RUNNER_DIED_NOTE,
    ReplyEnd,
    Transcript,
    TranscriptError,
    trim_to_budget,
)


def test_a_reply_grows_and_finishes_with_its_reason() -> None:
    t = Transcript()
    user, live = t.begin_reply("Hello")
    assert t.replying and t.live is live and t.messages == [user, live]
    assert t.append("Hi ") is live and t.append("there") is live
    assert t.finish(ReplyEnd.LENGTH) is live
    assert live.content == "Hi there" and live.note == "The reply reached its length limit."
    assert not t.replying
    assert t.append("late") is None  # a delta after the end changes nothing
    assert live.content == "Hi there"


@pytest.mark.parametrize(("end", "note"), [
    (ReplyEnd.FINISHED, ""),
    (ReplyEnd.STOPPED, "Stopped."),
    (ReplyEnd.RUNNER_DIED, RUNNER_DIED_NOTE),
    (ReplyEnd.CLOSED, "The window was closed during this reply."),
])
def test_every_end_keeps_the_partial_reply(end: ReplyEnd, note: str) -> None:
    t = Transcript()
    t.begin_reply("Tell me a story")
    t.append("Once upon")
    reply = t.finish(end)
    assert reply is not None and reply.content == "Once upon" and reply.note == note


def test_a_failure_says_the_runners_words_and_a_second_reply_cannot_start_over_a_live_one() -> None:
    t = Transcript()
    t.begin_reply("a")
    with pytest.raises(TranscriptError):
        t.begin_reply("b")
    reply = t.finish(ReplyEnd.FAILED, "The prompt is longer than the context.")
    assert reply is not None and reply.note == "The prompt is longer than the context."
    assert t.finish(ReplyEnd.STOPPED) is None  # nothing live any more


def test_api_messages_leave_out_failed_empty_replies_and_the_live_one() -> None:
    t = Transcript()
    t.begin_reply("first")
    t.finish(ReplyEnd.FAILED, "boom")  # empty reply: never sent to the model
    t.begin_reply("second")
    t.append("partial")
    sent, dropped = t.api_messages(system="Be brief.")
    assert dropped == 0
    assert sent == [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "first"},
                    {"role": "user", "content": "second"}]


def test_trimming_drops_the_oldest_turns_only_from_what_is_sent() -> None:
    msgs = [Message("user", "q1"), Message("assistant", "a1" * 50),
            Message("user", "q2"), Message("assistant", "a2"), Message("user", "q3")]
    kept, dropped = trim_to_budget(msgs, budget=10, count=len)
    # q1 and the long a1 go; the kept part starts on a user message.
    assert [m.content for m in kept] == ["q2", "a2", "q3"] and dropped == 2
    kept, dropped = trim_to_budget(msgs, budget=1, count=len)
    assert [m.content for m in kept] == ["q3"] and dropped == 4  # the question is always sent
    t = Transcript(messages=list(msgs))
    sent, dropped = t.api_messages(budget=10, count=len)
    assert [m["content"] for m in sent] == ["q2", "a2", "q3"]
    assert dropped == 2 and len(t.messages) == 5  # the stored conversation is untouched


def test_regenerate_edit_and_continue_keep_the_branch_links() -> None:
    t = Transcript()
    q, a = t.begin_reply("q1")
    t.append("a1")
    t.finish(ReplyEnd.FINISHED)
    q2, a2 = t.begin_reply("q2")
    assert q2.parent is a and a2.parent is q2 and q.parent is None
    t.append("cut")
    t.finish(ReplyEnd.LENGTH)
    live = t.continue_reply(a2)
    assert live is a2 and a2.note == "" and t.live is a2
    sent, _ = t.api_messages(continuing=True)
    assert sent[-1] == {"role": "assistant", "content": "cut"}
    t.append(" more")
    t.finish(ReplyEnd.FINISHED)
    new = t.regenerate(a)  # the first reply again: the later turns leave the view
    assert new.parent is q and t.messages == [q, new]
    t.finish(ReplyEnd.FINISHED)
    user, reply = t.edit(q, "q1 edited")
    assert user.parent is None and reply.parent is user and t.messages == [user, reply]
    with pytest.raises(TranscriptError):
        t.continue_reply(a)  # not in the branch shown
    with pytest.raises(TranscriptError):
        t.regenerate(user)  # a question is edited, not regenerated


def test_a_questions_documents_go_first_and_stay_with_it_through_an_edit() -> None:
    from app.chat.transcript import DOCUMENTS, DOCUMENTS_USED, sent_text

    t = Transcript()
    user, _live = t.begin_reply("What is the fee?")
    user.meta[DOCUMENTS] = "[port.pdf, page 4]\nThe fee is 12 coins.\n"
    user.meta[DOCUMENTS_USED] = [{"name": "port.pdf", "whole": False, "passages": 1,
                                  "places": ["page 4"]}]
    assert sent_text(user) == "[port.pdf, page 4]\nThe fee is 12 coins.\n\n---\n\nWhat is the fee?"
    sent, _dropped = t.api_messages()
    assert sent[-1] == {"role": "user", "content": sent_text(user)}
    assert user.content == "What is the fee?"  # shown and stored as typed
    t.finish(ReplyEnd.FINISHED)
    edited, _ = t.edit(user, "What is the fee in coins?")
    assert edited.meta[DOCUMENTS] == user.meta[DOCUMENTS]
    assert sent_text(edited).endswith("What is the fee in coins?")
    # Only a question carries documents.
    assert sent_text(Message("assistant", "x", meta={DOCUMENTS: "y"})) == "x"
