"""app.qtdeps: the xcb libraries Qt needs, found with a faked loader; and run_gui's early exit."""

from __future__ import annotations

import io
import sys

import pytest

from app import qtdeps

LINUX_X11: dict[str, str] = {"DISPLAY": ":0"}
ABSENT = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"}


def only_absent(absent: set[str]) -> qtdeps.Lookup:
    return lambda soname: soname not in absent


def test_table_has_the_commonly_missing_libraries() -> None:
    names = {lib.soname for lib in qtdeps.XCB_LIBRARIES}
    assert {"libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
            "libxcb-image.so.0", "libxcb-render-util.so.0", "libxkbcommon-x11.so.0",
            "libxcb-xkb.so.1", "libxcb-shape.so.0", "libxcb-randr.so.0"} <= names
    assert all(lib.apt and lib.dnf for lib in qtdeps.XCB_LIBRARIES)


def test_reports_each_missing_library_with_both_package_names() -> None:
    missing = qtdeps.missing_xcb_libraries(only_absent(ABSENT), platform="linux",
                                           environ=LINUX_X11)
    assert {lib.soname for lib in missing} == ABSENT
    text = qtdeps.missing_libraries_message(missing)
    for soname, apt, dnf in [("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
                             ("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
                             ("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor")]:
        line = next(li for li in text.splitlines() if soname in li)
        assert apt in line and dnf in line, line
    apt_line = next(li for li in text.splitlines() if "sudo apt install" in li)
    dnf_line = next(li for li in text.splitlines() if "sudo dnf install" in li)
    assert set(apt_line.split("sudo apt install ")[1].split()) == \
        {"libxcb-icccm4", "libxcb-keysyms1", "libxcb-cursor0"}
    assert set(dnf_line.split("sudo dnf install ")[1].split()) == \
        {"xcb-util-wm", "xcb-util-keysyms", "xcb-util-cursor"}


def test_a_package_is_named_once_for_several_libraries() -> None:
    absent = {"libxcb-xkb.so.1", "libxcb-shape.so.0", "libxcb-randr.so.0"}
    missing = qtdeps.missing_xcb_libraries(only_absent(absent), platform="linux", environ={})
    dnf_line = next(li for li in qtdeps.missing_libraries_message(missing).splitlines()
                    if "sudo dnf install" in li)
    assert dnf_line.split("sudo dnf install ")[1].split() == ["libxcb"]


def test_nothing_reported_when_all_are_found() -> None:
    assert qtdeps.missing_xcb_libraries(lambda soname: True, platform="linux",
                                        environ=LINUX_X11) == []
    out = io.StringIO()
    assert qtdeps.check_qt_libraries(out, lambda soname: True, platform="linux",
                                     environ=LINUX_X11)
    assert out.getvalue() == ""


@pytest.mark.parametrize("platform", ["win32", "darwin", "freebsd14"])
def test_nothing_checked_off_linux(platform: str) -> None:
    def lookup(soname: str) -> bool:
        raise AssertionError(f"looked up {soname} on {platform}")

    assert qtdeps.missing_xcb_libraries(lookup, platform=platform, environ={}) == []


@pytest.mark.parametrize("value", ["offscreen", "minimal", "wayland", "wayland-egl", "eglfs"])
def test_nothing_checked_when_qt_is_told_another_platform(value: str) -> None:
    env = {**LINUX_X11, "QT_QPA_PLATFORM": value}
    assert qtdeps.missing_xcb_libraries(only_absent(ABSENT), platform="linux",
                                        environ=env) == []
    out = io.StringIO()
    assert qtdeps.check_qt_libraries(out, only_absent(ABSENT), platform="linux", environ=env)
    assert out.getvalue() == ""


@pytest.mark.parametrize("value", ["xcb", "XCB", "xcb:some-option"])
def test_qt_told_xcb_is_an_error(value: str) -> None:
    env = {"QT_QPA_PLATFORM": value, "WAYLAND_DISPLAY": "wayland-0"}
    out = io.StringIO()
    assert not qtdeps.check_qt_libraries(out, only_absent(ABSENT), platform="linux", environ=env)
    assert "sudo apt install" in out.getvalue()


@pytest.mark.parametrize("env", [{"WAYLAND_DISPLAY": "wayland-0"},
                                 {"XDG_SESSION_TYPE": "wayland"},
                                 {"QT_QPA_PLATFORM": "wayland;xcb"}])
def test_wayland_may_be_used_so_it_is_a_warning(env: dict[str, str]) -> None:
    out = io.StringIO()
    assert qtdeps.check_qt_libraries(out, only_absent(ABSENT), platform="linux", environ=env)
    text = out.getvalue()
    assert "Wayland" in text and "libxcb-icccm4" in text and "xcb-util-wm" in text


def test_default_lookup_finds_the_c_library_and_not_a_made_up_one() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("sonames are Linux's")
    assert qtdeps.library_loads("libc.so.6")
    assert not qtdeps.library_loads("libhearth-no-such-library.so.0")


def test_run_gui_exits_1_with_the_message_before_any_qt(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import app.__main__ as entry

    monkeypatch.setattr(qtdeps, "library_loads", only_absent(ABSENT))
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    # Any Qt import (and so any QApplication) from here on raises ImportError.
    for module in ("PySide6", "PySide6.QtWidgets", "PySide6.QtCore", "PySide6.QtGui"):
        monkeypatch.setitem(sys.modules, module, None)

    def no_logging_setup() -> None:
        raise AssertionError("run_gui went past the library check")

    monkeypatch.setattr(entry, "setup_logging", no_logging_setup)
    assert entry.run_gui() == 1
    err = capsys.readouterr().err
    assert "libxcb-icccm.so.4" in err and "sudo apt install" in err and "libxcb-keysyms1" in err
    assert "sudo dnf install" in err and "xcb-util-keysyms" in err
