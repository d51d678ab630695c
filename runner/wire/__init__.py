"""The one part of the runner the app may import: rules both programs must apply the same way.

The app and the runner are separate programs that share nothing but the wire protocol
(docs/architecture.md). Some decisions are made on both sides, though: which llama.cpp build
(runtime) serves is chosen by the app for the loads it starts and by ``hearth-runner`` itself
when it is started by hand without ``--runtime``. Those rules live here, once:

- :mod:`runner.wire.runtimes`: where runtime folders are found, what a folder's manifest says,
  how ``--runtime`` values (a folder, a name, ``built-in``, ``auto``) are read;
- :mod:`runner.wire.choose`: which runtime suits a machine, best first, and the first that
  passes the caller's check (the app's self-test, the runner's plain-Python checks);
- :mod:`runner.wire.exits`: the runner's exit codes, which the app's fallback ladder acts on;
- :mod:`runner.wire.splits`: llama.cpp's names for the parts of a split model
  (``-00001-of-00003.gguf``), for the library, the Hub's grouping, the loader and the dry run.
- :mod:`runner.wire.shapes`: the shape of the runner's errors (OpenAI's) and of ``/health``,
  made by the runner and read by the app.

Standard library only, and nothing else of the runner: the GUI process imports it, and it must
not pull llama.cpp, numpy or the server stack in (``lint-imports`` keeps it so). What needs more
stays with its owner: the app's hardware report and self-tests (``app/runtimes``), the runner's
look at this machine and its loading of the libraries (``runner/runtime.py``).
"""
