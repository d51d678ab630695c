"""Prompt lookup's index: drafts what followed the same n-gram earlier, never a stale guess."""

from __future__ import annotations

from runner.speculative import NgramIndex, SpecCounts, Speculation


def test_what_followed_the_ngram_last_time_is_drafted() -> None:
    index = NgramIndex(3)
    tokens = [1, 2, 3, 4, 5, 6, 7, 9, 9, 1, 2]
    assert index.draft(tokens, 3, 4) == [4, 5, 6, 7]
    assert index.draft(tokens, 8, 4) == []  # 1 2 8 was never seen
    assert index.draft([5, 6], 7, 4) == []  # too short to hold an n-gram and what follows


def test_the_latest_occurrence_wins_and_the_draft_is_bounded() -> None:
    index = NgramIndex(2)
    tokens = [1, 2, 3, 1, 2, 4, 4, 4, 1]
    assert index.draft(tokens, 2, 2) == [4, 4]  # after "1 2": 3 the first time, 4 the latest
    assert index.draft(tokens, 2, 0) == []


def test_tokens_since_removed_are_a_miss_not_a_wrong_draft() -> None:
    index = NgramIndex(2)
    tokens = [1, 2, 3, 4, 5, 6]
    assert index.draft(tokens, 1, 3) == []
    del tokens[2:]  # a new request kept only the first two tokens
    index.truncate(2)
    tokens += [7, 8]
    # "1 2" once began at 0 and was followed by 3; now by 7: the draft says what is there now.
    assert index.draft(tokens, 1, 3) == []  # "8 1" never occurred
    assert index.draft([*tokens, 1], 2, 3) == [7, 8, 1]


def test_counts_say_acceptance_and_tokens_per_step() -> None:
    counts = SpecCounts(steps=4, drafted=12, accepted=9, generated=13)
    out = counts.to_json(Speculation("draft-simple", n_max=3), "draft.gguf")
    assert out["acceptance"] == 0.75 and out["tokens_per_step"] == 3.25
    assert out["draft_model"] == "draft.gguf" and out["n_max"] == 3
    assert SpecCounts().to_json(Speculation("ngram-simple"), None)["acceptance"] is None
    assert Speculation("ngram-simple").most == 48


def test_a_repeated_token_drafts_its_repeats() -> None:
    # The n-gram just written has no follower yet: the latest one that has is used.
    index = NgramIndex(1)
    assert index.draft([7, 5, 5, 5], 5, 3) == [5]


def test_a_draft_model_goes_whole_to_the_first_gpu_as_the_plan_counts_it() -> None:
    """The app's plan puts a draft's weights, cache and compute on the first GPU with the
    model's layers (app/planner/memory.py draft_bytes); llama.cpp would otherwise split it over
    every GPU by their free memory."""
    import llama_cpp

    from runner.params import model_params
    from runner.settings import LoadSettings

    keep: list[object] = []
    draft = model_params(LoadSettings(model="d.gguf", first_gpu_only=True,
                                      tensor_split=(1.0, 1.0)), keep)
    assert (draft.split_mode, draft.main_gpu) == (llama_cpp.LLAMA_SPLIT_MODE_NONE, 0)
    model = model_params(LoadSettings(model="m.gguf", tensor_split=(1.0, 1.0)), keep)
    assert model.split_mode == llama_cpp.LLAMA_SPLIT_MODE_LAYER
