"""The chat settings panel: presets fill the fields, edits emit once after the debounce, showing a
conversation's settings emits nothing, reset, and what the empty fields say."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import QWidget

from app.chat.sampling import FIELDS, PRESETS, Sampling
from app.ui.chat_settings import CUSTOM, ChatSettingsPanel

DEBOUNCE_MS = 80


@pytest.fixture
def panel(qtbot: Any) -> ChatSettingsPanel:
    p = ChatSettingsPanel(debounce_ms=DEBOUNCE_MS)
    qtbot.addWidget(p)
    p.show()
    return p


@pytest.fixture
def emitted(panel: ChatSettingsPanel) -> list[tuple[str, Sampling]]:
    seen: list[tuple[str, Sampling]] = []
    panel.changed.connect(lambda prompt, sampling: seen.append((prompt, sampling)))
    return seen


def choose_preset(qtbot: Any, panel: ChatSettingsPanel, name: str) -> None:
    index = panel.preset.findText(name)
    assert index >= 0
    panel.preset.setCurrentIndex(index)
    panel.preset.activated.emit(index)  # what a user's choice emits (setCurrentIndex does not)


def test_typing_a_prompt_emits_once_after_the_debounce(qtbot: Any, panel: ChatSettingsPanel,
                                                       emitted: list[Any]) -> None:
    panel.prompt.setFocus()
    qtbot.keyClicks(panel.prompt, "Be brief.")
    assert emitted == []  # not per keystroke
    qtbot.waitUntil(lambda: len(emitted) == 1, timeout=10_000)
    qtbot.wait(DEBOUNCE_MS * 3)
    assert emitted == [("Be brief.", Sampling())]


def test_field_edits_are_typed_values(qtbot: Any, panel: ChatSettingsPanel,
                                      emitted: list[Any]) -> None:
    qtbot.keyClicks(panel.fields["temperature"], "0.3")
    qtbot.keyClicks(panel.fields["seed"], "42")
    qtbot.keyClicks(panel.fields["max_tokens"], "128")
    qtbot.waitUntil(lambda: len(emitted) == 1, timeout=10_000)
    qtbot.wait(DEBOUNCE_MS * 3)
    assert emitted == [("", Sampling(temperature=0.3, seed=42, max_tokens=128))]
    assert panel.preset.currentText() == CUSTOM


def test_an_invalid_value_is_shown_and_not_emitted(qtbot: Any, panel: ChatSettingsPanel,
                                                   emitted: list[Any]) -> None:
    qtbot.keyClicks(panel.fields["top_p"], "1.5")
    qtbot.wait(DEBOUNCE_MS * 3)
    assert emitted == []
    assert panel.error.isVisible() and "Top-p" in panel.error.text()
    panel.fields["top_p"].clear()
    qtbot.keyClicks(panel.fields["top_p"], "0.5")
    qtbot.waitUntil(lambda: len(emitted) == 1, timeout=10_000)
    assert emitted[0][1] == Sampling(top_p=0.5)
    assert not panel.error.isVisible()


def test_presets_fill_the_fields_and_keep_the_seed(qtbot: Any, panel: ChatSettingsPanel,
                                                   emitted: list[Any]) -> None:
    panel.set_values("Hi", Sampling(seed=9, temperature=0.1))
    choose_preset(qtbot, panel, "Creative")
    creative = next(p for p in PRESETS if p.name == "Creative").sampling
    assert panel.fields["temperature"].text() == str(creative.temperature)
    assert panel.fields["top_k"].text() == str(creative.top_k)
    assert panel.fields["seed"].text() == "9"
    qtbot.waitUntil(lambda: len(emitted) == 1, timeout=10_000)
    assert emitted[0] == ("Hi", Sampling(seed=9, temperature=creative.temperature,
                                         top_p=creative.top_p, top_k=creative.top_k,
                                         min_p=creative.min_p,
                                         repeat_penalty=creative.repeat_penalty))
    assert panel.preset.currentText() == "Creative"
    # Editing one value makes the settings custom.
    panel.fields["top_k"].clear()
    qtbot.keyClicks(panel.fields["top_k"], "7")
    assert panel.preset.currentText() == CUSTOM


def test_set_values_emits_nothing(qtbot: Any, panel: ChatSettingsPanel,
                                  emitted: list[Any]) -> None:
    sampling = Sampling(temperature=0.7, top_p=0.95, top_k=40, min_p=0.05, repeat_penalty=1.0)
    panel.set_values("You are a pirate.", sampling, Sampling(temperature=0.6))
    qtbot.wait(DEBOUNCE_MS * 3)
    panel.flush()
    assert emitted == []
    assert panel.values() == ("You are a pirate.", sampling)
    assert panel.preset.currentText() == "Balanced"
    # A pending edit is dropped when another conversation is shown.
    qtbot.keyClicks(panel.prompt, " Arr.")
    panel.set_values("Other", Sampling())
    qtbot.wait(DEBOUNCE_MS * 3)
    assert emitted == []
    assert panel.preset.currentText() == "Model default"


def test_reset_empties_the_sampling_and_keeps_the_prompt(qtbot: Any, panel: ChatSettingsPanel,
                                                         emitted: list[Any]) -> None:
    panel.set_values("Keep me", Sampling(temperature=1.5, seed=3, max_tokens=10))
    qtbot.mouseClick(panel.reset, Qt.MouseButton.LeftButton)
    assert emitted == [("Keep me", Sampling())]
    assert all(edit.text() == "" for edit in panel.fields.values())
    qtbot.wait(DEBOUNCE_MS * 3)
    assert len(emitted) == 1


def test_empty_fields_show_the_models_defaults(panel: ChatSettingsPanel) -> None:
    panel.set_values("", Sampling(), Sampling(temperature=0.6, top_k=20))
    assert panel.fields["temperature"].placeholderText() == "model default: 0.6"
    assert "from the model file" in panel.fields["temperature"].toolTip()
    assert panel.fields["top_k"].placeholderText() == "model default: 20"
    assert panel.fields["top_p"].placeholderText() == "model default: 0.95"  # llama.cpp's
    assert "names none" in panel.fields["top_p"].toolTip()
    assert panel.fields["max_tokens"].placeholderText() == "model default: no limit"
    assert panel.fields["seed"].placeholderText() == "model default: random"
    panel.set_model_defaults(Sampling(temperature=1.0))
    assert panel.fields["temperature"].placeholderText() == "model default: 1"


def test_every_control_is_named_and_in_reading_order(panel: ChatSettingsPanel) -> None:
    controls = [panel.prompt, panel.preset, *panel.fields.values(), panel.reset]
    assert all(c.accessibleName() for c in controls)
    assert [panel.fields[f.name].accessibleName() for f in FIELDS] == [f.label for f in FIELDS]
    panel.prompt.setFocus()
    order: list[QWidget] = [panel.prompt]
    widget: QWidget | None = panel.prompt
    for _ in controls[1:]:
        assert widget is not None
        widget = widget.nextInFocusChain()
        while widget is not None and widget not in controls:
            widget = widget.nextInFocusChain()
        assert widget is not None
        order.append(widget)
    assert order == controls
    assert panel.prompt.tabChangesFocus()  # Tab leaves the prompt instead of typing a tab


def test_leaving_the_prompt_emits_at_once(qtbot: Any) -> None:
    panel = ChatSettingsPanel(debounce_ms=60_000)  # the timer will not be what emits
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    seen: list[Any] = []
    panel.changed.connect(lambda prompt, sampling: seen.append(prompt))
    panel.prompt.setFocus()
    qtbot.waitUntil(panel.prompt.hasFocus, timeout=10_000)
    qtbot.keyClicks(panel.prompt, "Short answers.")
    assert seen == []
    panel.fields["temperature"].setFocus()
    qtbot.waitUntil(lambda: seen == ["Short answers."], timeout=10_000)


def test_the_defaults_are_shown_in_the_locales_format_and_a_comma_is_read(
        qtbot: Any, panel: ChatSettingsPanel, emitted: list[Any]) -> None:
    QLocale.setDefault(QLocale("de_DE"))
    try:
        panel.set_values("", Sampling(top_p=0.9), Sampling(temperature=0.8, top_k=40))
        assert panel.fields["temperature"].placeholderText() == "model default: 0,8"
        assert panel.fields["top_k"].placeholderText() == "model default: 40"
        assert panel.fields["top_p"].text() == "0,9"  # a value shown as the person types it
        assert "Range: 0 to 5." in panel.fields["temperature"].toolTip()
        panel.fields["temperature"].setText("0,7")
        panel.flush()
        assert emitted[-1] == ("", Sampling(temperature=0.7, top_p=0.9))
        assert not panel.error.isVisible()
    finally:
        QLocale.setDefault(QLocale("en_US"))
