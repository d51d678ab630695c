"""Telling the user that a model is a base model, which may not follow instructions (no Qt).

A base (pretrained) model continues text; only its instruct variant was trained to answer. The
signs, from the GGUF header: no chat template at all (the runner then chats in the turn format
its vocabulary names, runner/turn_formats.py), or names that say "base"/"pt"/"pretrained" and
none that say "instruct"/"it"/"chat".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.i18n import T_

_BASE = re.compile(r"(?:^|[-_ .])(base|pt|pretrain(?:ed)?)(?:$|[-_ .])", re.IGNORECASE)
_TUNED = re.compile(r"(?:^|[-_ .])(it|instruct|chat|sft|dpo|rlhf|assistant)(?:$|[-_ .])",
                    re.IGNORECASE)


@dataclass(frozen=True)
class BaseModelNote:
    """Why the model looks like a base model, and what to search for instead."""

    text: str
    search: str  # a query for the Discover tab that finds its instruct variants


def base_model_note(name: str, has_template: bool, general: Mapping[str, Any],
                    file_name: str = "") -> BaseModelNote | None:
    """A note for a model that looks like a base model; None for a chat model."""
    names = [str(general.get(k) or "") for k in ("general.name", "general.finetune",
                                                  "general.basename")] + [name, file_name]
    tuned = any(_TUNED.search(n) for n in names if n)
    base = any(_BASE.search(n) for n in names if n)
    if has_template and (tuned or not base):
        return None
    basename = str(general.get("general.basename") or "") or _strip_base(name or file_name)
    search = f"{basename} instruct".strip()
    shown = name or file_name
    # One whole sentence per case (a translator words each on its own); "this model" when the
    # header and the file give no name.
    if not has_template:
        text = T_("{model} has no chat template: it looks like a base model, which continues "
                  "text rather than following instructions, so its replies may ramble or ignore "
                  "what you ask. Its instruct version (often named “-it” or “-Instruct”) is made "
                  "for chatting.", model=shown) if shown else \
            T_("This model has no chat template: it looks like a base model, which continues "
               "text rather than following instructions, so its replies may ramble or ignore "
               "what you ask. Its instruct version (often named “-it” or “-Instruct”) is made "
               "for chatting.")
    else:
        text = T_("{model} is named as a base model: it looks like a base model, which "
                  "continues text rather than following instructions, so its replies may ramble "
                  "or ignore what you ask. Its instruct version (often named “-it” or "
                  "“-Instruct”) is made for chatting.", model=shown) if shown else \
            T_("This model is named as a base model: it looks like a base model, which "
               "continues text rather than following instructions, so its replies may ramble "
               "or ignore what you ask. Its instruct version (often named “-it” or "
               "“-Instruct”) is made for chatting.")
    return BaseModelNote(text, search)


def _strip_base(name: str) -> str:
    stem = re.sub(r"\.gguf$", "", name, flags=re.IGNORECASE)
    stem = re.sub(r"[-_.](?:Q\d\w*|F16|BF16|F32)$", "", stem, flags=re.IGNORECASE)
    return _BASE.sub(" ", stem).strip(" -_.")
