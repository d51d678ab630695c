"""Which models the chat calls base models, and what it suggests searching for."""

from __future__ import annotations

from app.chat.model_kind import base_model_note
from app.i18n import Text


def test_a_model_without_a_template_is_a_base_model_with_an_instruct_search() -> None:
    note = base_model_note("Gemma 3 270m", False, {"general.basename": "gemma-3"},
                           "gemma-3-270m-Q4_K_M.gguf")
    assert note is not None and "no chat template" in note.text
    assert note.search == "gemma-3 instruct"


def test_names_that_say_base_count_even_with_a_template() -> None:
    note = base_model_note("Qwen2.5 7B Base", True, {}, "")
    assert note is not None and "named as a base model" in note.text
    assert base_model_note("gemma-3-1b-pt", True, {}) is not None


def test_instruct_and_chat_models_get_no_note() -> None:
    assert base_model_note("Qwen2.5 7B Instruct", True, {}) is None
    assert base_model_note("gemma-3-1b-it", True, {"general.finetune": "it"}) is None
    assert base_model_note("Llama 3.1 8B", True, {}) is None  # a template, no base in the name
    # "base" inside another word is not a sign (Database-Coder, Baseline).
    assert base_model_note("Database-Coder 7B", True, {}) is None


def test_the_note_is_one_translatable_sentence_per_case() -> None:
    """The banner is translated whole: a template per reason, the model's name as data, and
    "This model" inside the template when there is no name."""
    note = base_model_note("Gemma 3 270m", False, {})
    assert isinstance(note.text, Text) and note.text.args == {"model": "Gemma 3 270m"}
    assert note.text.template.startswith("{model} has no chat template: ")
    named = base_model_note("Qwen2.5 7B Base", True, {})
    assert named is not None and isinstance(named.text, Text)
    assert named.text.template.startswith("{model} is named as a base model: ")
    nameless = base_model_note("", False, {})
    assert nameless is not None and isinstance(nameless.text, Text)
    assert nameless.text.startswith("This model has no chat template: ")
    assert nameless.text.args == {} and "{" not in nameless.text.template
