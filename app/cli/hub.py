"""``hearth search``, ``hearth download``, ``hearth models``, ``hearth login`` (no Qt).

Scripts can rely on the exit codes: 0 done, 1 nothing found (or, for ``hearth plan``, does not
fit), 2 bad arguments or a problem the message explains (a damaged download included), 3 the
Hub cannot be reached, 4 authentication (missing or wrong token, license not accepted), 5 disk
full, 130 interrupted (the download can be continued with the same command).
"""

from __future__ import annotations

import argparse
import errno
import getpass
import json
import os
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from app.hub.types import (
    AuthError,
    DiskFullError,
    FileGroup,
    FileKind,
    HubError,
    HubUnreachableError,
    RepoDetails,
)

EXIT_OK, EXIT_NONE, EXIT_ERROR, EXIT_UNREACHABLE, EXIT_AUTH, EXIT_DISK, EXIT_INTERRUPTED = \
    0, 1, 2, 3, 4, 5, 130


def exit_code(exc: BaseException) -> int:
    """The exit status for an error a subcommand reports."""
    if isinstance(exc, HubUnreachableError):
        return EXIT_UNREACHABLE
    if isinstance(exc, AuthError):
        return EXIT_AUTH
    if isinstance(exc, DiskFullError):
        return EXIT_DISK
    return EXIT_ERROR


def make_client() -> Any:
    """A Hub client with the user's token (HF_TOKEN, else the keyring)."""
    from app.hub.auth import get_token
    from app.hub.client import HubClient

    return HubClient(token=get_token())


# -- hearth search ---------------------------------------------------------------------------------


def search_main(argv: list[str], out: TextIO = sys.stdout) -> int:
    p = argparse.ArgumentParser(prog="hearth search", description="Search GGUF models on "
                                "Hugging Face.")
    p.add_argument("query", nargs="*", help="words to search for (none: the trending models)")
    p.add_argument("--sort", choices=("trending", "downloads", "likes", "modified"),
                   default="trending")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        with make_client() as client:
            items = client.search(" ".join(args.query), sort=args.sort,
                                  limit=max(1, args.limit)).items[:max(1, args.limit)]
    except HubError as exc:
        print(f"hearth search: {exc}", file=sys.stderr)
        return exit_code(exc)
    if args.json:
        print(json.dumps([asdict(i) for i in items], indent=2), file=out)
    else:
        for i in items:
            print(f"{i.repo_id:60} {i.downloads:>10,} downloads {i.likes:>6,} likes  "
                  f"{_date(i.last_modified)}", file=out)
    return EXIT_OK if items else EXIT_NONE


def _date(t: float | None) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d") if t else ""


# -- hearth login ----------------------------------------------------------------------------------


def login_main(argv: list[str], out: TextIO = sys.stdout) -> int:
    p = argparse.ArgumentParser(
        prog="hearth login",
        description="Keep a Hugging Face access token in the OS keyring (needed for gated "
                    "models). The token is read from standard input when it is not a terminal.")
    p.add_argument("--logout", action="store_true", help="forget the saved token")
    args = p.parse_args(argv)
    from app.hub import auth
    from app.hub.client import HubClient

    try:
        if args.logout:
            auth.delete_token()
            print("The saved Hugging Face token is forgotten.", file=out)
            return EXIT_OK
        if sys.stdin.isatty():
            token = getpass.getpass("Hugging Face token (https://huggingface.co/settings/tokens): ")
        else:
            token = sys.stdin.readline()
        token = token.strip()
        with HubClient(token=token) as client:
            user = auth.check_token(client)
        auth.save_token(token)
    except HubError as exc:
        print(f"hearth login: {exc}", file=sys.stderr)
        return exit_code(exc)
    from app.storage import secrets

    print(f"Logged in to Hugging Face as {user}; the token is kept in {secrets.where()}.",
          file=out)
    if os.environ.get(auth.ENV_VAR):
        print("Note: HF_TOKEN is set in the environment and is used before the saved token.",
              file=out)
    return EXIT_OK


# -- hf:// addresses (also for `hearth plan`) ------------------------------------------------------


def parse_hf_url(url: str) -> tuple[str, str | None]:
    """``hf://OWNER/REPO[/FILE]`` → (repo_id, file or None)."""
    rest = url.removeprefix("hf://").strip("/")
    parts = rest.split("/")
    if len(parts) < 2 or not all(parts[:2]):
        raise HubError(f"{url!r} is not a Hugging Face address; write hf://OWNER/REPO/FILE.gguf.")
    return "/".join(parts[:2]), ("/".join(parts[2:]) or None)


def choose_group(details: RepoDetails, file: str | None, quant: str | None,
                 quant_option: bool = True) -> FileGroup:
    """The download unit a file name or a quantization names (any part of a split model)."""
    models = [g for g in details.groups if g.kind is FileKind.MODEL]
    if file:
        for g in details.groups:
            if file in (g.name, *(f.path for f in g.files)):
                if g.kind is not FileKind.MODEL:
                    raise HubError(f"{file} is not a chat model ({g.kind.value}); choose a model "
                                   "file of the repository.")
                return g
        raise HubError(f"{details.repo_id} has no GGUF file {file!r}. Its models: "
                       f"{_names(models)}.")
    if quant:
        for g in models:
            if g.quant == quant.upper():
                return g
        raise HubError(f"{details.repo_id} has no {quant.upper()} file. Its models: "
                       f"{_names(models)}.")
    if len(models) == 1:
        return models[0]
    if not models:
        raise HubError(f"{details.repo_id} has no GGUF model files.")
    how = "name one, or pick a quantization with --quant" if quant_option else \
        f"name one: hf://{details.repo_id}/FILE"
    raise HubError(f"{details.repo_id} has {len(models)} model files; {how}: {_names(models)}.")


def _names(groups: list[FileGroup]) -> str:
    return ", ".join(g.name for g in groups[:12]) + (" …" if len(groups) > 12 else "")


def remote_model_for(url: str) -> tuple[Any, RepoDetails, FileGroup]:
    """The ModelInfo of ``hf://OWNER/REPO/FILE`` from its header alone (cached on disk)."""
    from app import paths
    from app.hub.remote_header import HeaderCache, remote_model

    repo_id, file = parse_hf_url(url)
    with make_client() as client:
        details = client.details(repo_id)
        group = choose_group(details, file, None, quant_option=False)
        model = remote_model(client, details.repo_id, details.revision, group,
                             cache=HeaderCache(paths.cache_dir() / "headers"))
    return model, details, group


# -- progress on a terminal ------------------------------------------------------------------------


class TerminalProgress:
    """A one-line progress bar on a terminal; plain lines every few seconds otherwise."""

    def __init__(self, out: TextIO = sys.stderr) -> None:
        self.out = out
        self.tty = out.isatty()
        self._last = 0.0
        self._drawn = False  # a bar is on the terminal's last line

    def __call__(self, done: int, total: int | None, speed: float, eta: float | None,
                  phase: str) -> None:
        now = time.monotonic()
        if not self.tty and now - self._last < 5 and (total is None or done < total):
            return
        self._last = now
        pct = f"{100 * done / total:5.1f}%" if total else "   ? %"
        bar = ""
        if total and self.tty:
            filled = int(30 * done / total)
            bar = "[" + "#" * filled + "." * (30 - filled) + "] "
        left = f" · {_duration(eta)} left" if eta is not None and phase == "downloading" else ""
        line = (f"{bar}{pct} {_size(done)} of {_size(total) if total else '?'} · "
                f"{_size(int(speed))}/s{left} · {phase}")
        if self.tty:
            self.out.write("\r" + line[:150].ljust(150))
            self._drawn = True
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def end(self) -> None:
        """End the bar's line, so what is printed next starts on a line of its own."""
        if self.tty and self._drawn:
            self.out.write("\n")
            self.out.flush()
            self._drawn = False


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit, step in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= step:
            return f"{n / step:.1f} {unit}"
    return f"{n} B"


def _duration(s: float) -> str:
    s = int(s)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    if s >= 60:
        return f"{s // 60} min {s % 60} s"
    return f"{s} s"



# -- hearth models ---------------------------------------------------------------------------------


def models_main(argv: list[str], out: TextIO = sys.stdout) -> int:
    p = argparse.ArgumentParser(
        prog="hearth models",
        description="List the GGUF models on this computer: Hearth's folder and the models of "
                    "other apps (Hugging Face cache, LM Studio, Ollama, Jan, GPT4All), used in "
                    "place.")
    p.add_argument("--json", action="store_true")
    p.add_argument("--folder", action="append", type=Path, default=[],
                   help="look in this folder too (repeatable)")
    args = p.parse_args(argv)
    from app import paths
    from app.library.catalog import HeaderInfoCache, describe
    from app.library.folders import load_folders
    from app.library.scan import default_sources, scan

    folders = load_folders()
    sources = default_sources(models_dir=folders.models_dir,
                              extra_folders=[*folders.extra, *args.folder])
    cache = HeaderInfoCache(paths.cache_dir() / "library" / "headers.json")
    entries = [describe(f, cache) for f in scan(sources)]
    if args.json:
        print(json.dumps([{
            "path": str(e.found.path), "parts": [str(x) for x in e.found.paths],
            "name": e.found.name, "size": e.found.size, "source": e.found.source,
            "own": e.found.own, "repo_id": e.found.repo_id,
            "architecture": e.architecture, "parameters": e.parameters,
            "quantization": e.quantization, "context_length": e.context_length,
            "error": e.error} for e in entries], indent=2), file=out)
    else:
        if not entries:
            print(f"No models found. Download one with `hearth download REPO --quant Q4_K_M`; "
                  f"Hearth looked in: {', '.join(str(s.root) for s in sources)}.", file=out)
        for e in entries:
            facts = e.error or " ".join(x for x in (
                e.architecture, _params(e.parameters), e.quantization,
                f"ctx {e.context_length}" if e.context_length else None) if x)
            print(f"{e.found.name[:50]:50} {_size(e.found.size):>9}  {e.found.source:18} "
                  f"{facts}", file=out)
            print(f"    {e.found.path}", file=out)
    return EXIT_OK if entries else EXIT_NONE


def _params(n: int | None) -> str | None:
    if not n:
        return None
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


# -- hearth download -------------------------------------------------------------------------------


def download_main(argv: list[str], out: TextIO = sys.stdout) -> int:
    p = argparse.ArgumentParser(
        prog="hearth download",
        description="Download a GGUF model from Hugging Face into Hearth's models folder. "
                    "Interrupted downloads continue where they stopped: run the same command "
                    "again. A file that the Hearth app (or another `hearth download`) is "
                    "downloading already is waited for, not fetched twice.")
    p.add_argument("repo", help="OWNER/REPO (or hf://OWNER/REPO/FILE)")
    p.add_argument("file", nargs="?", help="the .gguf file (any part of a split model)")
    p.add_argument("--quant", help="pick the file by quantization, e.g. Q4_K_M")
    p.add_argument("--folder", type=Path, default=None,
                   help="download into this folder instead of Hearth's models folder")
    p.add_argument("--connections", type=int, default=None,
                   help="parallel connections per file (default: Hearth's choice)")
    args = p.parse_args(argv)
    import threading

    from app.hub.download import DownloadOptions, DownloadProgress, download_group, sources_for
    from app.hub.names import repo_folder
    from app.jobs import CancelledError, CancelToken
    from app.library.catalog import record_sha256
    from app.library.folders import load_folders

    try:
        repo_id, file = parse_hf_url(args.repo) if args.repo.startswith("hf://") else \
            (args.repo, args.file)
        with make_client() as client:
            details = client.details(repo_id)
            group = choose_group(details, file, args.quant)
            root = args.folder or load_folders().models_dir
            folder = repo_folder(root, details.repo_id)
            sources = sources_for(client, details.repo_id, details.revision, group)
    except HubError as exc:
        print(f"hearth download: {exc}", file=sys.stderr)
        return exit_code(exc)

    bar = TerminalProgress()
    size = f" ({_size(group.size)})" if group.size else ""
    print(f"Downloading {details.repo_id} · {group.name}{size} into {folder}", file=sys.stderr)
    token = CancelToken()
    outcome: dict[str, Any] = {}
    waiting = [""]  # whom the download is waiting for now ("" once it runs)

    def report(pr: DownloadProgress) -> None:
        if pr.waiting_for != waiting[0]:
            waiting[0] = pr.waiting_for
            if pr.waiting_for:
                bar.end()
                print(f"{pr.current} is being downloaded by another Hearth ({pr.waiting_for}); "
                      "waiting for it to finish. Ctrl+C stops waiting; nothing is lost.",
                      file=sys.stderr, flush=True)
                return
        bar(pr.done, pr.total, pr.rate, pr.eta, pr.phase)

    def work() -> None:
        try:
            outcome["paths"] = download_group(
                sources, folder, cancel=token, progress=report, who="hearth download",
                options=DownloadOptions(connections=max(1, args.connections)) if args.connections
                else DownloadOptions())
        except BaseException as exc:  # handed to the main thread, which reports it
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="download", daemon=True)
    worker.start()
    try:
        while not outcome:  # not join(): one cut by Ctrl+C marks the thread ended (CPython 3.11)
            time.sleep(0.1)
    except KeyboardInterrupt:
        token.cancel()
        worker.join(30)
        bar.end()
        if waiting[0]:
            print(f"Stopped waiting. {waiting[0]} goes on downloading; run the same command "
                  "again to wait for it or to continue where it stops.", file=sys.stderr)
        else:
            print("Interrupted. What was downloaded is kept: run the same command to continue.",
                  file=sys.stderr)
        return EXIT_INTERRUPTED
    bar.end()
    error = outcome.get("error")
    if isinstance(error, CancelledError):
        return EXIT_INTERRUPTED
    if isinstance(error, HubError):
        print(f"hearth download: {error}", file=sys.stderr)
        if isinstance(error, DiskFullError):
            print("What was downloaded is kept: free some space and run the same command.",
                  file=sys.stderr)
        return exit_code(error)
    if isinstance(error, OSError):  # the folder cannot be made or written
        print(f"hearth download: cannot write into {folder}: {error.strerror or error}.",
              file=sys.stderr)
        return EXIT_DISK if error.errno in (errno.ENOSPC, errno.EDQUOT) else EXIT_ERROR
    if error is not None:
        raise error
    paths: list[Path] = outcome["paths"]
    for path, f in zip(paths, group.files, strict=False):
        if f.sha256:
            record_sha256(path, f.sha256)
    print(paths[0], file=out)
    print(f"Verified. Chat with it in Hearth, or see how it loads: hearth plan '{paths[0]}'",
          file=sys.stderr)
    return EXIT_OK
