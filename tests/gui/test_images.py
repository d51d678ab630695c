"""Images in the chat window (issue 30): made ready with Qt off the GUI thread (checked, scaled,
kept in Hearth's store), attached by paste or drop, shown as chips, sent as parts to a model that
sees images and left out for one that does not, drawn in the transcript from the store only, and
carried by exports."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage
from PySide6.QtWidgets import QPlainTextEdit

from app.chat.message import Message
from app.chat.transcript import IMAGES, Transcript
from app.i18n import TextError
from app.library.conversations import Conversation
from app.library.export import to_json, to_markdown
from app.services.images import ImageService, _read, prepare
from app.services.tasks import TaskRunner
from app.storage.images import ImageStore, image_url, inline_images
from app.ui.attachments import Attachments
from app.ui.chat_view import ChatView


def _image(path: Path, width: int, height: int, color: QColor, alpha: bool = False) -> Path:
    image = QImage(width, height, QImage.Format.Format_ARGB32 if alpha else
                   QImage.Format.Format_RGB32)
    image.fill(color)
    assert image.save(str(path))
    return path


def _bomb(path: Path) -> Path:
    """A tiny PNG whose header declares 60,000 × 60,000 pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(
        ">IIBBBBB", 60_000, 60_000, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b""))
    return path


def test_a_photo_is_scaled_to_the_projector_and_kept_once(qapp: Any, tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images")
    photo = _image(tmp_path / "photo.jpg", 3000, 2000, QColor(200, 40, 40))
    ref, thumb = prepare(_read(str(photo)), "photo.jpg", 896, store)
    assert (ref["format"], ref["width"], ref["height"], ref["name"]) == ("jpeg", 896, 597,
                                                                         "photo.jpg")
    assert max(thumb.width(), thumb.height()) <= 96
    data = store.read(ref)
    assert data is not None and data.startswith(b"\xff\xd8")
    again, _ = prepare(_read(str(photo)), "same.jpg", 896, store)
    assert again["sha256"] == ref["sha256"]
    assert len(list((tmp_path / "images").rglob("*.jpg"))) == 1  # kept once per content


def test_transparency_stays_png_and_a_small_image_is_not_enlarged(qapp: Any,
                                                                   tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    icon = _image(tmp_path / "icon.png", 40, 30, QColor(0, 0, 255, 120), alpha=True)
    ref, _ = prepare(_read(str(icon)), "icon.png", 896, store)
    assert (ref["format"], ref["width"], ref["height"]) == ("png", 40, 30)


def test_a_bomb_and_a_fake_are_refused_with_a_sentence(qapp: Any, tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "store")
    with pytest.raises(TextError, match="60000 × 60000 pixels"):
        prepare(_read(str(_bomb(tmp_path / "bomb.png"))), "bomb.png", 896, store)
    fake = tmp_path / "fake.png"
    fake.write_text("not a picture at all")
    with pytest.raises(TextError, match=r"fake\.png is not an image Hearth can read"):
        prepare(_read(str(fake)), "fake.png", 896, store)
    assert not (tmp_path / "store").exists()  # nothing was kept


def test_attached_files_come_back_as_chips(qtbot: Any, tmp_path: Path) -> None:
    tasks = TaskRunner()
    service = ImageService(tasks, ImageStore(tmp_path / "store"), lambda: 512)
    chips = Attachments()
    qtbot.addWidget(chips)
    chips.images_wanted.connect(service.add_files)
    service.ready.connect(chips.add_images)
    refused: list[str] = []
    service.refused.connect(refused.append)
    chips.add([str(_image(tmp_path / "a.png", 800, 600, QColor("green")))])
    qtbot.waitUntil(lambda: len(chips.images) == 1, timeout=10_000)
    ref = chips.image_refs()[0]
    assert (ref["width"], ref["height"]) == (512, 384) and chips.isVisibleTo(chips.parentWidget())
    chips.set_blind("This model cannot see images.")
    assert chips.note.isVisibleTo(chips) and "cannot see" in chips.note.text()
    chips.add([str(_bomb(tmp_path / "b.png"))])
    qtbot.waitUntil(lambda: bool(refused), timeout=10_000)
    assert "declares 60000 × 60000" in refused[0] and len(chips.images) == 1
    chips.remove_image(ref["sha256"])
    assert chips.images == [] and not chips.note.isVisibleTo(chips)
    tasks.wait(5)


def test_ctrl_v_with_an_image_attaches_it_and_text_still_pastes(qtbot: Any) -> None:
    box = QPlainTextEdit()
    chips = Attachments()
    qtbot.addWidget(box)
    qtbot.addWidget(chips)
    chips.take_paste(box)
    pasted: list[QImage] = []
    chips.image_pasted.connect(pasted.append)
    image = QImage(20, 10, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    QGuiApplication.clipboard().setImage(image)
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert len(pasted) == 1 and pasted[0].size() == image.size() and box.toPlainText() == ""
    QGuiApplication.clipboard().setText("just words")
    qtbot.keyClick(box, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert len(pasted) == 1 and box.toPlainText() == "just words"


def _question(store: ImageStore, color: str = "red") -> tuple[Message, dict[str, Any]]:
    image = QImage(60, 40, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    data = bytes(_png(image))
    ref = store.put(data, "png", width=60, height=40, name=f"{color}.png")
    return Message("user", "What is this?", meta={IMAGES: [ref]}), ref


def _png(image: QImage) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    kind: Any = "PNG"  # a str at run time (the stubs say bytes)
    image.save(buf, kind)
    return bytes(data.data())


def test_a_question_sends_its_images_only_to_a_model_that_sees(qapp: Any, tmp_path: Path
                                                                ) -> None:
    store = ImageStore(tmp_path)
    question, ref = _question(store)
    transcript = Transcript(messages=[question])
    seeing, _ = transcript.api_messages(images=True)
    parts = seeing[-1]["content"]
    assert parts[0] == {"type": "image_url", "image_url": {"url": image_url(ref)}}
    assert parts[-1] == {"type": "text", "text": "What is this?"}
    blind, _ = transcript.api_messages(images=False)
    assert blind[-1]["content"] == "What is this?"
    sent = inline_images(seeing, store)[-1]["content"][0]["image_url"]["url"]
    assert base64.b64decode(sent.split(",", 1)[1]) == store.read(ref)
    # An edit keeps the images; a missing file becomes a sentence, and the question still goes.
    user, _live = transcript.edit(question, "And now?")
    assert user.meta[IMAGES] == [ref]
    path = store.path(ref)
    assert path is not None
    path.unlink()
    gone = inline_images(transcript.api_messages(images=True)[0], store)[-1]["content"]
    assert gone[0]["type"] == "text" and "no longer in Hearth's store" in gone[0]["text"]


def test_a_hostile_reference_names_no_file_outside_the_store(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images")
    (tmp_path / "secret.png").write_bytes(b"x")
    for ref in ({"sha256": "../secret", "format": "png"}, {"sha256": "a" * 64, "format": "exe"},
                {"sha256": "A" * 64, "format": "png"}, {}):
        assert store.path(ref) is None and store.read(ref) is None


def _count(image: QImage, near: QColor) -> int:
    hits = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            c = image.pixelColor(x, y)
            if abs(c.red() - near.red()) + abs(c.green() - near.green()) + \
                    abs(c.blue() - near.blue()) < 60:
                hits += 1
    return hits


def test_the_transcript_draws_a_question_s_image_from_the_store(qtbot: Any, tmp_path: Path
                                                                ) -> None:
    store = ImageStore(tmp_path)
    question, _ref = _question(store, "#e01010")
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    view.set_messages([question])
    qtbot.waitExposed(view)
    without = _count(view.viewport().grab().toImage(), QColor("#e01010"))
    view.use_images(store)
    view.viewport().repaint()
    shown = _count(view.viewport().grab().toImage(), QColor("#e01010"))
    assert without == 0 and shown > 200, (without, shown)
    # Model output that names an image draws nothing: it is escaped text, never an <img>.
    reply = Message("assistant", f'<img src="{image_url(_ref)}"> ![x]({image_url(_ref)})')
    view.set_messages([reply])
    view.viewport().repaint()
    assert _count(view.viewport().grab().toImage(), QColor("#e01010")) == 0


def test_exports_carry_the_images(qapp: Any, tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    question, ref = _question(store)
    conv = Conversation(id=1, title="Pictures", model="", created=0.0, updated=0.0,
                        pinned=False, settings={}, messages=[question, Message("assistant", "A red square.")])
    md = to_markdown(conv, store)
    assert "![red.png](data:image/png;base64," in md
    data = json.loads(to_json(conv, store))
    assert data["messages"][0]["images"][0]["data_url"].startswith("data:image/png;base64,")
    assert data["messages"][0]["images"][0]["sha256"] == ref["sha256"]
