"""The runner's exit codes: what ``hearth-runner serve`` (and ``rpc-worker``, where they mean the
same) tell the program that started them when they end.

The runner ends with one of these; the app (``app/loading/ladder.py``'s ``classify_failure``,
read through ``app/services/runner_process.py``'s ``RunnerExit``) decides from it whether a
smaller plan can help. Scripts and service managers read them too (README, "The runner",
lists them). A code is a promise: never renumber one, add new ones at the end.

Other subcommands keep their own statuses (``selftest``: 0 passed, 1 a device failed, 2 the
runtime cannot load; ``probe``, ``devices``: 0 or 1), and the app reads their JSON, not their
status.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Why the runner ended. An ``int``: return it from ``main`` or pass it to ``os._exit``."""

    OK = 0
    """Asked to stop (SIGTERM, stdin closed, the app gone): nothing went wrong."""

    BAD_ARGS = 2
    """Bad arguments or a refused setting (no key, a non-loopback address without
    ``--allow-remote``, an address it cannot listen on). The same command fails the same way:
    the app does not retry."""

    LOAD_FAILED = 3
    """The model could not be loaded (damaged or unsupported file, a backend error). The last
    stderr line names the file and the reason; the app retries on the CPU only when that reason
    names a GPU backend, or without workers when it names an RPC worker."""

    OUT_OF_MEMORY = 4
    """Loading ran out of memory on some device: the app's fallback ladder retries with smaller
    settings (shorter context, quantized KV cache, fewer layers on the GPU)."""

    PORT_IN_USE = 5
    """The fixed ``--port`` asked for is taken by another program: the app says so (sharing
    uses a fixed port) rather than retry."""

    WORKER_LOST = 6
    """An RPC worker stopped answering while the model was loaded or loading (``runner/rpc.py``
    turns llama.cpp's abort into this exit and a line naming the worker): the app loads the model
    again on this computer alone."""

