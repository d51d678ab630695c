"""Settings → Other computers: the RPC workers a load may split the model over, and lending this
computer's devices to another Hearth.

Nothing here decides anything: the list, its check and this computer's worker are
:class:`~app.services.workers.WorkersService`'s; the planner decides what goes where.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.loading.workers import WorkerCheck
from app.services.workers import WorkersService
from app.ui.lang import format_number, tr, ui_text
from app.ui.settings_tabs.layout import Section, note, setting_row
from app.ui.style.components import Banner, primary_button
from app.ui.style.icons import icon
from app.ui.style.tokens import SPACING

GiB = 1 << 30
_ENDPOINT_ROLE = Qt.ItemDataRole.UserRole
LOOPBACK_HOST = "127.0.0.1"


def interfaces() -> tuple[tuple[str, str], ...]:
    """(shown, host to bind): loopback by default; every interface only when asked, with a
    warning."""
    return ((tr("This computer only (for an SSH tunnel)"), LOOPBACK_HOST),
            (tr("Every network this computer is on"), "0.0.0.0"))


class WorkersBox(QWidget):
    """Two sections: the workers a load may use, and lending this computer."""

    def __init__(self, workers: WorkersService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workers = workers
        self._status: dict[str, str] = {}
        self.workers_section = Section(tr("Workers"))
        self.lending_section = Section(tr("Lend this computer"))
        self._build_workers()
        self._build_lending()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACING.xl)
        layout.addWidget(self.workers_section)
        layout.addWidget(self.lending_section)

        workers.changed.connect(lambda _eps: self._show_list())
        workers.checked.connect(self._on_checked)
        workers.message.connect(self._on_message)
        workers.lending_changed.connect(lambda _ep: self._show_lending())
        self._show_list()
        self._show_lending()

    def _build_workers(self) -> None:
        body = self.workers_section.body
        body.addWidget(note(tr(
            "Split a model too big for this computer over others that run "
            "“hearth-runner rpc-worker”: the planner puts layers on their devices like on a "
            "GPU and says which machine holds what.")))
        self.list = QListWidget()
        self.list.setAccessibleName(tr("Workers"))
        self.list.setMaximumHeight(110)
        self.list.setWordWrap(True)
        self.address = QLineEdit()
        self.address.setPlaceholderText(tr("host:port, such as {example}").format(
            example="192.168.1.20:50052"))
        self.address.setAccessibleName(tr("Worker address"))
        self.address.returnPressed.connect(self._add)
        self.add_btn = primary_button(tr("Add"), icon_name="new")
        self.add_btn.setAccessibleName(tr("Add the worker"))
        self.add_btn.clicked.connect(self._add)
        self.remove_btn = QPushButton(icon("delete"), tr("Remove"))
        self.remove_btn.setAccessibleName(tr("Remove the worker"))
        self.remove_btn.clicked.connect(self._remove)
        self.check_btn = QPushButton(icon("retry"), tr("Check"))
        self.check_btn.setAccessibleName(tr("Check the workers"))
        self.check_btn.setToolTip(tr("Ask each worker which devices it lends and how much "
                                     "memory they have free"))
        self.check_btn.clicked.connect(lambda: self._workers.check())
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(SPACING.sm)
        for w in (self.address, self.add_btn, self.remove_btn, self.check_btn):
            row.addWidget(w)
        self._message_banner = Banner()
        self.message = self._message_banner.text
        self.message.setObjectName("workers_message")
        body.addWidget(self.list)
        body.addLayout(row)
        body.addWidget(self._message_banner)

    def _build_lending(self) -> None:
        body = self.lending_section.body
        self.lend = QCheckBox(tr("Lend this computer's devices to another Hearth"))
        self.lend.toggled.connect(self._on_lend)
        self.interface = QComboBox()
        self.interface.setAccessibleName(tr("Lend on"))
        for text, host in interfaces():
            self.interface.addItem(text, host)
        self.interface.currentIndexChanged.connect(lambda _i: self._show_lending())
        self.lend_note = note()
        self.lend_note.setObjectName("lend_note")
        self._warning_banner = Banner(closable=False)
        self._warning_banner.show_message(tr(
            "The worker protocol has no password or encryption, and it runs what it is sent: "
            "anyone who can reach its port can run code on this computer. Use it only on a "
            "network you trust, a VPN or an SSH tunnel."), "danger")
        self.warning = self._warning_banner.text
        self.warning.setObjectName("workers_warning")
        body.addWidget(self.lend)
        body.addWidget(setting_row(tr("Reachable from"), self.lend_note, self.interface))
        body.addWidget(self._warning_banner)

    # ---- showing ----------------------------------------------------------------------------------

    def _show_list(self) -> None:
        self.list.clear()
        for e in self._workers.endpoints():
            item = QListWidgetItem(tr("{worker} — {state}").format(
                worker=e, state=self._status.get(e) or tr("not checked yet")))
            item.setToolTip(item.text())
            item.setData(_ENDPOINT_ROLE, e)
            self.list.addItem(item)
        if not self._workers.endpoints():
            self.list.addItem(tr("No worker added: models load on this computer alone."))
        self.remove_btn.setEnabled(bool(self._workers.endpoints()))
        self.check_btn.setEnabled(bool(self._workers.endpoints()))

    def _show_lending(self) -> None:
        lent = self._workers.lent
        self.lend.blockSignals(True)
        self.lend.setChecked(self._workers.lending)
        self.lend.blockSignals(False)
        self.interface.setEnabled(not self.lend.isChecked())
        host = self.interface.currentData()
        self._warning_banner.setVisible(host != LOOPBACK_HOST)
        if lent.startswith("0.0.0.0:"):
            port = lent.rpartition(":")[2]
            self.lend_note.setText(tr(
                "Lending on port {port} of every network: on the other Hearth, add this "
                "computer's address with :{port}. It serves one Hearth at a time and stops when "
                "Hearth closes.").format(port=port))
        elif lent:
            self.lend_note.setText(tr(
                "Lending on {address}: add this address on the other Hearth (through an SSH "
                "tunnel from another computer). It serves one Hearth at a time and stops when "
                "Hearth closes.").format(address=lent))
        elif self.lend.isChecked():
            self.lend_note.setText(tr("Starting the worker…"))
        else:
            self.lend_note.setText(tr("Off. On the other computer, add this one's address and "
                                      "port 50052."))

    def _on_checked(self, result: WorkerCheck) -> None:
        per: dict[str, list[str]] = {}
        for d in result.devices:
            per.setdefault(d.endpoint, []).append(
                tr("device {index}: {free} of {total} GiB free").format(
                    index=d.index, free=format_number(d.free / GiB, ".1f"),
                    total=format_number(d.total / GiB, ".1f")))
        for e, lines in per.items():
            self._status[e] = "; ".join(lines)
        for e, why in result.problems:
            self._status[e] = tr("not usable: {why}").format(why=ui_text(why))
        self._show_list()

    def _on_message(self, text: str, error: bool) -> None:
        if text:
            self._message_banner.show_message(ui_text(text), "danger" if error else "info")
        else:
            self._message_banner.hide()

    # ---- changes ----------------------------------------------------------------------------------

    def _add(self) -> None:
        if self._workers.add(self.address.text()):
            self.address.clear()

    def _remove(self) -> None:
        item = self.list.currentItem()
        endpoint = item.data(_ENDPOINT_ROLE) if item is not None else None
        if not endpoint and self._workers.endpoints():
            endpoint = self._workers.endpoints()[-1]
        if endpoint:
            self._workers.remove(str(endpoint))

    def _on_lend(self, on: bool) -> None:
        self._workers.lend(on, host=str(self.interface.currentData()))
        self._show_lending()
