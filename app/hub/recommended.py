"""The curated "Recommended for this computer" list (resources/recommended.json; no Qt).

The list is plain data so it can be edited without code. Which entries are shown is decided
live: each gets the planner's verdict from its remote header, and an entry that would not fit on
this computer is not recommended (:func:`worth_showing`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from app import paths
from app.hub.types import FileGroup, FileKind
from app.hub.verdict import Verdict
from app.i18n import Text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recommendation:
    repo_id: str
    quant: str  # the quantization offered first ("Q4_K_M")
    title: str  # a model's name, never translated
    blurb: str  # a curated sentence: a Text, in the catalog through recommended_words.py


def load_recommended(path: Path | None = None) -> list[Recommendation]:
    """The curated entries; a missing or damaged file gives an empty list (logged), never an
    error: the Discover tab works without it."""
    path = path or paths.resources_dir() / "recommended.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        models = data["models"]
        out = []
        for m in models:
            repo, quant = str(m["repo"]), str(m["quant"])
            if repo.count("/") != 1:
                raise ValueError(f"{repo!r} is not owner/name")
            blurb = str(m.get("blurb") or "").replace("{", "(").replace("}", ")")
            out.append(Recommendation(repo, quant.upper(), str(m.get("title") or repo),
                                      Text(blurb)))
        return out
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("the recommended list %s cannot be read: %s", path, exc)
        return []


def pick_group(groups: tuple[FileGroup, ...], quant: str) -> FileGroup | None:
    """The model file of the wanted quantization, else the closest usual one."""
    models = [g for g in groups if g.kind is FileKind.MODEL]
    for want in (quant, "Q4_K_M", "Q4_K_S", "Q4_0", "MXFP4", "Q5_K_M", "Q8_0"):
        for g in models:
            if g.quant == want.upper():
                return g
    return None


def worth_showing(verdict: Verdict | None) -> bool:
    """A recommendation is shown while its verdict is unknown (the Hub may be slow) or fits."""
    return verdict is None or verdict.fits
