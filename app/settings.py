"""The app's own settings as one typed value with a schema version (no Qt; napari style).

Stored as ``settings.json`` in the config folder with the one atomic write
(app/storage/atomic.py). The library's folders are not here: they live in ``library.json``
(app/library/folders.py), which the local-models service owns.

Reading never fails and never loses the user's file silently:

- a missing file gives the defaults;
- a file that is not JSON, or JSON that is not Hearth's settings (no object, no version), is
  renamed aside (``settings.json.unreadable-<time>``) with a logged warning, and the defaults
  are used;
- a file of an older schema is migrated step by step (:data:`MIGRATIONS`, one step per version
  from 1 on); the next save writes the current schema;
- a file from a newer Hearth (someone went back a version) is read for the keys this version
  knows and copied aside (``settings.json.v<N>.bak``) before anything overwrites it;
- a single bad value (a port of -3, a theme of "purple") falls back to its default with a
  warning; the other values are kept.
"""

from __future__ import annotations

import base64
import json
import logging
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast, get_args

from app import paths
from app.remote.share import DEFAULT_PORT, LOOPBACK, valid_host
from app.runner_client.limits import limit_problem
from app.storage.atomic import write_json_atomic

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
FILE_NAME = "settings.json"

Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = get_args(Theme)

# Ports below 1024 need administrator rights on most systems: never a good choice for the runner.
MIN_FIXED_PORT = 1024
MAX_PORT = 65535

# One step per schema version: MIGRATIONS[n] turns a version-n dict into a version-(n + 1) one.
# A step works on plain JSON data and must not fail on values it does not use (they are checked
# after the last step, key by key).
# A new key with a default (``share_host``) needs no step: a file without it reads as the default.
Migration = Callable[[dict[str, Any]], dict[str, Any]]


def _fixed_share_port(data: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: the sharing port 0 (a new port at every load) becomes the fixed default. It was
    the default before, and a port that changes breaks every app set up with the address."""
    out = dict(data)
    if type(out.get("runner_port")) is int and out["runner_port"] == 0:  # not False
        out["runner_port"] = DEFAULT_PORT
    return out


MIGRATIONS: dict[int, Migration] = {1: _fixed_share_port}


class SettingsFormatError(ValueError):
    """The file is not Hearth's settings (not JSON, not an object, no usable version)."""


@dataclass(frozen=True)
class AppSettings:
    """Everything the settings dialog and the window remember between runs."""

    theme: Theme = "system"
    # The runner's port while other apps may use it: fixed, so their set-up keeps working from
    # one load to the next (app/remote/share.py says why this default); 0: any free port, a new
    # one at each load, for the person who asks for it.
    runner_port: int = DEFAULT_PORT
    # Other apps (and, with a wider ``share_host``, other devices) may use the loaded model
    # (the dialog shows URL and key).
    share_runner: bool = False
    # Where the runner listens while sharing: loopback (this computer only), "0.0.0.0" (every
    # network) or one of this computer's addresses. Without sharing it is always loopback.
    share_host: str = LOOPBACK
    # The window starts the model server (`hearth serve`) when none runs, and stops the one it
    # started when it closes: every model of the library served to other programs on request.
    serve_models: bool = False
    # The runners (the window's and the model server's) fetch images from http(s) links in
    # requests, from public internet addresses only (runner/remote_image.py); off, a link is
    # refused and a program must send the image itself.
    image_links: bool = False
    first_run_done: bool = False
    # The runner's runtime by name (app/runtimes); "" chooses from the hardware.
    runtime: str = ""
    window_geometry: bytes | None = None  # QWidget.saveGeometry()
    window_state: bytes | None = None  # QMainWindow.saveState()
    splitter_state: bytes | None = None  # the chat page's QSplitter.saveState()
    # The window's language: "system" (the system's, where Hearth speaks it) or a code of
    # app/ui/lang.LANGUAGES ("en", "de").
    language: str = "system"
    # The runner's request and connection limits that differ from its defaults, by name
    # (app/runner_client/limits.py): set by hand in the file, for the rare server that needs
    # more; a person never meets the defaults in normal use.
    runner_limits: dict[str, float] = field(default_factory=dict)

    @property
    def launch_port(self) -> int:
        """The port to start the runner on: the fixed one only while sharing is on (nothing
        else connects to the runner, so a fixed port would only risk "port in use")."""
        return self.runner_port if self.share_runner else 0

    @property
    def launch_host(self) -> str:
        """The interface to start the runner on: the chosen one only while sharing is on."""
        return self.share_host if self.share_runner else LOOPBACK

    def with_changes(self, **changes: Any) -> AppSettings:
        """A copy with ``changes``, checked like values read from the file (ValueError)."""
        new = replace(self, **changes)
        problems = _problems(new)
        if problems:
            raise ValueError("; ".join(problems))
        return new


def settings_path() -> Path:
    """Where the settings live (the config folder; ``HEARTH_HOME`` moves it)."""
    return paths.config_dir() / FILE_NAME


def valid_port(port: int) -> bool:
    """0 (any free port) or a port a normal user may bind."""
    return port == 0 or MIN_FIXED_PORT <= port <= MAX_PORT


# -- JSON ------------------------------------------------------------------------------------


def to_json(settings: AppSettings) -> dict[str, Any]:
    """The file's content for ``settings`` (bytes as base64 text)."""
    return {
        "version": SCHEMA_VERSION,
        "theme": settings.theme,
        "runner_port": settings.runner_port,
        "share_runner": settings.share_runner,
        "share_host": settings.share_host,
        "serve_models": settings.serve_models,
        "image_links": settings.image_links,
        "first_run_done": settings.first_run_done,
        "runtime": settings.runtime,
        "window_geometry": _b64(settings.window_geometry),
        "window_state": _b64(settings.window_state),
        "splitter_state": _b64(settings.splitter_state),
        "language": settings.language,
        "runner_limits": dict(settings.runner_limits),
    }


def migrate(data: Mapping[str, Any], steps: Mapping[int, Migration] | None = None,
            target: int = SCHEMA_VERSION) -> dict[str, Any]:
    """``data`` brought from its version to ``target`` through ``steps`` (default
    :data:`MIGRATIONS`); raises SettingsFormatError when the version is unusable or a step is
    missing. A version above ``target`` is returned as it is (read best effort)."""
    steps = MIGRATIONS if steps is None else steps
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SettingsFormatError(f"no usable schema version ({version!r})")
    out = dict(data)
    while version < target:
        step = steps.get(version)
        if step is None:
            raise SettingsFormatError(f"no migration from version {version}")
        out = step(out)
        version += 1
        out["version"] = version
    return out


def from_json(data: object, steps: Mapping[int, Migration] | None = None,
              target: int = SCHEMA_VERSION) -> AppSettings:
    """Settings from the file's parsed JSON: migrated, then checked key by key (a bad value
    falls back to its default with a warning). Raises SettingsFormatError when ``data`` is not
    Hearth's settings at all."""
    if not isinstance(data, dict):
        raise SettingsFormatError(f"a {type(data).__name__}, not an object")
    d = migrate(data, steps, target)
    default = AppSettings()

    def pick(key: str, ok: Callable[[Any], bool], fallback: Any) -> Any:
        if key not in d:
            return fallback
        value = d[key]
        if ok(value):
            return value
        log.warning("settings: %s=%.80r is not valid; using %r", key, value, fallback)
        return fallback

    def is_bool(v: Any) -> bool:
        return isinstance(v, bool)

    def is_port(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and valid_port(v)

    return AppSettings(
        theme=cast(Theme, pick("theme", lambda v: v in THEMES, default.theme)),
        runner_port=pick("runner_port", is_port, default.runner_port),
        share_runner=pick("share_runner", is_bool, default.share_runner),
        share_host=pick("share_host", valid_host, default.share_host),
        serve_models=pick("serve_models", is_bool, default.serve_models),
        image_links=pick("image_links", is_bool, default.image_links),
        first_run_done=pick("first_run_done", is_bool, default.first_run_done),
        runtime=pick("runtime", _is_runtime_name, default.runtime),
        window_geometry=_unb64(d.get("window_geometry"), "window_geometry"),
        window_state=_unb64(d.get("window_state"), "window_state"),
        splitter_state=_unb64(d.get("splitter_state"), "splitter_state"),
        language=pick("language", _is_language, default.language),
        runner_limits=_limits(d.get("runner_limits")),
    )


# -- the file --------------------------------------------------------------------------------


def load_settings(path: Path | None = None) -> AppSettings:
    """The saved settings, or the defaults; never raises (see the module docstring)."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return AppSettings()
    except OSError as exc:
        # Not readable now (permissions, a folder in its place): leave it alone, it may be fine
        # later; the defaults serve this run.
        log.warning("settings %s cannot be read (%s); using the defaults", path, exc)
        return AppSettings()
    try:
        data = json.loads(raw.decode("utf-8"))
        settings = from_json(data)
    except (ValueError, SettingsFormatError) as exc:  # UnicodeDecodeError is a ValueError
        aside = _set_aside(path, f"unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        log.warning("settings %s are not readable (%s); %s; using the defaults", path, exc,
                    f"kept as {aside}" if aside else "left in place")
        return AppSettings()
    version = data.get("version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        # A newer Hearth wrote it: keep that file before this version's save drops its keys.
        backup = path.with_name(f"{path.name}.v{version}.bak")
        if not backup.exists():
            try:
                shutil.copy2(path, backup)
                log.warning("settings %s are from a newer Hearth (version %d); a copy is kept "
                            "as %s", path, version, backup)
            except OSError as exc:
                log.warning("settings %s are from a newer Hearth (version %d) and could not "
                            "be copied aside: %s", path, version, exc)
    return settings


def save_settings(settings: AppSettings, path: Path | None = None) -> None:
    """Write ``settings`` all at once (raises OSError as the system reported it)."""
    write_json_atomic(path or settings_path(), to_json(settings))


def _set_aside(path: Path, suffix: str) -> Path | None:
    target = path.with_name(f"{path.name}.{suffix}")
    n = 1
    while target.exists():  # two bad files in one second: keep both
        n += 1
        target = path.with_name(f"{path.name}.{suffix}-{n}")
    try:
        path.rename(target)
    except OSError as exc:
        log.warning("could not move %s aside: %s", path, exc)
        return None
    return target


def _is_language(v: Any) -> bool:
    # "system" or a short language code; which codes Hearth speaks is the window's business.
    return isinstance(v, str) and (v == "system" or (2 <= len(v) <= 8 and v.replace("-", "").isalpha()))


def _is_runtime_name(v: Any) -> bool:
    # A folder name or path (the settings file is the user's, not trusted to be sane).
    return isinstance(v, str) and len(v) < 4096 and "\0" not in v


def _problems(s: AppSettings) -> list[str]:
    problems = []
    if not _is_runtime_name(s.runtime):
        problems.append(f"the runtime must be a name, not {s.runtime!r}")
    if s.theme not in THEMES:
        problems.append(f"theme must be one of {', '.join(THEMES)}, not {s.theme!r}")
    if isinstance(s.runner_port, bool) or not isinstance(s.runner_port, int) or \
            not valid_port(s.runner_port):
        problems.append(f"the port must be 0 (any free port) or {MIN_FIXED_PORT}–{MAX_PORT}, "
                        f"not {s.runner_port!r}")
    if not valid_host(s.share_host):
        problems.append(f"the sharing interface must be an IP address, not {s.share_host!r}")
    for name in ("share_runner", "serve_models", "image_links", "first_run_done"):
        if not isinstance(getattr(s, name), bool):
            problems.append(f"{name} must be true or false")
    if not _is_language(s.language):
        problems.append(f"the language must be \"system\" or a language code, not {s.language!r}")
    for name in ("window_geometry", "window_state", "splitter_state"):
        if not isinstance(getattr(s, name), bytes | None):
            problems.append(f"{name} must be bytes")
    if not isinstance(s.runner_limits, dict):
        problems.append("runner_limits must be a mapping of limits")
    else:
        problems += [p for n, v in s.runner_limits.items() if (p := limit_problem(n, v))]
    return problems


def _limits(value: object) -> dict[str, float]:
    """The valid entries of ``runner_limits``; each bad one is dropped with a warning (the
    runner's default serves instead)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        log.warning("settings: runner_limits must be an object of limits; using the defaults")
        return {}
    out: dict[str, float] = {}
    for name, limit in value.items():
        problem = limit_problem(str(name), limit)
        if problem:
            log.warning("settings: %s; the default serves", problem)
        else:
            out[str(name)] = limit
    return out


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(value: object, key: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return base64.b64decode(value.encode("ascii"), validate=True)
        except ValueError:  # binascii.Error and non-ASCII text are ValueErrors
            pass
    # Only the window's size and layout are lost: it opens at its default size.
    log.warning("settings: %s is not base64; the window opens at its default size", key)
    return None
