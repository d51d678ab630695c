"""The system libraries Qt's X11 (xcb) platform plugin needs, checked before Qt starts.

PySide6's wheels bundle Qt but not the X11 client libraries its xcb plugin links against. On a
fresh Debian/Ubuntu desktop some are missing (libxcb-icccm4, libxcb-keysyms1, libxcb-cursor0), and
Qt then aborts with "could not load the Qt platform plugin xcb", which names no package. This
module finds what is missing and words the install commands instead, for the terminal and, through
app/notify_failure.py, for the desktop (a person who double-clicks has no terminal).

Standard library only, and no Qt: installers/dev.py loads it before the virtual environment
exists, and the app calls it before it creates its QApplication.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from app.notify_failure import Notice


@dataclass(frozen=True)
class XcbLibrary:
    """One shared library (by soname) and the packages that provide it."""

    soname: str
    apt: str  # Debian, Ubuntu and derivatives
    dnf: str  # Fedora, RHEL and derivatives


# The NEEDED entries of PySide6's plugins/platforms/libqxcb.so and lib/libQt6XcbQpa.so.6 (PySide6
# 6.x wheels) that come from the system, the xcb-util family first: those are the ones a desktop
# install most often lacks. The rest are usually there with any X11 desktop; checking them too is
# cheap and names the package on minimal systems (containers, WSL).
XCB_LIBRARIES: tuple[XcbLibrary, ...] = (
    XcbLibrary("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    XcbLibrary("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    XcbLibrary("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    XcbLibrary("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    XcbLibrary("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    XcbLibrary("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    XcbLibrary("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    XcbLibrary("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    XcbLibrary("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
    XcbLibrary("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    XcbLibrary("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    XcbLibrary("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    XcbLibrary("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    XcbLibrary("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    XcbLibrary("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    XcbLibrary("libxcb.so.1", "libxcb1", "libxcb"),
    XcbLibrary("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    XcbLibrary("libX11.so.6", "libx11-6", "libX11"),
    XcbLibrary("libGL.so.1", "libgl1", "libglvnd-glx"),
    XcbLibrary("libEGL.so.1", "libegl1", "libglvnd-egl"),
    XcbLibrary("libfontconfig.so.1", "libfontconfig1", "fontconfig"),
)

Lookup = Callable[[str], bool]


def library_loads(soname: str) -> bool:
    """True when the dynamic loader can load ``soname``, the way Qt's plugin will need it."""
    # dlopen, not ctypes.util.find_library: it searches exactly where the plugin's own
    # dependencies will be searched (LD_LIBRARY_PATH, ld.so.cache, the default paths), and
    # find_library runs ldconfig/gcc in a subprocess for every name.
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def _platforms(environ: Mapping[str, str]) -> list[str]:
    """QT_QPA_PLATFORM's plugin names in the order Qt tries them ("wayland;xcb", "xcb:opt")."""
    value = environ.get("QT_QPA_PLATFORM", "").strip()
    return [part.split(":", 1)[0].strip().lower() for part in value.split(";") if part.strip()]


def xcb_is_certain(environ: Mapping[str, str] | None = None) -> bool:
    """True when Qt will use xcb first; False when it may start on Wayland instead (then missing
    xcb libraries only matter if it falls back to X11)."""
    env = os.environ if environ is None else environ
    names = _platforms(env)
    if names:
        return names[0] == "xcb"
    # Unset: in a Wayland session Qt 6 tries its wayland plugin first.
    return not (env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE", "").lower() == "wayland")


def missing_xcb_libraries(lookup: Lookup | None = None, *, platform: str | None = None,
                          environ: Mapping[str, str] | None = None) -> list[XcbLibrary]:
    """The libraries in :data:`XCB_LIBRARIES` that ``lookup`` cannot find, when Qt would use its
    xcb plugin here: on Linux only, and not when QT_QPA_PLATFORM names only other plugins
    (offscreen, minimal, wayland, …). ``lookup`` defaults to :func:`library_loads`."""
    env = os.environ if environ is None else environ
    if not (sys.platform if platform is None else platform).startswith("linux"):
        return []
    names = _platforms(env)
    if names and "xcb" not in names:
        return []
    # Looked up at call time, so a test can replace library_loads on the module.
    found = lookup or library_loads
    return [lib for lib in XCB_LIBRARIES if not found(lib.soname)]


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def missing_libraries_message(missing: list[XcbLibrary], certain: bool = True) -> str:
    """What is missing and the exact install commands, for a person at a terminal."""
    if certain:
        head = ("Hearth cannot open its window: Qt's X11 (xcb) platform plugin needs system "
                "libraries that are not installed:")
        tail = "Install them, then start Hearth again:"
    else:
        head = ("Note: Qt may start on Wayland here; if it falls back to X11 (xcb), it needs "
                "system libraries that are not installed:")
        tail = "If the window does not open, install them:"
    lines = [head]
    lines += [f"  {lib.soname} (Debian/Ubuntu: {lib.apt}; Fedora: {lib.dnf})" for lib in missing]
    lines += [
        tail,
        "  Debian/Ubuntu:  sudo apt install " + " ".join(_unique([lib.apt for lib in missing])),
        "  Fedora:         sudo dnf install " + " ".join(_unique([lib.dnf for lib in missing])),
    ]
    return "\n".join(lines) + "\n"


def missing_libraries_notice(missing: list[XcbLibrary]) -> Notice:
    """What is missing and the install commands, short enough for a desktop notification, with
    the terminal's whole message beside it (Qt cannot start: app/notify_failure.py shows it)."""
    return Notice(
        title="Hearth cannot open its window",
        body="\n".join([
            "Qt needs system libraries that are not installed: "
            + ", ".join(lib.soname for lib in missing) + ".",
            "Install them, then start Hearth again:",
            "Debian/Ubuntu: sudo apt install " + " ".join(_unique([lib.apt for lib in missing])),
            "Fedora: sudo dnf install " + " ".join(_unique([lib.dnf for lib in missing])),
        ]),
        text=missing_libraries_message(missing, certain=True))


def check_qt_libraries(stream: TextIO | None = None, lookup: Lookup | None = None, *,
                       platform: str | None = None,
                       environ: Mapping[str, str] | None = None,
                       tell: Callable[[Notice], object] | None = None) -> bool:
    """Write what is missing to ``stream`` (default stderr); False when Qt cannot start.

    Where Qt may use Wayland instead, missing xcb libraries are a note and the answer is True.
    When Qt cannot start, ``tell`` (the app passes app.notify_failure.tell) gets the message
    too: a person who started Hearth from the menu has no terminal to read it in.
    """
    missing = missing_xcb_libraries(lookup or library_loads, platform=platform, environ=environ)
    if not missing:
        return True
    certain = xcb_is_certain(environ)
    out = sys.stderr if stream is None else stream
    out.write(missing_libraries_message(missing, certain))
    if certain and tell is not None:
        out.flush()  # the terminal line first: a dialog may wait for the person
        tell(missing_libraries_notice(missing))
    return not certain
