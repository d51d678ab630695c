"""A model card on the Discover page: the repository's README, rendered safely.

The card is Markdown from the Hub, not trusted: app/chat/render.py renders it (no images, no raw
HTML, checked links) into a browser whose document loads no resource at all, and a link opens
only when render.link_allowed agrees.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QUrl
from PySide6.QtGui import QTextFormat
from PySide6.QtWidgets import QTextBrowser, QWidget

from app.chat.render import link_allowed, render_markdown
from app.ui.chat_view import NoImages, SealedDocument, theme_for
from app.ui.style.tokens import SPACING

log = logging.getLogger(__name__)

_FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)


class CardView(QTextBrowser):
    """A model card: safe Markdown in a document that refuses every resource."""

    def __init__(self, open_url: Callable[[QUrl], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._open_url = open_url
        doc = SealedDocument(self)
        self.setDocument(doc)
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(SPACING.lg)
        # Qt's own image handler reads an image file even when loadResource refuses (see
        # app/ui/chat_view.py); render.py makes no <img>, and this makes sure of it.
        self._no_images = NoImages(doc)
        doc.documentLayout().registerHandler(QTextFormat.ObjectTypes.ImageObject, self._no_images)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self._markdown: str | None = None  # what it shows, drawn again when the theme changes

    def show_markdown(self, text: str) -> None:
        self._markdown = text
        # The Hub's YAML front matter (license, tags) is shown as facts above; as Markdown it
        # would be a wall of text.
        text = _FRONT_MATTER.sub("", text, count=1)
        # A model card is a document: its wrapped lines join, as on Hugging Face.
        self.setHtml(render_markdown(text, theme_for(self.palette()), breaks=False))

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) \
                and self._markdown is not None:
            self.show_markdown(self._markdown)  # its colours were mixed from the old palette

    def loadResource(self, type: int, name: QUrl | str) -> None:
        log.debug("Refused to load a resource for a model card: %.200s",
                  name if isinstance(name, str) else name.toString())
        return None

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if link_allowed(text):
            self._open_url(url)
        else:
            log.warning("Refused to open a link from a model card: %.200s", text)
