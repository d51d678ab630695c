"""The Settings dialog's sections but sharing (sharing.py): where models live, the Hugging Face
token, the runtime, the theme, the language and the log folder. Each section builds its own
controls and reacts to its own service; the dialog only puts them on its pages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QWidget

from app.library.folders import LibraryFolders
from app.runtimes.catalog import Runtime
from app.runtimes.choose import RuntimeChoice
from app.services.protocols import HubLike, LocalModelsLike
from app.ui.lang import LANGUAGES, current_language, resolve, tr, ui_text
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.layout import Section, note, setting_row
from app.ui.style.icons import icon


def theme_choices() -> tuple[tuple[str, str, str], ...]:
    """(shown, saved, icon) for each theme, in the window's language."""
    return ((tr("Follow the system"), "system", "monitor"), (tr("Light"), "light", "light"),
            (tr("Dark"), "dark", "dark"))


# QFileDialog.getExistingDirectory's shape: (parent, caption, start) -> a folder or "".
ChooseFolder = Callable[[QWidget, str, str], str]


def _path_label(name: str) -> QLabel:
    label = note(tone="", kind="small", selectable=True)
    label.setObjectName(name)
    return label


class ModelsBox(Section):
    """Hearth's download folder and the other folders listed, kept by the local-models
    service (library.json), not by the app's settings."""

    def __init__(self, models: LocalModelsLike, folders: Callable[[], LibraryFolders],
                 choose_folder: ChooseFolder, edit: SettingsEdit) -> None:
        """``folders()``: the library's folders now; ``choose_folder`` asks for one."""
        super().__init__(tr("Folders"))
        self._models = models
        self._folders = folders
        self._choose_folder = choose_folder
        self._edit = edit
        self.models_dir_label = _path_label("models_dir")
        self.models_dir_btn = QPushButton(icon("open"), tr("Change…"))
        self.models_dir_btn.setAccessibleName(tr("Change the download folder"))
        self.models_dir_btn.setToolTip(tr("Where Hearth downloads models to (the only folder "
                                          "Hearth ever deletes from)"))
        self.models_dir_btn.clicked.connect(self.change_models_dir)
        self.extra_label = _path_label("extra_folders")
        self.add_btn = QPushButton(icon("new"), tr("Add folder…"))
        self.add_btn.setAccessibleName(tr("Add a folder of models"))
        self.add_btn.setToolTip(tr("Also list the GGUF models in a folder of your choice"))
        self.add_btn.clicked.connect(self.add_folder)
        self.body.addWidget(setting_row(tr("Download folder"), self.models_dir_label,
                                        self.models_dir_btn))
        self.add_divider()
        self.body.addWidget(setting_row(tr("Also listed"), self.extra_label, self.add_btn))
        self.body.addWidget(note(tr("Models that LM Studio, Ollama, Jan, GPT4All or the Hugging "
                                    "Face cache already have are found without adding their "
                                    "folders.")))
        # Bound: Qt disconnects it when the box goes; the service stays. A rescan may follow
        # a folder change made elsewhere (the Models tab).
        models.changed.connect(self._on_models_changed)
        self.show_folders()

    def change_models_dir(self) -> None:
        folder = self._choose_folder(self.window(), tr("Where Hearth downloads models"),
                                     str(self._folders().models_dir))
        if folder:
            self._models.set_models_dir(folder)
            self.show_folders()

    def add_folder(self) -> None:
        folder = self._choose_folder(self.window(), tr("Add a folder of GGUF models"), "")
        if folder:
            self._models.add_folder(folder)
            self.show_folders()

    def show_folders(self) -> None:
        try:
            f = self._folders()
        except OSError as exc:  # the default reads library.json
            self._edit.say(tr("The library's folders cannot be read: {error}").format(
                error=exc), error=True)
            return
        self.models_dir_label.setText(str(f.models_dir))
        self.extra_label.setText("\n".join(str(e) for e in f.extra) if f.extra else tr("None"))

    def _on_models_changed(self, _rows: object) -> None:
        self.show_folders()


class HubBox(Section):
    """Whether a Hugging Face token is kept, and the way to the token dialog."""

    def __init__(self, hub: HubLike) -> None:
        super().__init__(tr("Hugging Face"))
        self._hub = hub
        self.token_note = note(ui_text(hub.token_note()), tone="muted")
        self.token_note.setObjectName("token_note")
        self.token_btn = QPushButton(tr("Token…"))
        self.token_btn.setAccessibleName(tr("Hugging Face token"))
        self.token_btn.setToolTip(tr("A Hugging Face token for gated models, kept in the "
                                     "system keyring"))
        self.token_btn.clicked.connect(self.edit_token)
        self.body.addWidget(setting_row(tr("Access token"), self.token_note, self.token_btn))
        hub.account.connect(self._on_account)  # the token dialog's answer, once checked

    def edit_token(self) -> None:
        from app.ui.token_dialog import TokenDialog

        dialog = TokenDialog(self._hub, self.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def _on_account(self, _user: str) -> None:
        self.token_note.setText(ui_text(self._hub.token_note()))


class RuntimeBox(Section):
    """Which llama.cpp build the runner serves with (from the next load)."""

    def __init__(self, edit: SettingsEdit, runtimes: Callable[[], list[Runtime]],
                 in_use: RuntimeChoice | None = None) -> None:
        """``runtimes()``: the installed ones (reads a few small manifest files); ``in_use``:
        the one serving now, if chosen."""
        super().__init__(tr("Runtime"))
        self._edit = edit
        chosen = edit.settings.runtime
        self.runtime_combo = QComboBox()
        self.runtime_combo.setAccessibleName(tr("Runtime"))
        self.runtime_combo.addItem(tr("Automatic (the best one for this computer)"), "")
        for rt in runtimes():
            text = (tr("{runtime}: cannot be used ({why})").format(
                runtime=rt.label(), why=ui_text(rt.problem)) if rt.problem else rt.label())
            self.runtime_combo.addItem(text, rt.name)
        if chosen and self.runtime_combo.findData(chosen) < 0:
            # Kept in the settings, so a runtime removed by hand is not silently replaced.
            self.runtime_combo.addItem(tr("{runtime} (not installed)").format(runtime=chosen),
                                       chosen)
        self.runtime_combo.setCurrentIndex(max(0, self.runtime_combo.findData(chosen)))
        self.runtime_combo.activated.connect(self._on_runtime_chosen)
        about = tr("The llama.cpp build the runner serves with: CUDA for NVIDIA, Metal on Apple "
                   "Silicon, Vulkan for AMD and Intel, else the CPU. Each is self-tested before "
                   "use; a change applies from the next load.")
        self.runtime_note = note(
            tr("In use: {runtime}. {about}").format(runtime=in_use.runtime.label(), about=about)
            if in_use else about)
        self.runtime_note.setObjectName("runtime_note")
        self.body.addWidget(setting_row(tr("llama.cpp build"), None, self.runtime_combo))
        self.body.addWidget(self.runtime_note)

    def _on_runtime_chosen(self, index: int) -> None:
        self._edit.update(runtime=str(self.runtime_combo.itemData(index) or ""))


class AppearanceBox(Section):
    """The theme, applied as it is chosen."""

    def __init__(self, edit: SettingsEdit, apply_theme: Callable[[str], None]) -> None:
        """``apply_theme(theme)`` switches the theme (ThemeController.apply)."""
        super().__init__(tr("Theme"))
        self._edit = edit
        self._apply_theme = apply_theme
        self.theme_combo = QComboBox()
        self.theme_combo.setAccessibleName(tr("Theme"))
        choices = theme_choices()
        for text, key, icon_name in choices:
            self.theme_combo.addItem(icon(icon_name), text, key)
        self.theme_combo.setCurrentIndex(
            next((i for i, (_t, k, _i) in enumerate(choices) if k == edit.settings.theme), 0))
        self.theme_combo.activated.connect(self._on_theme_chosen)
        self.body.addWidget(setting_row(
            tr("Colours"),
            note(tr("“Follow the system” switches with your system's light or dark mode.")),
            self.theme_combo))

    def _on_theme_chosen(self, index: int) -> None:
        theme = str(self.theme_combo.itemData(index))
        self._apply_theme(theme)
        self._edit.update(theme=theme)


class LanguageBox(Section):
    """The window's language, saved in the settings; it applies from the next start (the
    windows already built keep their words)."""

    def __init__(self, edit: SettingsEdit) -> None:
        super().__init__(tr("Language"))
        self._edit = edit
        self.language_combo = QComboBox()
        self.language_combo.setAccessibleName(tr("Language"))
        self.language_combo.addItem(
            icon("monitor"),
            tr("Follow the system ({language})").format(language=LANGUAGES[resolve("system")]),
            "system")
        for code, name in LANGUAGES.items():  # each language in its own words: data
            self.language_combo.addItem(name, code)
        saved = self.language_combo.findData(edit.settings.language)
        self.language_combo.setCurrentIndex(max(0, saved))
        self.language_combo.activated.connect(self._on_language_chosen)
        self.restart_note = note(tone="info", kind="")
        self.restart_note.setObjectName("restart_note")
        self.restart_note.hide()
        self.body.addWidget(setting_row(
            tr("Hearth's language"),
            note(tr("A change applies the next time Hearth starts. Model names, file names "
                    "and what the models write stay as they are.")),
            self.language_combo))
        self.body.addWidget(self.restart_note)

    def _on_language_chosen(self, index: int) -> None:
        choice = str(self.language_combo.itemData(index))
        if not self._edit.update(language=choice):
            return
        same = resolve(choice) == current_language()
        self.restart_note.setText(
            "" if same else tr("Hearth shows the new language the next time it starts."))
        self.restart_note.setVisible(not same)


class LogsBox(Section):
    """Where Hearth's and the runner's logs are, and a button that opens the folder."""

    def __init__(self, log_dir: Path, open_url: Callable[[QUrl], object]) -> None:
        """``open_url`` opens the folder (QDesktopServices.openUrl)."""
        super().__init__(tr("Logs"))
        self._log_dir = log_dir
        self._open_url = open_url
        self.log_label = _path_label("log_folder")
        self.log_label.setText(str(log_dir))
        self.log_btn = QPushButton(icon("open"), tr("Open the log folder"))
        self.log_btn.setAccessibleName(tr("Open the log folder"))
        self.log_btn.setToolTip(tr("Hearth's and the model runner's logs: attach them to a bug "
                                   "report"))
        self.log_btn.clicked.connect(self.open_log_folder)
        self.body.addWidget(setting_row(tr("Log folder"), self.log_label, self.log_btn))

    def open_log_folder(self) -> None:
        self._open_url(QUrl.fromLocalFile(str(self._log_dir)))
