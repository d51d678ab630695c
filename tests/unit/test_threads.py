"""The thread tuner's decisions, on step times of a 2-core machine (measured on this project's CI
kind with the bench model: 2 threads 305 tokens/s idle and 71 with one core busy, 1 thread 185
either way) and on a bigger machine's shape."""

from __future__ import annotations

import pytest

from runner.threads import LOAD_EVERY_S, MEASURED, MIN_GAP_S, RECENT, ROUNDS, OtherLoad, ThreadTuner

# Steps of a trial between two candidate counts.
TRIAL2 = 2 * ROUNDS * (MEASURED + 1)


class Machine:
    """Step seconds by thread count while ``busy`` cores are taken by another program."""

    def __init__(self, cores: int = 2) -> None:
        self.cores = cores
        self.busy = 0.0
        self.now = 0.0

    def step(self, threads: int, width: int = 1) -> float:
        if self.cores == 2:
            tps = {(1, 0): 185, (2, 0): 305, (1, 1): 185, (2, 1): 71}[(threads, round(self.busy))]
        else:  # memory-bound: flat beyond 6 threads; a thread on a busy core stalls them all
            free = self.cores - round(self.busy)
            tps = 40 * min(threads, 6) / (1 if threads <= free else 3)
        dt = width / tps
        self.now += dt
        return dt


class FakeLoad(OtherLoad):
    def __init__(self, machine: Machine) -> None:
        self.machine = machine

    def sample(self) -> float | None:
        return self.machine.busy


def run(tuner: ThreadTuner, machine: Machine, steps: int, width: int = 1) -> list[int]:
    used = []
    for _ in range(steps):
        n = tuner.current
        used.append(n)
        tuner.observe(width, machine.step(n, width))
    return used


def tuner_for(machine: Machine, start: int, load: bool = True, **kw: object) -> ThreadTuner:
    return ThreadTuner(machine.cores, start, load=FakeLoad(machine) if load else None,
                       clock=lambda: machine.now, **kw)  # type: ignore[arg-type]


def test_idle_machine_keeps_every_core() -> None:
    m = Machine()
    t = tuner_for(m, 2)
    t.start_trial("model loaded")
    run(t, m, TRIAL2)
    assert t.current == 2
    assert t.status()["tokens_per_second"] == {"1": 185.0, "2": 305.0}


def test_a_busy_core_found_at_load_gives_one_thread() -> None:
    m = Machine()
    m.busy = 1.0
    t = tuner_for(m, 2)
    t.start_trial("model loaded")
    run(t, m, TRIAL2)
    assert not t.in_trial
    assert t.current == 1
    assert t.status()["last_trial"] == "model loaded"


def test_a_program_that_starts_later_is_noticed_by_the_slowdown() -> None:
    m = Machine()
    t = tuner_for(m, 2, load=False)  # no load figures (a platform psutil cannot read)
    t.start_trial("model loaded")
    run(t, m, TRIAL2 + 2 * RECENT)
    assert t.current == 2
    m.busy = 1.0
    m.now += MIN_GAP_S
    used = run(t, m, 60)
    assert t.current == 1
    assert "slower" in t.last_reason
    # Found within the recent window plus one trial, not after many slow steps.
    assert used.index(1) <= RECENT + 1


def test_a_program_that_stops_is_noticed_by_the_load() -> None:
    m = Machine()
    m.busy = 1.0
    t = tuner_for(m, 2)
    t.start_trial("model loaded")
    run(t, m, TRIAL2)
    assert t.current == 1
    run(t, m, 200)  # load samples under 1 thread set the reference
    m.busy = 0.0  # 1 thread is as fast as before: only the load can tell
    m.now += LOAD_EVERY_S
    run(t, m, 300)
    assert t.current == 2
    assert "load" in t.last_reason
    assert t.trials == 2


def test_a_fixed_count_is_never_changed() -> None:
    m = Machine()
    m.busy = 1.0
    t = tuner_for(m, 2, adaptive=False)
    t.start_trial("model loaded")
    assert set(run(t, m, 100)) == {2}
    assert t.trials == 0
    assert t.status()["recent_tokens_per_second"] == pytest.approx(71, rel=0.01)


def test_a_width_change_restarts_the_trial() -> None:
    m = Machine()
    t = tuner_for(m, 2)
    t.start_trial("model loaded")
    run(t, m, 5)
    run(t, m, 1, width=3)  # a new sequence joined: earlier times do not compare
    assert t.in_trial
    run(t, m, TRIAL2, width=3)
    assert not t.in_trial
    assert t.status()["width"] == 3


def test_a_tie_keeps_the_count_in_use() -> None:
    m = Machine(cores=16)
    t = tuner_for(m, 8)
    t.start_trial("model loaded")
    run(t, m, 60)
    # 6 and more threads are equally fast (memory-bound): the plan's 8 stays.
    assert t.current == 8


def test_big_machines_try_few_counts_around_the_free_cores() -> None:
    m = Machine(cores=16)
    m.busy = 3.0
    t = tuner_for(m, 16)
    t.others = 3.0
    assert t.candidates() == [16, 13, 12, 8]
    t.start_trial("model loaded")
    run(t, m, 60)
    assert t.current in (8, 12, 13)  # all as fast; 16 stalls on a busy core


def test_other_load_is_a_number_of_cores() -> None:
    clock = iter([0.0, 1.0]).__next__
    load = OtherLoad(clock=clock)
    got = load.sample()
    assert got is None or 0.0 <= got <= 64


def test_a_slowdown_the_counts_do_not_explain_is_looked_at_less_and_less() -> None:
    """With a core shared, the other program sometimes lands on ours for a moment: every count
    slows alike for half a second in three. Each such trial keeps the count, and the next one
    waits twice as long: a handful of trials in two minutes instead of one per burst (40)."""
    m = Machine()
    m.busy = 1.0
    t = tuner_for(m, 1, load=False)
    t.start_trial("model loaded")
    while m.now < 120:
        n = t.current
        burst = m.now % 3.0 < 0.5
        dt = m.step(n) * (3 if burst else 1)
        m.now += dt - dt / (3 if burst else 1)
        t.observe(1, dt)
    assert t.current == 1
    assert 3 <= t.trials <= 9, t.trials
