"""The GPU speed check's rehearsal: tests/gpu/speed_check.py --rehearse runs both parts on the
CPU here (tiny models, the runner alone), so the script that runs once on a lent GPU machine
cannot rot between such machines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_speed_check_rehearses_both_parts_and_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "gpu" / "speed_check.py"), "--rehearse", str(out),
         "--work", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "speed-check.json").read_text())
    trial = report["trial"]["result"]
    assert "error" not in trial, trial
    assert trial["trial"]["state"] == "done"
    measured = trial["trial"]["measured"]
    # A machine too busy to measure within the budget says so instead (never a silent nothing).
    assert (measured and measured[0]["prompt_tokens_per_s"] > 0) or trial["trial"]["why"], trial
    if trial["trial"]["chosen"]:  # the choice was then loaded and timed against the plan's
        assert trial["measured_gain"] > 0 and set(trial["best"]) == {"plan", "chosen"}
    spec = report["speculation"]["result"]
    assert "error" not in spec, spec
    runner = spec["servers"]["runner"]
    assert set(runner) == {"plain", "matching draft", "stranger draft"}
    assert all(r["tps"] > 0 for r in runner.values())
    for case in ("matching draft", "stranger draft"):
        assert runner[case]["after_measure"]["verdict"]["gain"] > 0
    md = (out / "speed-check.md").read_text()
    assert "## Speed trial" in md and "| runner | matching draft |" in md
