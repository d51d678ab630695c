"""hearth-runner: serve a GGUF model over an OpenAI-compatible API (also: probe, devices).

Protocol with the app (see docs/architecture.md): the API key comes in ``HEARTH_API_KEY``
(never argv, which other users can read); exactly one JSON line on stdout once the socket
listens; JSON log lines on stderr; SIGTERM makes it exit. The app starts it with
``--watch-stdin``: then closing stdin or the parent process dying makes it exit too. Without the
flag it runs headless (a service, a container, nohup) with stdin at /dev/null and any parent.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import socket
import sys
import threading
import time
from typing import Any

from runner.limits import Limits, add_limit_flags, limits_from_args
from runner.settings import LoadSettings, add_load_flags, is_loopback, settings_from_args
from runner.wire.exits import ExitCode

log = logging.getLogger("runner")

# How long a failed runner keeps answering /health with the error before it exits, so a poller
# sees the reason over HTTP as well as in the last log line.
ERROR_GRACE_S = 0.5


def main(argv: list[str] | None = None) -> int:
    if argv is None and _command(sys.argv[1:]) == "serve":
        from runner.hugepages import restart_with_huge_pages

        restart_with_huge_pages()  # returns only where it does not apply
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = _choose_runtime(argv)
    except ValueError as exc:
        print(f"hearth-runner: {exc}", file=sys.stderr)
        return ExitCode.BAD_ARGS
    parser = argparse.ArgumentParser(prog="hearth-runner", description=__doc__)
    parser.add_argument("--runtime", metavar="RUNTIME",
                        help="serve with this llama.cpp build: a runtime's folder "
                             "(installers/build_runtime.py makes one) or name, built-in "
                             "(llama-cpp-python's own), or auto (the default: chosen for this "
                             "machine as the app chooses, HEARTH_RUNTIME first); given before "
                             "the command")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve", help="serve one model file over HTTP, loaded with the flags given",
        description="Serve the one model file given, loaded with exactly the flags given, on "
                    "its own address. This is what Hearth starts for each loaded model. To "
                    "serve every model of the library on one address, each planned for this "
                    "computer and loaded when a request names it, use 'hearth serve'.")
    add_load_flags(serve)
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default loopback)")
    serve.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow binding a non-loopback interface (the key is still required)")
    serve.add_argument("--no-auth", action="store_true",
                       help="serve without an API key (only when HEARTH_API_KEY is unset, and "
                            "only on a loopback --host)")
    from runner import remote_image as links

    serve.add_argument("--image-links", action="store_true",
                       help="fetch the images of http(s) links in chat requests, from public "
                            "internet addresses only (never this computer's or its network's), "
                            f"at most {links.MAX_BYTES // 2**20} MiB, {links.TIMEOUT_S:g} s and "
                            f"{links.MAX_REDIRECTS} redirects each; without it a link is "
                            "refused and images must come as data URLs")
    serve.add_argument("--vectors-db", default=None, metavar="PATH",
                       help="with --embedding: search Hearth's passage index at PATH by "
                            "embedding similarity (/runner/vectors/search, this computer only)")
    serve.add_argument("--verbose", action="store_true", help="include llama.cpp's own log")
    serve.add_argument("--watch-stdin", action="store_true",
                       help="exit when standard input closes; the app that spawns the runner "
                            "sets this")
    add_limit_flags(serve)
    sub.add_parser("probe", help="dry-run a load and print the memory it would need",
                   add_help=False)
    sub.add_parser("devices", help="print the devices this runner build can use", add_help=False)
    sub.add_parser("selftest", help="load a tiny model on every device and generate",
                   add_help=False)

    sub.add_parser("rpc-worker", help="lend this machine's devices to another Hearth (RPC)",
                   add_help=False)
    sub.add_parser("rpc-check", help="check RPC workers: version, devices, memory",
                   add_help=False)
    if argv and argv[0] == "rpc-worker":
        from runner.rpc import worker_main

        return worker_main(argv[1:])
    if argv and argv[0] == "rpc-check":
        from runner.rpc import check_main

        return check_main(argv[1:])
    if argv and argv[0] == "probe":
        from runner.memory import main as probe_main

        return probe_main(argv[1:])
    if argv and argv[0] == "devices":
        from runner.devices import main as devices_main

        return devices_main(argv[1:])
    if argv and argv[0] == "selftest":
        from runner.selftest import main as selftest_main

        return selftest_main(argv[1:])
    args = parser.parse_args(argv)
    return serve_main(args)


def _command(argv: list[str]) -> str | None:
    """The subcommand of a runner command line (after ``--runtime X``, if given)."""
    if argv[:1] == ["--runtime"]:
        argv = argv[2:]
    elif argv and argv[0].startswith("--runtime="):
        argv = argv[1:]
    return argv[0] if argv else None


# The commands that load llama.cpp: without --runtime they choose a runtime as the app would.
LOADS_LLAMA = frozenset({"serve", "probe", "devices", "selftest", "rpc-worker"})


def _choose_runtime(argv: list[str]) -> list[str]:
    """Take ``--runtime RUNTIME`` from before the command and make it this process's runtime,
    as given; without it, choose one for a command that loads llama.cpp (runner/runtime.py).

    It must come first: llama.cpp is loaded from the chosen folder when first imported.
    """
    given = None
    if argv and argv[0] == "--runtime" and len(argv) > 1:
        given, argv = argv[1], argv[2:]
    elif argv and argv[0].startswith("--runtime="):
        given, argv = argv[0].split("=", 1)[1], argv[1:]
    if given is None and not (argv and argv[0] in LOADS_LLAMA):
        return argv
    from runner import runtime

    try:
        runtime.choose(given)
    except runtime.RuntimeUnusable as exc:
        raise ValueError(str(exc)) from None
    return argv


def serve_main(args: argparse.Namespace) -> int:
    from runner import logs

    logs.setup(verbose=args.verbose)
    from runner import runtime

    runtime.log_choice(log)
    from runner.hugepages import log_state

    log_state(log)
    key = os.environ.get("HEARTH_API_KEY") or None
    if key is None and not args.no_auth:
        log.error("no API key: set HEARTH_API_KEY, or pass --no-auth to serve without one")
        return ExitCode.BAD_ARGS
    if not is_loopback(args.host) and not args.allow_remote:
        log.error("refusing to listen on %s: it is reachable from other machines. Pass "
                  "--allow-remote to do this on purpose (the API key is still required).",
                  args.host)
        return ExitCode.BAD_ARGS
    if key is None and not is_loopback(args.host):
        # Anyone who can reach the address could use the model (and the machine's time) unseen.
        log.error("refusing to listen on %s without an API key: --no-auth is for this computer "
                  "only (a loopback --host). Set HEARTH_API_KEY to share the runner with other "
                  "machines.", args.host)
        return ExitCode.BAD_ARGS
    settings = settings_from_args(args)
    if settings.spec_type == "draft-simple" and not settings.draft_model:
        log.error("--spec-type draft-simple needs a draft model: pass --spec-draft-model FILE, "
                  "or use --spec-type ngram-simple (no second model)")
        return ExitCode.BAD_ARGS

    try:
        from runner.connections import listening_socket

        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            log.error("port %d on %s is already in use: choose another --port, or 0 for any "
                      "free port", args.port, args.host)
            return ExitCode.PORT_IN_USE
        log.error("cannot listen on %s:%d: %s", args.host, args.port, exc.strerror or exc)
        return ExitCode.BAD_ARGS
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(json.dumps({"event": "listening", "url": f"http://{shown}:{port}"}), flush=True)
    return _serve(sock, settings, key, watch_stdin=args.watch_stdin,
                  limits=limits_from_args(args), loopback_only=is_loopback(args.host),
                  image_links=args.image_links, vectors_db=args.vectors_db)


def _serve(sock: socket.socket, settings: LoadSettings, key: str | None,
           watch_stdin: bool = False, limits: Limits | None = None,
           loopback_only: bool = True, image_links: bool = False,
           vectors_db: str | None = None) -> int:
    import uvicorn

    from runner.connections import ConnectionGuard, guarded_protocol
    from runner.server import RunnerState, create_app

    state = RunnerState(settings, limits)
    if image_links:
        from runner.remote_image import fetch_image

        state.fetch_image = fetch_image
        log.info("image links are fetched (--image-links): from public internet addresses "
                 "only", extra={"event": "image_links"})
    if vectors_db:
        from runner.vectors import VectorIndex

        model = os.path.basename(settings.model)
        with contextlib.suppress(OSError):
            model += f":{os.path.getsize(settings.model)}"
        state.vectors = VectorIndex(vectors_db, model)
    state.connections = ConnectionGuard(state.limits, _connection_cap(state.limits))
    exit_code: list[int] = [ExitCode.OK]

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Not super(): uvicorn re-raises the captured signal after shutdown, which would end
            # the runner as "killed by SIGTERM" instead of a clean exit 0.
            _begin_exit()
            self.should_exit = True

    config = uvicorn.Config(create_app(state, key, loopback_only=loopback_only), log_config=None,
                            access_log=False, lifespan="off", timeout_graceful_shutdown=1,
                            server_header=False, http=guarded_protocol(state.connections),
                            # No WebSocket endpoints: an upgrade would leave the guard's count.
                            ws="none",
                            timeout_keep_alive=state.limits.idle_timeout)  # type: ignore[arg-type]
    server = _Server(config)

    def _begin_exit() -> None:
        state.exiting.set()
        if state.scheduler is not None:
            state.scheduler.stop()

    def request_exit(code: int) -> None:
        if not state.exiting.is_set():
            exit_code[0] = code
        _begin_exit()
        server.should_exit = True

    threading.Thread(target=_load, args=(state, request_exit, exit_code), name="loader",
                     daemon=True).start()
    if watch_stdin:
        # Only for the app, which holds our stdin open and may die without a word. Headless
        # (systemd, docker without -i, nohup, cron) stdin is /dev/null, at EOF from the start,
        # and the parent may be init: watching either would end the runner at once.
        threading.Thread(target=_watch_stdin, args=(request_exit,), name="stdin",
                         daemon=True).start()
        threading.Thread(target=_watch_parent, args=(request_exit,), name="parent",
                         daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    # Skip interpreter teardown: native threads of llama.cpp and ctypes callbacks can make a
    # normal exit slow or crash after the work is done.
    os._exit(exit_code[0])


def _connection_cap(limits: Limits) -> int:
    """--max-connections, lowered where the open-file limit (raised to its hard limit first)
    would run out before it."""
    from runner.connections import open_file_cap, raise_open_file_limit

    open_files = raise_open_file_limit()
    cap = open_file_cap(limits.max_connections, open_files)
    if cap < limits.max_connections:
        log.warning("taking at most %d connections, not %d (--max-connections): this process may "
                    "open only %s files. Raise the limit (ulimit -n) to take more.", cap,
                    limits.max_connections, open_files)
    return cap


def _load(state: Any, request_exit: Any, exit_code: list[int]) -> None:
    from runner.engine import LoadError, Model, Scheduler, build_info
    from runner.ggufcheck import GGUFError, check_gguf

    t0 = time.perf_counter()
    path = state.settings.model
    try:
        state.build = build_info()
        check_gguf(path)

        def progress(p: float) -> bool:
            state.progress = p
            return not state.exiting.is_set()

        model = Model.load(state.settings, progress)
        try:
            from runner.devices import list_devices

            found = list_devices()  # after the load: the backends are registered by then
            state.devices = found["devices"]
            state.build["backends"] = found["backends"]
        except Exception:
            log.warning("could not list the devices", exc_info=True)
        # A draft model for speculative decoding loads beside it (a refused one fails the load,
        # as in llama-server: the person asked for it).
        draft, refused = None, ""
        if state.settings.spec_type == "draft-simple":
            try:
                draft = Model.load_draft(state.settings, model)
            except LoadError as exc:
                if not state.settings.spec_measure:
                    raise
                # Chosen for the person, to be measured (the app's pick): the model serves
                # without it, and the status says why.
                log.warning("%s; serving without it", exc)
                refused = str(exc)
        scheduler = Scheduler(model, draft)
        if refused:
            from runner.spec_trial import Refused

            scheduler.forget_trial(Refused(refused))
        if state.settings.spec_measure and scheduler.spec is not None and not refused:
            from runner.spec_trial import measure

            state.progress = 1.0
            try:
                measure(scheduler, lambda text: model.tokenize(text, context=scheduler.slot_ctx))
            except Exception:  # unproven, it stays off; the model itself is fine
                log.exception("could not measure speculation; it stays off")
                scheduler.speculating = False
        state.ready(model, scheduler, time.perf_counter() - t0)
        if state.settings.tune_speed and not state.settings.embedding:
            from runner.settings import parse_tune_spec
            from runner.speed_trial import SpeedTrial

            scheduler.start_speed_trial(SpeedTrial(
                state.settings, parse_tune_spec(state.settings.tune_speed),
                state.settings.tune_budget))
        log.info("model loaded in %.2f s", state.load_seconds,
                 extra={"event": "loaded", "model": path, "n_ctx": model.n_ctx})
    except (GGUFError, LoadError) as exc:
        oom = getattr(exc, "out_of_memory", False)
        _fail(state, request_exit, str(exc), ExitCode.OUT_OF_MEMORY if oom else ExitCode.LOAD_FAILED)
    except Exception as exc:  # an unexpected failure still ends with a line that names the file
        log.debug("load crashed", exc_info=True)
        _fail(state, request_exit, f"{path}: loading failed: {exc}", ExitCode.LOAD_FAILED)


def _fail(state: Any, request_exit: Any, message: str, code: int) -> None:
    if state.exiting.is_set():
        return  # asked to exit while loading: not an error
    state.fail(message)
    time.sleep(ERROR_GRACE_S)
    log.error(message, extra={"event": "load_failed", "model": state.settings.model,
                              "exit_code": code})
    request_exit(code)


def _watch_stdin(request_exit: Any) -> None:
    """The app holds our stdin open; EOF means it is gone or wants us to exit."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    request_exit(ExitCode.OK)


def _watch_parent(request_exit: Any) -> None:
    """A crashed app may leave stdin open in a grandchild; check the parent itself too."""
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent or not _alive(parent):
            request_exit(ExitCode.OK)
            return


def _alive(pid: int) -> bool:
    # psutil, not os.kill(pid, 0): on Windows signal 0 is CTRL_C_EVENT and would kill the app.
    import psutil

    return pid > 1 and bool(psutil.pid_exists(pid))


if __name__ == "__main__":
    sys.exit(main())
