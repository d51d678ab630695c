"""Whether speculation pays on this computer, measured once at load (``--spec-measure``).

Drafting wins when the draft is cheap beside the model and agrees with it often; on another
computer, runtime or pair it can lose (a draft that disagrees costs a batch for one token), and
every peer leaves the person to guess. So the runner measures: a short standard set of prompts,
each generated twice with the same seed (the same text either way), one token at a time and
speculating, taking turns so that a busy moment hurts both alike. Speculation stays on only when
it is at least :data:`MIN_GAIN` faster; otherwise it is turned off and the draft model freed.
/runner/status reports the figures; the app remembers the verdict and measures again when the
model, the draft, the runtime or the computer changes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runner.engine import EngineError, Job, Sampling, Scheduler

log = logging.getLogger(__name__)

# Prose, an explanation and code: what people ask a local model for.
PROMPTS = (
    "Write a short story about a family sitting by the fire on a winter night.",
    "Explain in simple words how a refrigerator keeps food cold.",
    'def fibonacci(n):\n    """Return the first n Fibonacci numbers as a list."""\n',
)
TOKENS = 64  # per reply
MIN_GAIN = 1.10  # speculation must be at least this much faster to stay on
BUDGET_S = 8.0  # the measurement stops after this, with at least one pair of replies
# Where a round of the prompts is quick (a GPU: a few hundred ms), more rounds until this many
# seconds: a reply of 64 tokens is short beside a GPU's moments of noise.
ROUNDS = 3
ENOUGH_S = 2.0
WARM_TOKENS = 8  # one untimed short reply each way first: the first use of a batch shape
# builds its graph (on CUDA, captures it), which is no part of either speed


@dataclass(frozen=True)
class Verdict:
    plain_tps: float
    spec_tps: float
    replies: int  # pairs measured
    seconds: float

    @property
    def gain(self) -> float:
        return self.spec_tps / self.plain_tps if self.plain_tps else 0.0

    @property
    def kept(self) -> bool:
        return self.gain >= MIN_GAIN

    def to_json(self) -> dict[str, Any]:
        return {"plain_tokens_per_s": round(self.plain_tps, 2),
                "spec_tokens_per_s": round(self.spec_tps, 2), "gain": round(self.gain, 3),
                "kept": self.kept, "min_gain": MIN_GAIN, "replies": self.replies,
                "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class Refused:
    """The draft could not draft for the model (another tokenizer): nothing to measure."""

    why: str
    kept: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"gain": 0.0, "kept": False, "min_gain": MIN_GAIN, "refused": self.why}


def measure(scheduler: Scheduler, tokenize: Callable[[str], list[int]],
            budget_s: float = BUDGET_S) -> Verdict:
    """Measure, then keep speculation on or turn it off; the scheduler's request counts are
    left as if nothing had run."""
    t0 = time.perf_counter()
    totals = {False: [0, 0.0], True: [0, 0.0]}  # tokens after the first, seconds
    pairs = 0
    prompts = [tokenize(p) for p in PROMPTS]
    for speculate in (False, True):
        _reply(scheduler, prompts[0], speculate, WARM_TOKENS)
    for _ in range(ROUNDS):
        for tokens in prompts:
            for speculate in (False, True):
                n, seconds = _reply(scheduler, tokens, speculate)
                totals[speculate][0] += n
                totals[speculate][1] += seconds
            pairs += 1
            if time.perf_counter() - t0 > budget_s:
                break
        if time.perf_counter() - t0 > min(budget_s, ENOUGH_S):
            break

    def rate(speculate: bool) -> float:
        n, seconds = totals[speculate]
        return n / seconds if seconds > 0 else 0.0

    verdict = Verdict(rate(False), rate(True), pairs, time.perf_counter() - t0)
    scheduler.forget_trial(verdict)
    log.info("speculation measured: %.1f tokens/s with, %.1f without (%.2fx): %s",
             verdict.spec_tps, verdict.plain_tps, verdict.gain,
             "kept" if verdict.kept else "turned off",
             extra={"event": "speculation_measured", **verdict.to_json()})
    return verdict


def _reply(scheduler: Scheduler, tokens: list[int], speculate: bool, max_tokens: int = TOKENS
           ) -> tuple[int, float]:
    """One reply's generated tokens after the first and the seconds they took."""
    done = threading.Event()
    failed: list[EngineError] = []
    stats: list[tuple[int, float]] = []

    def on_done(_reason: str, _usage: Any) -> None:
        last = scheduler.last  # set just before on_done, on the scheduler's thread
        if last.completion_tokens > 1 and last.tokens_per_second > 0:
            n = last.completion_tokens - 1
            stats.append((n, n / last.tokens_per_second))
        done.set()

    def on_error(exc: EngineError) -> None:
        failed.append(exc)
        done.set()

    scheduler.submit(Job(prompt=tokens, on_text=lambda _t: None, on_done=on_done,
                         on_error=on_error, max_tokens=max_tokens, sampling=Sampling(seed=1),
                         ignore_eos=True, cache_prompt=False, speculate=speculate))
    while not done.wait(0.5):
        if scheduler.stopping:  # the runner is exiting: nothing to measure
            raise EngineError("the runner stopped while measuring")
    if failed:
        raise failed[0]
    return stats[0] if stats else (0, 0.0)
