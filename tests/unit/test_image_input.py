"""Images in an API request, before any model sees them: formats, declared sizes, data URLs."""

from __future__ import annotations

import base64
import struct
import zlib
from types import SimpleNamespace

import pytest

from runner.image_input import image_parts, load_images
from runner.vision import MAX_IMAGES, ImageRefused, sniff, stand_in


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(min(height, 4)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0,
                                                               0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _jpeg_header(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def test_png_and_jpeg_sizes_come_from_their_headers() -> None:
    assert (sniff(_png(7, 5), "x").width, sniff(_png(7, 5), "x").height) == (7, 5)
    image = sniff(_jpeg_header(640, 480), "x")
    assert (image.format, image.width, image.height) == ("jpeg", 640, 480)


def test_a_declared_decompression_bomb_is_refused_before_decoding() -> None:
    with pytest.raises(ImageRefused, match=r"60000 × 60000 pixels.*scale it down"):
        sniff(_png(60_000, 60_000), "messages[0].content[1]")
    with pytest.raises(ImageRefused, match="declares 9000 × 9000"):
        sniff(_jpeg_header(9000, 9000), "x")  # 81 million pixels, each side allowed


@pytest.mark.parametrize(("data", "named"), [
    (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "a WebP image"),
    (b"GIF89a\x01\x00\x01\x00", "a GIF image"),
    (b"hello, I am text", "not a PNG or JPEG image"),
])
def test_other_formats_are_named_and_refused(data: bytes, named: str) -> None:
    with pytest.raises(ImageRefused, match=f"is {named}: send PNG or JPEG"):
        sniff(data, "messages[0].content[0]")


def test_a_cut_png_or_a_jpeg_without_a_frame_is_refused() -> None:
    with pytest.raises(ImageRefused, match="not a whole PNG"):
        sniff(_png(4, 4)[:20], "x")
    with pytest.raises(ImageRefused, match="not a whole JPEG"):
        sniff(b"\xff\xd8\xff\xe0\x00\x10JFIF", "x")


def _message(*parts: dict[str, object]) -> SimpleNamespace:
    return SimpleNamespace(content=[SimpleNamespace(type=p["type"], model_extra={
        k: v for k, v in p.items() if k != "type"}) for p in parts])


def test_data_urls_links_and_missing_urls() -> None:
    png = _png(3, 3)
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    parts = image_parts([_message({"type": "text"}, {"type": "image_url", "image_url": {"url": url}}),
                         _message({"type": "image_url", "image_url": "https://example.com/a.png"})])
    assert [where for where, _ in parts] == ["messages[0].content[1]", "messages[1].content[0]"]
    assert load_images(parts[:1], None)[0].data == png
    with pytest.raises(ImageRefused, match=r"messages\[1\].content\[0\] is a link .*data URL"):
        load_images(parts[1:], None)
    fetched = load_images(parts[1:], lambda link, where: png)
    assert fetched[0].width == 3
    with pytest.raises(ImageRefused, match="without base64"):
        load_images([("x", "data:image/png,abc")], None)
    with pytest.raises(ImageRefused, match="without a URL"):
        load_images([("x", "")], None)


def test_too_many_images_in_one_request_are_refused() -> None:
    many = _message(*[{"type": "image_url", "image_url": {"url": "data:,"}}] * (MAX_IMAGES + 1))
    with pytest.raises(ImageRefused, match=f"at most {MAX_IMAGES}"):
        image_parts([many])


def test_stand_ins_are_negative_and_differ_by_content() -> None:
    a, b = stand_in("ab" * 32), stand_in("cd" * 32)
    assert a < 0 and b < 0 and a != b


def test_links_share_one_time_budget() -> None:
    png = _png(2, 2)
    calls: list[str] = []

    def slow(link: str, where: str) -> bytes:
        calls.append(link)
        import time

        time.sleep(0.05)
        return png

    parts = [(f"messages[0].content[{i}]", f"https://example.com/{i}.png") for i in range(3)]
    with pytest.raises(ImageRefused, match=r"content\[1\]: the request's image links took"):
        load_images(parts, slow, links_budget_s=0.01)
    assert len(calls) == 1  # the rest were not fetched
    assert len(load_images(parts, slow, links_budget_s=60)) == 3
