"""hearth serve: this computer's model server, with no window.

Every model of the library on one address, loaded when a request names it, several at once
where memory allows, unloaded when idle. It answers OpenAI's API (Chat Completions,
Completions, Embeddings, Responses), Anthropic's Messages API and the part of Ollama's API that
tools use. It listens where Hearth's shared model does (Settings → Sharing: port 4327 on this
computer unless changed) and takes the same key (the OS keyring, else an owner-only file):
``hearth env openai|anthropic|ollama`` prints what to give other tools.

Unlike ``hearth-runner serve``, which serves the one model file it is given with the flags it
is given (what this server starts for each model), ``hearth serve`` plans each model itself.

It prints one JSON line when it listens (``{"event": "listening", "url": ...}``), logs JSON
lines on stderr, and exits cleanly on SIGTERM or Ctrl-C, stopping every model's runner.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import socket
import sys
from typing import Any

log = logging.getLogger("server")

EXIT_BAD_ARGS = 2
EXIT_PORT_IN_USE = 3
EXIT_NO_KEY = 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hearth serve", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default=None,
                        help="interface to listen on (default: Sharing's choice, else loopback)")
    parser.add_argument("--port", type=int, default=None,
                        help="port (default: Sharing's port, 4327 unless changed; 0: any free)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="listen on an address other machines reach, on purpose (the key "
                             "is still required)")
    parser.add_argument("--runtime", metavar="NAME",
                        help="serve with this runtime (a name from Settings, or a folder; "
                             "'auto' chooses from the hardware) instead of the saved choice")
    parser.add_argument("--idle-minutes", type=float, default=None,
                        help="unload a model nobody asked for this long (default: server.json's "
                             "idle_minutes, else 10; negative: never)")
    parser.add_argument("--memory-budget-mib", type=int, default=None,
                        help="what all loaded models together may hold in RAM (default: what "
                             "the planner allows)")
    parser.add_argument("--no-dry-run", action="store_true",
                        help="plan without llama.cpp's dry run (faster loads, less exact)")
    parser.add_argument("--image-links", action="store_true",
                        help="let the models fetch images from http(s) links in requests, from "
                             "public internet addresses only (default: Settings → Sharing's "
                             "choice, else off: a link is refused)")
    parser.add_argument("--verbose", action="store_true", help="log more")
    from runner.limits import add_limit_flags

    add_limit_flags(parser)  # the runner's request and connection limits, for this server too
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    from runner import logs

    logs.setup(verbose=args.verbose)
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per forwarded request
    from app.remote.share import SHARED_KEY, is_loopback
    from app.settings import load_settings
    from app.storage.secrets import SecretStoreError

    settings = load_settings()
    host = args.host or settings.launch_host
    port = settings.runner_port if args.port is None else args.port
    if not is_loopback(host) and not args.allow_remote and args.host is not None:
        log.error("refusing to listen on %s: it is reachable from other machines. Pass "
                  "--allow-remote to do this on purpose (the key is still required).", host)
        return EXIT_BAD_ARGS
    try:
        key = SHARED_KEY.get()
    except SecretStoreError as exc:
        log.error("no key for the server: %s", exc)
        return EXIT_NO_KEY
    from runner.connections import listening_socket

    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            log.error("port %d on %s is already in use (another Hearth server, or the window "
                      "sharing its model?): choose another --port, or 0 for any free port",
                      port, host)
            return EXIT_PORT_IN_USE
        log.error("cannot listen on %s:%d: %s", host, port, exc.strerror or exc)
        return EXIT_BAD_ARGS
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(json.dumps({"event": "listening", "url": f"http://{shown}:{bound_port}"}), flush=True)
    return _serve(sock, key, args, loopback_only=is_loopback(host))


def _serve(sock: socket.socket, key: str, args: argparse.Namespace, loopback_only: bool) -> int:
    import contextlib

    import httpx2
    import uvicorn

    from app.loading.drafts import DraftSense, this_computer
    from app.loading.speed import SpeedSense
    from app.planner.speculation import SpecMemory
    from app.runtimes.select import RuntimeSelection
    from app.settings import load_settings
    from runner.connections import ConnectionGuard, guarded_protocol
    from runner.guards import guard
    from runner.limits import limits_from_args
    from server.app import create_app, error_shape
    from server.catalog import Catalog
    from server.config import load_config
    from server.manager import Manager
    from server.planning import plan_alone
    from server.routes_more import more_routes

    settings = load_settings()
    config = _with_overrides(load_config(), args, settings.image_links)
    selection = RuntimeSelection(args.runtime if args.runtime is not None
                                 else settings.runtime or None)
    limits = limits_from_args(args)
    http = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=None,
                                                   max_keepalive_connections=64))

    # The speed settings the window's loads measured on this computer; the server measures
    # none itself (a trial context beside a model could take memory other models hold).
    speed = SpeedSense.here(measure=False)

    def plan(*a: Any, **kw: Any) -> Any:
        return plan_alone(*a, probe=not args.no_dry_run, speed=speed, **kw)

    catalog = Catalog(lambda: config)
    # A smaller model of the same family in the catalog drafts for a chat model, as this
    # computer measured (the window's verdicts: the same file, app/planner/speculation.py).
    drafts = DraftSense(lambda: [str(e.path) for e in catalog.entries()], SpecMemory(),
                        this_computer())
    manager = Manager(catalog, lambda: config, selection, http, plan=plan, drafts=drafts)
    app = create_app(manager, more_routes(manager))
    app.state.http = http
    app.state.catalog = manager.catalog

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        import asyncio

        reaper = asyncio.get_running_loop().create_task(manager.reap())
        try:
            yield
        finally:
            reaper.cancel()
            await manager.close()
            await http.aclose()

    app.router.lifespan_context = lifespan
    connections = ConnectionGuard(limits, limits.max_connections)
    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Not super(): uvicorn raises the caught signal again after shutting down, and the
            # server would end as "killed by SIGTERM" instead of a clean exit 0.
            self.should_exit = True

    server = _Server(uvicorn.Config(
        guard(app, limits, key, loopback_only, shape=error_shape), log_config=None,
        access_log=False, lifespan="on", timeout_graceful_shutdown=5, server_header=False,
        http=guarded_protocol(connections), ws="none",
        timeout_keep_alive=max(1, round(limits.idle_timeout))))
    server.run(sockets=[sock])
    return 0


def _with_overrides(config: Any, args: argparse.Namespace, image_links: bool = False) -> Any:
    """``config`` (server.json's) with the command line's choices, and Hearth's settings'
    ``image_links`` (or ``--image-links``)."""
    import dataclasses
    import math

    changes: dict[str, Any] = {}
    if args.image_links or image_links:
        changes["image_links"] = True
    if args.idle_minutes is not None:
        changes["idle_s"] = math.inf if args.idle_minutes < 0 else args.idle_minutes * 60
    if args.memory_budget_mib is not None:
        changes["memory_budget"] = max(0, args.memory_budget_mib) * 2**20
    return dataclasses.replace(config, **changes) if changes else config


if __name__ == "__main__":
    sys.exit(main())
