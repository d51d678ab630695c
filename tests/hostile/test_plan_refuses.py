"""``hearth plan`` refuses what llama.cpp refuses (issue 24, item 11).

It said "Fits." (exit 0) for files llama.cpp will not load: a tensor dimension of 0, offsets that
do not follow each other, keys of the wrong type, a missing tensor. Here llama.cpp itself is the
judge: seeded mutants of small real models (a dense llama, a Mixtral-style MoE, a gemma3 with
sliding-window layers; tests/fixtures/gguf_mutants.py) are loaded with the real llama.cpp in a
child process (a bad file may abort it), and Hearth's reader must refuse exactly the ones
llama.cpp refuses and accept the ones it loads. About 75 mutants per model; the three models
cost about 20 s on two cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.gguf import GGUFError, read_model
from tests.fixtures.gguf_mutants import LlamaJudge, RawGGUF, mutants
from tests.fixtures.models import TINY, model_path
from tests.fixtures.moe_models import ShapeSpec, shape_path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "tests" / "fixtures" / "hardware" / "reports" / "rtx4090_24gb.json"
SEED = 0

BASES: dict[str, Callable[[], Path]] = {
    "llama": lambda: model_path(TINY),
    "llama-moe": lambda: shape_path(ShapeSpec(n_layer=2, n_embd=64, n_head=4, n_head_kv=2,
                                              n_ff=64, n_vocab=512, n_expert=4,
                                              n_expert_used=2, name="hearth-mutant-moe")),
    "gemma3": lambda: shape_path(ShapeSpec(arch="gemma3", n_layer=2, n_embd=64, n_head=4,
                                           n_head_kv=2, n_ff=128, n_vocab=512, n_swa=64,
                                           head_dim=32, name="hearth-mutant-gemma3")),
}


@pytest.fixture(scope="module")
def judge() -> Iterator[LlamaJudge]:
    with LlamaJudge() as j:
        yield j


def _ours(path: Path) -> str | None:
    """Hearth's verdict: None when it would plan the file, else its sentence."""
    try:
        read_model(path)
    except GGUFError as exc:
        return str(exc)
    return None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("base", list(BASES))
def test_hearth_refuses_exactly_what_llama_cpp_refuses(base: str, judge: LlamaJudge,
                                                       tmp_path: Path) -> None:
    cases = mutants(BASES[base](), seed=SEED)
    missed: list[str] = []  # llama.cpp refuses, Hearth would plan it
    over: list[str] = []  # Hearth refuses a file llama.cpp loads
    refused = 0
    for i, case in enumerate(cases):
        path = tmp_path / f"{i:03d}.gguf"
        path.write_bytes(case.data)
        verdict = judge.judge(path)
        ours = _ours(path)
        refused += not verdict.loaded
        if not verdict.loaded and ours is None:
            missed.append(f"{case.id}: llama.cpp says {verdict.error!r}")
        elif verdict.loaded and ours is not None:
            over.append(f"{case.id}: Hearth says {ours!r}")
        path.unlink()
    assert not missed, "planned though llama.cpp refuses:\n" + "\n".join(missed)
    assert not over, "refused though llama.cpp loads:\n" + "\n".join(over)
    # Both sides are exercised: most mutants are refused, a few harmless ones load.
    assert len(cases) > 60 and len(cases) * 2 // 3 < refused < len(cases)


def _zero_dim_mutant(tmp_path: Path) -> Path:
    g = RawGGUF.parse(model_path(TINY).read_bytes())
    g.tensor("blk.0.attn_q.weight").dims[1] = 0
    g.repack()  # offsets made consistent: only the shape is wrong
    path = tmp_path / "zero-dim.gguf"
    path.write_bytes(g.build())
    return path


@pytest.mark.timeout(180)
@pytest.mark.parametrize("flags", [[], ["--hardware", str(REPORT)]],
                         ids=["this-machine", "recorded-machine"])
def test_hearth_plan_says_what_is_wrong_and_exits_non_zero(flags: list[str], tmp_path: Path,
                                                           judge: LlamaJudge) -> None:
    path = _zero_dim_mutant(tmp_path)
    assert not judge.judge(path).loaded  # the premise: llama.cpp refuses it
    env = dict(os.environ, HEARTH_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-m", "app", "plan", str(path), *flags], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=150)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Fits." not in proc.stdout
    assert ("hearth plan: zero-dim.gguf is damaged: tensor 'blk.0.attn_q.weight' has a "
            "dimension of 0; llama.cpp will refuse it. Download it again.") in proc.stderr
