"""Hugging Face for the Discover tab: search, repository pages and fit verdicts, off the GUI thread.

Every request runs on the task pool and answers with a signal. A newer search or repository
replaces an older one: late answers to a request the user has moved on from are dropped (a
generation number), so a slow Hub never overwrites what is on screen. Verdicts are planned with
the hardware service's report (the machine merged with what the runner build drives), so the
browser and the loader agree; until the report exists the verdicts wait for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.gguf import GGUFError
from app.hardware.report import HardwareReport
from app.hub import auth
from app.hub.client import HubClient, SearchResults
from app.hub.recommended import Recommendation, load_recommended, pick_group
from app.hub.remote_header import HeaderCache, remote_model
from app.hub.types import FileGroup, FileKind, HubError, HubUnreachableError, RepoDetails
from app.hub.verdict import Verdict, verdict_for
from app.i18n import T_
from app.planner import wording
from app.planner.types import PlannerError
from app.services.tasks import TaskRunner

log = logging.getLogger(__name__)

PAGE = 30
_EXPECTED = (HubError, GGUFError, PlannerError, OSError)


class HubService(QObject):
    """Satisfies app/services/protocols.py's HubLike."""

    results = Signal(object, bool, bool)  # list[RepoSummary], append, has_more
    details = Signal(RepoDetails)
    verdict = Signal(str, str, object)  # repo_id, group name, Verdict | str
    recommended = Signal(object)  # list[(Recommendation, RepoDetails | None, Verdict | None)]
    unreachable = Signal(object)
    failed = Signal(object)
    account = Signal(str)  # who the token belongs to, or "" when there is none
    account_failed = Signal(object)  # a sentence: wrong token, no keyring, Hub unreachable

    def __init__(self, tasks: TaskRunner, client: Callable[[], HubClient],
                 hardware: Callable[[], HardwareReport | None], header_cache: HeaderCache,
                 parent: QObject | None = None, *,
                 detect_hardware: Callable[[], None] | None = None,
                 recommended: Callable[[], list[Recommendation]] = load_recommended,
                 reset_client: Callable[[], None] | None = None,
                 make_client: Callable[[str], HubClient] | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._client = client
        self._hardware = hardware
        self._detect_hardware = detect_hardware  # asked once when a verdict waits for a report
        self._load_recommended = recommended
        self._reset_client = reset_client  # after a token change: the next client uses it
        self._make_client = make_client or (lambda token: HubClient(
            endpoint=client().endpoint, token=token))
        self._cache = header_cache
        # Late answers to what the user has moved on from are dropped; searches and repository
        # pages count apart, so opening a repository never silences a search and vice versa.
        self._search_gen = 0
        self._repo_gen = 0
        self._shown: RepoDetails | None = None  # the repository page on screen
        self._pages: SearchResults | None = None  # the last page, for "more"
        self._last: Callable[[], None] | None = None  # what Retry repeats
        self._waiting: list[tuple[str, str, FileGroup]] = []  # verdicts waiting for hardware
        self._recommended: list[tuple[Recommendation, RepoDetails | None, Verdict | None]] = []

    # -- search -----------------------------------------------------------------------------

    def search(self, query: str, sort: str = "trending") -> None:
        self._search_gen += 1
        gen = self._search_gen
        self._last = lambda: self.search(query, sort)
        client = self._client  # made on the pool: making it reads the keyring
        self._tasks.run(lambda: client().search(query, sort=sort, limit=PAGE),
                        lambda res: self._on_results(gen, res, False),
                        lambda exc: self._on_error(gen == self._search_gen, exc),
                        expected=_EXPECTED)

    def more(self) -> None:
        pages = self._pages
        if pages is None:
            return
        gen = self._search_gen
        self._last = self.more
        self._tasks.run(pages.next_page, lambda res: self._on_results(gen, res, True),
                        lambda exc: self._on_error(gen == self._search_gen, exc),
                        expected=_EXPECTED)

    def _on_results(self, gen: int, res: SearchResults | None, append: bool) -> None:
        if gen != self._search_gen:
            return
        if res is None:  # no next page after all
            self.results.emit([], True, False)
            return
        self._pages = res
        self.results.emit(list(res.items), append, bool(getattr(res, "has_more", True)))

    # -- a repository -----------------------------------------------------------------------

    def open_repo(self, repo_id: str) -> None:
        self._repo_gen += 1
        gen = self._repo_gen
        self._last = lambda: self.open_repo(repo_id)
        client = self._client
        self._tasks.run(lambda: client().details(repo_id),
                        lambda d: self._on_details(gen, d),
                        lambda exc: self._on_error(gen == self._repo_gen, exc),
                        expected=_EXPECTED)

    def _on_details(self, gen: int, details: RepoDetails) -> None:
        if gen != self._repo_gen:
            return
        self._shown = details
        self.details.emit(details)
        for group in details.groups:
            if group.kind is FileKind.MODEL:
                self.request_verdict(details, group)

    def request_verdict(self, details: RepoDetails, group: FileGroup) -> None:
        """Plan ``group`` from its remote header; answers with ``verdict``."""
        hw = self._hardware()
        if hw is None:
            if not self._waiting and self._detect_hardware is not None:
                self._detect_hardware()
            self._waiting.append((details.repo_id, details.revision, group))
            return
        self._plan(details.repo_id, details.revision, group, hw)

    def hardware_changed(self, report: HardwareReport) -> None:
        """Connected to the hardware service: plan what waited for the report, and plan again
        what is on screen (the report comes twice: the machine, then merged with what the runner
        build drives, which is what the loader plans with). Headers are cached: cheap."""
        waiting, self._waiting = self._waiting, []
        again: dict[tuple[str, str], tuple[str, str, FileGroup]] = {
            (r, g.name): (r, rev, g) for r, rev, g in waiting}
        if self._shown is not None:
            for g in self._shown.groups:
                if g.kind is FileKind.MODEL:
                    again.setdefault((self._shown.repo_id, g.name),
                                     (self._shown.repo_id, self._shown.revision, g))
        for rec, d, _ in self._recommended:
            pick = pick_group(d.groups, rec.quant) if d is not None else None
            if d is not None and pick is not None:
                again.setdefault((d.repo_id, pick.name), (d.repo_id, d.revision, pick))
        for repo_id, revision, group in again.values():
            self._plan(repo_id, revision, group, report)

    def hardware_failed(self, sentence: str) -> None:
        """Detection failed: the waiting verdicts say why instead of "Checking…" forever."""
        waiting, self._waiting = self._waiting, []
        for repo_id, _revision, group in waiting:
            self.verdict.emit(repo_id, group.name, T_(
                "This computer's hardware could not be detected ({why}), so Hearth cannot say.",
                why=wording.clause(sentence)))

    def _plan(self, repo_id: str, revision: str, group: FileGroup, hw: HardwareReport) -> None:
        client, cache = self._client, self._cache

        def work() -> Verdict:
            model = remote_model(client(), repo_id, revision, group, cache=cache)
            return verdict_for(model, hw)

        self._tasks.run(work, lambda v: self.verdict.emit(repo_id, group.name, v),
                        lambda exc: self.verdict.emit(repo_id, group.name, str(exc)),
                        expected=_EXPECTED)

    # -- the curated list -------------------------------------------------------------------

    def load_recommended(self) -> None:
        """Each curated entry with its details as they arrive; their verdicts come through
        ``verdict`` like any repository's (an entry that would not fit is then hidden)."""
        self._last = self.load_recommended
        client = self._client
        entries = self._load_recommended()
        self._recommended = [(r, None, None) for r in entries]
        self.recommended.emit(list(self._recommended))
        unreachable_said = False

        def failed(exc: Exception, rec: Recommendation) -> None:
            nonlocal unreachable_said
            if isinstance(exc, HubUnreachableError):
                if not unreachable_said:  # one line for the banner, not one per entry
                    unreachable_said = True
                    self.unreachable.emit(str(exc))
            else:
                log.info("a recommended model cannot be shown: %s", exc)
                self._drop_recommended(rec)

        for rec in entries:
            self._tasks.run(lambda rec=rec: client().details(rec.repo_id),  # type: ignore[misc]
                            lambda d, rec=rec: self._on_recommended(rec, d),  # type: ignore[misc]
                            lambda exc, rec=rec: failed(exc, rec),  # type: ignore[misc]
                            expected=_EXPECTED)

    def _drop_recommended(self, rec: Recommendation) -> None:
        """An entry the Hub does not have (any more) is not recommended; one the Hub could not
        be asked about stays, unknown, under the banner."""
        self._recommended = [e for e in self._recommended if e[0] != rec]
        self.recommended.emit(list(self._recommended))

    def _on_recommended(self, rec: Recommendation, details: RepoDetails) -> None:
        i = next((j for j, e in enumerate(self._recommended) if e[0] == rec), None)
        if i is None:
            return  # a newer load replaced the list
        self._recommended[i] = (rec, details, None)
        self.recommended.emit(list(self._recommended))
        group = pick_group(details.groups, rec.quant)
        if group is not None:
            self.request_verdict(details, group)

    # -- the token ---------------------------------------------------------------------------

    def sign_in(self, token: str) -> None:
        """Check ``token`` with the Hub, then keep it in the OS keyring (never a plain file)."""
        make = self._make_client

        def work() -> str:
            checker = make(token.strip())
            try:
                user = auth.check_token(checker)
            finally:
                checker.close()
            auth.save_token(token)
            return user

        self._tasks.run(work, self._on_signed_in, lambda exc: self.account_failed.emit(str(exc)),
                        expected=_EXPECTED)

    def _on_signed_in(self, user: str) -> None:
        if self._reset_client is not None:
            self._reset_client()
        self.account.emit(user)

    def sign_out(self) -> None:
        try:
            auth.delete_token()
        except HubError as exc:
            self.account_failed.emit(str(exc))
            return
        if self._reset_client is not None:
            self._reset_client()
        self.account.emit("")

    def token_note(self) -> str:
        """Where the token comes from, for the dialog (read from the keyring: call rarely)."""
        source = auth.token_source()
        if source == "environment":
            return T_("Using the token in the HF_TOKEN environment variable.")
        if source == "keyring":
            return T_("A token is saved in the system keyring.")
        if source == "file":
            return T_("A token is saved. {where}", where=auth.keyring_notice())
        return T_("No token: public models work without one; gated models (Llama, Gemma, …) need "
                  "one.")

    # -- errors -----------------------------------------------------------------------------

    def retry(self) -> None:
        if self._last is not None:
            self._last()

    def _on_error(self, current: bool, exc: Exception) -> None:
        if not current:
            return
        if isinstance(exc, HubUnreachableError):
            self.unreachable.emit(str(exc))
        else:
            self.failed.emit(str(exc))
