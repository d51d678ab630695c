"""hearth: the desktop app (no arguments) and power-user subcommands.

This is the only place where services are created and wired to widgets.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import sys
import threading
from types import TracebackType

log = logging.getLogger("app")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "hardware":
        from app.hardware.cli import main as hardware_main

        return hardware_main(argv[1:])
    if argv and argv[0] == "plan":
        from app.planner.cli import main as plan_main

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
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.hardware import detect_hardware
    from app.hardware.cli import runner_devices
    from app.services.chat_stream import ChatStreamer
    from app.services.runner_process import RunnerProcess
    from app.services.tasks import TaskRunner
    from app.ui.hardware_panel import HardwarePanel
    from app.ui.main_window import MainWindow

    setup_logging()
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Hearth")
    app.setOrganizationName("Hearth")
    tasks = TaskRunner(app)
    runner = RunnerProcess(tasks, app)
    streamer = ChatStreamer(app)
    panel = HardwarePanel(tasks, detect_hardware, runner_devices=runner_devices)
    window = MainWindow(runner, streamer, tasks, hardware_panel=panel)

    def show_error(text: str) -> None:
        QMessageBox.critical(window, "Hearth: unexpected error",
                             f"{text}\n\nDetails are in the log file. Your conversation is saved.")

    install_excepthooks(show_error)
    if model:
        window.choose_model(model)
        if load:
            window.load_selected()
    window.show()
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main())
