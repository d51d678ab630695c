"""Talking to the Hugging Face Hub: search, repository details, file URLs, byte ranges (no Qt).

Built on huggingface_hub (its HTTP session, ``HfApi.model_info``, ``hf_hub_url``,
``build_hf_headers`` and ``hf_raise_for_status``, so errors are classified the way the Hub means
them), with three deliberate departures:

- Search pages through ``/api/models`` itself, following the same ``Link: rel="next"`` headers
  ``HfApi.list_models`` follows. ``list_models`` cannot be used page by page: its ``limit`` is
  both the page size and a cap on the whole iteration, it takes no timeout (the shared session
  has none) and it retries a 5xx for about 20 seconds before giving up.
- The endpoint is read from ``HF_ENDPOINT`` when a client is made, not when huggingface_hub was
  imported, and ``HF_HUB_OFFLINE`` is honoured at call time for the same reason.
- Byte ranges use a plain httpx2 client (proxies from the environment, like huggingface_hub's)
  so a server that ignores ``Range`` is noticed and never streams a whole model.

Every failure leaves as an :mod:`app.hub.types` error whose text says what to do.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from app.hub.names import group_files, safe_relative_path
from app.hub.types import (
    AuthError,
    EntryNotFoundError,
    HubError,
    HubFile,
    HubUnreachableError,
    RepoDetails,
    RepoNotFoundError,
    RepoSummary,
)
from app.i18n import T_
from app.jobs import CancelledError, CancelToken

if TYPE_CHECKING:  # imported where it is used: the window's start need not wait for it
    import httpx2


@functools.cache
def _hf() -> Any:
    """huggingface_hub, imported on first use: it takes a third of a second, and the window
    must show before anyone searches the Hub."""
    import huggingface_hub
    from huggingface_hub import errors, hf_api, utils

    return SimpleNamespace(
        HfApi=huggingface_hub.HfApi, hf_hub_url=huggingface_hub.hf_hub_url,
        HfEntryNotFoundError=errors.EntryNotFoundError, GatedRepoError=errors.GatedRepoError,
        HfHubHTTPError=errors.HfHubHTTPError, HFValidationError=errors.HFValidationError,
        OfflineModeIsEnabled=errors.OfflineModeIsEnabled,
        RepositoryNotFoundError=errors.RepositoryNotFoundError,
        RevisionNotFoundError=errors.RevisionNotFoundError, HfModelInfo=hf_api.ModelInfo,
        build_hf_headers=utils.build_hf_headers, get_session=utils.get_session,
        hf_raise_for_status=utils.hf_raise_for_status)


DEFAULT_ENDPOINT = "https://huggingface.co"
SORTS = {"trending": "trendingScore", "downloads": "downloads", "likes": "likes",
         "modified": "lastModified"}
_EXPAND = ["author", "downloads", "likes", "lastModified", "gated", "trendingScore"]
_REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
_MAX_CARD = 512 * 1024  # a model card is text; more than this is not worth showing
_FRONT_MATTER_RE = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_READ_CHUNK = 64 * 1024
USER_AGENT = "hearth"
_RETRY_HINT = T_("Check the connection and press Retry; models already on this computer keep working.")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def strip_front_matter(card: str) -> str:
    """The Markdown of a model card without its YAML metadata block."""
    return _FRONT_MATTER_RE.sub("", card, count=1).lstrip("\r\n")


def _timestamp(value: Any) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp()
    return None


@dataclass
class SearchResults:
    """One page of search results; :meth:`next_page` fetches the one after it."""

    items: list[RepoSummary]
    _client: HubClient = field(repr=False)
    _next_url: str | None = field(default=None, repr=False)

    @property
    def has_more(self) -> bool:
        return self._next_url is not None

    def next_page(self) -> SearchResults | None:
        """The next page, or None after the last one."""
        if self._next_url is None:
            return None
        return self._client._search_page(self._next_url, None)


class HubClient:
    """The Hub as Hearth uses it. Thread-safe; call :meth:`close` (or use ``with``) when done.

    ``endpoint`` defaults to ``HF_ENDPOINT`` (read now) or https://huggingface.co. ``token`` is
    the user's access token (``app.hub.auth.get_token()``); None means anonymous: a token saved
    by other tools is never picked up behind the user's back.
    """

    def __init__(self, endpoint: str | None = None, token: str | None = None,
                 timeout: float = 10.0) -> None:
        import httpx2

        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        self.token = token or None
        self.timeout = timeout
        self._api = _hf().HfApi(endpoint=self.endpoint, token=self.token or False, library_name=USER_AGENT)
        # trust_env (the default) picks up HTTP(S)_PROXY / NO_PROXY like huggingface_hub does.
        self._http = httpx2.Client(timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API --------------------------------------------------------------------------------

    def search(self, query: str, sort: str = "trending", limit: int = 30) -> SearchResults:
        """GGUF repositories matching ``query``, best first by ``sort``; ``limit`` per page."""
        if sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
        params: dict[str, Any] = {"filter": "gguf", "sort": SORTS[sort], "direction": -1,
                                  "limit": max(1, min(limit, 100)), "expand": _EXPAND}
        if query.strip():
            params["search"] = query.strip()
        return self._search_page(f"{self.endpoint}/api/models", params)

    def details(self, repo_id: str, revision: str | None = None) -> RepoDetails:
        """A repository's card, facts and GGUF files (grouped), pinned to one commit."""
        self._check_repo_id(repo_id)
        with self._errors(repo_id):
            info = self._api.model_info(repo_id, revision=revision, files_metadata=True,
                                        timeout=self.timeout)
        commit = info.sha or revision or "main"
        files = tuple(self._hub_file(s) for s in (info.siblings or []))
        groups = group_files(f for f in files if self._safe(f.path))
        card = ""
        if any(f.path == "README.md" for f in files):
            card = self._card(repo_id, commit)
        gguf = info.gguf if isinstance(info.gguf, dict) else {}
        card_data = info.card_data
        license_ = getattr(card_data, "license", None) if card_data is not None else None
        if not license_:
            license_ = next((t.split(":", 1)[1] for t in (info.tags or []) if t.startswith("license:")),
                            None)
        return RepoDetails(
            repo_id=info.id or repo_id,
            revision=commit,
            card=card,
            license=license_ if isinstance(license_, str) else None,
            gated=bool(info.gated),
            architecture=gguf.get("architecture") if isinstance(gguf.get("architecture"), str) else None,
            parameters=_int_or_none(gguf.get("total")),
            context_length=_int_or_none(gguf.get("context_length")),
            downloads=info.downloads or 0,
            likes=info.likes or 0,
            last_modified=_timestamp(info.last_modified),
            groups=groups,
            files=files,
        )

    def file_url(self, repo_id: str, revision: str, path: str) -> str:
        """The download address of ``path`` (refused by names.safe_relative_path if unsafe)."""
        safe_relative_path(path)
        self._check_repo_id(repo_id)
        return _hf().hf_hub_url(repo_id, path, revision=revision, endpoint=self.endpoint)

    def request_headers(self) -> dict[str, str]:
        """Headers for a download request: the user agent and, with a token, Authorization."""
        headers = _hf().build_hf_headers(token=self.token or False, library_name=USER_AGENT,
                                   library_version=_version())
        headers["Accept-Encoding"] = "identity"  # sizes and ranges must be of the real bytes
        return headers

    def read_range(self, repo_id: str, revision: str, path: str, start: int, end: int,
                   cancel: CancelToken | None = None) -> bytes:
        """Bytes ``start..end`` (inclusive) of a file.

        A server that answers 200 ignores Range: at most ``end + 1`` bytes are read from it
        before the connection is dropped, so a misbehaving proxy never streams a whole model.
        """
        if start < 0 or end < start:
            raise ValueError(f"bad byte range {start}-{end}")
        url = self.file_url(repo_id, revision, path)
        self._check_offline()
        headers = self.request_headers()
        headers["Range"] = f"bytes={start}-{end}"
        want = end - start + 1
        with self._errors(repo_id, path), self._http.stream("GET", url, headers=headers) as resp:
            if resp.status_code >= 400:
                resp.read()
                _hf().hf_raise_for_status(resp)
            if resp.status_code == 206:
                first = _content_range_start(resp.headers.get("Content-Range"))
                if first != start:
                    raise HubError(T_("Hugging Face answered a request for bytes {start:,}-{end:,} of "
                                      "{path} with other bytes ({range}). Press Retry; a proxy between "
                                      "you and Hugging Face may be at fault.", start=start, end=end,
                                      path=path, range=resp.headers.get("Content-Range")))
                skip, limit = 0, want
            elif resp.status_code == 200:
                skip, limit = start, end + 1
            else:
                raise HubError(T_("Hugging Face answered {status} for {path}; Hearth expected the "
                                  "file's bytes. Press Retry.", status=resp.status_code, path=path))
            buf = bytearray()
            for chunk in resp.iter_bytes(_READ_CHUNK):
                if cancel is not None and cancel.cancelled:
                    raise CancelledError()
                buf += chunk
                if len(buf) >= limit:
                    break
            data = bytes(buf[skip:limit])
        # A short body: the file is shorter than asked (the caller may ask past the end).
        return data

    def whoami(self) -> str:
        """The account name the token belongs to (AuthError when it is missing or refused)."""
        if not self.token:
            raise AuthError(T_("No Hugging Face token is set. Add one with Token… on the Discover tab "
                               "or run `hearth login`."), "missing", f"{self.endpoint}/settings/tokens")
        data = self._get_json(f"{self.endpoint}/api/whoami-v2", None, None)
        name = data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str) or not name:
            raise HubError(T_("Hugging Face did not say whom the token belongs to. Press Retry."))
        return name

    # -- internals ---------------------------------------------------------------------------------

    def _search_page(self, url: str, params: dict[str, Any] | None) -> SearchResults:
        resp = self._get(url, params, None)
        data = _json(resp)
        if not isinstance(data, list):
            raise HubError(T_("Hugging Face sent search results Hearth could not read. Press Retry."))
        items = [s for s in (_summary(item) for item in data if isinstance(item, dict)) if s is not None]
        next_url = resp.links.get("next", {}).get("url")
        return SearchResults(items, self, next_url)

    def _get(self, url: str, params: dict[str, Any] | None, repo_id: str | None,
             path: str | None = None) -> httpx2.Response:
        self._check_offline()
        headers = _hf().build_hf_headers(token=self.token or False, library_name=USER_AGENT,
                                   library_version=_version())
        with self._errors(repo_id, path):
            resp = _hf().get_session().get(url, params=params, headers=headers, timeout=self.timeout)
            _hf().hf_raise_for_status(resp)
        return resp

    def _get_json(self, url: str, params: dict[str, Any] | None, repo_id: str | None) -> Any:
        return _json(self._get(url, params, repo_id))

    def _card(self, repo_id: str, commit: str) -> str:
        url = _hf().hf_hub_url(repo_id, "README.md", revision=commit, endpoint=self.endpoint)
        try:
            resp = self._get(url, None, repo_id, "README.md")
        except (EntryNotFoundError, AuthError):
            return ""  # no card, or one behind a gate: the page still shows the files
        text = resp.content[:_MAX_CARD].decode("utf-8", errors="replace")
        return strip_front_matter(text)

    def _check_offline(self) -> None:
        if _truthy(os.environ.get("HF_HUB_OFFLINE")):
            raise HubUnreachableError(
                T_("Hearth is in offline mode (HF_HUB_OFFLINE is set), so it does not contact Hugging "
                   "Face. Unset HF_HUB_OFFLINE to browse and download; models already on this computer "
                   "keep working."))

    @staticmethod
    def _check_repo_id(repo_id: str) -> None:
        if not _REPO_ID_RE.match(repo_id) or ".." in repo_id:
            raise RepoNotFoundError(T_("{repo_id!r} is not a Hugging Face model name; it should look "
                                       "like owner/model-name.", repo_id=repo_id))

    @staticmethod
    def _safe(path: str) -> bool:
        try:
            safe_relative_path(path)
        except HubError:
            return False  # never offered for download; still listed in RepoDetails.files
        return True

    @staticmethod
    def _hub_file(sibling: Any) -> HubFile:
        lfs = getattr(sibling, "lfs", None)
        size = lfs.size if lfs is not None else sibling.size
        sha = lfs.sha256.lower() if lfs is not None and isinstance(lfs.sha256, str) else None
        return HubFile(path=sibling.rfilename, size=size if isinstance(size, int) else None, sha256=sha)

    @contextmanager
    def _errors(self, repo_id: str | None, path: str | None = None) -> Iterator[None]:
        """Translate huggingface_hub and httpx2 failures into app.hub.types errors."""
        self._check_offline()
        try:
            yield
        except HubError:
            raise
        except Exception as exc:
            mapped = self._map(exc, repo_id, path)
            if mapped is None:
                raise
            raise mapped from exc

    def _map(self, exc: Exception, repo_id: str | None, path: str | None) -> HubError | None:
        import httpx2

        what = repo_id or "Hugging Face"
        page = f"{self.endpoint}/{repo_id}" if repo_id else self.endpoint
        if isinstance(exc, _hf().OfflineModeIsEnabled):
            return HubUnreachableError(
                T_("Hearth is in offline mode (HF_HUB_OFFLINE was set when it started), so it does not "
                   "contact Hugging Face. Restart without HF_HUB_OFFLINE to browse and download."))
        if isinstance(exc, _hf().HfHubHTTPError):
            status = exc.response.status_code if exc.response is not None else 0
            message = (exc.response.headers.get("X-Error-Message", "") if exc.response is not None
                       else "")
            if isinstance(exc, _hf().GatedRepoError) or (status in (401, 403) and "gated" in message.lower()):
                return self._gated(status, repo_id, page)
            if status == 401 and self.token:
                return AuthError(T_("Hugging Face refused the token: it is wrong or has expired. "
                                    "Create a new one and save it with Token… on the Discover tab (or "
                                    "run `hearth login`)."), "invalid",
                                 f"{self.endpoint}/settings/tokens")
            if isinstance(exc, _hf().RevisionNotFoundError):
                return RepoNotFoundError(T_("{what} no longer has the version Hearth asked for. Open "
                                            "the model again to see its current files.", what=what))
            if isinstance(exc, _hf().RepositoryNotFoundError):
                if not self.token:
                    return RepoNotFoundError(T_(
                        "There is no model {what} on Hugging Face (or it is private). Check the name. "
                        "If it is private, add a token with Token… on the Discover tab.", what=what))
                return RepoNotFoundError(T_("There is no model {what} on Hugging Face (or it is "
                                            "private). Check the name.", what=what))
            if isinstance(exc, _hf().HfEntryNotFoundError):
                return EntryNotFoundError(T_("{path} is not in {what} any more. Open the model again "
                                             "to see its current files.", path=path or T_("The file"),
                                             what=what))
            if status == 429:
                return HubUnreachableError(T_("Hugging Face is limiting requests from this computer "
                                              "(429). Wait a minute, then press Retry."))
            if status >= 500 or status in (408, 0):
                return HubUnreachableError(T_("Hugging Face cannot be reached (it answered {status}). "
                                              "{hint}", status=status, hint=_RETRY_HINT))
            if status == 403:
                return AuthError(T_("Hugging Face refused access to {what} (403). Check that your "
                                    "token may read it, with Token… on the Discover tab.", what=what),
                                 "invalid", page)
            return HubError(T_("Hugging Face answered {status} for {path}. Press Retry; if it keeps "
                               "happening, the Hub may have changed.", status=status,
                               path=path or what))
        if isinstance(exc, _hf().HFValidationError):
            return RepoNotFoundError(T_("{what!r} is not a Hugging Face model name; it should look "
                                        "like owner/model-name.", what=what))
        if isinstance(exc, httpx2.TransportError):
            return HubUnreachableError(T_("Hugging Face cannot be reached ({cause}). "
                                          "{hint}", cause=_transport_cause(exc),
                                          hint=_RETRY_HINT))
        if isinstance(exc, (ValueError, KeyError, TypeError)) and not isinstance(exc, HubError):
            return HubError(T_("Hugging Face sent an answer Hearth could not read ({error}). Press Retry.",
                               error=str(exc)))
        return None

    def _gated(self, status: int, repo_id: str | None, page: str) -> AuthError:
        name = repo_id or "This model"
        if status == 403 and self.token:
            return AuthError(T_("{name} is gated: accept its license on {page} with your Hugging Face "
                                "account, then press Retry.", name=name, page=page), "license", page)
        if self.token:
            return AuthError(T_("Hugging Face refused the token for {name}: it is wrong or has "
                                "expired. Create a new one and save it with Token… on the Discover tab "
                                "(or run `hearth login`).", name=name),
                             "invalid", page)
        return AuthError(T_("{name} is gated: it needs a Hugging Face account. Add a token with Token… "
                            "on the Discover tab (or run `hearth login`) and accept the license on "
                            "{page}.", name=name, page=page), "missing", page)


def _transport_cause(exc: httpx2.TransportError) -> str:
    import httpx2

    text = str(exc).lower()
    if isinstance(exc, httpx2.TimeoutException):
        return T_("no answer in time")
    if isinstance(exc, httpx2.ProxyError):
        return T_("the proxy refused the connection")
    if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text \
            or "name resolution" in text:
        return T_("the name huggingface.co could not be looked up")
    if "refused" in text:
        return T_("the connection was refused")
    if isinstance(exc, httpx2.RemoteProtocolError):
        return T_("the connection broke off")
    return T_("network error")


def _content_range_start(value: str | None) -> int | None:
    m = re.match(r"^\s*bytes\s+(\d+)-\d+/(?:\d+|\*)\s*$", value or "")
    return int(m[1]) if m else None


def _json(resp: httpx2.Response) -> Any:
    try:
        return resp.json()
    except ValueError as exc:
        raise HubError(T_("Hugging Face sent an answer Hearth could not read. Press Retry.")) from exc


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _summary(item: dict[str, Any]) -> RepoSummary | None:
    try:
        if "siblings" not in item:
            item = {**item, "siblings": None}
        info = _hf().HfModelInfo(**item)
    except (KeyError, TypeError, ValueError):
        return None  # one odd entry does not spoil the page
    repo_id = info.id
    if not isinstance(repo_id, str) or "/" not in repo_id:
        return None
    owner, name = repo_id.split("/", 1)
    return RepoSummary(
        repo_id=repo_id,
        author=info.author if isinstance(info.author, str) and info.author else owner,
        name=name,
        downloads=info.downloads if isinstance(info.downloads, int) else 0,
        likes=info.likes if isinstance(info.likes, int) else 0,
        last_modified=_timestamp(info.last_modified),
        gated=bool(info.gated),
        trending_score=info.trending_score if isinstance(info.trending_score, int) else None,
    )


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("hearth")
    except Exception:  # not installed as a distribution (running from a checkout)
        return "0"
