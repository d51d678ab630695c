"""The first start: the welcome page (app/ui/welcome.py) in front of the window's tabs until the
person is done with it, whichever way they leave it: chat with a model they found, downloaded or
opened (Ctrl+O counts as the page's Open), browse a repository, or skip."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from app.ui.main_window import MainWindow
from app.ui.welcome import WelcomePage


class WelcomeFlow(QObject):
    """``finished`` is called once the page is left (the settings remember it); ``browse``
    opens a repository in the Discover tab."""

    def __init__(self, page: WelcomePage, window: MainWindow, *,
                 finished: Callable[[], None], browse: Callable[[str], None]) -> None:
        super().__init__(window)
        self._window = window
        self._finished = finished
        self._browse = browse
        page.done.connect(self.done)
        page.chat_requested.connect(self.chat_with)
        page.browse_requested.connect(self.browse)
        window.model_chosen.connect(page.chat_requested)  # Ctrl+O: as the page's Open
        window.show_welcome(page)

    def done(self) -> None:
        self._finished()
        self._window.close_welcome()

    def chat_with(self, path: str) -> None:
        self.done()
        self._window.use_model(path)
        self._window.load_selected()

    def browse(self, repo_id: str) -> None:
        self.done()
        self._browse(repo_id)
