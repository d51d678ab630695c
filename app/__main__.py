"""hearth: the desktop app (no arguments) and power-user subcommands.

This is the composition root: :func:`compose` is the only place where services are created and
handed to widgets (docs/architecture.md). Qt and the services are imported only when the GUI
starts, so the subcommands stay light.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication, QObject
    from PySide6.QtWidgets import QWidget

    from app.runtimes.select import RuntimeSelection
    from app.services.active_model import ActiveModel
    from app.services.chat_session import ChatSession
    from app.services.chat_stream import ChatStreamer
    from app.services.downloads import DownloadManager
    from app.services.hardware import HardwareService
    from app.services.hub import HubService
    from app.services.loader import ModelLoader
    from app.services.local_models import LocalModelsService
    from app.services.model_server import ModelServerService
    from app.services.remote import RemoteService
    from app.services.runner_process import RunnerProcess
    from app.services.storage import ConversationService, ModelLibraryService, StoreService
    from app.services.tasks import TaskRunner
    from app.services.tools import ToolService
    from app.services.tuning import TuningService
    from app.services.workers import WorkersService
    from app.settings import AppSettings
    from app.ui.main_window import LazyPage, MainWindow

log = logging.getLogger("app")


def main(argv: list[str] | None = None) -> int:
    ensure_std_streams()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "hardware":
        from app.cli.hardware import main as hardware_main

        return hardware_main(argv[1:])
    if argv and argv[0] == "plan":
        from app.cli.plan import main as plan_main

        return plan_main(argv[1:])
    from app.autostart import SERVE_SUBCOMMAND

    if argv and argv[0] == SERVE_SUBCOMMAND:
        return serve_main(argv[1:])
    if argv and argv[0] == "env":
        from app.cli.env import main as env_main

        return env_main(argv[1:])
    if argv and argv[0] in ("search", "download", "models", "login"):
        from app.cli import hub as hub_cli

        command = {"search": hub_cli.search_main, "download": hub_cli.download_main,
                   "models": hub_cli.models_main, "login": hub_cli.login_main}[argv[0]]
        return command(argv[1:])
    parser = argparse.ArgumentParser(
        prog="hearth", description="Run open LLMs on your own computer.",
        epilog="subcommands: 'hearth hardware [--json]' shows what this machine has; "
               "'hearth plan MODEL|hf://OWNER/REPO/FILE' shows the settings Hearth would load a "
               "model with; 'hearth search QUERY', 'hearth download REPO [FILE | --quant Q]', "
               "'hearth models' (the models on this computer), 'hearth login' (a Hugging Face "
               "token into the keyring), 'hearth serve' (every model of the library on one "
               "address, loaded on request, no window), 'hearth env openai|anthropic|ollama' "
               "(what to give other tools to use it).")
    parser.add_argument("model", nargs="?", help="a .gguf file to select at start")
    parser.add_argument("--load", action="store_true", help="load the model right away")
    parser.add_argument("--runtime", metavar="NAME",
                        help="serve with this runtime (a name from Settings, or a folder; "
                             "'auto' chooses from the hardware) instead of the saved choice")
    # For installers and the start-up benchmark: show the window, say so, quit.
    parser.add_argument("--check-start", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return run_gui(args.model, args.load, args.runtime, check_start=args.check_start)


def ensure_std_streams() -> None:
    """A windowed app (the installed one on Windows and macOS) has no stdout or stderr: Python
    sets them to None and the first print() or warning would raise. They go nowhere instead;
    the log file keeps what matters."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))


def setup_logging() -> None:
    from app import paths

    handler: logging.Handler
    problem: OSError | None = None
    try:
        handler = logging.handlers.RotatingFileHandler(
            paths.log_dir() / "hearth.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:  # a read-only Hearth folder must not end the start in a traceback
        handler, problem = logging.StreamHandler(sys.stderr), exc
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if problem is not None:
        log.warning("no log file (%s): logging to the terminal", problem)


def install_excepthooks(show: object) -> None:
    """Uncaught exceptions, in the main thread or any other, reach the log and a dialog."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.critical("uncaught exception", exc_info=(kind, exc, tb))
        if callable(show):
            show(f"{kind.__name__}: {exc}")

    sys.excepthook = hook
    threading.excepthook = lambda a: hook(a.exc_type, a.exc_value or Exception(), a.exc_traceback)


def serve_main(args: list[str]) -> int:
    """``hearth serve``: the model server (server/) is a process of its own, with the server
    stack this process never imports; this one becomes it (POSIX) or waits for it."""
    import subprocess

    command = [*server_program(), *args]
    if not os.path.exists(command[0]):
        print(f"hearth serve: this installation has no model server ({command[0]} is "
              "missing); install Hearth again.", file=sys.stderr)
        return 2
    if os.name == "posix":
        os.execv(command[0], command)  # the same process: signals and exit code are its own
    return subprocess.call(command)


def server_program() -> list[str]:
    """How to start the model server: ``hearth-server`` beside a frozen app, else this
    interpreter with ``-m server``."""
    if getattr(sys, "frozen", False):
        here = os.path.dirname(sys.executable)
        return [os.path.join(here, "hearth-server" + (".exe" if os.name == "nt" else ""))]
    return [sys.executable, "-m", "server"]


def run_gui(model: str | None = None, load: bool = False, runtime: str | None = None,
            check_start: bool = False) -> int:
    from app import notify_failure, qtdeps

    _no_collection_until_first_frame()

    # Before Qt loads: a missing xcb library would end in Qt's own abort, which names no package.
    # The message goes to the terminal, the log and the desktop (started from the menu).
    if not qtdeps.check_qt_libraries(sys.stderr, tell=notify_failure.tell):
        return 1
    from PySide6.QtWidgets import QApplication, QMessageBox

    _cheaper_pyside_module_check()
    setup_logging()
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Hearth")
    app.setOrganizationName("Hearth")
    app.setDesktopFileName("hearth")  # Wayland: the window gets the .desktop entry's icon
    from PySide6.QtCore import QByteArray

    from app.settings import load_settings
    from app.ui.icon import app_icon
    from app.ui.theme import ThemeController

    settings = load_settings()
    from app.ui.lang import install_language

    # Before any window or dialog is built (the start-up questions included): Qt reads the
    # translation as each widget is made. HEARTH_LANGUAGE overrides the saved choice for this
    # run (the tests set "en", so they read the same words on every machine).
    install_language(app, os.environ.get("HEARTH_LANGUAGE") or settings.language)
    from app.runtimes.select import RuntimeSelection

    # --runtime for this run only; else the saved choice, else HEARTH_RUNTIME or automatic.
    selection = RuntimeSelection(runtime if runtime is not None else settings.runtime or None)
    app.setWindowIcon(app_icon())
    theme = ThemeController(app)
    theme.apply(settings.theme)  # before the first widget: no flash of the wrong palette
    from app.ui import startup_problems as problems

    # Before anything opens the data folder: one that cannot be written is asked about here.
    if not problems.prepare_data_folder(
            problems.print_and_continue if check_start else problems.ask_person):
        return 1
    from app import paths
    from app.instance import SingleInstance, StartRequest

    # One Hearth per data folder (app/instance.py): a later start hands its file over and ends.
    # Taken here, not in compose(): tests compose windows with data folders of their own.
    instance = SingleInstance(paths.data_dir())
    if not instance.claim():
        return instance.hand_over(StartRequest.from_args(model, load), sys.stderr)
    gui = compose(app, settings=settings, apply_theme=theme.apply,
                  show_welcome=not settings.first_run_done, runtime=selection,
                  first_frame_first=True)
    window = gui.window
    gui.store.when_opened(lambda outcome: problems.tell_about_library(
        outcome, window, problems.print_and_show if check_start else problems.tell_person))
    if settings.window_geometry:
        window.restoreGeometry(QByteArray(settings.window_geometry))
    window.restore_splitter(settings.splitter_state)  # the chat page's columns, as left

    def show_error(text: str) -> None:
        from app.ui.lang import tr

        QMessageBox.critical(window, tr("Hearth: unexpected error"),
                             tr("{error}\n\nDetails are in the log file. Your conversation is "
                                "saved.").format(error=text))

    install_excepthooks(show_error)
    if model:
        window.choose_model(model)
        if load:
            window.load_selected()
    window.show()
    from app.ui.first_frame import after_first_frame

    after_first_frame(window, _collect_from_now_on)
    instance.serve(window)
    return _run_until_closed(app, gui, check_start)


def _no_collection_until_first_frame() -> None:
    """No cycle collection until the first frame: start-up makes tens of thousands of objects
    that all live on (modules, classes, widgets), and collecting among them only delays the
    window (about 8% of the start here). After the first frame they are frozen, so later
    collections (while a reply streams) do not walk them again: :func:`_collect_from_now_on`."""
    import gc

    gc.disable()


def _collect_from_now_on() -> None:
    """The start-up's objects kept out of later collections, and collection on again."""
    import gc

    gc.freeze()
    gc.enable()


def _start_check_line() -> str:
    """What ``--check-start`` says of the window's language and icons (an installed package is
    checked with it): Hearth's catalog and Qt's own, and how many icons are drawn."""
    from PySide6.QtCore import QCoreApplication

    from app.ui.lang import current_language, tr
    from app.ui.style.icons import NAMES, icon

    drawn = sum(not icon(name).isNull() for name in NAMES)
    qt_cancel = QCoreApplication.translate("QPlatformTheme", "Cancel")
    return (f"hearth: language {current_language()}: {tr('Settings')}, {qt_cancel}; "
            f"icons {drawn}/{len(NAMES)}")


def _cheaper_pyside_module_check() -> None:
    """PySide6 looks at every module imported after it for the word "PySide6" (for its
    ``__feature__`` switches, snake_case and true_property, which Hearth does not use) by asking
    ``inspect`` for the module's source: about 0.4 ms a module, some 200 on the way to the first
    frame. The same question asked of the file's bytes answers the same in a twentieth of the
    time; a module without a readable file (the frozen app's) is asked PySide's way."""
    feature = sys.modules.get("PySide6.support.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or not callable(original):
        return  # another PySide6: its own way stands

    def uses_pyside(module: object) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as f:
                    return b"PySide6" in f.read()
            except OSError:
                pass
        return bool(original(module))

    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010 (a private name)


def _run_until_closed(app: QCoreApplication, gui: Gui, check_start: bool) -> int:
    """The event loop (``check_start``: only until the window is shown); then the window's
    size and place are kept and the services stop."""
    from PySide6.QtCore import QTimer

    from app.settings import save_settings

    if check_start:
        def shown() -> None:  # the first turn of the event loop: the window is on screen
            print("hearth: window shown", flush=True)
            print(_start_check_line(), flush=True)
            # Opening the library is part of starting (a damaged one is set aside and told).
            gui.store.when_opened(lambda _outcome: app.quit())

        QTimer.singleShot(0, shown)
    try:
        return int(app.exec())
    finally:
        try:  # the window and the chat page's columns come back as the user left them
            save_settings(gui.settings().with_changes(
                window_geometry=bytes(gui.window.saveGeometry().data()),
                splitter_state=gui.window.splitter_state()))
        except OSError as exc:
            log.warning("could not save the window's size and place: %s", exc)
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
    hub: HubService
    local: LocalModelsService
    downloads: DownloadManager
    hub_client: _Shared[Any]
    settings: Callable[[], AppSettings]  # the app settings now (the dialog changes them)
    remote: RemoteService  # the servers the user added (Settings → Servers)
    workers: WorkersService  # other computers' devices, and this one's lent (Settings)
    active: ActiveModel  # what is current: the model chats go to, its load, its endpoint
    server: ModelServerService  # the model server (one the window started stops with it)

    def close(self) -> None:
        """After the window closed: stop transfers (their partial files stay), cancel long
        jobs, finish the queued saves, stop lending this computer."""
        self.workers.stop_lending()
        self.server.stop_started()
        self.downloads.shutdown()
        self.local.shutdown()
        self.tasks.cancel_jobs()
        self.hub_client.close()
        self.store.close()
        # Short calls still running (a look for the model server asked at the first frame)
        # finish while the objects they report to exist: a daemon thread that outlives them
        # and delivers into a destroyed QObject at exit crashes the process (seen in the cold-
        # start benchmark, which quits right after the first frame).
        for lane in (self.tasks, self.polls):
            lane.wait(SHUTDOWN_WAIT_MS)


T = TypeVar("T")
SHUTDOWN_WAIT_MS = 2000  # for short calls only: a hung one (a stuck keyring) delays exit so long


class _Shared(Generic[T]):
    """One instance made on first use and shared (the Hub client is thread-safe)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: T | None = None
        self._retired: list[T] = []
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    def reset(self) -> None:
        """The next get() makes a new one (a new token); the old one may still be serving a
        request on another thread, so it is closed only with the app."""
        with self._lock:
            if self._value is not None:
                self._retired.append(self._value)
            self._value = None

    def close(self) -> None:
        with self._lock:
            values = [*self._retired, self._value]
            self._value, self._retired = None, []
        for value in values:
            close = getattr(value, "close", None)
            if callable(close):
                close()


def compose(parent: QObject, *, store_path: Path | None = None,
            runner_flags: list[str] | None = None,
            chat_params: dict[str, Any] | None = None,
            settings: AppSettings | None = None,
            apply_theme: Callable[[str], None] | None = None,
            show_welcome: bool = False,
            runtime: RuntimeSelection | None = None,
            first_frame_first: bool = False) -> Gui:
    """Create every service, hand them to the widgets, wire them: the one place that does.

    ``settings``: the app settings (None: read from disk); ``apply_theme``: the theme
    controller's apply (None: the Settings dialog cannot change the theme, e.g. in tests);
    ``show_welcome``: the first-run page comes first (only the real first start asks for it);
    ``runtime``: the runtime selection (None: one for the settings' choice);
    ``first_frame_first``: background work asked for before the window's first frame waits for
    it (the real start; tests compose windows that are never painted).
    """
    from app.settings import load_settings

    current = [settings or load_settings()]  # replaced whenever the dialog saves a change
    core = _core_services(parent, current, store_path, chat_params, runtime)
    if first_frame_first:
        from app.ui.first_frame import after_first_frame

        core.tasks.hold()
    models = _getting_models(parent, core, current)
    window, discover = _main_window(parent, core, models, runner_flags)
    from app.services.documents import DocumentService

    window.chat_panel.use_documents(DocumentService(
        core.tasks, parent=window, embedder=_embedder(models, window)))
    window.chat_panel.use_images(_image_service(core, window, store_path))
    window.settings_requested.connect(
        _settings_opener(core, models, current, apply_theme, window))
    if show_welcome:
        _first_start(core, models, current, window, discover)
    models.downloads.start()
    models.local.rescan()
    if first_frame_first:
        after_first_frame(window, core.tasks.release)
        # Whether a model server runs: then loads are handed to it (asked once the tasks run);
        # the person asked for one: started when none runs.
        if current[0].serve_models:
            models.server.ensure()
        else:
            models.server.refresh()
    return Gui(core.tasks, core.polls, core.store, core.conversations, core.library,
               core.runner, core.hardware, core.loader, core.streamer, core.session, window,
               models.hub, models.local, models.downloads, models.hub_client,
               lambda: current[0], core.remote, core.workers, window.active, models.server)


@dataclass
class _Core:
    """The services the window and its dialogs share (see :class:`Gui`)."""

    tasks: TaskRunner
    polls: TaskRunner
    store: StoreService
    conversations: ConversationService
    library: ModelLibraryService
    runner: RunnerProcess
    hardware: HardwareService
    tuning: TuningService
    workers: WorkersService
    loader: ModelLoader
    selection: RuntimeSelection
    streamer: ChatStreamer
    session: ChatSession
    remote: RemoteService
    tools: ToolService


@dataclass
class _Models:
    """Getting models: the Hub, the download queue, the models on this computer."""

    hub_client: _Shared[Any]
    hub: HubService
    local: LocalModelsService
    downloads: DownloadManager
    server: ModelServerService  # this computer's model server, seen from the window
    configure_runner: Callable[[], None]  # the settings (and a running server) to the next load


def _embedder(models: Any, window: Any) -> Callable[[], Any]:
    """The runner of the library's embedding model (the first one), made on first use and
    ended with the window; None while the library has none."""
    made: dict[str, Any] = {}

    def get() -> Any:
        from app.runner_client.embedding import EmbeddingRunner, is_embedding_model

        path = next((row.path for row in models.local.rows()
                     if is_embedding_model(row.name, row.architecture)), None)
        if path is None:
            return None
        if path not in made:
            from app.documents.index import default_path

            made[path] = EmbeddingRunner(path, str(default_path()))
            window.destroyed.connect(made[path].close)
        return made[path]

    return get


def _image_service(core: Any, window: Any, store_path: Path | None) -> Any:
    """Images attached in the chat, kept beside the conversations' database and scaled to what
    the loaded model's projector looks at."""
    from app.services.images import DEFAULT_SIDE, ImageService
    from app.storage.db import default_path
    from app.storage.images import ImageStore

    store = ImageStore((store_path or default_path()).parent / "images")
    core.conversations.images = store  # exports carry them
    active = window.chat_panel.active

    def side() -> int:
        plan = active.plan
        projector = plan.model.projector if plan is not None else None
        return (projector.preferred_side if projector is not None else 0) or DEFAULT_SIDE

    return ImageService(core.tasks, store, side, parent=window)


def _core_services(parent: QObject, current: list[AppSettings], store_path: Path | None,
                   chat_params: dict[str, Any] | None,
                   runtime: RuntimeSelection | None) -> _Core:
    """The store, the runner and what loads it, the chat, the servers the user added."""
    # Which runtime serves: one value, handed to all that plan, probe or start a runner.
    from app.runtimes.select import RuntimeSelection

    selection = runtime if runtime is not None else RuntimeSelection(current[0].runtime or None)
    from app.library.models import ModelLibrary
    from app.remote.servers import ServerList
    from app.services.chat_session import ChatSession
    from app.services.chat_stream import ChatStreamer
    from app.services.remote import RemoteService
    from app.services.runner_process import RunnerProcess
    from app.services.storage import ConversationService, ModelLibraryService, StoreService
    from app.services.tasks import TaskRunner
    from app.storage.db import StoreThread, open_library

    tasks = TaskRunner(parent, name="tasks")
    polls = TaskRunner(parent, max_threads=1, name="polls")
    # A damaged library is set aside and a new one begun; run_gui tells the person.
    store = StoreService(StoreThread(lambda: open_library(store_path)), parent)
    conversations = ConversationService(store, parent)
    # Files deleted since, or opened by path and not models, leave the list of recent models
    # (before it is read: the store runs its calls in order).
    store.call(lambda db: ModelLibrary(db).forget_unusable())
    library = ModelLibraryService(store, parent)
    runner = RunnerProcess(polls, parent, port=current[0].launch_port,
                           host=current[0].launch_host, limits=current[0].runner_limits,
                           sharing=current[0].share_runner,
                           image_links=current[0].image_links)
    hardware, tuning, workers, loader = _load_services(parent, tasks, store, runner, selection)
    streamer = ChatStreamer(parent)
    session = ChatSession(streamer, conversations, params=chat_params, parent=parent)
    from app.services.mcp_host import McpHostService
    from app.services.tools import ToolService

    # The tools replies may call (tools.json: none until the person turns some on); the MCP
    # servers run in the MCP host process, started on first use.
    session.tools = tools = ToolService(mcp=McpHostService(parent=parent), parent=parent)
    # The servers the user added: read from servers.json; nothing is contacted until the user
    # adds, refreshes or uses one.
    remote = RemoteService(tasks, ServerList.load(), parent)
    return _Core(tasks, polls, store, conversations, library, runner, hardware, tuning, workers,
                 loader, selection, streamer, session, remote, tools)


def _load_services(parent: QObject, tasks: TaskRunner, store: StoreService,
                   runner: RunnerProcess, selection: RuntimeSelection,
                   ) -> tuple[HardwareService, TuningService, WorkersService, ModelLoader]:
    """The machine, the offload settings, the other computers and the loader (which plans a
    load with all three)."""
    from app.cli.hardware import runner_devices
    from app.hardware import detect_hardware
    from app.services.hardware import HardwareService
    from app.services.loader import ModelLoader

    def devices_of_the_runtime() -> dict[str, Any]:
        # What the runtime the next load uses can drive (chosen now if not yet; off the GUI
        # thread, with the machine report the service has just shown).
        return runner_devices(selection.chosen_program(
            lambda: hardware.report or detect_hardware()))

    hardware = HardwareService(tasks, detect_hardware, runner_devices=devices_of_the_runtime,
                               parent=parent)
    from app.services.tuning import TuningService

    tuning = TuningService(tasks, store, cached_hardware=lambda: hardware.report,
                           runtime=selection, parent=parent)
    # Other computers' devices (RPC workers): the list from workers.json, checked at each load;
    # nothing is contacted until the user adds one.
    from app.loading.workers import worker_program
    from app.services.workers import WorkersService

    workers = WorkersService(tasks, program=lambda: worker_program(selection.program()),
                             parent=parent)
    # Threads: the plan starts with the cores other programs leave free now, or with what the
    # last load of the same model shape measured; the runner measures and adapts from there.
    from app.hardware.cpuload import others_busy_cores
    from app.loading.prepare import CpuSense
    from app.planner.threads import ThreadMemory

    loader = ModelLoader(runner, tasks, cached_hardware=lambda: hardware.report,
                         pins_for=tuning.saved_pins, workers=workers.endpoints,
                         cpu=CpuSense(others_busy_cores, ThreadMemory()), runtime=selection,
                         parent=parent)
    tuning.wishes = loader.wishes  # the panel plans the way the load will
    return hardware, tuning, workers, loader


def _getting_models(parent: QObject, core: _Core, current: list[AppSettings]) -> _Models:
    """The Hub (one shared client; its token is read when it is made), the download queue and
    the models already on this computer; verdicts follow the hardware report."""
    from app import paths
    from app.hub.auth import get_token
    from app.hub.client import HubClient
    from app.hub.queue import DownloadQueue
    from app.hub.remote_header import HeaderCache
    from app.library.catalog import HeaderInfoCache, record_sha256
    from app.library.folders import load_folders
    from app.services.downloads import DownloadManager
    from app.services.hub import HubService
    from app.services.local_models import LocalModelsService

    hardware, tasks = core.hardware, core.tasks

    def detect() -> None:  # verdicts need the report; the first one asks for it
        if hardware.report is None and not hardware.busy:
            hardware.refresh()

    hub_client = _Shared(lambda: HubClient(token=get_token()))
    hub = HubService(tasks, hub_client.get, lambda: hardware.report,
                     HeaderCache(paths.cache_dir() / "headers"), parent,
                     detect_hardware=detect,
                     reset_client=hub_client.reset)
    local = LocalModelsService(tasks, load_folders(), lambda: hardware.report,
                               HeaderInfoCache.default(), parent=parent,
                               detect_hardware=detect, pins_for=core.tuning.saved_pins)
    downloads = DownloadManager(tasks, DownloadQueue(paths.data_dir() / "downloads.json"),
                                hub_client.get, lambda: local.folders.models_dir,
                                on_verified=lambda path, sha: record_sha256(path, sha),
                                parent=parent)
    hardware.report_changed.connect(hub.hardware_changed)
    hardware.failed.connect(hub.hardware_failed)
    hardware.report_changed.connect(local.hardware_changed)
    core.tuning.saved.connect(local.pins_changed)  # a model's label says what its next load does
    downloads.finished.connect(lambda _path: local.rescan())
    # A model on this computer may draft for the one loaded (speculative decoding), as this
    # computer measured: the loader looks among the library's files when it plans.
    from app.loading.drafts import DraftSense, this_computer
    from app.planner.speculation import SpecMemory

    core.loader.drafts = core.tuning.drafts = DraftSense(
        lambda: [row.path for row in local.rows()], SpecMemory(), this_computer())
    # Flash attention, the KV cache type and the micro-batch as this computer measured them.
    from app.loading.speed import SpeedSense

    core.loader.speed = core.tuning.speed = SpeedSense.here()
    server, configure_runner = _model_server(parent, core, current)
    return _Models(hub_client, hub, local, downloads, server, configure_runner)


def _model_server(parent: QObject, core: _Core, current: list[AppSettings]
                  ) -> tuple[ModelServerService, Callable[[], None]]:
    """The model server at Sharing's port with the shared key (the window can start one), handed
    the window's loads; and what applies the settings to the runner's next start."""
    from app.remote.share import SHARED_KEY
    from app.remote.tool_env import server_url
    from app.services.model_server import ModelServerService, serve_window_model

    def address() -> tuple[str, str]:  # on a worker thread: the key may wait on a keyring
        s = current[0]
        return server_url(s.runner_port, s.launch_host), SHARED_KEY.get()

    server = ModelServerService(core.tasks, address, server_program, parent)
    return server, serve_window_model(core.runner, server, lambda: current[0])


def _main_window(parent: QObject, core: _Core, models: _Models,
                 runner_flags: list[str] | None) -> tuple[MainWindow, LazyPage]:
    """The window with its tabs, the model in use it observes, and the Offload dialog."""
    from app.services.active_model import ActiveModel
    from app.ui.lang import tr
    from app.ui.library_view import LibraryView
    from app.ui.main_window import LazyPage, MainWindow
    from app.ui.offload_dialog import offload_opener

    def make_discover() -> QWidget:
        from app.ui.discover import DiscoverTab

        return DiscoverTab(models.hub, models.downloads)

    def make_downloads() -> QWidget:
        from app.ui.downloads_view import DownloadsView

        return DownloadsView(models.downloads)

    def make_hardware() -> QWidget:
        from app.ui.hardware_panel import HardwarePanel

        return HardwarePanel(core.hardware)

    active = ActiveModel(core.runner, core.loader, remote=core.remote,
                         runner_flags=runner_flags, parent=parent)
    # Out of sight at start: made when first shown or used (app/ui/main_window.py's LazyPage).
    # The library stays eager: it shows the scan compose() starts, as it comes.
    discover, downloads_view = LazyPage(make_discover), LazyPage(make_downloads)
    # "Use in chat" selects the model in the window made just below.
    from app.ui.server_panel import ServerPanel

    library_view = LibraryView(models.local, on_use=lambda path: window.use_model(path),
                               below=ServerPanel(models.server))
    window = MainWindow(core.runner, core.loader, core.session, core.library,
                        hardware_panel=LazyPage(make_hardware), runner_flags=runner_flags,
                        local_models=models.local, conversations=core.conversations,
                        model_tabs=[(discover, tr("Discover")), (library_view, tr("Models")),
                                    (downloads_view, tr("Downloads"))], remote=core.remote,
                        active=active)
    discover.when_built(lambda tab: tab.queued.connect(  # type: ignore[attr-defined]
        lambda _id: window.tabs.setCurrentWidget(downloads_view)))

    def find_instruct(query: str) -> None:  # a base model is loaded: its instruct version
        tab = discover.page()
        tab.search_edit.setText(query)  # type: ignore[attr-defined]
        tab.search()  # type: ignore[attr-defined]
        window.tabs.setCurrentWidget(discover)

    window.find_instruct.connect(find_instruct)
    window.set_offload_panel(offload_opener(
        window, core.tuning, apply=window.load_with, measured=core.loader.measured,
        loaded_path=lambda: core.loader.path))
    core.loader.unusable.connect(window.forget_model)  # gone, or not a model: out of the list
    return window, discover


def _settings_opener(core: _Core, models: _Models, current: list[AppSettings],
                     apply_theme: Callable[[str], None] | None,
                     window: MainWindow) -> Callable[[], None]:
    """What the Settings button does: the dialog, whose changes apply from the next load."""
    from PySide6.QtCore import Qt

    runner, loader, selection = core.runner, core.loader, core.selection
    local, hub, remote, workers = models.local, models.hub, core.remote, core.workers

    def open_settings() -> None:
        from app import autostart
        from app.services.sharing import apply_now
        from app.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(current[0], models=local, hub=hub, runner=runner,
                                apply_theme=apply_theme or (lambda _theme: None),
                                folders=lambda: local.folders, remote=remote,
                                workers=workers, in_use=selection.choice, parent=window,
                                reload=lambda: apply_now(runner, loader.restart),
                                autostart=autostart, tools=core.tools)

        def changed(s: AppSettings) -> None:
            if s.runtime != current[0].runtime:
                selection.want(s.runtime or None)  # chosen again at the next load
            if s.serve_models != current[0].serve_models:
                if s.serve_models:
                    models.server.ensure()
                else:
                    models.server.stop_started()  # one that runs by itself stays
            current[0] = s
            models.configure_runner()  # from the next load on

        dialog.changed.connect(changed)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    return open_settings


def _first_start(core: _Core, models: _Models, current: list[AppSettings],
                 window: MainWindow, discover: LazyPage) -> None:
    """The first-run page in front of the tabs; leaving it is remembered in the settings."""
    from app.settings import save_settings
    from app.ui.welcome import WelcomePage
    from app.ui.welcome_flow import WelcomeFlow

    def remember() -> None:
        current[0] = current[0].with_changes(first_run_done=True)
        try:
            save_settings(current[0])
        except OSError as exc:  # the page comes back next time; nothing else is lost
            log.warning("could not save the settings: %s", exc)

    def browse(repo_id: str) -> None:
        discover.page().open_repo(repo_id)  # type: ignore[attr-defined]
        window.tabs.setCurrentWidget(discover)

    page = WelcomePage(models.hub, models.downloads, core.hardware, local=models.local)
    WelcomeFlow(page, window, finished=remember, browse=browse)

if __name__ == "__main__":
    sys.exit(main())
