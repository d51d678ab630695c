"""The macOS installer pieces that can be checked without a Mac: Info.plist, the entitlements and
the pure parts of installers/macos/build_macos.py (icon set, signing order, command lines)."""

from __future__ import annotations

import plistlib
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.fixtures.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
MACOS = ROOT / "installers" / "macos"
IDENTITY = "Developer ID Application: Example (ABCDE12345)"

# What iconutil requires in an .iconset folder, written out here rather than taken from the script.
ICONSET = {
    "icon_16x16.png": 16, "icon_16x16@2x.png": 32,
    "icon_32x32.png": 32, "icon_32x32@2x.png": 64,
    "icon_128x128.png": 128, "icon_128x128@2x.png": 256,
    "icon_256x256.png": 256, "icon_256x256@2x.png": 512,
    "icon_512x512.png": 512, "icon_512x512@2x.png": 1024,
}


@pytest.fixture(scope="module")
def bm() -> ModuleType:
    return load_script("macos/build_macos.py")


def load_plist(name: str) -> dict[str, Any]:
    with (MACOS / name).open("rb") as f:
        data = plistlib.load(f)
    assert isinstance(data, dict)
    return data


# --- Info.plist and entitlements ------------------------------------------------------------


def test_info_plist_has_the_keys_an_app_needs_with_the_right_types(bm: ModuleType) -> None:
    info = load_plist("Info.plist")
    types = {
        "CFBundleName": str, "CFBundleDisplayName": str, "CFBundleIdentifier": str,
        "CFBundleExecutable": str, "CFBundleIconFile": str, "CFBundlePackageType": str,
        "CFBundleShortVersionString": str, "CFBundleVersion": str, "LSMinimumSystemVersion": str,
        "NSHighResolutionCapable": bool, "LSApplicationCategoryType": str,
        "NSHumanReadableCopyright": str, "NSRequiresAquaSystemAppearance": bool,
        "LSBackgroundOnly": bool,
    }
    for key, kind in types.items():
        assert isinstance(info.get(key), kind), key
    assert info["CFBundleExecutable"] == "hearth"  # the GUI; the runner is its helper
    assert info["CFBundleName"] == info["CFBundleDisplayName"] == "Hearth"
    assert info["CFBundleIdentifier"] == bm.BUNDLE_ID == "io.github.hearth.Hearth"
    assert info["CFBundleIconFile"] == "Hearth.icns" == bm.ICNS.name
    assert info["CFBundlePackageType"] == "APPL"
    assert info["LSApplicationCategoryType"] == "public.app-category.productivity"
    assert info["NSHighResolutionCapable"] is True
    assert info["NSRequiresAquaSystemAppearance"] is False  # dark mode
    # PyInstaller sets LSBackgroundOnly=true when the last EXE is a console one (the runner).
    assert info["LSBackgroundOnly"] is False
    for key in ("CFBundleShortVersionString", "CFBundleVersion"):
        assert bm.bundle_version(info[key]) == info[key]
    assert bm.parse_version(info["LSMinimumSystemVersion"]) >= (13, 0, 0)


def test_entitlements_relax_only_what_ctypes_and_foreign_runtimes_need() -> None:
    ent = load_plist("entitlements.plist")
    assert ent == {
        "com.apple.security.cs.allow-unsigned-executable-memory": True,
        "com.apple.security.cs.disable-library-validation": True,
    }
    assert not any("sandbox" in key for key in ent)  # models anywhere, a runner process


# --- versions -------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "expected"), [
    ("0.1.0", "0.1.0"), ("1.2", "1.2.0"), ("2", "2.0.0"), ("1.2.0rc1", "1.2.0"),
    ("0.3.0.dev4", "0.3.0"), ("10.20.30", "10.20.30"),
])
def test_bundle_versions_are_three_integers(bm: ModuleType, version: str, expected: str) -> None:
    assert bm.bundle_version(version) == expected


def test_a_version_without_a_number_is_refused(bm: ModuleType) -> None:
    with pytest.raises(ValueError):
        bm.bundle_version("dev")


def test_stamping_fills_the_version_and_only_raises_the_minimum_macos(bm: ModuleType) -> None:
    info = {"CFBundleShortVersionString": "0.1.0", "CFBundleVersion": "0.1.0",
            "LSMinimumSystemVersion": "13.3", "CFBundleExecutable": "hearth"}
    out = bm.stamp_info(info, "1.4.2")
    assert out["CFBundleShortVersionString"] == out["CFBundleVersion"] == "1.4.2"
    assert out["LSMinimumSystemVersion"] == "13.3" and out["CFBundleExecutable"] == "hearth"
    assert info["CFBundleVersion"] == "0.1.0"  # a copy
    assert bm.stamp_info(info, "1.4.2", (14, 0, 0))["LSMinimumSystemVersion"] == "14.0"
    assert bm.stamp_info(info, "1.4.2", (13, 3, 1))["LSMinimumSystemVersion"] == "13.3.1"
    assert bm.stamp_info(info, "1.4.2", (11, 0, 0))["LSMinimumSystemVersion"] == "13.3"
    assert bm.stamp_info(info, "1.4.2", (13, 3, 0))["LSMinimumSystemVersion"] == "13.3"


def test_the_project_version_comes_from_pyproject(bm: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "hearth"\nversion = "2.3.4"\n')
    assert bm.project_version(tmp_path / "pyproject.toml") == "2.3.4"
    assert bm.bundle_version(bm.project_version())  # the real one is usable


# --- runtime and icon -----------------------------------------------------------------------


def test_the_runtime_fits_the_mac(bm: ModuleType) -> None:
    assert bm.runtime_kind("arm64") == "metal"
    assert bm.runtime_kind("x86_64") == "cpu"
    with pytest.raises(ValueError):
        bm.runtime_kind("ppc")
    assert bm.runtime_name("metal") == "metal"
    assert bm.runtime_name("cpu") == "cpu-portable"  # the folder build_runtime.py makes
    cmd = bm.freeze_command(Path("/py"), Path("/d"), "metal")
    assert cmd[1].endswith("installers/freeze.py")
    assert cmd[cmd.index("--dist") + 1] == "/d" and cmd[cmd.index("--runtimes") + 1] == "metal"
    cmd = bm.runtime_command(Path("/py"), "metal", Path("/out"))
    assert cmd[1].endswith("installers/build_runtime.py") and cmd[2] == "metal"
    assert cmd[cmd.index("--out") + 1] == "/out"


def test_the_iconset_plan_makes_every_required_file_from_the_repository_icons(bm: ModuleType) -> None:
    pngs = sorted((ROOT / "resources" / "icons").glob("hearth-*.png"))
    plan = bm.iconset_plan(pngs)
    assert {e.name: e.size for e in plan} == ICONSET
    assert len(plan) == len(ICONSET)
    for src, name, size in plan:
        src_px = bm.icon_px(src)
        if size <= 512:
            assert src_px == size, name  # every size up to 512 is in the repository
        else:
            assert src_px == 512, name  # 1024 only by scaling the largest up


def test_the_iconset_plan_prefers_an_exact_then_a_larger_icon(bm: ModuleType) -> None:
    plan = {e.name: e for e in bm.iconset_plan(
        [Path("hearth-48.png"), Path("hearth-256.png"), Path("hearth-1024.png"), Path("other.png")])}
    assert plan["icon_16x16.png"].src.name == "hearth-48.png"  # scaled down, not up
    assert plan["icon_32x32@2x.png"].src.name == "hearth-256.png"
    assert plan["icon_256x256.png"].src.name == "hearth-256.png"
    assert plan["icon_512x512@2x.png"].src.name == "hearth-1024.png"
    with pytest.raises(ValueError):
        bm.iconset_plan([Path("other.png")])


def test_icon_commands(bm: ModuleType) -> None:
    assert bm.sips_command(Path("a.png"), 64, Path("b.png")) == [
        "sips", "-z", "64", "64", "a.png", "--out", "b.png"]
    assert bm.iconutil_command(Path("H.iconset"), Path("H.icns")) == [
        "iconutil", "-c", "icns", "-o", "H.icns", "H.iconset"]


# --- Mach-O headers -------------------------------------------------------------------------


def encode(version: tuple[int, int, int]) -> int:
    return (version[0] << 16) | (version[1] << 8) | version[2]


def macho(filetype: int, minos: tuple[int, int, int] | None = (13, 3, 0), order: str = "<",
          old_style: bool = False) -> bytes:
    """A 64-bit Mach-O header with one load command saying the macOS it was built for."""
    if minos is None:
        cmds = struct.pack(order + "II16s", 0x19, 24, b"__TEXT")[:24]  # an unrelated command
    elif old_style:
        cmds = struct.pack(order + "IIII", 0x24, 16, encode(minos), encode((14, 0, 0)))
    else:
        cmds = struct.pack(order + "IIIIII", 0x32, 24, 1, encode(minos), encode((15, 0, 0)), 0)
    header = struct.pack(order + "IiiIIIII", 0xFEEDFACF, 0x0100000C, 0, filetype, 1, len(cmds), 0, 0)
    return header + cmds + b"\0" * 64


def fat(*slices: bytes) -> bytes:
    out = bytearray(struct.pack(">II", 0xCAFEBABE, len(slices)))
    offsets = [4096 * (i + 1) for i in range(len(slices))]
    for off, s in zip(offsets, slices, strict=True):
        out += struct.pack(">iiIII", 0x0100000C, 0, off, len(s), 12)
    for off, s in zip(offsets, slices, strict=True):
        out += b"\0" * (off - len(out)) + s
    return bytes(out)


def parse(bm: ModuleType, data: bytes) -> Any:
    return bm.parse_macho(lambda offset, size: data[offset:offset + size])


def test_mach_o_headers_say_the_kind_of_code_and_its_macos(bm: ModuleType) -> None:
    exe = parse(bm, macho(bm.MH_EXECUTE, (13, 3, 0)))
    assert exe.filetype == bm.MH_EXECUTE and exe.min_macos == (13, 3, 0)
    assert parse(bm, macho(bm.MH_DYLIB, (14, 2, 1), order=">")).min_macos == (14, 2, 1)
    assert parse(bm, macho(bm.MH_BUNDLE, (11, 0, 0), old_style=True)).min_macos == (11, 0, 0)
    assert parse(bm, macho(bm.MH_DYLIB, None)).min_macos is None
    universal = parse(bm, fat(macho(bm.MH_DYLIB, (11, 0, 0)), macho(bm.MH_DYLIB, (13, 3, 0))))
    assert universal.filetype == bm.MH_DYLIB and universal.min_macos == (13, 3, 0)


def test_data_is_not_mach_o(bm: ModuleType) -> None:
    assert parse(bm, b'{"name": "metal"}\n') is None
    assert parse(bm, b"") is None
    assert parse(bm, b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\0" * 100) is None  # a Java class


# --- the bundle: data relocation and signing order ------------------------------------------


def fake_app(root: Path, bm: ModuleType) -> Path:
    """What PyInstaller's BUNDLE and freeze.py make, in miniature."""
    app = root / "Hearth.app"
    c = app / "Contents"
    files = {
        c / "MacOS" / "hearth": macho(bm.MH_EXECUTE),
        c / "MacOS" / "hearth-runner": macho(bm.MH_EXECUTE),
        c / "MacOS" / "runtimes" / "metal" / "manifest.json": b'{"name": "metal"}\n',
        c / "MacOS" / "runtimes" / "metal" / "lib" / "libllama.dylib": macho(bm.MH_DYLIB, (14, 0, 0)),
        c / "MacOS" / "runtimes" / "metal" / "lib" / "libggml-metal.so": macho(bm.MH_BUNDLE),
        c / "Frameworks" / "libpython3.11.dylib": macho(bm.MH_DYLIB, (10, 9, 0)),
        c / "Frameworks" / "PySide6" / "QtCore.abi3.so": macho(bm.MH_BUNDLE),
        c / "Frameworks" / "QtCore.framework" / "Versions" / "A" / "QtCore": macho(bm.MH_DYLIB),
        c / "Frameworks" / "QtCore.framework" / "Versions" / "A" / "Resources" / "Info.plist": b"<plist/>",
        # code nested in a framework: signed before the framework that seals it
        c / "Frameworks" / "QtCore.framework" / "Versions" / "A" / "Libraries" / "libextra.dylib":
            macho(bm.MH_DYLIB),
        c / "Resources" / "Hearth.icns": b"icns",
        c / "Resources" / "base_library.zip": b"PK",
        c / "Info.plist": b"<plist/>",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    fw = c / "Frameworks" / "QtCore.framework"
    (fw / "Versions" / "Current").symlink_to("A")
    (fw / "QtCore").symlink_to("Versions/Current/QtCore")
    (fw / "Resources").symlink_to("Versions/Current/Resources")
    (c / "MacOS" / "runtimes" / "metal" / "lib" / "libllama.0.dylib").symlink_to("libllama.dylib")
    (c / "Frameworks" / "base_library.zip").symlink_to("../Resources/base_library.zip")
    return app


def test_data_among_the_code_moves_to_resources_behind_a_link(bm: ModuleType, tmp_path: Path) -> None:
    app = fake_app(tmp_path, bm)
    manifest = app / "Contents" / "MacOS" / "runtimes" / "metal" / "manifest.json"
    assert bm.misplaced_data(app) == [manifest]  # not the framework's Info.plist, not the links
    moved = bm.relocate_data(app)
    dest = app / "Contents" / "Resources" / "runtimes" / "metal" / "manifest.json"
    assert moved == [(manifest, dest)]
    assert manifest.is_symlink() and not Path(manifest.readlink()).is_absolute()
    assert manifest.read_text() == '{"name": "metal"}\n' == dest.read_text()
    assert not dest.is_symlink()
    assert bm.misplaced_data(app) == []
    assert bm.relocate_data(app) == []  # again: nothing to do
    assert not (app / "Contents" / "MacOS" / "runtimes" / "metal" / "lib" / "libllama.dylib").is_symlink()


def test_data_is_not_moved_into_a_folder_that_links_back_into_the_code(
        bm: ModuleType, tmp_path: Path) -> None:
    app = fake_app(tmp_path, bm)
    (app / "Contents" / "Resources" / "runtimes").symlink_to("../MacOS/runtimes")
    with pytest.raises(SystemExit, match="links out of Resources"):
        bm.relocate_data(app)
    assert not (app / "Contents" / "MacOS" / "runtimes" / "metal" / "manifest.json").is_symlink()


def test_signing_goes_inside_out_without_the_main_executable_and_the_app_last(
        bm: ModuleType, tmp_path: Path) -> None:
    app = fake_app(tmp_path, bm)
    plan = bm.signing_plan(app)
    c = app / "Contents"
    expected = {
        c / "MacOS" / "hearth-runner": True,
        c / "MacOS" / "runtimes" / "metal" / "lib" / "libllama.dylib": False,
        c / "MacOS" / "runtimes" / "metal" / "lib" / "libggml-metal.so": False,
        c / "Frameworks" / "libpython3.11.dylib": False,
        c / "Frameworks" / "PySide6" / "QtCore.abi3.so": False,
        c / "Frameworks" / "QtCore.framework" / "Versions" / "A": False,  # the version, as TN2206 says
        c / "Frameworks" / "QtCore.framework" / "Versions" / "A" / "Libraries" / "libextra.dylib": False,
    }
    assert {s.path: s.executable for s in plan[:-1]} == expected
    assert len(plan) == len(expected) + 1  # nothing twice, no symbolic link
    assert (plan[-1].path, plan[-1].executable) == (app, True)
    nested = 0
    for i, outer in enumerate(plan):
        for inner in plan[i + 1:]:
            assert outer.path not in inner.path.parents, f"{outer.path} signed before {inner.path}"
            nested += inner.path in outer.path.parents
    assert nested == len(expected) + 1  # the app holds everything; the framework its library


def test_the_newest_minimum_macos_in_the_bundle_is_found(bm: ModuleType, tmp_path: Path) -> None:
    app = fake_app(tmp_path, bm)
    version, path = bm.newest_min_macos(app)
    assert version == (14, 0, 0) and path.name == "libllama.dylib"


# --- command lines --------------------------------------------------------------------------


def test_codesign_uses_the_hardened_runtime_the_entitlements_and_never_deep(bm: ModuleType) -> None:
    target = Path("/dist/Hearth.app/Contents/MacOS/hearth-runner")
    cmd = bm.codesign_command(IDENTITY, bm.ENTITLEMENTS, target)
    assert cmd[0] == "codesign" and cmd[-1] == str(target)
    assert cmd[cmd.index("--sign") + 1] == IDENTITY
    assert cmd[cmd.index("--options") + 1] == "runtime"
    assert cmd[cmd.index("--entitlements") + 1] == str(MACOS / "entitlements.plist")
    assert "--timestamp" in cmd and "--force" in cmd
    assert not any(arg.startswith("--deep") for arg in cmd)
    adhoc = bm.codesign_command("-", None, target)
    assert adhoc[adhoc.index("--sign") + 1] == "-"
    assert "--timestamp" not in adhoc and "--entitlements" not in adhoc


def test_only_the_executables_get_the_entitlements(bm: ModuleType, tmp_path: Path) -> None:
    plan = bm.signing_plan(fake_app(tmp_path, bm))
    cmds = bm.sign_commands(plan, IDENTITY)
    assert len(cmds) == len(plan)
    for step, cmd in zip(plan, cmds, strict=True):
        assert ("--entitlements" in cmd) == step.executable, step.path
        assert cmd[cmd.index("--options") + 1] == "runtime" and "--deep" not in cmd
    assert all("--entitlements" not in cmd for cmd in bm.sign_commands(plan, "-"))


def test_dmg_and_notarization_commands(bm: ModuleType) -> None:
    staging, dmg = Path("/dist/dmg-staging"), Path("/dist/Hearth-0.1.0.dmg")
    cmd = bm.dmg_command(staging, dmg)
    assert cmd[:2] == ["hdiutil", "create"] and cmd[-1] == str(dmg)
    assert cmd[cmd.index("-volname") + 1] == "Hearth"
    assert cmd[cmd.index("-srcfolder") + 1] == str(staging)
    assert cmd[cmd.index("-format") + 1] == "UDZO" and "-ov" in cmd
    submit, staple = bm.notarize_commands(dmg, "hearth-notary")
    assert submit[:4] == ["xcrun", "notarytool", "submit", str(dmg)]
    assert submit[submit.index("--keychain-profile") + 1] == "hearth-notary" and "--wait" in submit
    assert staple == ["xcrun", "stapler", "staple", str(dmg)]
    assert bm.verify_command(Path("/a.app"))[:2] == ["codesign", "--verify"]
    signed = bm.dmg_sign_command(IDENTITY, dmg)
    assert signed[signed.index("--sign") + 1] == IDENTITY and signed[-1] == str(dmg)
    assert "--timestamp" in signed and "--entitlements" not in signed and "--deep" not in signed


def test_the_notary_verdict_is_read_from_its_json(bm: ModuleType) -> None:
    out = '{"id": "2efe2717-52ef-43a5-96dc-0797e4ca1041", "status": "Accepted", "message": "ok"}\n'
    assert bm.notary_result(out) == ("Accepted", "2efe2717-52ef-43a5-96dc-0797e4ca1041")
    assert bm.notary_result('Waiting…\n{"id": "x", "status": "Invalid"}')[0] == "Invalid"
    assert bm.notary_result("no json here") == ("", "")


def test_missing_tools_are_named(bm: ModuleType) -> None:
    assert bm.missing_tools(["codesign", "cmake"], which=lambda n: None if n == "cmake" else n) == ["cmake"]


# --- refusing to run elsewhere --------------------------------------------------------------


def no_commands(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"ran a command: {args}")


def test_it_refuses_to_run_on_linux(bm: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(subprocess, "run", no_commands)
    monkeypatch.setattr(subprocess, "check_call", no_commands)
    assert bm.main([]) == 2
    err = capsys.readouterr().err
    assert "only on macOS" in err and "linux" in err


def test_notarizing_without_a_signing_identity_is_refused(bm: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(subprocess, "run", no_commands)
    monkeypatch.setenv("HEARTH_NOTARY_PROFILE", "hearth-notary")
    monkeypatch.delenv("HEARTH_SIGN_IDENTITY", raising=False)
    assert bm.main([]) == 2
    assert "HEARTH_SIGN_IDENTITY" in capsys.readouterr().err
