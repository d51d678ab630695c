"""Several clients at once: each gets its own, correct reply (parallel slots and the FIFO queue)."""

from __future__ import annotations

import asyncio

import openai
import pytest

from tests.integration.conftest import spawn_runner, stop_runner


async def _stream(client: openai.AsyncOpenAI, i: int) -> tuple[str, int]:
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": f"client number {i}"}], max_tokens=24,
        temperature=0, stream=True, stream_options={"include_usage": True},
        extra_body={"ignore_eos": True})
    text, n = "", 0
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage:
            n = chunk.usage.completion_tokens
    return text, n


@pytest.mark.parametrize("parallel", [1, 4])
def test_eight_concurrent_streams_get_separate_correct_replies(parallel: int) -> None:
    r = spawn_runner("--parallel", str(parallel), "--ctx-size", str(1024 * parallel))
    try:
        r.wait_listening()
        r.wait_ready()
        client = openai.AsyncOpenAI(base_url=r.url + "/v1", api_key=r.key, max_retries=0)

        async def run() -> list[tuple[str, int]]:
            return list(await asyncio.gather(*(_stream(client, i) for i in range(8))))

        together = asyncio.run(run())
        sync = openai.OpenAI(base_url=r.url + "/v1", api_key=r.key, max_retries=0)
        for i, (text, n) in enumerate(together):
            assert n == 24
            alone = sync.chat.completions.create(
                model="m", messages=[{"role": "user", "content": f"client number {i}"}],
                max_tokens=24, temperature=0, extra_body={"ignore_eos": True})
            # Greedy decoding: the reply under load is the reply alone, so no stream got
            # another client's tokens.
            assert text == alone.choices[0].message.content
        assert len({t for t, _ in together}) > 1
    finally:
        assert stop_runner(r) == 0
