"""The resident models: loaded on request, one runner process each, unloaded when idle.

Runs on the server's event loop. A request names a model; :meth:`Manager.lease` loads it once,
however many requests for it arrive meanwhile (they all wait for the same load), and counts the
request as in flight until the lease is released, so that model is never unloaded under it.
Loads are admitted one at a time: planning, making room and starting the runner happen under one
lock, so two loads never count the same free memory. Each runner is started with
``--watch-stdin`` (the server holds its stdin): when the server dies, even by ``kill -9``, its
runners see their stdin close and exit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import httpx2

from app.i18n import TextError
from app.jobs import CancelledError, CancelToken
from app.loading.drafts import DraftSense, record_trial
from app.runner_client.command import build_launch
from app.runtimes.select import RuntimeSelection
from runner.wire.shapes import read_health
from server.catalog import Catalog, Entry
from server.config import ServerConfig
from server.planning import (
    Planned,
    ProbeMemo,
    held_by_device,
    measured_held,
    plan_alone,
    refusal,
)
from server.residency import Busy, Resident, make_room

log = logging.getLogger(__name__)

LISTEN_TIMEOUT_S = 60.0  # a runner that has not said where it listens by then is stuck
STOP_TIMEOUT_S = 10.0  # after closing its stdin; then it is killed
HEALTH_POLL_S = 0.05
ADOPTED_POLL_S = 1.0  # how often the window's runner is asked whether it still answers
ADOPTED_MISSES = 2  # unanswered asks in a row before it is forgotten
RETRY_AFTER_S = 5


class ModelError(Exception):
    """A request the server cannot serve now; ``str()`` says why and what to do."""

    status = 500
    code = "model_load_failed"
    kind = "server_error"

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelNotFound(ModelError):
    status, code, kind = 404, "model_not_found", "invalid_request_error"


class InsufficientMemory(ModelError):
    status, code, kind = 400, "insufficient_memory", "invalid_request_error"

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason  # the planner's (or the budget's) own words


class ModelsBusy(ModelError):
    status, code, kind = 503, "models_busy", "server_error"


class NotAnswering(ModelError):
    status, code, kind = 400, "invalid_request", "invalid_request_error"


class ContextTooLong(ModelError):
    status, code, kind = 400, "context_length_exceeded", "invalid_request_error"


@dataclass(eq=False)
class Slot:
    """One model: loading, then resident with its runner."""

    entry: Entry
    ready: asyncio.Future[None]
    idle_s: float
    embedding: bool = False  # loaded for /v1/embeddings (a runner serves one or the other)
    planned: Planned | None = None
    # What it holds by device key: its plan's prediction, then what its runner measured once
    # loaded (llama.cpp's buffers: with copies of weights it repacked, which the plan misses).
    held: dict[str, int] = field(default_factory=dict)
    process: asyncio.subprocess.Process | None = None
    url: str = ""
    key: str = field(default="", repr=False)
    busy: int = 0
    last_used: float = 0.0
    # The window's own runner, served here under its id (POST /hearth/adopt): never started,
    # stopped, evicted or reloaded by this server; forgotten when it stops answering.
    adopted: bool = False
    stopping: bool = False
    loaded_at: float = 0.0
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=40))

    @property
    def name(self) -> str:
        return slot_key(self.entry.id, self.embedding)

    @property
    def resident(self) -> bool:
        return self.ready.done() and not self.ready.cancelled() and \
            self.ready.exception() is None and not self.stopping


class Lease:
    """A request's hold on a resident model; :meth:`release` once the request is answered."""

    def __init__(self, manager: Manager, slot: Slot, keep_alive: float | None) -> None:
        self.slot = slot
        self._manager = manager
        self._keep_alive = keep_alive
        self._released = False

    @property
    def url(self) -> str:
        return self.slot.url

    @property
    def keep_alive(self) -> float | None:
        return self._keep_alive

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.slot.key}"}

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._manager._release(self.slot, self._keep_alive)


class Manager:
    def __init__(self, catalog: Catalog, config: Callable[[], ServerConfig],
                 selection: RuntimeSelection, http: httpx2.AsyncClient, *,
                 plan: Callable[..., Planned] = plan_alone,
                 clock: Callable[[], float] = time.monotonic,
                 drafts: DraftSense | None = None) -> None:
        self._catalog = catalog
        self._config = config
        self._selection = selection
        self._http = http
        self._plan = plan
        self._clock = clock
        # The catalog's models that may draft for a chat model, and the verdicts (as the window's).
        self._drafts = drafts
        self._slots: dict[str, Slot] = {}
        self._admit = asyncio.Lock()
        self._tokens: set[CancelToken] = set()
        self._closing = False
        self._background: set[asyncio.Task[None]] = set()  # kept: the loop holds weak refs
        # Models a prompt outgrew: the context (tokens) their next loads ask for.
        self._contexts: dict[str, int] = {}
        self._probed: ProbeMemo = {}  # dry-run plans, for models loaded again

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    # ---- requests ----------------------------------------------------------------------------

    async def lease(self, name: str, keep_alive: float | None = None, *,
                    embedding: bool = False) -> Lease:
        """The model ``name`` loaded and held for one request (ModelError if it cannot be);
        ``embedding``: loaded for embeddings, a runner of its own beside a chat one."""
        entry = await asyncio.to_thread(self._catalog.resolve, name)
        if entry is None:
            raise ModelNotFound(f"The model '{name}' does not exist on this computer: "
                                "GET /v1/models lists the models Hearth can load.")
        slot = self._slots.get(slot_key(entry.id, embedding))
        if slot is None or slot.stopping:
            slot = self._begin_load(entry, embedding)
        slot.busy += 1  # from now on it is not unloaded to make room for another
        try:
            await asyncio.shield(slot.ready)
        except BaseException:
            slot.busy -= 1
            raise
        return Lease(self, slot, keep_alive)

    def _release(self, slot: Slot, keep_alive: float | None) -> None:
        slot.busy -= 1
        slot.last_used = self._clock()
        if keep_alive is not None and not slot.adopted:  # holds until the next request
            slot.idle_s = keep_alive
        if slot.busy == 0 and slot.idle_s <= 0 and slot.resident:
            self._spawn(self._stop(slot, "asked to unload"))

    async def lease_larger(self, lease: Lease, tokens: int, room: int) -> Lease:
        """The lease's model loaded again with a context for a ``tokens``-long prompt and a
        ``room``-token reply, held for the same request (its old lease is released). As Jan
        does: a coding agent's prompt grows past the context the plan chose. ModelsBusy while
        other requests use the model; ContextTooLong when that context cannot fit."""
        slot, keep_alive = lease.slot, lease.keep_alive
        lease.release()
        if slot.adopted:
            raise ContextTooLong(f"The prompt is {tokens} tokens long, more than '{slot.entry.id}' "
                                 "holds as the Hearth window loaded it. Load it there with a "
                                 "larger context (the offload panel), or shorten the conversation.")
        if slot.busy:
            raise ModelsBusy(f"'{slot.entry.id}' needs a larger context for this prompt, and it "
                             "is answering other requests now. Try again in a few seconds.",
                             retry_after=RETRY_AFTER_S)
        # Whole KiB of tokens, as people pick them, and at least twice the last: the runner's
        # quick refusal counts "at least N" tokens from the text's length, a lower bound.
        loaded = slot.planned.plan.settings.n_ctx if slot.planned else 0
        wanted = max(-(-(tokens + room) // 1024) * 1024, 2 * loaded)
        self._contexts[slot.entry.id] = wanted
        await self._stop(slot, f"a prompt of {tokens} tokens needs a context of {wanted}")
        try:
            return await self.lease(slot.entry.id, keep_alive, embedding=slot.embedding)
        except InsufficientMemory as exc:
            self._contexts.pop(slot.entry.id, None)  # the next request loads as before
            raise ContextTooLong(f"The prompt is {tokens} tokens long, more than '{slot.entry.id}'"
                                 f" holds as loaded, and a context of {wanted} tokens does not fit"
                                 f" on this computer ({exc.reason.rstrip('.')}). Shorten the "
                                 "conversation.") from None

    def keep(self, model_id: str, seconds: float | None) -> bool:
        """Keep the model loaded ``seconds`` once idle (math.inf: pinned until unloaded; None:
        the configured idle time again); False when it is not loaded."""
        slots = [s for s in self._slots.values() if s.entry.id == model_id and s.resident]
        for slot in slots:
            if slot.adopted:
                continue  # the window's: loaded for as long as the window holds it
            slot.idle_s = self._config().idle_for(model_id) if seconds is None else seconds
        return bool(slots)

    def models(self) -> list[Slot]:
        return list(self._slots.values())

    async def unload(self, model_id: str) -> bool:
        """Unload the model (its chat and its embeddings runner); False when not loaded."""
        slots = [s for s in self._slots.values() if s.entry.id == model_id]
        for slot in slots:
            await self._stop(slot, "asked to unload")
        return bool(slots)

    async def adopt(self, entry: Entry, url: str, key: str) -> None:
        """Serve the window's runner for ``entry`` (at ``url``, answering to ``key``) under the
        model's id: requests for it go there, and nothing here starts a second copy. A copy this
        server loaded is unloaded (the window loaded its own); ModelsBusy while it answers."""
        headers = {"Authorization": f"Bearer {key}"}
        try:
            r = await self._http.get(url + "/health", timeout=5.0, headers=headers)
            answered = r.status_code == 200 and r.json() == {"status": "ok"}
        except (httpx2.HTTPError, ValueError):
            answered = False
        if not answered:
            raise NotAnswering("No loaded model answers at that address to that key.")
        old = self._slots.get(entry.id)
        if old is not None and not old.adopted:
            if old.busy:
                raise ModelsBusy(f"'{entry.id}' is answering requests here now. Try again in a "
                                 "few seconds.", retry_after=RETRY_AFTER_S)
            await self._stop(old, "the Hearth window loaded it")
        elif old is not None:
            await self._stop(old, "the Hearth window loaded it again")
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.set_result(None)
        slot = Slot(entry, ready, math.inf, adopted=True, url=url, key=key)
        slot.loaded_at = slot.last_used = self._clock()
        self._slots[slot.name] = slot
        try:
            r = await self._http.get(url + "/runner/status", timeout=5.0, headers=headers)
            slot.held = held_by_device(r.json().get("memory"))
        except (httpx2.HTTPError, ValueError, AttributeError):
            pass  # shown without memory; the planner sees it in the free memory anyway
        log.info("serving the window's %s (%s)", slot.name, url)
        self._spawn(self._watch_adopted(slot))

    async def _watch_adopted(self, slot: Slot) -> None:
        """The window's runner stopped (the window unloaded it, closed, or crashed): forget it."""
        misses = 0
        while self._slots.get(slot.name) is slot and misses < ADOPTED_MISSES:
            await asyncio.sleep(ADOPTED_POLL_S)
            try:
                r = await self._http.get(slot.url + "/health", timeout=5.0,
                                         headers={"Authorization": f"Bearer {slot.key}"})
                misses = 0 if r.status_code == 200 else misses + 1
            except httpx2.HTTPError:
                misses += 1
        if self._slots.get(slot.name) is slot:
            await self._stop(slot, "the Hearth window's runner stopped answering")

    # ---- loading -----------------------------------------------------------------------------

    def _begin_load(self, entry: Entry, embedding: bool) -> Slot:
        loop = asyncio.get_running_loop()
        slot = Slot(entry, loop.create_future(), self._config().idle_for(entry.id), embedding)
        self._slots[slot.name] = slot

        async def load() -> None:
            try:
                await self._load(slot)
            except BaseException as exc:
                if self._slots.get(slot.name) is slot:
                    del self._slots[slot.name]
                await self._kill(slot)
                if not slot.ready.done():
                    slot.ready.set_exception(exc if isinstance(exc, Exception) else
                                             ModelError("The server is stopping."))
                    slot.ready.exception()  # retrieved: no "never retrieved" warning
                return
            slot.ready.set_result(None)

        self._spawn(load())
        return slot

    async def _load(self, slot: Slot) -> None:
        async with self._admit:
            if self._closing:
                raise ModelError("The server is stopping.")
            residents = [s for s in self._slots.values() if s.resident and s.planned]
            began = self._clock()
            planned = await self._planned(slot, residents)
            log.info("planned %s in %.2f s%s", slot.name, self._clock() - began,
                     " (the dry run of an earlier load)" if planned.remembered else "")
            decision = make_room(planned.need, planned.capacity, [
                Resident(s.name, s.held, s.busy, s.last_used) for s in residents])
            if isinstance(decision, Busy):
                raise ModelsBusy(
                    f"'{slot.entry.id}' needs memory that models answering requests now hold "
                    f"({', '.join(decision.blocking)}). Try again in a few seconds.",
                    retry_after=RETRY_AFTER_S)
            for key in decision.evict:
                evicted = self._slots.get(key)
                if evicted is not None:
                    await self._stop(evicted, f"making room for {slot.name}")
            slot.planned, slot.held = planned, dict(planned.need)
            await self._start(slot)
            await self._measure(slot)

    async def _planned(self, slot: Slot, residents: list[Slot]) -> Planned:
        token = CancelToken()
        self._tokens.add(token)
        try:
            planned = await asyncio.to_thread(
                self._plan, str(slot.entry.path), [s.planned.plan for s in residents if s.planned],
                self._selection, token=token, memory_budget=self._config().memory_budget,
                context=self._contexts.get(slot.entry.id), memo=self._probed,
                # No draft for an embedding model: it generates nothing.
                **({"drafts": self._drafts} if self._drafts and not slot.embedding else {}))
        except CancelledError:
            raise ModelError("The server is stopping.") from None
        except (OSError, ValueError, TextError) as exc:  # TextError: GGUFError, PlannerError
            raise ModelError(f"'{slot.entry.id}' cannot be loaded: {exc}") from exc
        finally:
            self._tokens.discard(token)
        why = refusal(planned.plan, planned.need, planned.capacity)
        if why:
            raise InsufficientMemory(f"'{slot.entry.id}' does not fit in this computer's "
                                     f"memory, even with no other model loaded: {why}", why)
        return planned

    async def _start(self, slot: Slot) -> None:
        assert slot.planned is not None
        flags = [*slot.planned.flags, "--alias", slot.entry.id,
                 *(["--embedding"] if slot.embedding else [])]
        launch = build_launch(str(slot.entry.path), flags, program=slot.planned.build.program,
                              image_links=self._config().image_links)
        started = self._clock()
        process = await asyncio.create_subprocess_exec(
            launch.program, *launch.args, env=launch.env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        slot.process, slot.key = process, launch.key
        self._spawn(self._keep_stderr(slot))
        slot.url = await self._listening(slot)
        self._spawn(self._drain(process.stdout))
        await self._until_ready(slot)
        slot.loaded_at = self._clock()
        slot.last_used = slot.loaded_at
        log.info("loaded %s in %.1f s (%s)", slot.name, slot.loaded_at - started, slot.url)
        self._spawn(self._watch(slot))

    async def _listening(self, slot: Slot) -> str:
        assert slot.process is not None and slot.process.stdout is not None
        try:
            line = await asyncio.wait_for(slot.process.stdout.readline(), LISTEN_TIMEOUT_S)
            url = json.loads(line)["url"]
        except (TimeoutError, ValueError, KeyError, TypeError):
            raise ModelError(self._failure(slot, "did not start")) from None
        return str(url)

    async def _until_ready(self, slot: Slot) -> None:
        assert slot.process is not None
        while True:
            if slot.process.returncode is not None:
                raise ModelError(self._failure(slot, "stopped while loading"))
            try:
                r = await self._http.get(slot.url + "/health", timeout=5.0,
                                         headers={"Authorization": f"Bearer {slot.key}"})
                reading = read_health(r.json(), r.status_code)
            except (httpx2.HTTPError, ValueError):
                reading = None
            if reading is not None and r.status_code == 200:
                return
            if reading is not None and reading.status == "error":
                raise ModelError(f"'{slot.entry.id}' could not be loaded: {reading.message}")
            await asyncio.sleep(HEALTH_POLL_S)

    async def _measure(self, slot: Slot) -> None:
        """What the loaded model holds, as its runner measured it, in place of the plan's
        prediction (the prediction stays where the runner says nothing)."""
        assert slot.planned is not None
        try:
            r = await self._http.get(slot.url + "/runner/status", timeout=5.0,
                                     headers={"Authorization": f"Bearer {slot.key}"})
            status = r.json()
            measured = measured_held(slot.planned.plan, status.get("memory"))
        except (httpx2.HTTPError, ValueError, AttributeError):
            return
        slot.held.update(measured)
        if self._drafts is not None and isinstance(status, dict):
            await asyncio.to_thread(record_trial, slot.planned.plan.model, self._drafts,
                                    slot.planned.build.key, status)

    def _failure(self, slot: Slot, what: str) -> str:
        tail = _last_message(slot.stderr)
        return f"The runner for '{slot.entry.id}' {what}" + (f": {tail}" if tail else ".")

    async def _keep_stderr(self, slot: Slot) -> None:
        assert slot.process is not None and slot.process.stderr is not None
        async for raw in slot.process.stderr:
            slot.stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    @staticmethod
    async def _drain(stream: asyncio.StreamReader | None) -> None:
        if stream is not None:
            async for _ in stream:
                pass

    async def _watch(self, slot: Slot) -> None:
        """A runner that ends on its own (a crash) leaves; the next request starts it again."""
        assert slot.process is not None
        code = await slot.process.wait()
        if not slot.stopping and self._slots.get(slot.name) is slot:
            del self._slots[slot.name]
            log.warning("the runner for %s ended (exit %s): %s", slot.name, code,
                        _last_message(slot.stderr) or "no message")

    # ---- unloading ---------------------------------------------------------------------------

    async def reap(self) -> None:
        """Unload models idle past their time, for as long as the server runs."""
        while True:
            await asyncio.sleep(0.25)
            now = self._clock()
            for slot in list(self._slots.values()):
                if slot.resident and slot.busy == 0 and not math.isinf(slot.idle_s) and \
                        now - slot.last_used >= slot.idle_s:
                    await self._stop(slot, f"idle for {slot.idle_s:g} s")

    async def _stop(self, slot: Slot, why: str) -> None:
        if slot.stopping:
            return
        slot.stopping = True
        if self._slots.get(slot.name) is slot:
            del self._slots[slot.name]
        log.info("unloading %s: %s", slot.name, why)
        await self._kill(slot)

    @staticmethod
    async def _kill(slot: Slot) -> None:
        process = slot.process
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the runner's way of being asked to exit (--watch-stdin)
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()

    async def close(self) -> None:
        """Stop every runner (the server is exiting)."""
        self._closing = True
        for token in list(self._tokens):
            token.cancel()
        await asyncio.gather(*(self._stop(s, "the server is stopping")
                               for s in list(self._slots.values())), return_exceptions=True)


def slot_key(model_id: str, embedding: bool) -> str:
    """A resident runner's name: the model's id, marked when it serves embeddings."""
    return f"{model_id} (embeddings)" if embedding else model_id


def _last_message(lines: deque[str]) -> str:
    """The runner's last error line (its stderr is JSON log lines)."""
    for line in reversed(lines):
        try:
            record: Any = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") in ("error", "critical"):
            return str(record.get("msg", ""))[:500]
    return ""
