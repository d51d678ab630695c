"""The Windows installer's pure parts: the ICO writer and build_windows.py's decisions."""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures.scripts import load_script

WINDOWS = Path(__file__).resolve().parents[2] / "installers" / "windows"
ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"


def script(name: str) -> ModuleType:
    return load_script(f"windows/{name}.py")


def parse_ico(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(width, height, bits per pixel, size, offset) of each directory entry, checked against
    the header the way Windows reads it."""
    reserved, kind, count = struct.unpack_from("<HHH", data, 0)
    assert (reserved, kind) == (0, 1)
    entries = []
    for i in range(count):
        w, h, colours, res, planes, bpp, size, offset = struct.unpack_from("<BBBBHHII", data,
                                                                           6 + 16 * i)
        assert (colours, res, planes) == (0, 0, 1)
        entries.append((w or 256, h or 256, bpp, size, offset))
    return entries


def test_an_ico_holds_each_png_unchanged_with_a_directory_that_points_at_it(tmp_path: Path) -> None:
    pngs = [ICONS / "hearth-256.png", ICONS / "hearth-16.png", ICONS / "hearth-48.png"]
    out = tmp_path / "icon.ico"
    script("make_ico").write_ico(pngs, out)
    data = out.read_bytes()
    entries = parse_ico(data)
    # Smallest first, whatever the order given; 256 is written as 0 in its byte.
    assert [(w, h) for w, h, *_ in entries] == [(16, 16), (48, 48), (256, 256)]
    assert data[6 + 2 * 16] == 0 and data[6 + 2 * 16 + 1] == 0
    assert entries[0][4] == 6 + 16 * 3  # the first image right after the directory
    for (w, _, bpp, size, offset), source in zip(entries, [pngs[1], pngs[2], pngs[0]], strict=True):
        assert bpp == 32  # RGBA, 8 bits a channel
        assert data[offset:offset + size] == source.read_bytes(), f"the {w} px image"
    last = entries[-1]
    assert last[4] + last[3] == len(data)  # nothing after the last image


def test_the_committed_ico_has_the_six_windows_sizes() -> None:
    entries = parse_ico((ICONS / "hearth.ico").read_bytes())
    assert [w for w, *_ in entries] == [16, 32, 48, 64, 128, 256]


def test_images_the_format_cannot_hold_are_refused(tmp_path: Path) -> None:
    make_ico = script("make_ico")
    with pytest.raises(ValueError, match="256x256"):
        make_ico.ico_bytes([(ICONS / "hearth-512.png").read_bytes()])
    with pytest.raises(ValueError, match="not a PNG"):
        make_ico.ico_bytes([b"GIF89a" + bytes(40)])
    with pytest.raises(ValueError, match="at least one"):
        make_ico.ico_bytes([])


def test_makensis_gets_absolute_paths_and_every_define_before_the_script(tmp_path: Path) -> None:
    build = script("build_windows")
    cmd = build.makensis_command("makensis", Path("dist/hearth"), Path("dist/x.exe"), "1.2.3",
                                 Path("icon.ico"))
    assert cmd[0] == "makensis" and "-WX" in cmd
    assert cmd[-1] == str(WINDOWS / "hearth.nsi")
    defines = dict(arg[2:].split("=", 1) for arg in cmd if arg.startswith("-D"))
    assert set(defines) == {"PAYLOAD", "OUTFILE", "VERSION", "ICON"}
    assert defines["VERSION"] == "1.2.3"
    for name in ("PAYLOAD", "OUTFILE", "ICON"):
        assert Path(defines[name]).is_absolute()


def test_the_version_must_fit_the_windows_version_resource() -> None:
    build = script("build_windows")
    assert build.project_version('[project]\nversion = "0.1.0"\n') == "0.1.0"
    assert build.installer_name("0.1.0") == "Hearth-0.1.0-setup.exe"
    for bad in ("0.1", "0.1.0rc1", "1.2.3.4"):
        with pytest.raises(ValueError, match="three numbers"):
            build.project_version(f'[project]\nversion = "{bad}"\n')


def test_runtimes_follow_the_toolkits_present() -> None:
    build = script("build_windows")
    nvcc12 = "Cuda compilation tools, release 12.4, V12.4.131"
    assert build.runtime_kinds(None, None) == ["cpu"]
    assert build.runtime_kinds(nvcc12, None) == ["cpu", "cuda12"]
    assert build.runtime_kinds(nvcc12.replace("12.4", "13.0"), "C:\\VulkanSDK\\1.4") == \
        ["cpu", "cuda13", "vulkan"]
    # A toolkit without a runtime kind is not a reason to fail the whole build.
    assert build.runtime_kinds(nvcc12.replace("12.4", "11.8"), "") == ["cpu"]
