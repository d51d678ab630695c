#!/usr/bin/env python3
"""Build Hearth for macOS: ``dist/Hearth.app`` and ``dist/Hearth-<version>.dmg``.

    .venv/bin/python installers/macos/build_macos.py [--dist DIR] [--skip-runtime]

Run it on a Mac, in a checkout whose ``.venv`` (Python 3.11 or newer) has Hearth with its runner
extra and PyInstaller (``installers/freeze.py`` says how). Standard library only; any Python 3.11+
can run it, and it runs the project's other scripts with ``.venv/bin/python``. In order, it:

1. builds the runtime for this Mac with ``installers/build_runtime.py`` into ``.venv/runtimes``:
   ``metal`` on Apple Silicon, ``cpu`` on Intel (``--skip-runtime`` uses the one already there),
   compiled for the ``LSMinimumSystemVersion`` of ``Info.plist`` (``MACOSX_DEPLOYMENT_TARGET``);
2. writes ``installers/macos/Hearth.icns`` from ``resources/icons/hearth-*.png`` (and a 1024 px
   rendering of the SVG) with ``sips`` and ``iconutil``, for ``installers/hearth.spec`` to use;
   it is a build product and is deleted again at the end;
3. freezes the app: ``installers/freeze.py --dist DIR --runtimes <that runtime>``;
4. moves the data files that ended up among the code in ``Contents/MacOS`` or
   ``Contents/Frameworks`` (the runtimes' ``manifest.json``) to ``Contents/Resources`` and leaves
   a symbolic link: codesign could only keep their signatures in extended attributes there;
5. writes pyproject.toml's version into the built ``Contents/Info.plist`` (the source
   ``Info.plist`` holds placeholders), and raises ``LSMinimumSystemVersion`` there when a bundled
   library was built for a newer macOS than it says;
6. signs every piece of code inside out (libraries, framework versions, ``hearth-runner``, then
   the app, which signs ``hearth``), never with ``--deep``: with ``HEARTH_SIGN_IDENTITY`` using
   the hardened runtime, a secure timestamp and ``entitlements.plist`` on the two executables;
   without it ad hoc, because steps 3 to 5 changed the bundle after PyInstaller signed it, and
   Gatekeeper calls a downloaded app whose signature no longer matches "damaged" (no
   right-click → Open gets past that);
7. makes ``DIR/Hearth-<version>.dmg`` (the app and a link to /Applications) with ``hdiutil``;
8. with ``HEARTH_NOTARY_PROFILE``, has Apple notarize the disk image (``notarytool``) and
   staples the ticket to it.

Environment:
    HEARTH_SIGN_IDENTITY    a "Developer ID Application: Name (TEAMID)" identity in the keychain
                            (``security find-identity -v -p codesigning`` lists them)
    HEARTH_NOTARY_PROFILE   a notarytool keychain profile, stored once with
                            ``xcrun notarytool store-credentials <profile> --apple-id <id>
                            --team-id <TEAMID>``; needs HEARTH_SIGN_IDENTITY

Untested: written against Apple's and PyInstaller's documentation on Linux; no Mac was available.
The pure parts (command lines, icon set, signing order, Mach-O headers, refusing other systems)
are tested in tests/unit/test_macos_installer.py.
"""

from __future__ import annotations

import argparse
import json
import os
import plistlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "installers" / "macos"
INFO_PLIST = HERE / "Info.plist"
ENTITLEMENTS = HERE / "entitlements.plist"
ICNS = HERE / "Hearth.icns"  # installers/hearth.spec passes it to BUNDLE when it exists
ICONS = ROOT / "resources" / "icons"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

APP_NAME = "Hearth"
BUNDLE_ID = "io.github.hearth.Hearth"  # the same as Info.plist's; keychain items and TCC use it
MAIN_EXECUTABLE = "hearth"
ADHOC = "-"  # codesign's identity for an ad hoc signature (no certificate)

# The names iconutil requires in an .iconset folder and their pixel sizes: each point size at
# 1x and 2x (Apple's Human Interface Guidelines, "App icons", macOS).
ICONSET: tuple[tuple[str, int], ...] = tuple(
    (f"icon_{pt}x{pt}{suffix}.png", pt * scale)
    for pt in (16, 32, 128, 256, 512)
    for scale, suffix in ((1, ""), (2, "@2x"))
)

# Where a bundle keeps nested code (Apple TN2206, "Nested Code"); data files belong in Resources.
CODE_DIRS = ("MacOS", "Frameworks", "PlugIns", "Helpers", "XPCServices")

# Mach-O (<mach-o/loader.h>, <mach-o/fat.h>)
MH_MAGIC, MH_MAGIC_64 = 0xFEEDFACE, 0xFEEDFACF
FAT_MAGIC, FAT_MAGIC_64 = 0xCAFEBABE, 0xCAFEBABF
MH_EXECUTE, MH_DYLIB, MH_BUNDLE = 0x2, 0x6, 0x8
LC_VERSION_MIN_MACOSX, LC_BUILD_VERSION = 0x24, 0x32
PLATFORM_MACOS = 1

Version = tuple[int, int, int]


# ---------------------------------------------------------------------------------------------
# Versions


def project_version(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """``[project] version`` of pyproject.toml."""
    import tomllib  # here, so that an older python3 gets main()'s message, not an ImportError

    with pyproject.open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def bundle_version(version: str) -> str:
    """The version as CFBundleShortVersionString and CFBundleVersion want it: three integers
    separated by periods ("1.2.0rc1" gives "1.2.0", "2" gives "2.0.0")."""
    m = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version.strip())
    if m is None:
        raise ValueError(f"{version!r} does not start with a release number")
    return ".".join(str(int(part or 0)) for part in m.groups())


def parse_version(text: str) -> Version:
    """"13.3" as (13, 3, 0), so that versions of different lengths compare right."""
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]] + [0, 0, 0]
    return parts[0], parts[1], parts[2]


def format_version(version: Version) -> str:
    return ".".join(str(p) for p in (version if version[2] else version[:2]))


def stamp_info(info: dict[str, Any], version: str, newest_min_os: Version | None = None) -> dict[str, Any]:
    """A copy of an Info.plist dictionary with the version filled in, and its minimum macOS raised
    to ``newest_min_os`` when a bundled binary needs that newer one."""
    out = dict(info)
    out["CFBundleShortVersionString"] = out["CFBundleVersion"] = bundle_version(version)
    floor = parse_version(str(out.get("LSMinimumSystemVersion", "0")))
    if newest_min_os is not None and newest_min_os > floor:
        out["LSMinimumSystemVersion"] = format_version(newest_min_os)
    return out


# ---------------------------------------------------------------------------------------------
# Runtime and icon


def runtime_kind(machine: str) -> str:
    """The runtime to build for the machine type the app's Python runs as (``platform.machine()``)."""
    kinds = {"arm64": "metal", "x86_64": "cpu"}
    if machine not in kinds:
        raise ValueError(f"no runtime for a {machine!r} Mac")
    return kinds[machine]


def runtime_name(kind: str) -> str:
    """The folder build_runtime.py names a runtime of that kind."""
    return "cpu-portable" if kind == "cpu" else kind


def icon_px(png: Path) -> int | None:
    """The pixel size in a ``hearth-<size>.png`` name."""
    m = re.fullmatch(r"hearth-(\d+)\.png", png.name)
    return int(m.group(1)) if m else None


class IconsetEntry(NamedTuple):
    src: Path
    name: str  # the file name iconutil wants in the .iconset folder
    size: int  # its width and height in pixels


def iconset_plan(pngs: Iterable[Path]) -> list[IconsetEntry]:
    """Which PNG makes each of the ten .iconset files: the one of that size, else the smallest
    larger one (scaled down, it stays sharp), else the largest (scaled up, the last resort)."""
    by_size = {px: p for p in pngs if (px := icon_px(p)) is not None}
    if not by_size:
        raise ValueError("no hearth-<size>.png icons to make the icon set from")
    plan = []
    for name, size in ICONSET:
        larger = [px for px in by_size if px >= size]
        plan.append(IconsetEntry(by_size[min(larger) if larger else max(by_size)], name, size))
    return plan


def sips_command(src: Path, size: int, dest: Path) -> list[str]:
    return ["sips", "-z", str(size), str(size), str(src), "--out", str(dest)]


def iconutil_command(iconset: Path, icns: Path) -> list[str]:
    return ["iconutil", "-c", "icns", "-o", str(icns), str(iconset)]


def render_icon_command(python: Path, out_dir: Path, size: int = 1024) -> list[str]:
    """Render the SVG at ``size`` px with the venv's Qt (installers/render_icons.py): the PNGs in
    resources/icons stop at 512, and icon_512x512@2x wants 1024."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "import render_icons; render_icons.render(out=Path(sys.argv[2]), sizes=(int(sys.argv[3]),))")
    return [str(python), "-c", code, str(ROOT / "installers"), str(out_dir), str(size)]


# ---------------------------------------------------------------------------------------------
# Mach-O headers: which files are code, executables, and the macOS they were built for


@dataclass(frozen=True)
class MachO:
    filetype: int  # MH_EXECUTE, MH_DYLIB, MH_BUNDLE (a Python extension), …
    min_macos: Version | None  # from LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX; the newest slice's


def _thin_header(data: bytes) -> tuple[str, int, int, int] | None:
    """(byte order, header size, filetype, sizeofcmds) of a thin Mach-O header."""
    if len(data) < 28:
        return None
    for order in ("<", ">"):
        (magic,) = struct.unpack_from(order + "I", data)
        if magic in (MH_MAGIC, MH_MAGIC_64):
            _cpu, _sub, filetype, _ncmds, sizeofcmds = struct.unpack_from(order + "iiIII", data, 4)
            return order, (32 if magic == MH_MAGIC_64 else 28), filetype, sizeofcmds
    return None


def _fat_offsets(data: bytes) -> list[int] | None:
    """The offsets of a universal binary's slices; None if ``data`` does not start one."""
    if len(data) < 8:
        return None
    magic, count = struct.unpack_from(">II", data)
    # Java class files share 0xCAFEBABE; there the next word is a version, 45 or more.
    if magic not in (FAT_MAGIC, FAT_MAGIC_64) or not 0 < count < 32:
        return None
    entry, fmt = (20, ">I") if magic == FAT_MAGIC else (32, ">Q")
    if len(data) < 8 + entry * count:
        return None
    return [struct.unpack_from(fmt, data, 8 + entry * i + 8)[0] for i in range(count)]


def _min_macos(commands: bytes, order: str) -> Version | None:
    pos = 0
    while pos + 16 <= len(commands):
        cmd, size = struct.unpack_from(order + "II", commands, pos)
        if size < 8:
            break
        encoded = None
        if cmd == LC_BUILD_VERSION:
            platform, minos = struct.unpack_from(order + "II", commands, pos + 8)
            encoded = minos if platform == PLATFORM_MACOS else None
        elif cmd == LC_VERSION_MIN_MACOSX:
            (encoded,) = struct.unpack_from(order + "I", commands, pos + 8)
        if encoded is not None:  # X.Y.Z as xxxx.yy.zz nibbles
            return encoded >> 16, (encoded >> 8) & 0xFF, encoded & 0xFF
        pos += size
    return None


def parse_macho(read: Callable[[int, int], bytes]) -> MachO | None:
    """The Mach-O facts of a file read through ``read(offset, size)``; None if it is not code."""
    slices = _fat_offsets(read(0, 4096)) or [0]
    filetype: int | None = None
    newest: Version | None = None
    for offset in slices:
        header = _thin_header(read(offset, 32))
        if header is None:
            continue
        order, header_size, ftype, sizeofcmds = header
        filetype = ftype if filetype is None else filetype
        minos = _min_macos(read(offset + header_size, sizeofcmds), order)
        if minos is not None and (newest is None or minos > newest):
            newest = minos
    return None if filetype is None else MachO(filetype, newest)


def read_macho(path: Path) -> MachO | None:
    try:
        with path.open("rb") as f:
            def read(offset: int, size: int) -> bytes:
                f.seek(offset)
                return f.read(size)
            return parse_macho(read)
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------
# The bundle: misplaced data, the newest minimum macOS, what to sign in which order


def _files(root: Path) -> Iterator[Path]:
    """Regular files under ``root``, not following or yielding symbolic links."""
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            if not path.is_symlink() and path.is_file():
                yield path


def _in_framework(path: Path, top: Path) -> bool:
    return any(part.endswith(".framework") for part in path.relative_to(top).parts[:-1])


def misplaced_data(app: Path) -> list[Path]:
    """Non-code files in the bundle's code folders (outside framework bundles, which carry their
    own Resources). codesign would sign each in an extended attribute, which a zip file or a
    careless copy drops, breaking the app's signature (PyInstaller keeps data out for this)."""
    contents = app / "Contents"
    out = []
    for name in CODE_DIRS:
        for path in _files(contents / name):
            if not _in_framework(path, contents) and read_macho(path) is None:
                out.append(path)
    return out


def relocate_data(app: Path) -> list[tuple[Path, Path]]:
    """Move each misplaced data file to the same place under Contents/Resources and leave a
    relative symbolic link where it was (what PyInstaller's BUNDLE does with collected data), so
    ``Contents/MacOS/runtimes/metal/manifest.json`` still reads. Returns (link, file) pairs."""
    resources = app / "Contents" / "Resources"
    resources.mkdir(exist_ok=True)
    moved = []
    for path in misplaced_data(app):
        rel = path.relative_to(app / "Contents")
        # The same relative place: PyInstaller mirrors Frameworks/x as Resources/x in the same way.
        dest = resources / Path(*rel.parts[1:])
        existing = next(p for p in (dest.parent, *dest.parent.parents) if p.exists())
        if not existing.resolve().is_relative_to(resources.resolve()):
            # A folder PyInstaller linked from Resources back into the code: no move at all.
            raise SystemExit(f"cannot move {path} to {dest}: {existing} links out of Resources")
        if dest.exists() or dest.is_symlink():
            if dest.is_symlink() or dest.read_bytes() != path.read_bytes():
                raise SystemExit(f"cannot move {path} to {dest}: something else is there")
            path.unlink()
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
        path.symlink_to(os.path.relpath(dest, path.parent))
        moved.append((path, dest))
    return moved


def newest_min_macos(app: Path) -> tuple[Version, Path] | None:
    """The newest macOS any binary in the bundle was built for, and that binary."""
    newest: tuple[Version, Path] | None = None
    for path in _files(app):
        info = read_macho(path)
        if info is not None and info.min_macos is not None and (newest is None or info.min_macos > newest[0]):
            newest = (info.min_macos, path)
    return newest


def _framework_version(binary: Path) -> Path | None:
    """The framework folder to sign for a framework's own binary (``X.framework/Versions/A/X``
    gives ``X.framework/Versions/A``, as TN2206 says to sign a version, not the framework)."""
    folder = binary.parent
    if folder.parent.name == "Versions" and folder.parent.parent.name == f"{binary.name}.framework":
        return folder
    if folder.name == f"{binary.name}.framework":  # a shallow framework
        return folder
    return None


@dataclass(frozen=True)
class Signing:
    path: Path
    executable: bool  # gets the entitlements (Apple: entitlements go on executables only)


def signing_plan(app: Path, main_executable: str = MAIN_EXECUTABLE) -> list[Signing]:
    """Everything in ``app`` to sign, in order: whatever lies inside something is signed before
    it (deepest path first), framework binaries as their version folder, and the app last, which
    signs its main executable. The inside-out order ``--deep`` would take, without ``--deep``:
    Apple advises against it for signing, since it gives every nested piece the same options
    and entitlements."""
    main = app / "Contents" / "MacOS" / main_executable
    items: dict[Path, Signing] = {}
    for path in _files(app):
        info = read_macho(path)
        if info is None or path == main:
            continue
        version = _framework_version(path)
        if version is not None:
            items[version] = Signing(version, False)
        else:
            items[path] = Signing(path, info.filetype == MH_EXECUTE)
    ordered = sorted(items.values(), key=lambda s: (-len(s.path.parts), str(s.path)))
    return [*ordered, Signing(app, True)]


# ---------------------------------------------------------------------------------------------
# Command lines


def codesign_command(identity: str, entitlements: Path | None, path: Path) -> list[str]:
    """Sign one piece of code, replacing the signature it has (PyInstaller's ad hoc one)."""
    cmd = ["codesign", "--force", "--sign", identity]
    if identity != ADHOC:
        # Notarization requires the hardened runtime and a secure timestamp on all code.
        cmd += ["--timestamp", "--options", "runtime"]
    if entitlements is not None:
        cmd += ["--entitlements", str(entitlements)]
    return [*cmd, str(path)]


def sign_commands(plan: Sequence[Signing], identity: str,
                  entitlements: Path = ENTITLEMENTS) -> list[list[str]]:
    """codesign for each step of the plan. Ad hoc signing gets no entitlements: they only relax
    the hardened runtime, which an ad hoc signature does not turn on."""
    return [codesign_command(identity, entitlements if s.executable and identity != ADHOC else None, s.path)
            for s in plan]


def dmg_sign_command(identity: str, dmg: Path) -> list[str]:
    """A disk image is signed like code but has no runtime or entitlements; Apple recommends
    signing it so that Gatekeeper can check where it came from before it is opened."""
    return ["codesign", "--force", "--sign", identity, "--timestamp", str(dmg)]


def verify_command(app: Path) -> list[str]:
    # --deep is fine when verifying: it checks every nested signature, changing nothing.
    return ["codesign", "--verify", "--deep", "--strict", "--verbose=2", str(app)]


def dmg_command(staging: Path, dmg: Path, volname: str = APP_NAME) -> list[str]:
    """A compressed (zlib) read-only disk image of ``staging``, replacing ``dmg``."""
    return ["hdiutil", "create", "-volname", volname, "-srcfolder", str(staging), "-ov",
            "-format", "UDZO", str(dmg)]


def notarize_commands(dmg: Path, profile: str) -> list[list[str]]:
    """Submit the disk image and wait for Apple's verdict, then staple the ticket to it (so
    Gatekeeper accepts it offline too)."""
    return [
        ["xcrun", "notarytool", "submit", str(dmg), "--keychain-profile", profile, "--wait",
         "--output-format", "json"],
        ["xcrun", "stapler", "staple", str(dmg)],
    ]


def notary_result(output: str) -> tuple[str, str]:
    """(status, submission id) from ``notarytool submit --output-format json``; its exit status
    alone does not say that the submission was accepted."""
    for text in [output, *reversed(output.splitlines())]:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict):
            return str(data.get("status", "")), str(data.get("id", ""))
    return "", ""


def runtime_command(python: Path, kind: str, out: Path) -> list[str]:
    return [str(python), str(ROOT / "installers" / "build_runtime.py"), kind, "--out", str(out),
            "--python", str(python)]


def freeze_command(python: Path, dist: Path, runtime: str) -> list[str]:
    # Only this runtime: .venv/runtimes may hold others built for development.
    return [str(python), str(ROOT / "installers" / "freeze.py"), "--dist", str(dist), "--runtimes", runtime]


def missing_tools(names: Iterable[str], which: Callable[[str], str | None] = shutil.which) -> list[str]:
    return [n for n in names if which(n) is None]


# ---------------------------------------------------------------------------------------------
# The build


def run(cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(list(cmd), check=True, text=True, **kwargs)


def make_icns(python: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pngs = sorted(ICONS.glob("hearth-*.png"))
        rendered = Path(tmp) / "rendered"
        rendered.mkdir()
        try:
            run(render_icon_command(python, rendered), capture_output=True)
            pngs += sorted(rendered.glob("hearth-*.png"))
        except subprocess.CalledProcessError as exc:
            print(f"Could not render the 1024 px icon ({exc.stderr.strip()[-300:]}); scaling "
                  "the 512 px one up instead.", flush=True)
        iconset = Path(tmp) / f"{APP_NAME}.iconset"
        iconset.mkdir()
        for src, name, size in iconset_plan(pngs):
            if icon_px(src) == size:
                shutil.copyfile(src, iconset / name)
            else:
                run(sips_command(src, size, iconset / name), capture_output=True)
        run(iconutil_command(iconset, out))


def sign(app: Path, identity: str, main_executable: str) -> None:
    # Finder info and resource forks make codesign fail ("detritus not allowed"). Best effort:
    # macOS refuses to remove some attributes (com.apple.provenance), which codesign ignores.
    print(f"$ xattr -cr {app}", flush=True)
    subprocess.run(["xattr", "-cr", str(app)], check=False)
    for cmd in sign_commands(signing_plan(app, main_executable), identity):
        run(cmd)
    run(verify_command(app))


def make_dmg(app: Path, dmg: Path) -> None:
    staging = dmg.parent / "dmg-staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        # ditto keeps symbolic links, modes and extended attributes, as the signature needs.
        run(["ditto", str(app), str(staging / app.name)])
        (staging / "Applications").symlink_to("/Applications")  # drag the app onto it to install
        run(dmg_command(staging, dmg))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def notarize(dmg: Path, profile: str) -> None:
    submit, staple = notarize_commands(dmg, profile)
    out = run(submit, capture_output=True).stdout
    status, submission = notary_result(out)
    if status != "Accepted":
        raise SystemExit(f"Notarization ended with status {status or 'unknown'!r}:\n{out}\n"
                         f"The reasons: xcrun notarytool log {submission or '<id>'} --keychain-profile "
                         f"{profile}")
    run(staple)
    run(["xcrun", "stapler", "validate", str(dmg)])


def build(dist: Path, skip_runtime: bool, identity: str, profile: str) -> list[str]:
    """The whole build; returns what was skipped, for the summary."""
    skipped: list[str] = []
    python = VENV_PYTHON
    with INFO_PLIST.open("rb") as f:
        min_os = str(plistlib.load(f)["LSMinimumSystemVersion"])
    # CMake and clang take it from the environment: without it they build for the macOS running
    # the build, and the runtime would refuse to load on anything older.
    env = dict(os.environ, MACOSX_DEPLOYMENT_TARGET=min_os)
    version = project_version()
    machine = run([str(python), "-c", "import platform; print(platform.machine())"],
                  capture_output=True).stdout.strip()
    kind = runtime_kind(machine)
    if skip_runtime:
        skipped.append(f"building the {kind} runtime (--skip-runtime): the one in .venv/runtimes went in")
    else:
        run(runtime_command(python, kind, ROOT / ".venv" / "runtimes"), cwd=ROOT, env=env)

    had_icns = ICNS.exists()
    try:
        make_icns(python, ICNS)
        run(freeze_command(python, dist, runtime_name(kind)), cwd=ROOT, env=env)
    finally:
        if not had_icns:
            ICNS.unlink(missing_ok=True)  # a build product; the tree stays as it was

    app = dist / f"{APP_NAME}.app"
    for exe in (MAIN_EXECUTABLE, "hearth-runner", "hearth-server"):
        if not (app / "Contents" / "MacOS" / exe).is_file():
            raise SystemExit(f"{app} has no Contents/MacOS/{exe}: the spec did not make the expected app")
    for link, dest in relocate_data(app):
        print(f"Moved {link.relative_to(app)} to {dest.relative_to(app)} (a link stays)", flush=True)

    info_path = app / "Contents" / "Info.plist"
    with info_path.open("rb") as f:
        info = plistlib.load(f)
    info.setdefault("LSMinimumSystemVersion", min_os)  # in case the spec left it out
    newest = newest_min_macos(app)
    stamped = stamp_info(info, version, newest[0] if newest else None)
    if stamped["LSMinimumSystemVersion"] != info.get("LSMinimumSystemVersion") and newest is not None:
        print(f"LSMinimumSystemVersion raised to {stamped['LSMinimumSystemVersion']}: "
              f"{newest[1].relative_to(app)} was built for it. To keep {min_os}, rebuild that with "
              f"MACOSX_DEPLOYMENT_TARGET={min_os} set: pip's cached wheels, and the runtime cache in "
              "~/.cache/hearth/runtimes, whose key does not include it (or build on an older macOS).",
              flush=True)
    with info_path.open("wb") as f:
        plistlib.dump(stamped, f)

    sign(app, identity, str(stamped.get("CFBundleExecutable", MAIN_EXECUTABLE)))
    if identity == ADHOC:
        skipped.append("signing with a Developer ID (HEARTH_SIGN_IDENTITY unset): the app is signed "
                       "ad hoc. A downloaded copy is blocked by Gatekeeper: open it with right-click → "
                       "Open (macOS 15 and later: try once, then System Settings → Privacy & Security → "
                       "Open Anyway)")

    dmg = dist / f"{APP_NAME}-{version}.dmg"
    make_dmg(app, dmg)
    if identity != ADHOC:
        run(dmg_sign_command(identity, dmg))
    if profile:
        notarize(dmg, profile)
    else:
        skipped.append("notarization (HEARTH_NOTARY_PROFILE unset)")
    print(f"Built {app} and {dmg} ({dmg.stat().st_size / 1e6:.0f} MB), version {version}, "
          f"minimum macOS {stamped['LSMinimumSystemVersion']}", flush=True)
    return skipped


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_macos.py", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist)")
    parser.add_argument("--skip-runtime", action="store_true",
                        help="use the runtime already in .venv/runtimes instead of building it")
    args = parser.parse_args(argv)
    if sys.version_info < (3, 11):  # noqa: UP036 (macOS's own python3 is 3.9)
        print(f"build_macos.py needs Python 3.11 or newer (this is {sys.version.split()[0]}): run it "
              "with .venv/bin/python.", file=sys.stderr)
        return 2
    if sys.platform != "darwin":
        print(f"build_macos.py builds the macOS app and runs only on macOS (this is {sys.platform}): "
              "it needs Apple's codesign, iconutil, sips and hdiutil. On Linux or Windows use "
              "installers/linux/build_deb.py or installers/windows/build_windows.py.", file=sys.stderr)
        return 2
    identity = os.environ.get("HEARTH_SIGN_IDENTITY", "").strip() or ADHOC
    profile = os.environ.get("HEARTH_NOTARY_PROFILE", "").strip()
    if profile and identity == ADHOC:
        print("HEARTH_NOTARY_PROFILE needs HEARTH_SIGN_IDENTITY too: Apple notarizes only code "
              "signed with a Developer ID.", file=sys.stderr)
        return 2
    tools = ["codesign", "iconutil", "sips", "hdiutil", "ditto", "xattr"]
    tools += [] if args.skip_runtime else ["cmake"]
    tools += ["xcrun"] if profile else []
    missing = missing_tools(tools)
    if missing:
        print(f"Missing: {', '.join(missing)}. Install the Xcode command line tools "
              "(xcode-select --install) and CMake (cmake.org, or brew install cmake).", file=sys.stderr)
        return 2
    if not VENV_PYTHON.exists():
        print(f"No {VENV_PYTHON}: set up the virtual environment first (installers/freeze.py says "
              "what it needs: Hearth with the runner extra, and PyInstaller).", file=sys.stderr)
        return 2
    try:
        skipped = build(args.dist.resolve(), args.skip_runtime, identity, profile)
    except subprocess.CalledProcessError as exc:
        print(f"Failed: {' '.join(map(str, exc.cmd))} exited with {exc.returncode}"
              + (f"\n{exc.stderr.strip()}" if exc.stderr else ""), file=sys.stderr)
        return 1
    for step in skipped:
        print(f"Skipped: {step}.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
