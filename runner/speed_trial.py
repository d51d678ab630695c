"""Which speed settings are fastest for this model on this computer, measured once in the
background (``--tune-speed``).

Flash attention, the KV cache's type and the micro-batch are fixed when a context is made, and
which is fastest depends on the backend, the model's shapes and the processor: flash attention
is a large win on most GPUs and can lose on a CPU; a larger micro-batch speeds prompts on a GPU
and barely matters on 2 cores. The peers leave it to the person. Here the app names the
candidates its plan has memory for (the person's own choices are not among them); once the model
is ready and nobody is waiting, the scheduler thread measures each in a small context of its own
beside the serving one, one decode at a time, and sets the work aside at the first request: its
context is freed and the candidate is measured again when the runner is idle. All of it within
:data:`BUDGET_S` seconds of decoding. ``/runner/status`` ``speed_trial`` reports the figures and
the choice, which the app remembers and uses from the next load on.

A candidate is judged by the time of a standard turn (:data:`TURN_PROMPT` tokens read,
:data:`TURN_REPLY` written) made from its measured prompt and generation speeds; the micro-batch,
which only prompts use, by prompt speed. A candidate replaces the load's own setting only when
it is at least :data:`MIN_GAIN` faster: a noisy tie keeps what the plan chose.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any

import llama_cpp

from runner.params import context_params
from runner.settings import CACHE_TYPES, LoadSettings

log = logging.getLogger(__name__)

BUDGET_S = 5.0  # seconds of measuring in all, set-aside work included
MIN_GAIN = 1.05  # a candidate must be this much faster than the load's own setting
TURN_PROMPT = 1024  # the standard turn a candidate's speeds are weighed by
TURN_REPLY = 256
REPLY = 24  # tokens generated per measurement (one at a time), after WARM untimed ones
WARM = 2  # the first single-token steps build (and on CUDA capture) the decode graph
# Prompt tokens the sizing measurement reads: a GPU reads 32 tokens far below its speed (a
# launch-bound batch), so a quick first probe is followed by a larger one.
PROBES = (32, 256)
PROMPTS = (2048, 1024, 512, 256, 128, 64)  # prompt lengths tried, longest that fits first
MAX_CANDIDATES = 12
IDLE_S = 1.0  # quiet this long before measuring resumes after a request
QUANTIZED = {k for k in CACHE_TYPES if k.startswith("q")}


@dataclass(frozen=True)
class Candidate:
    flash_attn: str
    cache_type: str
    n_ubatch: int

    def to_json(self) -> dict[str, Any]:
        return {"flash_attn": self.flash_attn, "cache_type": self.cache_type,
                "n_ubatch": self.n_ubatch}


@dataclass
class Figures:
    prompt_tps: float = 0.0
    gen_tps: float = 0.0
    failed: str = ""

    @property
    def turn_s(self) -> float:
        if self.prompt_tps <= 0 or self.gen_tps <= 0:
            return float("inf")
        return TURN_PROMPT / self.prompt_tps + TURN_REPLY / self.gen_tps


def candidates_for(settings: LoadSettings, spec: dict[str, list[Any]]) -> list[Candidate]:
    """The load's own settings first, then flash attention × KV type at its micro-batch, then
    the micro-batches at its attention settings; never a quantized V cache without flash
    attention (llama.cpp refuses it)."""
    base = Candidate(settings.flash_attn if settings.flash_attn in ("on", "off") else "on",
                     settings.cache_type_k, settings.ubatch_size)
    out = [base]
    kvs = spec["kv"] if settings.cache_type_k == settings.cache_type_v else []
    for fa in dict.fromkeys([base.flash_attn, *spec["fa"]]):
        for kv in dict.fromkeys([base.cache_type, *kvs]):
            if kv in QUANTIZED and fa == "off":
                continue
            out.append(Candidate(fa, kv, base.n_ubatch))
    for ub in spec["ub"]:
        out.append(Candidate(base.flash_attn, base.cache_type, ub))
    return list(dict.fromkeys(out))[:MAX_CANDIDATES]


@dataclass(frozen=True)
class Choice:
    chosen: Candidate
    gain: float  # a standard turn's time with the load's settings over with the chosen ones


def choose(base: Candidate, figures: dict[Candidate, Figures]) -> Choice:
    """The fastest attention settings by a turn's time, and the fastest micro-batch by prompt
    speed, each only where it beats the load's own by :data:`MIN_GAIN`."""
    b = figures.get(base)
    if b is None or not math.isfinite(b.turn_s):
        return Choice(base, 1.0)
    attn = [c for c, f in figures.items()
            if c.n_ubatch == base.n_ubatch and math.isfinite(f.turn_s)]
    best = min(attn, key=lambda c: figures[c].turn_s)
    if b.turn_s / figures[best].turn_s < MIN_GAIN:
        best = base
    batches = [c for c, f in figures.items()
               if (c.flash_attn, c.cache_type) == (base.flash_attn, base.cache_type)
               and f.prompt_tps > 0]
    ub = max(batches, key=lambda c: figures[c].prompt_tps)
    if figures[ub].prompt_tps / b.prompt_tps < MIN_GAIN:
        ub = base
    chosen = Candidate(best.flash_attn, best.cache_type, ub.n_ubatch)
    prompt = figures[best].prompt_tps * figures[ub].prompt_tps / b.prompt_tps
    turn = TURN_PROMPT / prompt + TURN_REPLY / figures[best].gen_tps
    return Choice(chosen, b.turn_s / turn)


@dataclass
class SpeedTrial:
    """Measured by the scheduler thread in :meth:`unit` calls while it is idle (runner/engine.py);
    :meth:`set_aside` when a request arrives."""

    settings: LoadSettings
    spec: dict[str, list[Any]]
    budget_s: float = BUDGET_S
    state: str = "waiting"  # waiting, measuring, done
    why: str = ""  # when done without a choice
    figures: dict[Candidate, Figures] = field(default_factory=dict)
    choice: Choice | None = None
    prompt_tokens: int = 0
    spent_s: float = 0.0
    set_asides: int = 0
    resume_at: float = 0.0
    _todo: list[Candidate] = field(default_factory=list)
    _round: int = 0
    _work: Generator[None, None, None] | None = None
    _probe: Figures = field(default_factory=Figures)  # the sizing measurement
    _aside: bool = False  # set aside, not measured since

    def __post_init__(self) -> None:
        self.candidates = candidates_for(self.settings, self.spec)
        self.base = self.candidates[0]

    @property
    def pending(self) -> bool:
        return self.state != "done"

    def set_aside(self) -> None:
        """A request arrived or runs: free the trial's context now (the candidate it was
        measuring is measured again), and wait for a quiet moment."""
        if self._work is not None:
            self._work.close()
            self._work = None
        if self.state == "measuring" and not self._aside:
            self.set_asides += 1  # once per interruption, however long the requests run
        self._aside = True
        self.resume_at = time.monotonic() + IDLE_S

    def fail(self, why: str) -> None:
        """Give up, saying why (the app keeps that, and does not measure again in vain)."""
        self.close()
        self.state, self.why, self.choice = "done", why[:200], None

    def close(self) -> None:
        if self._work is not None:
            self._work.close()
            self._work = None

    def unit(self, model: Any, threads: int) -> None:
        """One decode's worth of measuring (or none, when the budget is spent)."""
        if len(self.candidates) < 2:
            self._finish("nothing to compare")
            return
        self.state = "measuring"
        self._aside = False
        t0 = time.perf_counter()
        try:
            if self._work is None:
                self._work = self._next(model, threads)
            if self._work is not None:
                next(self._work)
        except StopIteration:
            self._work = None
        finally:
            self.spent_s += time.perf_counter() - t0
        if self.pending and self.spent_s >= self.budget_s:
            self.close()
            self._finish("")

    # ---- the plan of work -----------------------------------------------------------------------

    def _next(self, model: Any, threads: int) -> Generator[None, None, None] | None:
        if not self.prompt_tokens:
            return self._size(model, threads)
        if not self._todo:
            self._round += 1
            left = self.budget_s - self.spent_s
            cost = sum(self._cost(c) for c in self.candidates if not self.figures[c].failed)
            if self._round > 2 or (self._round == 2 and cost > left):
                self._finish("")
                return None
            self._todo = [c for c in self.candidates if not self.figures[c].failed]
            if not self._todo:
                self._finish("")
                return None
        return self._measure(model, threads, self._todo[0])

    def _size(self, model: Any, threads: int) -> Generator[None, None, None]:
        """A short measurement of the load's own settings, to choose a prompt length that lets
        every candidate be measured within the budget."""
        probe = Figures()
        for n_probe in PROBES:
            yield from self._run(model, threads, self.base, n_probe, 4, probe)
            if probe.failed:
                self._finish(f"could not measure: {probe.failed}")
                return
            if n_probe / probe.prompt_tps > self.budget_s * 0.01:
                break  # a slow machine: the small probe says enough
        share = (self.budget_s - self.spent_s) * 0.8 / len(self.candidates)
        for n in PROMPTS:
            cost = (n + self.base.n_ubatch) / probe.prompt_tps + (WARM + REPLY) / probe.gen_tps
            if cost <= share:
                self.prompt_tokens = n
                break
        else:
            self._finish(f"too slow to measure within {self.budget_s:g} s")
            return
        # A micro-batch larger than the prompt would measure the same work as the prompt's own.
        self.candidates = [c for c in self.candidates if c.n_ubatch <= self.prompt_tokens]
        self.figures = {c: Figures() for c in self.candidates}
        self._probe = probe
        if len(self.candidates) < 2:
            self._finish("nothing to compare")

    def _cost(self, c: Candidate) -> float:
        f = self.figures[c] if self.figures[c].prompt_tps else self._probe
        return (self.prompt_tokens + c.n_ubatch) / f.prompt_tps + (WARM + REPLY) / f.gen_tps

    def _measure(self, model: Any, threads: int, c: Candidate) -> Generator[None, None, None]:
        got = Figures()
        yield from self._run(model, threads, c, self.prompt_tokens, REPLY, got)
        self._todo.pop(0)
        have = self.figures[c]
        if got.failed:
            have.failed = got.failed
        else:  # the best of the rounds: a busy moment only ever slows a measurement down
            have.prompt_tps = max(have.prompt_tps, got.prompt_tps)
            have.gen_tps = max(have.gen_tps, got.gen_tps)

    def _run(self, model: Any, threads: int, c: Candidate, n_prompt: int, n_reply: int,
             out: Figures) -> Generator[None, None, None]:
        """Measure ``c`` in a context of its own: a warm-up micro-batch, then ``n_prompt`` tokens
        read a micro-batch per decode and ``n_reply`` decoded one at a time. The context is freed
        however this ends (a set-aside closes the generator)."""
        st = replace(self.settings, flash_attn=c.flash_attn, cache_type_k=c.cache_type,
                     cache_type_v=c.cache_type, ubatch_size=c.n_ubatch, batch_size=c.n_ubatch,
                     parallel=1, threads=threads, threads_batch=threads)
        n_ctx = -(-(n_prompt + WARM + n_reply + 1) // 256) * 256
        ctx = llama_cpp.llama_init_from_model(model.model, context_params(st, n_ctx, model.model))
        if not ctx:
            out.failed = "llama.cpp could not make a context with these settings"
            return
        batch = llama_cpp.llama_batch_init(max(c.n_ubatch, 1), 0, 1)
        try:
            tokens = _tokens(model.n_vocab, n_prompt + c.n_ubatch)
            yield
            _decode(ctx, batch, tokens[:min(c.n_ubatch, n_prompt)], 0)  # warm-up
            llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
            spent = 0.0
            for start in range(0, n_prompt, c.n_ubatch):
                yield
                t0 = time.perf_counter()
                _decode(ctx, batch, tokens[start:min(start + c.n_ubatch, n_prompt)], start)
                spent += time.perf_counter() - t0
            out.prompt_tps = n_prompt / spent if spent > 0 else 0.0
            steps: list[float] = []
            for i in range(WARM + n_reply):
                if i % 4 == 0:
                    yield
                t0 = time.perf_counter()
                _decode(ctx, batch, [tokens[i]], n_prompt + i)
                if i >= WARM:
                    steps.append(time.perf_counter() - t0)
            # The median step: a step that met a busy moment or a graph rebuild is not the
            # model's speed.
            mid = statistics.median(steps)
            out.gen_tps = 1.0 / mid if mid > 0 else 0.0
        except RuntimeError as exc:
            out.failed = str(exc)
        finally:
            llama_cpp.llama_batch_free(batch)
            llama_cpp.llama_free(ctx)

    def _finish(self, why: str) -> None:
        self.close()
        self.state = "done"
        self.why = why
        measured = {c: f for c, f in self.figures.items() if math.isfinite(f.turn_s)}
        if not why and (self.base not in measured or len(measured) < 2):
            self.why = "too little measured"
        if not self.why:
            self.choice = choose(self.base, measured)
        log.info("speed settings measured: %s", self.to_json(),
                 extra={"event": "speed_measured"})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "state": self.state, "why": self.why or None, "budget_s": self.budget_s,
            "seconds": round(self.spent_s, 3), "set_aside": self.set_asides,
            "prompt_tokens": self.prompt_tokens, "reply_tokens": REPLY,
            "min_gain": MIN_GAIN, "base": self.base.to_json(),
            "measured": [{**c.to_json(), "prompt_tokens_per_s": round(f.prompt_tps, 2),
                          "gen_tokens_per_s": round(f.gen_tps, 2),
                          **({"failed": f.failed} if f.failed else {})}
                         for c, f in list(self.figures.items()) if f.prompt_tps or f.failed],
            "chosen": None, "gain": None,
        }
        if self.choice is not None:
            out["chosen"] = {**self.choice.chosen.to_json(),
                             "n_batch": max(self.choice.chosen.n_ubatch,
                                            self.settings.batch_size)}
            out["gain"] = round(self.choice.gain, 3)
        return out


def _tokens(n_vocab: int, n: int) -> list[int]:
    """Ordinary token ids, the same every time (past the first 100, where special ones sit)."""
    span = max(1, n_vocab - 100)
    return [100 + (i * 7919) % span for i in range(n)]


def _decode(ctx: Any, batch: Any, tokens: list[int], pos: int) -> None:
    for i, tok in enumerate(tokens):
        batch.token[i] = tok
        batch.pos[i] = pos + i
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = 0
        batch.logits[i] = i == len(tokens) - 1
    batch.n_tokens = len(tokens)
    rc = llama_cpp.llama_decode(ctx, batch)
    if rc != 0:
        raise RuntimeError(f"llama_decode returned {rc}")

