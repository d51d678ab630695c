"""The settings the Settings dialog edits, with one owner.

Every box of the dialog reads the current :class:`AppSettings` here and changes it through
:meth:`SettingsEdit.update`, which checks, saves and announces the change at once (no OK
button to forget). One owner, so that no box keeps a copy that another box's change made stale.
The boxes' sentences for the person go through :meth:`SettingsEdit.say` to the dialog's one
message line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.settings import AppSettings
from app.ui.lang import said, tr

log = logging.getLogger(__name__)


class SettingsEdit(QObject):
    """The settings as they are now, applied and saved at each change."""

    changed = Signal(object)  # AppSettings, after it was applied (and saved, or said why not)
    message = Signal(str, bool)  # a sentence for the message line ("" clears it), and is_error

    def __init__(self, settings: AppSettings, save: Callable[[AppSettings], None],
                 parent: QObject | None = None) -> None:
        """``save(settings)`` writes them (raises OSError)."""
        super().__init__(parent)
        self._settings = settings
        self._save = save

    @property
    def settings(self) -> AppSettings:
        """The settings as they are now (saved, unless saving failed and was said)."""
        return self._settings

    def update(self, **changes: object) -> bool:
        """Apply ``changes`` and save them; False (said) when a value is not allowed."""
        try:
            new = self._settings.with_changes(**changes)
        except ValueError as exc:
            self.say(said(exc), error=True)
            return False
        try:
            self._save(new)
        except OSError as exc:
            # Still applied for this run; only remembering it failed.
            log.warning("settings could not be saved: %s", exc)
            self.say(tr("The settings could not be saved ({error}); they apply until Hearth "
                        "closes.").format(error=exc), error=True)
        else:
            self.say("")
        self._settings = new
        self.changed.emit(new)
        return True

    def say(self, text: str, error: bool = False) -> None:
        """Show ``text`` on the dialog's message line ("" hides it)."""
        self.message.emit(text, error)
