"""Speculative decoding's pure parts: which kind, drafting by n-gram lookup, and its counts.

A step drafts a few tokens cheaply (a small draft model, or the tokens that followed the same
n-gram earlier in the context), then the target model decodes its last token and the drafts in
one batch and samples at each position, keeping drafts while they agree with what it sampled
(llama-server's rule, ``common_sampler_sample_and_accept_n``): the text is the target's own,
token for token, and a step yields one to ``n_max + 1`` tokens for about the price of one. The
engine (runner/engine.py) does the decoding; this module has no llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# --spec-type values, named as llama-server's (common/speculative.cpp); the ones Hearth has.
SPEC_TYPES = ("none", "draft-simple", "ngram-simple")


@dataclass(frozen=True)
class Speculation:
    """How a runner drafts: ``kind`` one of SPEC_TYPES but "none"; llama-server's defaults."""

    kind: str
    n_max: int = 3  # --spec-draft-n-max: tokens a draft model proposes per step
    n_min: int = 0  # --spec-draft-n-min: fewer drafts than this are not worth a batch
    size_n: int = 12  # --spec-ngram-simple-size-n: the n-gram looked up
    size_m: int = 48  # --spec-ngram-simple-size-m: the most tokens it proposes

    @property
    def most(self) -> int:
        """The most tokens one step may draft."""
        return self.size_m if self.kind == "ngram-simple" else self.n_max


class NgramIndex:
    """Where each n-gram of a slot's tokens last began, for prompt lookup.

    The slot's token list grows by appends and shrinks from its end (a new request, rejected
    drafts); the index catches up on each lookup and checks a hit against the tokens, so an
    entry left over from tokens since removed is a miss, never a wrong draft.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.starts: dict[tuple[int, ...], int] = {}
        self.done = 0  # n-grams starting before this are in the index

    def truncate(self, length: int) -> None:
        self.done = min(self.done, max(0, length - self.n))

    def draft(self, tokens: list[int], last: int, most: int) -> list[int]:
        """The tokens that followed the latest earlier occurrence of the n-gram ending with
        ``last`` (``tokens`` then ``last`` is the context), at most ``most``; [] if none."""
        n = self.n
        starts = self.starts
        # Every n-gram of ``tokens`` that something followed, first: the latest occurrence with
        # a follower wins (in "a a a" the n-gram "a" just written has none yet), and the one
        # ending with ``last`` is not among them.
        for i in range(self.done, len(tokens) - n):
            starts[tuple(tokens[i:i + n])] = i
        self.done = max(self.done, len(tokens) - n)
        if len(tokens) < n or most <= 0:
            return []
        key = (*tokens[len(tokens) - n + 1:], last)
        at = starts.get(key)
        if at is None or at + n >= len(tokens) or tuple(tokens[at:at + n]) != key:
            return []
        return tokens[at + n:at + n + most]


@dataclass
class SpecCounts:
    """What speculation did since the runner started, for /runner/status."""

    steps: int = 0  # target decodes that verified drafts
    drafted: int = 0
    accepted: int = 0
    generated: int = 0  # tokens those steps yielded (accepted drafts plus one each)

    def to_json(self, spec: Speculation, draft_file: str | None, active: bool = True,
                trial: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "type": spec.kind, "active": active, "measured": trial,
            "draft_model": draft_file, "n_max": spec.most,
            "n_min": spec.n_min, "steps": self.steps, "drafted": self.drafted,
            "accepted": self.accepted,
            "acceptance": round(self.accepted / self.drafted, 4) if self.drafted else None,
            "tokens_per_step": round(self.generated / self.steps, 3) if self.steps else None,
        }
