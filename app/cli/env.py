"""`hearth env openai|anthropic|ollama [--shell sh|fish|powershell]`: the lines that point a
kind of tool at Hearth's model server (no Qt).

The address is the one a program on this computer uses: the fixed port from the settings, on
loopback, or on the one address sharing binds the server to (app/remote/share.py,
:func:`~app.remote.share.local_url`). The key is the server's shared key from the secret store.
The lines come from app/remote/tool_env.py, which the Settings page shows with Copy buttons.

Exit codes: 0 printed, 2 bad arguments or a problem the message explains (the secret store
cannot be read, the port changes at every start).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from app.remote import share
from app.remote.tool_env import KINDS, SHELLS, default_shell, env_lines, server_url
from app.settings import load_settings
from app.storage.secrets import SecretStoreError

EXIT_OK, EXIT_ERROR = 0, 2


def main(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of `hearth env`; ``argv`` excludes the subcommand name."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    parser = argparse.ArgumentParser(
        prog="hearth env",
        description="Print the environment variables that point a kind of tool at Hearth's "
                    "model server: OpenAI-compatible tools (Codex, scripts), Anthropic tools "
                    "(Claude Code), or Ollama clients.",
        epilog="Use: eval \"$(hearth env openai)\" in sh, bash or zsh; "
               "hearth env openai --shell fish | source; "
               "hearth env openai --shell powershell | Out-String | Invoke-Expression.")
    parser.add_argument("kind", choices=KINDS, help="the kind of tool")
    parser.add_argument("--shell", choices=SHELLS, default=default_shell(),
                        help="the shell to print for (default: %(default)s)")
    args = parser.parse_args(argv)

    try:
        settings = load_settings()
        url = server_url(settings.runner_port, settings.launch_host)
    except ValueError as exc:
        print(f"hearth env: {exc}", file=err)
        return EXIT_ERROR
    try:
        # Looked up at the call, not imported by name: one key per process, and tests put
        # in their own.
        key = share.SHARED_KEY.get()
    except SecretStoreError as exc:
        print(f"hearth env: {exc}", file=err)
        return EXIT_ERROR
    try:
        lines = env_lines(args.kind, url, key, args.shell)
    except ValueError as exc:
        print(f"hearth env: The server's key cannot be printed for a shell ({exc}): make a new "
              "one with Rotate key in Settings > Sharing.", file=err)
        return EXIT_ERROR
    print("\n".join(lines), file=out)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
