"""The window's view of this computer's model server (`hearth serve`, server/): what it holds
and the asks the window makes of it (no Qt; called off the GUI thread).

The server answers at Sharing's port with the shared key (app/remote/share.py). What it says is
checked like any answer from the network: a field of the wrong kind drops the row, never
crashes the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.i18n import T_, Text, TextError

if TYPE_CHECKING:  # imported when a request is made: not on the window's way to its first frame
    import httpx2

TIMEOUT_S = 5.0


class ModelServerError(TextError):
    """The server could not be asked; ``str()`` says why and what to do."""


@dataclass(frozen=True)
class ResidentModel:
    """One model the server holds now."""

    id: str  # the runner's name: the model's id, or "<id> (embeddings)"
    model: str  # the library id the window unloads or pins by
    state: str  # "loaded", "loading", "unloading"
    memory: int  # bytes the plan predicts, every device
    requests: int  # in flight now
    idle_s: float
    pinned: bool
    window: bool = False  # the window's own model, handed over (unloaded in the window)


def parse_resident(payload: object) -> list[ResidentModel]:
    """The rows of ``GET /hearth/models``; rows that are not what they should be are left out."""
    rows = payload.get("models") if isinstance(payload, dict) else None
    out: list[ResidentModel] = []
    for row in rows if isinstance(rows, list) else []:
        model = _row(row)
        if model is not None:
            out.append(model)
    return out


def _row(row: Any) -> ResidentModel | None:
    if not isinstance(row, dict):
        return None
    name, model, state = row.get("id"), row.get("model"), row.get("state")
    memory, requests, idle = row.get("memory"), row.get("requests"), row.get("idle_s")
    if not (isinstance(name, str) and isinstance(model, str) and isinstance(state, str)):
        return None
    held = sum(v for v in memory.values() if _whole(v)) if isinstance(memory, dict) else 0
    busy = requests if isinstance(requests, int) and _whole(requests) else 0
    return ResidentModel(
        name[:300], model[:300], state[:20], held, busy,
        float(idle) if isinstance(idle, int | float) and not isinstance(idle, bool)
        and math.isfinite(idle) and idle >= 0 else 0.0, row.get("pinned") is True,
        row.get("window") is True)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class ModelServerClient:
    """Asks the server at ``url`` with ``key``; every method raises ModelServerError."""

    def __init__(self, url: str, key: str, client: httpx2.Client | None = None) -> None:
        import httpx2

        self.url = url.rstrip("/")
        self._key = key
        self._client = client or httpx2.Client(timeout=TIMEOUT_S)

    def close(self) -> None:
        self._client.close()

    def resident(self) -> list[ResidentModel] | None:
        """What the server holds; None when no server answers at the address."""
        import httpx2

        try:
            r = self._client.get(self.url + "/hearth/models", headers=self._headers())
        except httpx2.ConnectError:
            return None  # nothing listens: not running
        except httpx2.HTTPError as exc:
            raise ModelServerError(T_("The model server at {url} did not answer ({error}).",
                                      url=self.url, error=type(exc).__name__)) from exc
        if r.status_code in (401, 403):
            raise ModelServerError(T_(
                "Something answers at {url} but takes another key: another program may use "
                "this port. Choose another port in Settings > Sharing.", url=self.url))
        if r.status_code != 200:
            return None  # another kind of server on this port: not Hearth's
        try:
            return parse_resident(r.json())
        except ValueError:
            return None

    def unload(self, model: str) -> None:
        self._post("/hearth/unload", {"model": model})

    def pin(self, model: str, pinned: bool) -> None:
        self._post("/hearth/keep", {"model": model, "pinned": pinned})

    def adopt(self, path: str, url: str, key: str) -> str:
        """Hand over the window's runner for the model at ``path`` (listening at ``url``, with
        ``key``); the id the server serves it by, "" when the file is not in the library."""
        r = self._post("/hearth/adopt", {"path": path, "url": url, "key": key})
        try:
            model = r.json().get("model") if r.status_code == 200 else ""
        except (ValueError, AttributeError):
            model = None
        if not isinstance(model, str):
            raise ModelServerError(T_("The model server at {url} gave an answer Hearth does "
                                      "not understand.", url=self.url))
        return model[:300]

    def _post(self, path: str, body: dict[str, Any]) -> httpx2.Response:
        """The answer: 200, or 404 (unloaded meanwhile, or not in the library)."""
        import httpx2

        try:
            r = self._client.post(self.url + path, json=body, headers=self._headers())
        except httpx2.HTTPError as exc:
            raise ModelServerError(T_("The model server at {url} did not answer ({error}).",
                                      url=self.url, error=type(exc).__name__)) from exc
        if r.status_code not in (200, 404):  # 404: what was asked is true already
            raise ModelServerError(T_("The model server refused: {reason}",
                                      reason=_reason(r)))
        return r

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"}


def _reason(r: httpx2.Response) -> Text | str:
    try:
        err = r.json().get("error")
        message = err.get("message") if isinstance(err, dict) else None
    except (ValueError, AttributeError):
        message = None
    return str(message)[:300] if isinstance(message, str) else f"HTTP {r.status_code}"
