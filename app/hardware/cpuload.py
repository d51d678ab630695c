"""How many cores other programs keep busy right now (the plan starts with fewer threads then).

A sample over a fraction of a second, taken in the plan's background job: the system's CPU time
minus this process's. (The runner measures the same way while it generates, runner/threads.py;
the two processes share no code by design.)
"""

from __future__ import annotations

import time
from typing import Any

SAMPLE_S = 0.3


def others_busy_cores(interval: float = SAMPLE_S) -> float | None:
    """Cores' worth of CPU time other programs used over ``interval`` seconds; None where the
    OS does not say."""
    import psutil  # here, not at the top: the window imports this module while it starts

    try:
        me = psutil.Process()
        t0, s0, m0 = time.monotonic(), psutil.cpu_times(), me.cpu_times()
        time.sleep(interval)
        t1, s1, m1 = time.monotonic(), psutil.cpu_times(), me.cpu_times()
    except (psutil.Error, OSError, AttributeError):
        return None

    def busy(t: Any) -> float:
        return sum(t) - t.idle - getattr(t, "iowait", 0.0)

    others = (busy(s1) - busy(s0)) - ((m1.user + m1.system) - (m0.user + m0.system))
    return max(0.0, others / (t1 - t0))
