"""A message's actions in the transcript (app/ui/chat_view.py): one small toolbar of icon
buttons (:class:`MessageBar`), a child of the viewport, over the message under the mouse or,
from the keyboard (Alt+Up and Alt+Down, then Tab), over the current message
(:class:`BarPlace`). A widget, not links, so the document stays one sealed QTextDocument and a
model cannot forge an action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor, QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from app.chat.message import Message
from app.ui.lang import tr
from app.ui.style.components import icon_button, set_tone, set_type
from app.ui.style.tokens import SPACING

if TYPE_CHECKING:
    from app.ui.chat_view import ChatView


class MessageBar(QFrame):
    """The actions of one message, as icon buttons on a small raised card: copy, edit (a
    question) or regenerate (a reply), and the versions at a branch point ("2/3")."""

    triggered = Signal(str)  # "copy" | "edit" | "regenerate" | "prev" | "next"

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setProperty("card", True)
        self.setAccessibleName(tr("Message actions"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACING.xxs, SPACING.xxs, SPACING.xxs, SPACING.xxs)
        layout.setSpacing(SPACING.xxs)
        self.copy = icon_button("copy", tr("Copy the message"))
        self.edit = icon_button("edit", tr("Edit this message and send it again"))
        self.regenerate = icon_button("regenerate", tr("Write this reply again"))
        self.prev = icon_button("previous", tr("Previous version"))
        self.versions = QLabel()
        set_type(self.versions, "caption")
        set_tone(self.versions, "muted")
        self.next = icon_button("next", tr("Next version"))
        for kind, button in (("copy", self.copy), ("edit", self.edit),
                             ("regenerate", self.regenerate), ("prev", self.prev),
                             ("next", self.next)):
            button.clicked.connect(lambda _=False, k=kind: self.triggered.emit(k))
        for w in (self.copy, self.edit, self.regenerate, self.prev, self.versions, self.next):
            layout.addWidget(w)
        self.index = -1  # the message it acts on
        self.message: Message | None = None  # the one it was fitted to
        self.hide()

    def show_for(self, index: int, m: Message) -> None:
        """Fit the buttons to ``m`` (the message at ``index``)."""
        self.index, self.message = index, m
        user = m.role == "user"
        self.edit.setVisible(user)
        self.regenerate.setVisible(m.role == "assistant")
        at, count = m.branch
        for w in (self.prev, self.versions, self.next):
            w.setVisible(count > 1)
        self.prev.setEnabled(at > 1)
        self.next.setEnabled(at < count)
        self.versions.setText(f"{at}/{count}")
        self.versions.setAccessibleName(tr("Version {at} of {count}").format(at=at, count=count))
        self.adjustSize()

    def buttons(self) -> list[QToolButton]:
        """The buttons shown, in order."""
        return [b for b in (self.copy, self.edit, self.regenerate, self.prev, self.next)
                if not b.isHidden()]


class BarPlace:
    """Which message of ``view`` the bar is over: the one under the mouse, else the keyboard's
    current one (moved with Alt+Up and Alt+Down, left with Esc); none for the reply being
    streamed."""

    def __init__(self, view: ChatView) -> None:
        self._view = view
        self.bar = MessageBar(view.viewport())
        self.current = -1  # the keyboard's current message (-1: none)
        self.hovered = -1  # the message under the mouse (-1: none)

    def place(self) -> None:
        """Show the bar over the message under the mouse, else over the keyboard's current
        message; hide it when there is none, or it is the reply being streamed."""
        view, bar = self._view, self.bar
        i = self.hovered if self.hovered >= 0 else self.current
        if self.hovered < 0 and any(b.hasFocus() for b in bar.buttons()):
            i = bar.index  # the keyboard is in the bar: it stays where it is
        m = view.message_at_index(i) if 0 <= i < view.finished_count() else None
        if m is None or view.message_count() == 0:  # none, or the placeholder is shown
            bar.hide()
            return
        if i != bar.index or bar.message is not m or bar.isHidden():
            bar.show_for(i, m)
        rect = view.message_rect(i).translated(-view.scroll_offset())
        x = int(rect.right()) - bar.width() - SPACING.md
        y = int(rect.top()) - bar.height() // 2
        bar.move(x, max(y, 0))
        bar.show()
        bar.raise_()

    def mouse_at(self, y: float) -> None:
        """The mouse moved to document height ``y``."""
        hovered = self._view.message_at(y)
        if hovered != self.hovered:
            self.hovered = hovered
            self.place()

    def rehover(self) -> None:
        """The messages moved under a still mouse (another conversation, a reply that ended):
        the bar goes over the message now under it, as if the mouse had moved there. Without
        this it would wait for the next move, and a person who clicked "Write this reply
        again" and waited would see no bar over the new reply."""
        viewport = self._view.viewport()
        at = viewport.mapFromGlobal(QCursor.pos())
        if viewport.underMouse() and viewport.rect().contains(at):
            self.hovered = self._view.message_at(at.y() + self._view.scroll_offset().y())
        else:
            self.hovered = -1
        self.place()

    def left(self) -> None:
        """The mouse left the viewport (not for the bar over it)."""
        if not self.bar.underMouse():
            self.hovered = -1
            self.place()

    def key(self, e: QKeyEvent) -> bool:
        """Alt+Up and Alt+Down move the current message, Esc leaves it; True when used."""
        key, mods = e.key(), e.modifiers()
        if mods == Qt.KeyboardModifier.AltModifier and key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.set_current(self._step(-1 if key == Qt.Key.Key_Up else 1))
            return True
        if key == Qt.Key.Key_Escape and self.current >= 0:
            self.set_current(-1)
            return True
        return False

    def _step(self, by: int) -> int:
        n = self._view.finished_count()
        if n == 0:
            return -1
        if self.current < 0:
            return n - 1
        return min(max(self.current + by, 0), n - 1)

    def set_current(self, i: int) -> None:
        """Make message ``i`` the keyboard's current one (-1: none), in view, with its bar."""
        view = self._view
        self.current = i if 0 <= i < view.finished_count() else -1
        if self.current >= 0:
            rect = view.message_rect(self.current)
            scroll = view.verticalScrollBar()
            top, height = scroll.value(), view.viewport().height()
            if rect.top() < top or rect.height() > height:
                scroll.setValue(int(rect.top()))
            elif rect.bottom() > top + height:
                scroll.setValue(int(rect.bottom()) - height)
        self.hovered = -1
        self.place()
        view.viewport().update()

    def tab_in(self) -> bool:
        """Tab from the conversation goes into the current message's bar first."""
        if self.current >= 0 and self.bar.isVisible():
            buttons = self.bar.buttons()
            if buttons:
                buttons[0].setFocus(Qt.FocusReason.TabFocusReason)
                return True
        return False

