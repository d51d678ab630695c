"""Image links through the real runner on the generated vision pair: with ``--image-links`` a
link to this computer (or its network) is refused with a sentence and never fetched; without
the flag every link is refused, saying links are not fetched. The fetching itself (redirects,
size, time, TLS) is tests/unit/test_remote_image.py's."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.fixtures.vision import png_bytes, vision_pair
from tests.integration.conftest import Runner, openai_client, running

PNG = png_bytes(16, 16, (255, 0, 0))
WHERE = "messages[0].content[1]"


@pytest.fixture(scope="module")
def images() -> Iterator[tuple[int, list[str]]]:
    """A server on this computer with an image a link could name: (its port, the paths asked
    for). Were the address check missing, the runner would fetch it and answer."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_a: Any) -> None:
            pass

        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(PNG)))
            self.end_headers()
            self.wfile.write(PNG)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd.server_address[1], asked
    httpd.shutdown()
    httpd.server_close()


def _start(*flags: str) -> Any:
    model, projector = vision_pair()
    return running("--mmproj", str(projector), "--ctx-size", "512", "--seed", "1", *flags,
                   model=model)


@pytest.fixture(scope="module")
def fetching() -> Iterator[Runner]:
    with _start("--image-links") as r:
        yield r


def _ask(url: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": "what is this"},
                                         {"type": "image_url", "image_url": {"url": url}}]}]


def _refusal(r: Runner, url: str) -> dict[str, Any]:
    with r.client() as http:
        resp = http.post("/v1/chat/completions", json={"messages": _ask(url), "max_tokens": 2})
    assert resp.status_code == 400, resp.text
    error = dict(resp.json()["error"])
    assert error["code"] == "invalid_image", error
    assert WHERE in error["message"], error
    return error


def _image_links(r: Runner) -> bool:
    with r.client() as http:
        return bool(http.get("/runner/status").json()["vision"]["image_links"])


def test_with_the_flag_a_link_to_this_computer_is_refused_with_a_sentence(
        fetching: Runner, images: tuple[int, list[str]]) -> None:
    port, asked = images
    assert _image_links(fetching)
    for url, named in [(f"http://127.0.0.1:{port}/red.png", "127.0.0.1, which is a loopback"),
                       (f"http://localhost:{port}/red.png", "which is a loopback"),
                       (f"http://[::ffff:127.0.0.1]:{port}/red.png", "which is a loopback"),
                       ("http://169.254.169.254/latest/meta-data/", "which is a link-local"),
                       ("http://10.0.0.1/red.png", "which is a private network address")]:
        message = _refusal(fetching, url)["message"]
        assert named in message, message
        assert "only from public internet addresses, never from its own network" in message
        assert "data URL" in message  # what to do instead
    assert asked == []  # never connected
    # A link is refused, not the runner: it still answers an image sent as data.
    import base64

    with openai_client(fetching) as client:
        out = client.chat.completions.create(
            model="m", max_tokens=2, temperature=0,
            messages=_ask("data:image/png;base64," + base64.b64encode(PNG).decode()))  # type: ignore[arg-type]
    assert out.choices[0].finish_reason in ("length", "stop")


def test_without_the_flag_a_link_is_refused_saying_links_are_not_fetched(
        images: tuple[int, list[str]]) -> None:
    port, asked = images
    with _start() as r:
        assert not _image_links(r)
        for url in (f"http://127.0.0.1:{port}/red.png", "https://example.com/a.png"):
            message = _refusal(r, url)["message"]
            assert "does not fetch images from the network unless the person running it " \
                   "allows image links" in message, message
            assert "Send the image itself as a data URL" in message
    assert asked == []
