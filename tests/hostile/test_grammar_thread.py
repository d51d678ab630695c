"""The grammar thread's deep stack, with the limits out of the way (issue 24, item 1).

The limits refuse deep grammars before llama.cpp sees them; this is the second wall behind them.
In a child process, because the thing tested is whether a process dies.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import REPO

DEPTH = 100_000  # llama.cpp's parser overflowed an 8 MiB stack between 15,000 and 20,000 levels

CHILD = textwrap.dedent("""
    import sys, threading
    import llama_cpp
    from runner.grammar import GrammarWorker

    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(sys.argv[1].encode(), params)
    vocab = llama_cpp.llama_model_get_vocab(model)
    depth = int(sys.argv[3])
    gbnf = ("root ::= " + "(" * depth + '"a"' + ")" * depth).encode()

    def parse():
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf, b"root")
        llama_cpp.llama_sampler_free(sampler)
        return bool(sampler)

    if sys.argv[2] == "worker":
        ok = GrammarWorker().submit(parse).result(120)
    else:  # a thread as Python makes them: the scheduler's kind
        out = []
        thread = threading.Thread(target=lambda: out.append(parse()))
        thread.start()
        thread.join()
        ok = out[0]
    print("parsed" if ok else "refused", flush=True)
""")


def _run(where: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(model_path(TINY)), where, str(DEPTH)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(180)
def test_the_grammar_thread_parses_what_would_overflow_an_ordinary_thread() -> None:
    done = _run("worker")
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-1500:]}"
    assert done.stdout.strip() == "parsed"


@pytest.mark.timeout(180)
@pytest.mark.skipif(sys.platform != "linux", reason="the control measures Linux's 8 MiB default")
def test_control_an_ordinary_thread_overflows() -> None:
    """Without this, the test above would pass just as well if the parser stopped recursing."""
    done = _run("ordinary")
    assert done.returncode < 0, f"exit {done.returncode}: {done.stdout} {done.stderr[-500:]}"
