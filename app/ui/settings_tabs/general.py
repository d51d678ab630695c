"""The General tab's boxes, but sharing (sharing.py): where models live, the Hugging Face token,
the runtime, the theme and the log folder. Each box builds its own controls and reacts to its
own service; the dialog only stacks them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.library.folders import LibraryFolders
from app.runtimes.catalog import Runtime
from app.runtimes.choose import RuntimeChoice
from app.services.protocols import HubLike, LocalModelsLike
from app.ui.common import plain_label
from app.ui.settings_tabs.edit import SettingsEdit
from app.ui.settings_tabs.layout import at_left, beside

THEME_CHOICES = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))

# QFileDialog.getExistingDirectory's shape: (parent, caption, start) -> a folder or "".
ChooseFolder = Callable[[QWidget, str, str], str]


class ModelsBox(QGroupBox):
    """Hearth's download folder and the other folders listed, kept by the local-models
    service (library.json), not by the app's settings."""

    def __init__(self, models: LocalModelsLike, folders: Callable[[], LibraryFolders],
                 choose_folder: ChooseFolder, edit: SettingsEdit) -> None:
        """``folders()``: the library's folders now; ``choose_folder`` asks for one."""
        super().__init__("Models")
        self._models = models
        self._folders = folders
        self._choose_folder = choose_folder
        self._edit = edit
        self.models_dir_label = plain_label(wrap=True)
        self.models_dir_label.setObjectName("models_dir")
        self.models_dir_btn = QPushButton("Change…")
        self.models_dir_btn.setAccessibleName("Change the download folder")
        self.models_dir_btn.setToolTip("Where Hearth downloads models to (the only folder Hearth "
                                       "ever deletes from)")
        self.models_dir_btn.clicked.connect(self.change_models_dir)
        self.extra_label = plain_label(wrap=True)
        self.extra_label.setObjectName("extra_folders")
        self.add_btn = QPushButton("Add folder…")
        self.add_btn.setAccessibleName("Add a folder of models")
        self.add_btn.setToolTip("Also list the GGUF models in a folder of your choice")
        self.add_btn.clicked.connect(self.add_folder)
        form = QFormLayout(self)
        form.addRow("Download folder:", beside(self.models_dir_label, self.models_dir_btn))
        form.addRow("Also listed:", beside(self.extra_label, self.add_btn))
        form.addRow(plain_label("Models that LM Studio, Ollama, Jan, GPT4All or the Hugging Face "
                                "cache already have are found without adding their folders.",
                                muted=True, selectable=False))
        # Bound: Qt disconnects it when the box goes; the service stays. A rescan may follow
        # a folder change made elsewhere (the Models tab).
        models.changed.connect(self._on_models_changed)
        self.show_folders()

    def change_models_dir(self) -> None:
        folder = self._choose_folder(self.window(), "Where Hearth downloads models",
                                     str(self._folders().models_dir))
        if folder:
            self._models.set_models_dir(folder)
            self.show_folders()

    def add_folder(self) -> None:
        folder = self._choose_folder(self.window(), "Add a folder of GGUF models", "")
        if folder:
            self._models.add_folder(folder)
            self.show_folders()

    def show_folders(self) -> None:
        try:
            f = self._folders()
        except OSError as exc:  # the default reads library.json
            self._edit.say(f"The library's folders cannot be read: {exc}", error=True)
            return
        self.models_dir_label.setText(str(f.models_dir))
        self.extra_label.setText("\n".join(str(e) for e in f.extra) if f.extra else "None")

    def _on_models_changed(self, _rows: object) -> None:
        self.show_folders()


class HubBox(QGroupBox):
    """Whether a Hugging Face token is kept, and the way to the token dialog."""

    def __init__(self, hub: HubLike) -> None:
        super().__init__("Hugging Face")
        self._hub = hub
        self.token_note = plain_label(hub.token_note(), wrap=True)
        self.token_note.setObjectName("token_note")
        self.token_btn = QPushButton("Token…")
        self.token_btn.setAccessibleName("Hugging Face token")
        self.token_btn.setToolTip("A Hugging Face token for gated models, kept in the system "
                                  "keyring")
        self.token_btn.clicked.connect(self.edit_token)
        layout = QVBoxLayout(self)
        layout.addWidget(beside(self.token_note, self.token_btn))
        hub.account.connect(self._on_account)  # the token dialog's answer, once checked

    def edit_token(self) -> None:
        from app.ui.token_dialog import TokenDialog

        dialog = TokenDialog(self._hub, self.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def _on_account(self, _user: str) -> None:
        self.token_note.setText(self._hub.token_note())


class RuntimeBox(QGroupBox):
    """Which llama.cpp build the runner serves with (from the next load)."""

    def __init__(self, edit: SettingsEdit, runtimes: Callable[[], list[Runtime]],
                 in_use: RuntimeChoice | None = None) -> None:
        """``runtimes()``: the installed ones (reads a few small manifest files); ``in_use``:
        the one serving now, if chosen."""
        super().__init__("Runtime")
        self._edit = edit
        chosen = edit.settings.runtime
        self.runtime_combo = QComboBox()
        self.runtime_combo.setAccessibleName("Runtime")
        self.runtime_combo.addItem("Automatic (the best one for this computer)", "")
        for rt in runtimes():
            text = rt.label() + (f": cannot be used ({rt.problem})" if rt.problem else "")
            self.runtime_combo.addItem(text, rt.name)
        if chosen and self.runtime_combo.findData(chosen) < 0:
            # Kept in the settings, so a runtime removed by hand is not silently replaced.
            self.runtime_combo.addItem(f"{chosen} (not installed)", chosen)
        self.runtime_combo.setCurrentIndex(max(0, self.runtime_combo.findData(chosen)))
        self.runtime_combo.activated.connect(self._on_runtime_chosen)
        self.runtime_note = plain_label(
            ("In use: " + in_use.runtime.label() + ". " if in_use else "")
            + "The llama.cpp build the runner serves with: CUDA for NVIDIA, Metal on Apple "
              "Silicon, Vulkan for AMD and Intel, else the CPU. Each is self-tested before "
              "use; a change applies from the next load.", wrap=True)
        self.runtime_note.setObjectName("runtime_note")
        form = QFormLayout(self)
        form.addRow("Runtime:", at_left(self.runtime_combo))
        form.addRow(self.runtime_note)

    def _on_runtime_chosen(self, index: int) -> None:
        self._edit.update(runtime=str(self.runtime_combo.itemData(index) or ""))


class AppearanceBox(QGroupBox):
    """The theme, applied as it is chosen."""

    def __init__(self, edit: SettingsEdit, apply_theme: Callable[[str], None]) -> None:
        """``apply_theme(theme)`` switches the theme (ThemeController.apply)."""
        super().__init__("Appearance")
        self._edit = edit
        self._apply_theme = apply_theme
        self.theme_combo = QComboBox()
        self.theme_combo.setAccessibleName("Theme")
        for text, key in THEME_CHOICES:
            self.theme_combo.addItem(text, key)
        self.theme_combo.setCurrentIndex(
            next((i for i, (_t, k) in enumerate(THEME_CHOICES) if k == edit.settings.theme), 0))
        self.theme_combo.activated.connect(self._on_theme_chosen)
        form = QFormLayout(self)
        form.addRow("Theme:", at_left(self.theme_combo))

    def _on_theme_chosen(self, index: int) -> None:
        theme = str(self.theme_combo.itemData(index))
        self._apply_theme(theme)
        self._edit.update(theme=theme)


class LogsBox(QGroupBox):
    """Where Hearth's and the runner's logs are, and a button that opens the folder."""

    def __init__(self, log_dir: Path, open_url: Callable[[QUrl], object]) -> None:
        """``open_url`` opens the folder (QDesktopServices.openUrl)."""
        super().__init__("Logs")
        self._log_dir = log_dir
        self._open_url = open_url
        self.log_label = plain_label(str(log_dir), wrap=True)
        self.log_label.setObjectName("log_folder")
        self.log_btn = QPushButton("Open the log folder")
        self.log_btn.setToolTip("Hearth's and the model runner's logs: attach them to a bug "
                                "report")
        self.log_btn.clicked.connect(self.open_log_folder)
        layout = QVBoxLayout(self)
        layout.addWidget(beside(self.log_label, self.log_btn))

    def open_log_folder(self) -> None:
        self._open_url(QUrl.fromLocalFile(str(self._log_dir)))
