"""AMD GPUs on Linux: amdgpu's sysfs files, and ``rocm-smi --json`` when ROCm is installed.

sysfs needs no ROCm and answers in microseconds, so it is the primary source; rocm-smi adds the
marketing name and the GFX target. On APUs (Ryzen with Radeon graphics) the "VRAM" is a BIOS
carve-out of system RAM and the GPU also maps system RAM through GTT: both are reported as one
unified pool that shares the machine's RAM, never on top of it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.hardware._subprocess import ToolResult, run_tool
from app.hardware.report import GpuInfo, SourceStatus
from app.i18n import T_

log = logging.getLogger(__name__)

AMD_VENDOR = 0x1002
GiB = 1024**3

# PCI device ids of AMD APUs' integrated GPUs (their memory is system RAM).
APU_DEVICE_IDS: dict[int, str] = {
    0x15DD: "Radeon Vega (Raven Ridge)",
    0x15D8: "Radeon Vega (Picasso)",
    0x1636: "Radeon Graphics (Renoir)",
    0x1638: "Radeon Graphics (Cezanne)",
    0x164C: "Radeon Graphics (Lucienne)",
    0x163F: "Radeon (Van Gogh)",
    0x1681: "Radeon 680M (Rembrandt)",
    0x164E: "Radeon Graphics (Raphael)",
    0x1506: "Radeon 610M (Mendocino)",
    0x15BF: "Radeon 780M (Phoenix)",
    0x15C8: "Radeon 740M (Phoenix)",
    0x150E: "Radeon 890M (Strix Point)",
    0x1586: "Radeon 8060S (Strix Halo)",
    0x13C0: "Radeon Graphics (Granite Ridge)",
}

# Discrete cards people run models on, for when neither sysfs nor rocm-smi gives a name.
DGPU_DEVICE_IDS: dict[int, str] = {
    0x7550: "Radeon RX 9070 / 9070 XT",
    0x744C: "Radeon RX 7900 XT / 7900 XTX / 7900 GRE",
    0x7448: "Radeon Pro W7900",
    0x747E: "Radeon RX 7800 XT / 7700 XT",
    0x7480: "Radeon RX 7600 / 7600 XT",
    0x73AF: "Radeon RX 6900 XT",
    0x73BF: "Radeon RX 6800 / 6800 XT / 6900 XT",
    0x73DF: "Radeon RX 6700 / 6700 XT / 6750 XT",
    0x73FF: "Radeon RX 6600 / 6600 XT / 6650 XT",
    0x731F: "Radeon RX 5600 / 5700 (XT)",
    0x66AF: "Radeon VII",
    0x687F: "Radeon RX Vega 56 / 64",
    0x67DF: "Radeon RX 470 / 480 / 570 / 580",
}
# Navi 31 tells its three cards apart by PCI revision.
NAVI31_REVISIONS = {0xC8: "Radeon RX 7900 XTX", 0xCC: "Radeon RX 7900 XT", 0xCE: "Radeon RX 7900 GRE"}

Runner = Callable[[list[str]], ToolResult]


def detect_amd(
    root: Path = Path("/"), run: Runner | None = None, want_rocm_smi: bool = True
) -> tuple[list[GpuInfo], list[SourceStatus]]:
    """AMD GPUs from sysfs under ``root`` plus rocm-smi (``run`` executes it; faked in tests)."""
    gpus, sysfs_status = _from_sysfs(root)
    statuses = [sysfs_status]
    if want_rocm_smi and not gpus:
        statuses.append(SourceStatus("rocm-smi", False, T_("not asked: no AMD GPU in sysfs")))
    elif want_rocm_smi:
        run = run or run_tool
        result = run(["rocm-smi", "--showproductname", "--showmeminfo", "vram", "gtt",
                      "--showbus", "--json"])
        if result.ok:
            try:
                cards = parse_rocm_smi(result.stdout)
            except ValueError as exc:
                statuses.append(SourceStatus("rocm-smi", False, T_("unreadable output: {error}",
                                                                        error=str(exc))))
            else:
                gpus = _merge_rocm_smi(gpus, cards)
                n = len(cards)
                statuses.append(SourceStatus("rocm-smi", True, f"{n} GPU{'s' if n != 1 else ''}"))
        else:
            statuses.append(SourceStatus("rocm-smi", False, result.reason))
    kfd = (root / "dev/kfd").exists()
    rocm = kfd or any(s.name == "rocm-smi" and s.present for s in statuses)
    for g in gpus:
        g.backend = "rocm" if rocm else "vulkan"
        g.other_backends = ["vulkan"] if rocm else []
    return gpus, statuses


def _from_sysfs(root: Path) -> tuple[list[GpuInfo], SourceStatus]:
    drm = root / "sys/class/drm"
    if not drm.is_dir():
        return [], SourceStatus("amd", False, T_("no {path} (no GPU driver loaded)",
                                                 path="/sys/class/drm"))
    cards = sorted(
        (p for p in drm.iterdir() if re.fullmatch(r"card\d+", p.name)),
        key=lambda p: int(p.name[4:]),
    )
    gpus: list[GpuInfo] = []
    for card in cards:
        dev = card / "device"
        if _read_int(dev / "vendor") != AMD_VENDOR:
            continue
        vram_total = _read_int(dev / "mem_info_vram_total")
        if vram_total is None:
            log.info("%s is AMD but has no mem_info_vram_total (not amdgpu?)", card.name)
            continue
        gpus.append(_card(dev, len(gpus), vram_total))
    if not gpus:
        return [], SourceStatus("amd", False, T_("no AMD GPU in {path}", path="/sys/class/drm"))
    n = len(gpus)
    return gpus, SourceStatus("amd", True, f"{n} GPU{'s' if n != 1 else ''} in /sys/class/drm")


def _card(dev: Path, index: int, vram_total: int) -> GpuInfo:
    vram_used = _read_int(dev / "mem_info_vram_used") or 0
    gtt_total = _read_int(dev / "mem_info_gtt_total") or 0
    gtt_used = _read_int(dev / "mem_info_gtt_used") or 0
    device_id = _read_int(dev / "device") or 0
    revision = _read_int(dev / "revision")
    uevent = _read_text(dev / "uevent") or ""
    slot = re.search(r"^PCI_SLOT_NAME=(\S+)", uevent, re.M)
    product = (_read_text(dev / "product_name") or "").strip()
    apu = device_id in APU_DEVICE_IDS or (vram_total < GiB and gtt_total > vram_total)
    name = product or _name_for(device_id, revision)
    details = {"PCI device": f"0x{device_id:04x}"}
    if apu:
        # Carve-out plus GTT: all of it is system RAM the GPU may use.
        total = vram_total + gtt_total
        used = vram_used + gtt_used
        details["VRAM carve-out"] = _gib(vram_total)
        details["GTT"] = _gib(gtt_total)
    else:
        total, used = vram_total, vram_used
        if gtt_total:
            details["GTT"] = _gib(gtt_total)
    return GpuInfo(
        name=name,
        vendor="amd",
        backend="rocm",
        index=index,
        total=total,
        free=max(0, total - used),
        used_by_others=min(used, total),
        unified=apu,
        estimate=False,
        source="sysfs",
        pci_bus_id=slot.group(1) if slot else None,
        details=details,
    )


def _name_for(device_id: int, revision: int | None) -> str:
    if device_id == 0x744C and revision in NAVI31_REVISIONS:
        return NAVI31_REVISIONS[revision]
    return (
        APU_DEVICE_IDS.get(device_id)
        or DGPU_DEVICE_IDS.get(device_id)
        or f"AMD GPU (device 0x{device_id:04x})"
    )


def parse_rocm_smi(stdout: str) -> list[dict[str, str]]:
    """rocm-smi's JSON as one dict per card (keys lower-cased: they changed case across versions).

    Raises ValueError when the output is not rocm-smi JSON.
    """
    start = stdout.find("{")
    if start < 0:
        raise ValueError("no JSON object in rocm-smi output")
    data: Any = json.loads(stdout[start:])
    if not isinstance(data, dict):
        raise ValueError("rocm-smi output is not a JSON object")
    cards = []
    for key in sorted((k for k in data if re.fullmatch(r"card\d+", k)), key=lambda k: int(k[4:])):
        entry = data[key]
        if isinstance(entry, dict):
            cards.append({str(k).lower(): str(v) for k, v in entry.items()})
    return cards


def _rocm_name(card: dict[str, str]) -> str | None:
    for key in ("card series", "card model", "marketing name"):
        value = card.get(key, "").strip()
        if not value or value.lower().startswith("0x") or value.lower() == "n/a":
            continue
        bracket = re.search(r"\[([^\]]+)\]", value)  # "Navi 31 [Radeon RX 7900 XT/7900 XTX]"
        return bracket.group(1) if bracket else value
    return None


def _merge_rocm_smi(gpus: list[GpuInfo], cards: list[dict[str, str]]) -> list[GpuInfo]:
    by_bus = {g.pci_bus_id.lower(): g for g in gpus if g.pci_bus_id}
    for i, card in enumerate(cards):
        bus = card.get("pci bus", "").lower() or None
        gpu = by_bus.get(bus) if bus else None
        if gpu is None and not bus and i < len(gpus):
            gpu = gpus[i]
        if gpu is None:
            gpu = _gpu_from_rocm_smi(card, len(gpus))
            if gpu is None:
                continue
            gpus.append(gpu)
        name = _rocm_name(card)
        # rocm-smi's series names are generic ("Navi 31 [...]"); a name sysfs derived from the
        # exact PCI revision is better, so only replace the fallbacks.
        if name and (gpu.name.startswith("AMD GPU") or "/" in gpu.name):
            gpu.name = name
        gfx = card.get("gfx version")
        if gfx and gfx.lower() != "n/a":
            gpu.details["GFX version"] = gfx
    return gpus


def _gpu_from_rocm_smi(card: dict[str, str], index: int) -> GpuInfo | None:
    total = _int(card.get("vram total memory (b)"))
    if total is None:
        return None
    used = _int(card.get("vram total used memory (b)")) or 0
    return GpuInfo(
        name=_rocm_name(card) or "AMD GPU",
        vendor="amd",
        backend="rocm",
        index=index,
        total=total,
        free=max(0, total - used),
        used_by_others=used,
        source="rocm-smi",
        pci_bus_id=card.get("pci bus") or None,
    )


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    return _int(_read_text(path))


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip(), 0)  # sysfs ids are "0x1002", sizes decimal
    except ValueError:
        return None


def _gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"
