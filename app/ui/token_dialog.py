"""The Hugging Face token: paste it once, Hearth checks it with the Hub and keeps it in the OS
keyring, or where none exists in a file only the person's account can read (app/storage/secrets.py).
Gated models (Llama, Gemma, …) need one; public ones do not.

A compact dialog: a title, a sentence with the link to the tokens page, the field, a banner for
the Hub's answer (an error in the danger tone, a success in the success tone) and the buttons,
"Check and save" being the primary one."""

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
from app.ui.lang import tr, ui_text
from app.ui.style.components import Banner, heading, primary_button
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

TOKENS_PAGE = "https://huggingface.co/settings/tokens"
WIDTH = 500  # wide enough for the intro in four lines, narrow enough to read as a small dialog


class TokenDialog(QDialog):
    """Check and save, or forget, the token; answers come from the hub's signals."""

    def __init__(self, hub: HubLike, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Hugging Face token"))
        self._hub = hub
        title = heading(tr("Hugging Face token"), "heading")
        intro = QLabel(tr(
            "Gated models (Llama, Gemma, …) need an access token with read access, and their "
            "license accepted on the model's page. Create one at {link}. Hearth keeps it in "
            "your system's keyring, or where there is none in a file only your account can "
            "read.").format(link=f"<a href=\"{TOKENS_PAGE}\">huggingface.co/settings/tokens</a>"))
        intro.setTextFormat(Qt.TextFormat.RichText)  # our own text: the one link is ours
        intro.setOpenExternalLinks(True)
        intro.setWordWrap(True)
        intro.setProperty("tone", "muted")
        self.note = QLabel(ui_text(hub.token_note()))
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("hf_…")
        self.edit.setAccessibleName(tr("Access token"))
        self.edit.returnPressed.connect(self._save)
        self.banner = Banner(closable=False)
        self.status = self.banner.text
        self.status.setObjectName("token_status")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_btn = primary_button(tr("Check and save"), icon_name="check")
        self.save_btn.setDefault(True)
        self.forget_btn = QPushButton(icon("delete"), tr("Forget the saved token"))
        self.forget_btn.setAccessibleName(tr("Forget the saved token"))
        self.forget_btn.setAutoDefault(False)
        buttons.addButton(self.save_btn, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.forget_btn, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.rejected.connect(self.reject)
        self.save_btn.clicked.connect(self._save)
        self.forget_btn.clicked.connect(hub.sign_out)
        hub.account.connect(self._on_account)
        hub.account_failed.connect(self._on_failed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACING.xxl, SPACING.xl, SPACING.xxl, SPACING.xl)
        layout.setSpacing(SPACING.md)
        for w in (title, intro, self.note, self.edit, self.banner):
            layout.addWidget(w)
        layout.addSpacing(SPACING.sm)
        layout.addWidget(buttons)
        # As tall as its wrapped text needs at that width (resize(520, 0) squashed every row to
        # 18 px: a top-level window's minimum does not count wrapped labels).
        layout.activate()
        height = self.heightForWidth(WIDTH) if self.hasHeightForWidth() else -1
        open_at(self, WIDTH, max(height, self.sizeHint().height()))

    def _say(self, text: str, tone: str) -> None:
        self.banner.show_message(text, tone)
        self._fit()

    def _fit(self) -> None:
        """Grow to the height the rows need at this width (the banner just appeared): a
        top-level window does not grow by itself for wrapped text, it squeezes the rows."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        need = self.heightForWidth(self.width()) if self.hasHeightForWidth() else -1
        need = max(need, self.sizeHint().height())
        if need > self.height():
            self.resize(self.width(), need)

    def _save(self) -> None:
        token = self.edit.text().strip()
        if not token:
            self._say(tr("Paste a token first."), "warning")
            return
        self.save_btn.setEnabled(False)
        self._say(tr("Checking the token with Hugging Face…"), "info")
        self._hub.sign_in(token)

    def _on_account(self, user: str) -> None:
        self.save_btn.setEnabled(True)
        self.edit.clear()
        self._say(tr("Signed in as {user}. The token is saved.").format(user=user) if user
                  else tr("The saved token is forgotten."), "success")
        self.note.setText(ui_text(self._hub.token_note()))

    def _on_failed(self, sentence: str) -> None:
        self.save_btn.setEnabled(True)
        self._say(ui_text(sentence), "danger")
