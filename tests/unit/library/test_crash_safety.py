"""A Hearth killed mid-reply keeps the conversation and the reply as far as it was stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.library.conversations import ConversationStore
from app.storage.db import open_database
from app.storage.legacy import LegacySources

REPO = Path(__file__).resolve().parents[3]

CHILD = """
import sys
from pathlib import Path
from app.library.conversations import ConversationStore
from app.storage.db import open_database
from app.storage.legacy import LegacySources

store = ConversationStore(open_database(Path(sys.argv[1]), legacy=LegacySources()))
conv = store.create("Crash test", "/m/model.gguf")
store.append_message(conv, "user", "Tell me a long story")
reply = store.append_message(conv, "assistant", "")
i = 0
while True:
    i += 1
    store.update_message(reply, "piece " * i + f"#{i}")
    print(i, flush=True)  # only after the update returned, i.e. was committed
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_reply_keeps_the_reply_so_far(tmp_path: Path) -> None:
    db_path = tmp_path / "hearth.sqlite3"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db_path)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        confirmed = 0
        while confirmed < 300:
            line = child.stdout.readline()
            assert line, f"the child stopped early: {child.stderr.read() if child.stderr else ''}"
            confirmed = int(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout:
            child.stdout.close()
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    db = open_database(db_path, legacy=LegacySources())
    try:
        store = ConversationStore(db)
        (summary,) = store.summaries()
        assert (summary.title, summary.message_count) == ("Crash test", 2)
        user, reply = store.get(summary.id).messages
        assert user.content == "Tell me a long story"
        number = int(reply.content.rsplit("#", 1)[1])
        assert number >= confirmed  # nothing committed was lost
        assert reply.content == "piece " * number + f"#{number}"  # one whole update, not a mix
    finally:
        db.close()
