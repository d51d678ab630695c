"""The operating system's name and version, as a user would recognise them."""

from __future__ import annotations

import platform

from app.hardware.report import OsInfo


def detect_os() -> OsInfo:
    system = platform.system()
    kernel = platform.release()
    if system == "Darwin":
        ver = platform.mac_ver()[0]
        return OsInfo("macOS", f"macOS {ver}" if ver else "macOS", kernel)
    if system == "Windows":
        release, build, _, _ = platform.win32_ver()
        edition = platform.win32_edition() or ""
        # Windows 11 still reports release "10"; build 22000 and later is 11.
        try:
            if release == "10" and int(build.split(".")[-1]) >= 22000:
                release = "11"
        except ValueError:
            pass
        text = " ".join(p for p in ("Windows", release, edition) if p)
        return OsInfo("Windows", text, build or kernel)
    if system == "Linux":
        try:
            pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
        except OSError:
            pretty = ""
        return OsInfo("Linux", pretty or f"Linux {kernel}", kernel)
    return OsInfo(system or "unknown", f"{system} {kernel}".strip(), kernel)
