"""OS name and version: the real Linux machine against /etc/os-release and uname, and the
platform module's answers recorded on Windows 11 and macOS."""

from __future__ import annotations

import platform

import pytest

from app.hardware import osinfo
from app.hardware.osinfo import detect_os


@pytest.mark.skipif(platform.system() != "Linux", reason="reads /etc/os-release")
def test_real_linux_matches_os_release_and_uname() -> None:
    info = detect_os()
    assert info.name == "Linux"
    assert info.kernel == platform.release()
    try:
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        pretty = ""
    assert info.version == (pretty or f"Linux {platform.release()}")


def _pretend(monkeypatch: pytest.MonkeyPatch, system: str, release: str, **fns: object) -> None:
    monkeypatch.setattr(osinfo.platform, "system", lambda: system)
    monkeypatch.setattr(osinfo.platform, "release", lambda: release)
    for name, value in fns.items():
        monkeypatch.setattr(osinfo.platform, name, value)


def test_windows_11_reports_release_10_and_is_named_11(monkeypatch: pytest.MonkeyPatch) -> None:
    # platform on Windows 11 23H2: win32_ver() -> ('10', '10.0.22631', 'SP0', 'Multiprocessor Free')
    _pretend(monkeypatch, "Windows", "10",
             win32_ver=lambda: ("10", "10.0.22631", "SP0", "Multiprocessor Free"),
             win32_edition=lambda: "Professional")
    info = detect_os()
    assert (info.name, info.version, info.kernel) == (
        "Windows", "Windows 11 Professional", "10.0.22631")


def test_windows_10_stays_10(monkeypatch: pytest.MonkeyPatch) -> None:
    _pretend(monkeypatch, "Windows", "10",
             win32_ver=lambda: ("10", "10.0.19045", "SP0", "Multiprocessor Free"),
             win32_edition=lambda: "Core")
    assert detect_os().version == "Windows 10 Core"


def test_macos(monkeypatch: pytest.MonkeyPatch) -> None:
    # M2 Pro on macOS 14.4.1: mac_ver() -> ('14.4.1', ('', '', ''), 'arm64'), release 23.4.0
    _pretend(monkeypatch, "Darwin", "23.4.0", mac_ver=lambda: ("14.4.1", ("", "", ""), "arm64"))
    info = detect_os()
    assert (info.name, info.version, info.kernel) == ("macOS", "macOS 14.4.1", "23.4.0")
