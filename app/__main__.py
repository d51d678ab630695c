"""hearth: the desktop app (no arguments) and power-user subcommands.

This is the composition root: :func:`compose` is the only place where services are created and
handed to widgets (docs/architecture.md). Qt and the services are imported only when the GUI
starts, so the subcommands stay light.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from app.services.chat_session import ChatSession
    from app.services.chat_stream import ChatStreamer
    from app.services.hardware import HardwareService
    from app.services.loader import ModelLoader
    from app.services.runner_process import RunnerProcess
    from app.services.storage import ConversationService, ModelLibraryService, StoreService
    from app.services.tasks import TaskRunner
    from app.ui.main_window import MainWindow

log = logging.getLogger("app")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "hardware":
        from app.hardware.cli import main as hardware_main

        return hardware_main(argv[1:])
    if argv and argv[0] == "plan":
        from app.loading.cli import main as plan_main

        return plan_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="hearth", description="Run open LLMs on your own computer.",
        epilog="subcommands: 'hearth hardware [--json]' shows what this machine has; "
               "'hearth plan MODEL' shows the settings Hearth would load a model with.")
    parser.add_argument("model", nargs="?", help="a .gguf file to select at start")
    parser.add_argument("--load", action="store_true", help="load the model right away")
    args = parser.parse_args(argv)
    return run_gui(args.model, args.load)


def setup_logging() -> None:
    from app import paths

    handler = logging.handlers.RotatingFileHandler(
        paths.log_dir() / "hearth.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def install_excepthooks(show: object) -> None:
    """Uncaught exceptions, in the main thread or any other, reach the log and a dialog."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.critical("uncaught exception", exc_info=(kind, exc, tb))
        if callable(show):
            show(f"{kind.__name__}: {exc}")

    sys.excepthook = hook
    threading.excepthook = lambda a: hook(a.exc_type, a.exc_value or Exception(), a.exc_traceback)


def run_gui(model: str | None = None, load: bool = False) -> int:
    from app import qtdeps

    # Before Qt loads: a missing xcb library would end in Qt's own abort, which names no package.
    if not qtdeps.check_qt_libraries(sys.stderr):
        return 1
    from PySide6.QtWidgets import QApplication, QMessageBox

    setup_logging()
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Hearth")
    app.setOrganizationName("Hearth")
    gui = compose(app)
    window = gui.window

    def show_error(text: str) -> None:
        QMessageBox.critical(window, "Hearth: unexpected error",
                             f"{text}\n\nDetails are in the log file. Your conversation is saved.")

    install_excepthooks(show_error)
    if model:
        window.choose_model(model)
        if load:
            window.load_selected()
    window.show()
    try:
        return int(app.exec())
    finally:
        gui.close()


@dataclass
class Gui:
    """Every service of the GUI process and the window they are wired to."""

    tasks: TaskRunner  # short calls and long jobs (plans, measurements, hardware)
    polls: TaskRunner  # the runner's health polls: a lane of their own, never behind a plan
    store: StoreService
    conversations: ConversationService
    library: ModelLibraryService
    runner: RunnerProcess
    hardware: HardwareService
    loader: ModelLoader
    streamer: ChatStreamer
    session: ChatSession
    window: MainWindow

    def close(self) -> None:
        """After the window closed: cancel long jobs, finish the queued saves."""
        self.tasks.cancel_jobs()
        self.store.close()


def compose(parent: QObject, *, store_path: Path | None = None,
            runner_flags: list[str] | None = None,
            chat_params: dict[str, Any] | None = None) -> Gui:
    """Create every service, hand them to the widgets, wire them: the one place that does."""
    from app.hardware import detect_hardware
    from app.hardware.cli import runner_devices
    from app.services.chat_session import ChatSession
    from app.services.chat_stream import ChatStreamer
    from app.services.hardware import HardwareService
    from app.services.loader import ModelLoader
    from app.services.runner_process import RunnerProcess
    from app.services.storage import ConversationService, ModelLibraryService, StoreService
    from app.services.tasks import TaskRunner
    from app.storage.db import StoreThread, open_database
    from app.ui.hardware_panel import HardwarePanel
    from app.ui.main_window import MainWindow

    tasks = TaskRunner(parent, name="tasks")
    polls = TaskRunner(parent, max_threads=1, name="polls")
    store = StoreService(StoreThread(lambda: open_database(store_path)), parent)
    conversations = ConversationService(store, parent)
    library = ModelLibraryService(store, parent)
    runner = RunnerProcess(polls, parent)
    hardware = HardwareService(tasks, detect_hardware, runner_devices=runner_devices,
                               parent=parent)
    loader = ModelLoader(runner, tasks, cached_hardware=lambda: hardware.report, parent=parent)
    streamer = ChatStreamer(parent)
    session = ChatSession(streamer, conversations, params=chat_params, parent=parent)
    window = MainWindow(runner, loader, session, library,
                        hardware_panel=HardwarePanel(hardware), runner_flags=runner_flags)
    return Gui(tasks, polls, store, conversations, library, runner, hardware, loader, streamer,
               session, window)


if __name__ == "__main__":
    sys.exit(main())
