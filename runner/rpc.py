"""One model over several machines: llama.cpp's RPC backend, lent and used.

``hearth-runner rpc-worker`` lends this machine's devices: it starts llama.cpp's RPC server
(``ggml_backend_rpc_start_server``, found in the registry of the llama library this runner
loaded, never in a ``libggml-rpc`` opened by path: that would be a second ggml) and prints one
JSON line once it answers::

    {"event": "listening", "endpoint": "127.0.0.1:50052", "protocol": "7.0.0",
     "devices": [{"name": "CPU", "description": "...", "type": "cpu", "free": ..., "total": ...}]}

``serve``/``probe --rpc HOST:PORT[,HOST:PORT…]`` use workers. llama.cpp aborts the whole process
when a server does not answer or speaks another protocol version, so before any address reaches
it :func:`check` talks to the worker in plain Python (the HELLO handshake, the device count and
memory: the same messages llama.cpp sends), which can only raise. A worker lost later (killed
mid-chat) still aborts inside llama.cpp; :func:`guard_aborts` turns that into a log line that
names the worker and ``ExitCode.WORKER_LOST`` (runner/wire/exits.py).

The protocol has no authentication or encryption and executes what it is sent: a worker binds
loopback unless ``--allow-remote`` is given, and then warns.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import logging
import os
import signal
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from runner.wire.exits import ExitCode

log = logging.getLogger(__name__)

# Wire protocol (ggml/src/ggml-rpc/ggml-rpc.cpp): request = cmd (1 byte) | size (u64) | data;
# response = size (u64) | data. HELLO is command 14 in every version (a static_assert there).
CMD_GET_DEVICE_MEMORY = 11
CMD_HELLO = 14
CMD_DEVICE_COUNT = 15
CONN_CAPS_SIZE = 24  # transport.h; an empty capability set means plain TCP
PROTOCOL_MAJOR = 7  # ggml-rpc.h of the llama.cpp this runner vendors; a server must match it
PROTOCOL_MINOR = 0
DEFAULT_PORT = 50052  # llama.cpp's rpc-server default
CHECK_TIMEOUT_S = 5.0


class RpcError(RuntimeError):
    """A worker cannot be used; ``str()`` names it and says what to do."""


@dataclass(frozen=True)
class RemoteDevice:
    index: int  # the device's number on its worker
    free: int
    total: int


@dataclass(frozen=True)
class WorkerInfo:
    endpoint: str
    protocol: str
    devices: list[RemoteDevice] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "protocol": self.protocol,
                "devices": [{"index": d.index, "free": d.free, "total": d.total}
                            for d in self.devices]}


def parse_endpoints(text: str) -> list[str]:
    """``HOST:PORT[,HOST:PORT…]`` as llama-server takes it; ValueError names a bad one."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        host, port = split_endpoint(part)
        out.append(f"{host}:{port}")
    if not out:
        raise ValueError("expected HOST:PORT, e.g. 192.168.1.20:50052")
    if len(set(out)) != len(out):
        raise ValueError(f"a worker is named twice in {text!r}")
    return out


def split_endpoint(endpoint: str) -> tuple[str, int]:
    host, sep, port_text = endpoint.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{endpoint!r} is not HOST:PORT (e.g. 192.168.1.20:50052)")
    return host.strip("[]"), int(port_text)


# ---- talking to a worker in plain Python ---------------------------------------------------------


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the connection closed")
        buf += chunk
    return bytes(buf)


def _call(sock: socket.socket, cmd: int, payload: bytes, reply_size: int) -> bytes:
    sock.sendall(struct.pack("<BQ", cmd, len(payload)) + payload)
    (size,) = struct.unpack("<Q", _recv_exact(sock, 8))
    if size != reply_size:
        raise ValueError(f"a reply of {size} bytes where {reply_size} were expected")
    return _recv_exact(sock, size)


def check(endpoint: str, timeout: float = CHECK_TIMEOUT_S) -> WorkerInfo:
    """Ask the worker at ``endpoint`` its protocol version, devices and their memory.

    Raises RpcError with a sentence naming the worker: it does not answer, it is not a
    llama.cpp RPC server, it speaks another version, or it is busy with another client (a
    worker serves one client at a time).
    """
    host, port = split_endpoint(endpoint)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise RpcError(f"the worker at {endpoint} does not answer (no reply in {timeout:g} s): "
                       "check that it runs and that no firewall blocks the port") from None
    except OSError as exc:
        raise RpcError(f"the worker at {endpoint} cannot be reached ({exc.strerror or exc}): "
                       "start it with 'hearth-runner rpc-worker' on that machine, or check the "
                       "address") from None
    with sock:
        sock.settimeout(timeout)
        try:
            hello = _call(sock, CMD_HELLO, bytes(CONN_CAPS_SIZE), 4 + CONN_CAPS_SIZE)
            major, minor, patch = hello[0], hello[1], hello[2]
            version = f"{major}.{minor}.{patch}"
            if major != PROTOCOL_MAJOR or minor > PROTOCOL_MINOR:
                raise RpcError(
                    f"the worker at {endpoint} speaks RPC protocol {version}, and this Hearth "
                    f"speaks {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}: run the same Hearth version on "
                    "both machines")
            (count,) = struct.unpack("<I", _call(sock, CMD_DEVICE_COUNT, b"", 4))
            devices = []
            for i in range(count):
                free, total = struct.unpack(
                    "<QQ", _call(sock, CMD_GET_DEVICE_MEMORY, struct.pack("<I", i), 16))
                devices.append(RemoteDevice(i, free, total))
        except TimeoutError:
            raise RpcError(f"the worker at {endpoint} accepted the connection but does not "
                           "reply: it serves one client at a time and may be busy with "
                           "another Hearth") from None
        except (OSError, ValueError, struct.error) as exc:
            raise RpcError(f"the service at {endpoint} is not a llama.cpp RPC worker, or it "
                           f"closed the connection ({exc}): check the port") from None
    if not devices:
        raise RpcError(f"the worker at {endpoint} lends no device")
    return WorkerInfo(endpoint, version, devices)


def gone(endpoint: str, timeout: float = 1.0) -> bool:
    """Whether nothing listens at ``endpoint`` any more (refused, unreachable). A connect that
    times out is not proof: a busy worker's backlog may be full (it serves one client at a
    time, and llama.cpp may hold a second connection waiting)."""
    try:
        host, port = split_endpoint(endpoint)
        with socket.create_connection((host, port), timeout=timeout):
            return False
    except TimeoutError:
        return False
    except (OSError, ValueError):
        return True


# ---- the llama library's RPC backend -------------------------------------------------------------


def _handle() -> ctypes.CDLL:
    from runner import runtime

    return runtime.lib()


def _rpc_proc(name: str, restype: Any, argtypes: list[Any]) -> Any:
    """``name`` from the RPC backend of the ggml that llama uses; RpcError if it has none."""
    h = _handle()
    h.ggml_backend_reg_by_name.restype = ctypes.c_void_p
    h.ggml_backend_reg_by_name.argtypes = [ctypes.c_char_p]
    reg = h.ggml_backend_reg_by_name(b"RPC")
    if not reg:
        raise RpcError("this runner's llama.cpp build has no RPC backend: use the portable CPU "
                       "runtime or a GPU runtime (installers/build_runtime.py builds them with "
                       "RPC)")
    h.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    h.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    addr = h.ggml_backend_reg_get_proc_address(reg, name.encode())
    if not addr:
        raise RpcError(f"this runner's RPC backend lacks {name}")
    return ctypes.CFUNCTYPE(restype, *argtypes)(addr)


_added: list[str] = []


def add_workers(endpoints: list[str]) -> list[WorkerInfo]:
    """Check each worker, then hand it to llama.cpp: its devices come first in llama's device
    order (before local GPUs), in the order given. Raises RpcError before llama.cpp sees any
    address if one cannot be used."""
    infos = [check(e) for e in endpoints]
    add_server = _rpc_proc("ggml_backend_rpc_add_server", ctypes.c_void_p, [ctypes.c_char_p])
    h = _handle()
    h.ggml_backend_register.restype = None
    h.ggml_backend_register.argtypes = [ctypes.c_void_p]
    for info in infos:
        if info.endpoint in _added:
            continue
        reg = add_server(info.endpoint.encode())
        if not reg:
            raise RpcError(f"the worker at {info.endpoint} lends no device")
        h.ggml_backend_register(reg)
        _added.append(info.endpoint)
    _name_buffers()
    guard_aborts(list(_added))
    return infos


def _name_buffers() -> None:
    """Tell the memory log parser which device each worker buffer belongs to."""
    from runner.devices import _Ggml
    from runner.memory import BUFFER_ALIASES

    per_worker: dict[str, int] = {}
    for d in _Ggml(_handle()).devices():
        worker = d.get("worker")
        if worker:
            i = per_worker.get(worker, 0)
            per_worker[worker] = i + 1
            BUFFER_ALIASES[f"RPC{i}[{worker}]"] = d["name"]


def _lost(endpoints: list[str], wait_s: float = 1.0) -> list[str]:
    """The workers that are gone, asked for up to ``wait_s``: a killed worker's connection may
    close a moment before its listening socket does. All of them when none can be told apart."""
    deadline = time.monotonic() + wait_s
    while True:
        lost = [e for e in endpoints if gone(e)]
        if lost or time.monotonic() > deadline:
            return lost or endpoints
        time.sleep(0.05)


# Kept referenced: ggml calls it from any thread until the process ends.
_abort_callback: Any = None


def guard_aborts(endpoints: list[str]) -> None:
    """Make llama.cpp's abort on a lost worker an orderly exit that names the worker.

    ggml calls the callback with its message just before ``abort()``; other aborts (a bug, a GPU
    failure) go on to abort as before, so a crash still reads as one.
    """
    global _abort_callback
    callback_type = ctypes.CFUNCTYPE(None, ctypes.c_char_p)

    def on_abort(message: bytes | None) -> None:
        text = (message or b"").decode("utf-8", "replace").strip()
        if "RPC" not in text and "connect" not in text:
            return
        lost = _lost(endpoints)
        names = ", ".join(lost)
        log.error("the RPC worker at %s stopped answering (%s); load the model again without "
                  "it, or restart the worker", names, text,
                  extra={"event": "worker_lost", "workers": lost, "exit_code": ExitCode.WORKER_LOST})
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(ExitCode.WORKER_LOST)

    _abort_callback = callback_type(on_abort)
    h = _handle()
    h.ggml_set_abort_callback.restype = ctypes.c_void_p
    h.ggml_set_abort_callback.argtypes = [callback_type]
    h.ggml_set_abort_callback(_abort_callback)


# ---- the worker ----------------------------------------------------------------------------------


def _free_port(host: str, port: int) -> int:
    """``port`` if it can be bound on ``host`` (0: a free one); OSError if not. llama.cpp's own
    bind failure is a line on stderr and a silent return, so the worker checks first."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        if os.name != "nt":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return int(s.getsockname()[1])


def _pick_devices(wanted: list[str]) -> list[dict[str, Any]]:
    from runner.devices import _Ggml

    ggml = _Ggml(_handle())
    found = ggml.devices()
    for i, d in enumerate(found):
        d["handle"] = ggml.h.ggml_backend_dev_get(i)
    if wanted:
        by_name = {d["name"].lower(): d for d in found}
        missing = [w for w in wanted if w.lower() not in by_name]
        if missing:
            raise RpcError(f"no device named {', '.join(missing)} here; this build has "
                           f"{', '.join(d['name'] for d in found)}")
        return [by_name[w.lower()] for w in wanted]
    # As llama.cpp's rpc-server: every GPU, else the CPU.
    gpus = [d for d in found if d["type"] in ("gpu", "igpu")]
    return gpus or [d for d in found if d["type"] == "cpu"][:1]


def worker_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hearth-runner rpc-worker",
        description="Lend this machine's devices to another Hearth over llama.cpp's RPC "
                    "protocol. It has no authentication or encryption: anyone who can reach "
                    "the port can run code here. Use it on loopback, a trusted network, a VPN or "
                    "an SSH tunnel only.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default "
                        "loopback)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--device", default="",
                        help="devices to lend, comma-separated (e.g. CUDA0,CPU); default every "
                             "GPU, else the CPU")
    parser.add_argument("--threads", "-t", type=int, default=0,
                        help="CPU threads (0: physical cores)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow binding an interface other machines can reach (no "
                             "authentication: trusted networks only)")
    parser.add_argument("--watch-stdin", action="store_true",
                        help="exit when standard input closes (the app sets this)")
    args = parser.parse_args(argv)
    from runner import logs
    from runner.settings import is_loopback

    logs.setup(verbose=False)
    from runner import runtime

    runtime.log_choice(log)
    if not is_loopback(args.host):
        if not args.allow_remote:
            log.error("refusing to listen on %s: RPC has no authentication, and anyone who can "
                      "reach the port could run code on this machine. Pass --allow-remote to do "
                      "this on purpose, on a trusted network only.", args.host)
            return ExitCode.BAD_ARGS
        log.warning("WARNING: listening on %s without authentication or encryption: anyone who "
                    "can reach port %d can run code on this machine. Use a trusted network, a "
                    "VPN or an SSH tunnel.", args.host, args.port)
    try:
        port = _free_port(args.host, args.port)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", args.host, args.port, exc.strerror or exc)
        return ExitCode.PORT_IN_USE
    from runner.settings import physical_cores

    try:
        devices = _pick_devices([d for d in args.device.split(",") if d.strip()])
        start = _rpc_proc("ggml_backend_rpc_start_server", None,
                          [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                           ctypes.POINTER(ctypes.c_void_p)])
    except Exception as exc:
        log.error("%s", exc)
        return ExitCode.LOAD_FAILED
    endpoint = f"{args.host}:{port}"
    handles = (ctypes.c_void_p * len(devices))(*[d["handle"] for d in devices])
    threads = args.threads or physical_cores()
    # llama.cpp prints its banner on stdout; ours must stay the one JSON line there.
    _stdout_to_stderr()
    server = threading.Thread(
        target=start, args=(endpoint.encode(), None, threads, len(devices), handles),
        name="rpc-server", daemon=True)
    server.start()
    info = _wait_listening(endpoint, server)
    if info is None:
        log.error("the RPC server did not start on %s (see the lines above)", endpoint)
        return ExitCode.PORT_IN_USE
    shown = [{k: v for k, v in d.items() if k != "handle"} for d in devices]
    _say({"event": "listening", "endpoint": endpoint, "protocol": info.protocol,
          "devices": shown})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if args.watch_stdin:
        threading.Thread(target=_exit_on_stdin_close, daemon=True).start()
    while server.is_alive():
        time.sleep(0.5)
    log.error("the RPC server stopped")
    return 1


_real_stdout: Any = None


def _stdout_to_stderr() -> None:
    """Point file descriptor 1 at stderr, keeping a private copy for the one JSON line."""
    global _real_stdout
    sys.stdout.flush()
    _real_stdout = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)


def _say(data: dict[str, Any]) -> None:
    out = _real_stdout or sys.stdout
    out.write(json.dumps(data) + "\n")
    out.flush()


def _wait_listening(endpoint: str, server: threading.Thread,
                    timeout: float = 30.0) -> WorkerInfo | None:
    """The worker's own answer to a HELLO, once it answers one (also its protocol version)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.is_alive():
        with contextlib.suppress(RpcError):
            return check(endpoint, timeout=2.0)
        time.sleep(0.05)
    return None


def _exit_on_stdin_close() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def check_main(argv: list[str]) -> int:
    """``hearth-runner rpc-check HOST:PORT[,…]``: each worker's version, devices and memory as
    one JSON line; the app runs it in a child process before planning a split."""
    parser = argparse.ArgumentParser(prog="hearth-runner rpc-check")
    parser.add_argument("endpoints", help="HOST:PORT[,HOST:PORT…]")
    parser.add_argument("--timeout", type=float, default=CHECK_TIMEOUT_S)
    args = parser.parse_args(argv)
    try:
        endpoints = parse_endpoints(args.endpoints)
    except ValueError as exc:
        print(json.dumps({"error": str(exc)}))
        return ExitCode.BAD_ARGS
    workers: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for e in endpoints:
        try:
            workers.append(check(e, args.timeout).to_json())
        except RpcError as exc:
            errors.append({"endpoint": e, "error": str(exc)})
    print(json.dumps({"workers": workers, "errors": errors}))
    return 1 if errors else 0
