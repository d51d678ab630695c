#!/usr/bin/env python3
"""Pack the icon's PNG sizes into resources/icons/hearth.ico for Windows.

    python3 installers/windows/make_ico.py            # hearth-{16..256}.png -> hearth.ico
    python3 installers/windows/make_ico.py --out X.ico A.png B.png ...

Run it after installers/render_icons.py and commit the .ico with the PNGs. An ICO file is a
6-byte header, one 16-byte directory entry per image, then the images; since Windows Vista an
image may be a whole PNG file, so the PNGs are stored as they are (no pixel conversion, no
Pillow). Standard library only: it runs on a bare Python on the Windows build machine.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path
from typing import NamedTuple

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
# What Windows asks for: 16/32 in lists and menus, 48 in Explorer, 256 for large icons and
# high-DPI screens. 512 is past the format's limit (one byte per side, 0 meaning 256).
SIZES = (16, 32, 48, 64, 128, 256)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HEADER = struct.Struct("<HHH")  # reserved (0), type (1 = icon), image count
ENTRY = struct.Struct("<BBBBHHII")  # width, height, colours, reserved, planes, bpp, size, offset
MAX_SIDE = 256
# PNG colour type -> channels: grey, RGB, palette, grey+alpha, RGBA.
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


# A NamedTuple, not a dataclass: build_windows.py and the tests load this file by its path,
# without a sys.modules entry, which dataclasses need.
class PngInfo(NamedTuple):
    """What an ICO directory entry says about a PNG: its size and bits per pixel."""

    width: int
    height: int
    bits_per_pixel: int


def png_info(data: bytes) -> PngInfo:
    """Width, height and bits per pixel from a PNG's IHDR chunk (always the first chunk)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG file (bad signature)")
    # Signature (8), chunk length (4), chunk type (4), then the IHDR fields.
    if data[12:16] != b"IHDR" or len(data) < 26:
        raise ValueError("not a PNG file (no IHDR chunk first)")
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    if colour not in CHANNELS:
        raise ValueError(f"unknown PNG colour type {colour}")
    return PngInfo(width, height, depth * CHANNELS[colour])


def ico_bytes(pngs: list[bytes]) -> bytes:
    """An ICO file holding each PNG unchanged, smallest first (the order Windows' own icons use)."""
    if not pngs:
        raise ValueError("an icon needs at least one image")
    infos = [png_info(png) for png in pngs]
    for info in infos:
        if not (1 <= info.width <= MAX_SIDE and 1 <= info.height <= MAX_SIDE):
            raise ValueError(f"{info.width}x{info.height} does not fit an ICO (at most 256x256)")
    ordered = sorted(zip(infos, pngs, strict=True), key=lambda pair: pair[0].width)
    offset = HEADER.size + ENTRY.size * len(ordered)
    directory = [HEADER.pack(0, 1, len(ordered))]
    for info, png in ordered:
        # A side of 256 does not fit the byte: the format writes 0 for it.
        directory.append(ENTRY.pack(info.width % MAX_SIDE, info.height % MAX_SIDE, 0, 0,
                                    1, info.bits_per_pixel, len(png), offset))
        offset += len(png)
    return b"".join(directory) + b"".join(png for _, png in ordered)


def write_ico(pngs: list[Path], out: Path) -> None:
    """Write ``out`` as an ICO made of the PNG files ``pngs`` (stored as PNG, Vista and later)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(ico_bytes([png.read_bytes() for png in pngs]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_ico.py", description=__doc__.split("\n")[0])
    parser.add_argument("pngs", nargs="*", type=Path,
                        help="PNG files (default: resources/icons/hearth-<size>.png)")
    parser.add_argument("--out", type=Path, default=ICONS / "hearth.ico")
    args = parser.parse_args(argv)
    pngs: list[Path] = args.pngs or [ICONS / f"hearth-{size}.png" for size in SIZES]
    missing = [str(png) for png in pngs if not png.is_file()]
    if missing:
        print(f"Missing PNG files: {', '.join(missing)} (installers/render_icons.py makes them).",
              file=sys.stderr)
        return 1
    write_ico(pngs, args.out)
    print(f"Wrote {args.out} ({len(pngs)} images, {args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
