"""The Hugging Face token: paste it once, Hearth checks it with the Hub and keeps it in the OS
keyring, or where none exists in a file only the person's account can read (app/storage/secrets.py).
Gated models (Llama, Gemma, …) need one; public ones do not."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.services.protocols import HubLike
from app.ui.common import open_at

TOKENS_PAGE = "https://huggingface.co/settings/tokens"


class TokenDialog(QDialog):
    """Check and save, or forget, the token; answers come from the hub's signals."""

    def __init__(self, hub: HubLike, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Hugging Face token")
        self._hub = hub
        intro = QLabel(
            "Gated models (Llama, Gemma, …) need a Hugging Face access token with read access, "
            "and their license accepted on the model's page. Create one at "
            f"<a href=\"{TOKENS_PAGE}\">{TOKENS_PAGE}</a>. Hearth keeps it in your system's "
            "keyring, or where there is none in a file only your account can read.")
        intro.setTextFormat(Qt.TextFormat.RichText)  # our own text: the one link is ours
        intro.setOpenExternalLinks(True)
        intro.setWordWrap(True)
        self.note = QLabel(hub.token_note())
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("hf_…")
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_btn = QPushButton("Check and save")
        self.save_btn.setDefault(True)
        self.forget_btn = QPushButton("Forget the saved token")
        buttons.addButton(self.save_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.forget_btn, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.rejected.connect(self.reject)
        self.save_btn.clicked.connect(self._save)
        self.forget_btn.clicked.connect(hub.sign_out)
        hub.account.connect(self._on_account)
        hub.account_failed.connect(self._on_failed)
        layout = QVBoxLayout(self)
        for w in (intro, self.note, self.edit, self.status, buttons):
            layout.addWidget(w)
        # As tall as its wrapped text needs at that width (resize(520, 0) squashed every row to
        # 18 px: a top-level window's minimum does not count wrapped labels).
        layout.activate()
        height = self.heightForWidth(520) if self.hasHeightForWidth() else -1
        open_at(self, 520, max(height, self.sizeHint().height()))

    def _save(self) -> None:
        token = self.edit.text().strip()
        if not token:
            self.status.setText("Paste a token first.")
            return
        self.save_btn.setEnabled(False)
        self.status.setText("Checking the token with Hugging Face…")
        self._hub.sign_in(token)

    def _on_account(self, user: str) -> None:
        self.save_btn.setEnabled(True)
        self.edit.clear()
        self.status.setText(f"Signed in as {user}. The token is saved." if user
                            else "The saved token is forgotten.")
        self.note.setText(self._hub.token_note())

    def _on_failed(self, sentence: str) -> None:
        self.save_btn.setEnabled(True)
        self.status.setText(sentence)
