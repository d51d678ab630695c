"""Images in an OpenAI chat request: which parts are images, and their bytes.

``image_url`` parts carry a data URL (``data:image/png;base64,…``) or a link. A link is fetched
only where the person allowed it (runner/remote_image.py); otherwise the refusal says how to send
the image itself. Every failure is a sentence that names the image by its place in the request.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Sequence
from typing import Any

from runner.vision import MAX_IMAGES, Image, ImageRefused, sniff

IMAGE_PARTS = ("image_url",)
LINKS_BUDGET_S = 20.0  # all the links of one request, fetched one after another
# Fetches a link's bytes (a bounded client), or None where links are not allowed.
Fetch = Callable[[str, str], bytes] | None


def part_url(part: Any) -> str:
    """The URL of an ``image_url`` part: ``{"url": …}`` as OpenAI sends it, or a bare string."""
    raw = (part.model_extra or {}).get("image_url")
    if isinstance(raw, dict):
        raw = raw.get("url")
    return raw if isinstance(raw, str) else ""


def image_parts(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """(where, url) of every image part, in the order the prompt will hold them."""
    found: list[tuple[str, str]] = []
    for i, m in enumerate(messages):
        if not isinstance(m.content, list):
            continue
        for j, part in enumerate(m.content):
            if part.type in IMAGE_PARTS:
                found.append((f"messages[{i}].content[{j}]", part_url(part)))
    if len(found) > MAX_IMAGES:
        raise ImageRefused(f"The request has {len(found)} images; this server takes at most "
                           f"{MAX_IMAGES} in one request.")
    return found


def load_images(parts: list[tuple[str, str]], fetch: Fetch,
                links_budget_s: float = LINKS_BUDGET_S) -> list[Image]:
    """The images' bytes, checked from their headers (on a prompt thread: base64 of a photo
    takes milliseconds to decode). Links share one time budget: sixteen slow ones must not
    hold a prompt thread for sixteen times a link's own limit."""
    out: list[Image] = []
    deadline = time.monotonic() + links_budget_s
    for where, url in parts:
        if url.startswith(("http://", "https://")) and fetch is not None and \
                time.monotonic() > deadline:
            raise ImageRefused(f"{where}: the request's image links took more than "
                               f"{links_budget_s:.0f} s together; send the images themselves "
                               "as data URLs.")
        out.append(sniff(_bytes(where, url, fetch), where))
    return out


def _bytes(where: str, url: str, fetch: Fetch) -> bytes:
    if url.startswith("data:"):
        head, sep, payload = url.partition(",")
        if not sep or not head.endswith(";base64"):
            raise ImageRefused(f"{where} is a data URL without base64 data: send "
                               "data:image/png;base64,… (or image/jpeg).")
        try:
            return base64.b64decode(payload, validate=False)
        except (binascii.Error, ValueError):
            raise ImageRefused(f"{where} has a data URL whose base64 does not decode.") from None
    if url.startswith(("http://", "https://")):
        if fetch is None:
            raise ImageRefused(
                f"{where} is a link ({url[:80]}); this server does not fetch images from the "
                "network unless the person running it allows image links (Hearth: Settings → "
                "Sharing). Send the image itself as a data URL.")
        return fetch(url, where)
    if not url:
        raise ImageRefused(f"{where} is an image part without a URL: give image_url.url.")
    raise ImageRefused(f"{where} has a URL that is neither a data URL nor an http(s) link.")
