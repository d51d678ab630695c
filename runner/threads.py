"""Threads that survive a busy machine: measure which thread count decodes fastest, now.

llama.cpp splits every step over its threads and waits at a barrier after each operation, so a
thread that shares its core with another program holds all the others back. On 2 cores with one
kept busy by another program, 2 threads decode at about 71 tokens/s and 1 thread at 185: the core
count alone cannot pick the count. llama.cpp's own knobs, measured with llama-server's flags
(tests/bench/contention.py --knobs): polling 0 recovers little; strict CPU placement about as
much as one thread fewer, but not on macOS, which has no placement API; a higher priority
wins by starving the other program, and needs privileges an ordinary user lacks on Linux and
macOS. Fewer threads work everywhere and leave the other program its core.

:class:`ThreadTuner` is pure logic fed by the scheduler: the seconds each generation step took,
its width (sequences in the batch) and the thread count it ran with. A *trial* runs the candidate
counts in turn, a few steps each, interleaved so the machine's drift falls on all alike, and keeps
the fastest mean. A new trial starts when the load other programs put on the cores moves by half
a core (:class:`OtherLoad`), or when steps at the same width get 40% slower than the trial saw.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# A trial: per round, each candidate runs one step that is not counted (a new team of threads
# warms up) and MEASURED that are; ROUNDS rounds, so drift averages out. A count is judged by
# its mean step time, the inverse of its tokens/s: with a core shared, the slow steps are not
# outliers but the price.
MEASURED = 4
ROUNDS = 2
# What starts a new trial.
LOAD_CHANGE = 0.5  # cores of other programs' load, up or down
SLOWDOWN = 1.4  # recent median step time over the trial's, same width and thread count
RECENT = 8  # steps in the recent median
LOAD_EVERY_S = 1.0  # how often the load is sampled while generating
MIN_GAP_S = 2.0  # between trials started by a slowdown (context growth slows steps too)
MAX_GAP_S = 60.0  # the gap doubles each time such a trial keeps the count: noise, not news
TIE = 0.02  # a count within 2% of the fastest is as good: keep the one in use


class OtherLoad:
    """Cores kept busy by other programs since the last sample: the system's CPU time minus this
    process's, over the wall time between samples. None where psutil cannot tell."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        try:
            import psutil

            self._psutil: Any = psutil
            self._me: Any = psutil.Process()
        except Exception:
            self._psutil = None
        self._last = self._read()

    def _read(self) -> tuple[float, float, float] | None:
        if self._psutil is None:
            return None
        try:
            t = self._psutil.cpu_times()
            mine = self._me.cpu_times()
        except Exception:
            return None
        busy = sum(t) - t.idle - getattr(t, "iowait", 0.0)
        return self._clock(), busy, mine.user + mine.system

    def sample(self) -> float | None:
        now = self._read()
        last, self._last = self._last, now
        if now is None or last is None or now[0] - last[0] < 0.05:
            return None
        others = (now[1] - last[1]) - (now[2] - last[2])
        return max(0.0, others / (now[0] - last[0]))


@dataclass
class _Trial:
    reason: str
    width: int
    schedule: list[tuple[int, bool]]  # (threads, counted) per step still to run
    times: dict[int, list[float]] = field(default_factory=dict)
    restarts: int = 0
    slowdown: bool = False  # started by slower steps, not by a change of load or by the load


class ThreadTuner:
    """Chooses the thread count for the next generation step from the steps measured so far.

    ``max_threads``: the most it will use (one per physical core). ``start``: the count to begin
    with (the plan's). ``adaptive=False``: the count stays ``start`` (the user fixed it); the
    tuner still reports recent speed.
    """

    def __init__(self, max_threads: int, start: int, adaptive: bool = True,
                 load: OtherLoad | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.max = max(1, max_threads)
        self.current = min(max(1, start), self.max)
        self.adaptive = adaptive and self.max > 1
        self._load = load
        self._clock = clock
        self._trial: _Trial | None = None
        self._chosen = self.current  # what the last trial chose; trials change current meanwhile
        self.trials = 0
        self.last_reason = ""
        # Seconds per step at (threads, width) from the last trial: the speeds it compared.
        self.measured: dict[int, float] = {}
        self.measured_width = 1
        self.measured_load: float | None = None
        self._baseline: dict[tuple[int, int], float] = {}
        self._recent: dict[tuple[int, int], deque[float]] = {}
        self._load_ref: float | None = None
        self.others: float | None = None
        self._next_load = 0.0
        self._last_trial_end = float("-inf")
        self._gap = MIN_GAP_S

    # -- the scheduler's side ------------------------------------------------------------------

    @property
    def in_trial(self) -> bool:
        return self._trial is not None

    def start_trial(self, reason: str, width: int = 1, slowdown: bool = False) -> None:
        if not self.adaptive:
            return
        cands = self.candidates()
        schedule = [(n, counted) for _ in range(ROUNDS) for n in cands
                    for counted in [False] + [True] * MEASURED]
        self._trial = _Trial(reason, width, schedule, slowdown=slowdown)
        self.current = schedule[0][0]
        if self._load is not None:
            self._load.sample()  # the next sample covers the trial

    def observe(self, width: int, seconds: float) -> int:
        """One step of ``width`` sequences took ``seconds`` at ``self.current`` threads; returns
        the count for the next step."""
        if self._trial is not None:
            self._trial_step(width, seconds)
            return self.current
        key = (self.current, width)
        recent = self._recent.setdefault(key, deque(maxlen=RECENT))
        recent.append(seconds)
        if not self.adaptive:
            return self.current
        base = self._baseline.get(key)
        if base is None and len(recent) == RECENT:
            self._baseline[key] = statistics.median(recent)
        elif (base is not None and len(recent) == RECENT
              and self._clock() - self._last_trial_end >= self._gap
              and statistics.median(recent) > SLOWDOWN * base):
            self.start_trial(f"steps {statistics.median(recent) / base:.1f}x slower", width,
                             slowdown=True)
            return self.current
        now = self._clock()
        if self._load is not None and now >= self._next_load:
            self._next_load = now + LOAD_EVERY_S
            others = self._load.sample()
            if others is not None:
                self.others = others
                if self._load_ref is None:
                    self._load_ref = others
                elif abs(others - self._load_ref) >= LOAD_CHANGE:
                    self.start_trial(f"other programs' load {self._load_ref:.1f} -> "
                                     f"{others:.1f} cores", width)
        return self.current

    def finish_trial(self) -> None:
        """End a trial early (the model load's calibration ran out of time): keep the fastest so
        far."""
        if self._trial is not None:
            self._decide(self._trial)

    # -- internals -----------------------------------------------------------------------------

    def candidates(self) -> list[int]:
        """Every count on small machines; on big ones the few that can win."""
        if self.max <= 4:
            return list(range(self.max, 0, -1))
        free = self.max - round(self.others or 0.0)
        picks = {self.max, free, free - 1, self.current, self.max // 2}
        return sorted((n for n in picks if 1 <= n <= self.max), reverse=True)

    def _trial_step(self, width: int, seconds: float) -> None:
        trial = self._trial
        assert trial is not None
        if width != trial.width:
            # Times at another width do not compare: start over at this one (a few times).
            if trial.restarts >= 3:
                self._decide(trial)
                return
            self.start_trial(trial.reason, width, trial.slowdown)
            assert self._trial is not None
            self._trial.restarts = trial.restarts + 1
            return
        n, counted = trial.schedule.pop(0)
        if counted:
            trial.times.setdefault(n, []).append(seconds)
        if trial.schedule:
            self.current = trial.schedule[0][0]
        else:
            self._decide(trial)

    def _decide(self, trial: _Trial) -> None:
        self._trial = None
        self.trials += 1
        self.last_reason = trial.reason
        self._last_trial_end = self._clock()
        medians = {n: statistics.fmean(ts) for n, ts in trial.times.items() if ts}
        if not medians:
            self.current = self._chosen
            return
        fastest = min(medians.values())
        good = [n for n, t in medians.items() if t <= fastest * (1 + TIE)]
        before = self._chosen
        self.current = before if before in good else min(good, key=lambda n: medians[n])
        self._chosen = self.current
        # A slowdown that the counts do not explain (a shared core's jitter, a longer context)
        # is looked at less and less often; a change of count or of load starts afresh.
        self._gap = min(2 * self._gap, MAX_GAP_S) if trial.slowdown and self.current == before \
            else MIN_GAP_S
        self.measured = medians
        self.measured_width = trial.width
        self._baseline = {(n, trial.width): t for n, t in medians.items()}
        self._recent.clear()
        # The reference for "the load changed" is the load during the trial: a program that
        # starts or stops later moves it by a core; our own count moves it by less (it changes
        # how much of a shared core the others get).
        self._next_load = self._clock() + LOAD_EVERY_S
        if self._load is not None:
            during = self._load.sample()
            if during is not None:
                self.others = during
        self._load_ref = self.others
        self.measured_load = self.others

    def status(self) -> dict[str, Any]:
        """For /runner/status: the count in use, what the last trial measured, and why."""
        recent = self._recent.get((self.current, self.measured_width))
        return {
            "threads": self._chosen,  # during a trial: the count it will go back to
            "trial_running": self._trial is not None,
            "max": self.max,
            "adaptive": self.adaptive,
            "others_busy_cores": None if self.others is None else round(self.others, 2),
            "measured_busy_cores": (None if self.measured_load is None
                                    else round(self.measured_load, 2)),
            "trials": self.trials,
            "last_trial": self.last_reason,
            "width": self.measured_width,
            "tokens_per_second": {str(n): round(self.measured_width / t, 1)
                                  for n, t in sorted(self.measured.items())},
            "recent_tokens_per_second": (round(self.measured_width / statistics.median(recent), 1)
                                         if recent else None),
        }
