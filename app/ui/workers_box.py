"""Settings → Other computers: the RPC workers a load may split the model over, and lending this
computer's devices to another Hearth.

Nothing here decides anything: the list, its check and this computer's worker are
:class:`~app.services.workers.WorkersService`'s; the planner decides what goes where.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
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
from app.ui.common import plain_label, set_text_color, text_color

_ERROR_HUE = "#d0342c"  # as the settings dialog's errors
GiB = 1 << 30
# (shown, host to bind): loopback by default; every interface only when asked, with a warning.
INTERFACES = (("This computer only (for an SSH tunnel)", "127.0.0.1"),
              ("Every network this computer is on", "0.0.0.0"))


class WorkersBox(QGroupBox):
    def __init__(self, workers: WorkersService, parent: QWidget | None = None) -> None:
        super().__init__("Other computers", parent)
        self._workers = workers
        self._status: dict[str, str] = {}
        intro = plain_label(
            "Split a model too big for this computer over others that run "
            "“hearth-runner rpc-worker”: the planner puts layers on their devices like on a "
            "GPU and says which machine holds what.", wrap=True)
        self.list = QListWidget()
        self.list.setAccessibleName("Workers")
        self.list.setMaximumHeight(110)
        self.list.setWordWrap(True)
        self.address = QLineEdit()
        self.address.setPlaceholderText("host:port, such as 192.168.1.20:50052")
        self.address.setAccessibleName("Worker address")
        self.address.returnPressed.connect(self._add)
        self.add_btn = QPushButton("Add")
        self.add_btn.clicked.connect(self._add)
        self.remove_btn = QPushButton("Remove")
        self.remove_btn.clicked.connect(self._remove)
        self.check_btn = QPushButton("Check")
        self.check_btn.setToolTip("Ask each worker which devices it lends and how much memory "
                                  "they have free")
        self.check_btn.clicked.connect(lambda: workers.check())
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for w in (self.address, self.add_btn, self.remove_btn, self.check_btn):
            row.addWidget(w)

        self.lend = QCheckBox("Lend this computer's devices to another Hearth")
        self.lend.toggled.connect(self._on_lend)
        self.interface = QComboBox()
        self.interface.setAccessibleName("Lend on")
        for text, host in INTERFACES:
            self.interface.addItem(text, host)
        self.interface.currentIndexChanged.connect(lambda _i: self._show_lending())
        self.lend_note = plain_label(wrap=True, muted=True)
        self.lend_note.setObjectName("lend_note")
        self.warning = plain_label(
            "The worker protocol has no password or encryption, and it runs what it is sent: "
            "anyone who can reach its port can run code on this computer. Use it only on a "
            "network you trust, a VPN or an SSH tunnel.", wrap=True)
        set_text_color(self.warning, text_color(self.palette(), _ERROR_HUE))
        self.message = plain_label(wrap=True)
        self.message.setObjectName("workers_message")
        self.message.hide()

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list)
        lay_row = QWidget()
        lay_row.setLayout(row)
        layout.addWidget(lay_row)
        layout.addWidget(self.message)
        lend_row = QHBoxLayout()
        lend_row.setContentsMargins(0, 0, 0, 0)
        lend_row.addWidget(self.lend)
        lend_row.addWidget(self.interface)
        lend_row.addStretch(1)
        lend_w = QWidget()
        lend_w.setLayout(lend_row)
        layout.addWidget(lend_w)
        layout.addWidget(self.lend_note)
        layout.addWidget(self.warning)

        workers.changed.connect(lambda _eps: self._show_list())
        workers.checked.connect(self._on_checked)
        workers.message.connect(self._on_message)
        workers.lending_changed.connect(lambda _ep: self._show_lending())
        self._show_list()
        self._show_lending()

    # ---- showing ----------------------------------------------------------------------------------

    def _show_list(self) -> None:
        self.list.clear()
        for e in self._workers.endpoints():
            item = QListWidgetItem(f"{e} — {self._status.get(e, 'not checked yet')}")
            item.setToolTip(item.text())
            item.setData(256, e)  # Qt.UserRole
            self.list.addItem(item)
        if not self._workers.endpoints():
            self.list.addItem("No worker added: models load on this computer alone.")
        self.remove_btn.setEnabled(bool(self._workers.endpoints()))
        self.check_btn.setEnabled(bool(self._workers.endpoints()))

    def _show_lending(self) -> None:
        lent = self._workers.lent
        self.lend.blockSignals(True)
        self.lend.setChecked(self._workers.lending)
        self.lend.blockSignals(False)
        self.interface.setEnabled(not self.lend.isChecked())
        host = self.interface.currentData()
        self.warning.setVisible(host != "127.0.0.1")
        if lent.startswith("0.0.0.0:"):
            port = lent.rpartition(":")[2]
            self.lend_note.setText(f"Lending on port {port} of every network: on the other "
                                   f"Hearth, add this computer's address with :{port}. It serves "
                                   "one Hearth at a time and stops when Hearth closes.")
        elif lent:
            self.lend_note.setText(f"Lending on {lent}: add this address on the other Hearth "
                                   "(through an SSH tunnel from another computer). It serves "
                                   "one Hearth at a time and stops when Hearth closes.")
        elif self.lend.isChecked():
            self.lend_note.setText("Starting the worker…")
        else:
            self.lend_note.setText("Off. On the other computer, add this one's address and "
                                   "port 50052.")

    def _on_checked(self, result: WorkerCheck) -> None:
        per: dict[str, list[str]] = {}
        for d in result.devices:
            per.setdefault(d.endpoint, []).append(
                f"device {d.index}: {d.free / GiB:.1f} of {d.total / GiB:.1f} GiB free")
        for e, lines in per.items():
            self._status[e] = "; ".join(lines)
        for e, why in result.problems:
            self._status[e] = f"not usable: {why}"
        self._show_list()

    def _on_message(self, text: str, error: bool) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))
        set_text_color(self.message, text_color(self.palette(), _ERROR_HUE) if error else None)

    # ---- changes ----------------------------------------------------------------------------------

    def _add(self) -> None:
        if self._workers.add(self.address.text()):
            self.address.clear()

    def _remove(self) -> None:
        item = self.list.currentItem()
        endpoint = item.data(256) if item is not None else None
        if not endpoint and self._workers.endpoints():
            endpoint = self._workers.endpoints()[-1]
        if endpoint:
            self._workers.remove(str(endpoint))

    def _on_lend(self, on: bool) -> None:
        self._workers.lend(on, host=str(self.interface.currentData()))
        self._show_lending()
