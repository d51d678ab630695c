"""In-memory fakes of the hub, the download queue and the local models (app/services/protocols.py),
plus builders for realistic Hub data, for the Discover, Downloads and Library views' tests and the
screenshot script.

Each fake records the calls it gets and is driven by the test, which emits its signals: no
threads, no sleeps, no network.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from app.hub.names import group_files
from app.hub.types import FileGroup, HubError, HubFile, RepoDetails, RepoSummary
from app.hub.verdict import Fit, Verdict
from app.services.protocols import DownloadRow, LocalRow

GB = 1_000_000_000


class FakeHub(QObject):
    results = Signal(list, bool, bool)
    details = Signal(object)
    verdict = Signal(str, str, object)
    recommended = Signal(list)
    unreachable = Signal(str)
    failed = Signal(str)
    account = Signal(str)
    account_failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[Any, ...]] = []

    def sign_in(self, token: str) -> None:
        self.calls.append(("sign_in", token))

    def sign_out(self) -> None:
        self.calls.append(("sign_out",))

    def token_note(self) -> str:
        return "No token."

    def search(self, query: str, sort: str = "trending") -> None:
        self.calls.append(("search", query, sort))

    def more(self) -> None:
        self.calls.append(("more",))

    def open_repo(self, repo_id: str) -> None:
        self.calls.append(("open_repo", repo_id))

    def load_recommended(self) -> None:
        self.calls.append(("load_recommended",))

    def retry(self) -> None:
        self.calls.append(("retry",))

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == name]


class FakeDownloads(QObject):
    changed = Signal()
    progress = Signal(object)
    finished = Signal(str)
    failed = Signal(str, str)

    def __init__(self, rows: list[DownloadRow] | None = None) -> None:
        super().__init__()
        self._rows: dict[str, DownloadRow] = {r.id: r for r in rows or []}
        self.calls: list[tuple[Any, ...]] = []
        self.refuse: HubError | None = None  # enqueue raises this when set
        self.rows_calls = 0

    def rows(self) -> list[DownloadRow]:
        self.rows_calls += 1
        return list(self._rows.values())

    def enqueue(self, details: Any, group: Any) -> str:
        self.calls.append(("enqueue", details, group))
        if self.refuse is not None:
            raise self.refuse
        return f"dl-{len(self.calls)}"

    def pause(self, id: str) -> None:
        self.calls.append(("pause", id))

    def resume(self, id: str) -> None:
        self.calls.append(("resume", id))

    def cancel(self, id: str) -> None:
        self.calls.append(("cancel", id))

    def retry(self, id: str) -> None:
        self.calls.append(("retry", id))

    # -- driving it --

    def set_rows(self, rows: list[DownloadRow]) -> None:
        self._rows = {r.id: r for r in rows}
        self.changed.emit()

    def tick(self, row: DownloadRow) -> None:
        """A progress update for one row (no `changed`)."""
        self._rows[row.id] = row
        self.progress.emit(row)


class FakeLocalModels(QObject):
    changed = Signal(list)
    busy_changed = Signal(bool)
    verified = Signal(str, object, str)
    failed = Signal(str)

    def __init__(self, rows: list[LocalRow] | None = None) -> None:
        super().__init__()
        self._rows = list(rows or [])
        self.calls: list[tuple[Any, ...]] = []

    def rows(self) -> list[LocalRow]:
        return list(self._rows)

    def rescan(self) -> None:
        self.calls.append(("rescan",))

    def add_folder(self, folder: str) -> None:
        self.calls.append(("add_folder", folder))

    def set_models_dir(self, folder: str) -> None:
        self.calls.append(("set_models_dir", folder))

    def delete(self, path: str) -> None:
        self.calls.append(("delete", path))

    def verify(self, path: str) -> None:
        self.calls.append(("verify", path))

    def set_rows(self, rows: list[LocalRow]) -> None:
        self._rows = list(rows)
        self.changed.emit(self.rows())


# ---- data builders ------------------------------------------------------------------------------


def verdict(fit: Fit, n_ctx: int = 32768, gpu_layers: int = 33, layers: int = 33,
            reasons: tuple[str, ...] = ()) -> Verdict:
    """A verdict as the planner would sum it up (the plan itself is not needed by the views)."""
    if not reasons:
        reasons = {
            Fit.GPU: ("All 33 layers fit in the GPU's 24.0 GiB with 3.1 GiB to spare.",
                      "Context 32k: the model's limit is 128k; 32k keeps the KV cache at 4.0 GiB."),
            Fit.PARTIAL: ("20 of 33 layers fit in the GPU's 8.0 GiB; the rest run on the CPU.",
                          "Context 8k to leave room for more layers on the GPU."),
            Fit.CPU: ("No usable GPU: the model runs on the CPU with 8 threads.",),
            Fit.NO_FIT: ("It needs 48.2 GiB; this computer has 31.1 GiB of RAM and no GPU.",),
        }[fit]
    if fit is Fit.NO_FIT:
        n_ctx, gpu_layers = 0, 0
    elif fit is Fit.CPU:
        gpu_layers = 0
    return Verdict(fit, gpu_layers, layers, n_ctx, reasons, None)  # type: ignore[arg-type]


def summary(repo_id: str, downloads: int = 1000, likes: int = 10,
            last_modified: float | None = 1_721_700_000.0, gated: bool = False) -> RepoSummary:
    author, name = repo_id.split("/", 1)
    return RepoSummary(repo_id, author, name, downloads, likes, last_modified, gated)


def hub_files(stem: str, quants: dict[str, int], *, split: dict[str, int] | None = None,
              mmproj: bool = False, imatrix: bool = False) -> tuple[HubFile, ...]:
    """Files of a GGUF repository: one per quantization (size in bytes), split ones in parts of
    about ``split[q] / parts`` bytes each, optionally a vision projector and an imatrix."""
    files = [HubFile(f"{stem}-{q}.gguf", size, "ab" * 32) for q, size in quants.items()]
    for q, parts in (split or {}).items():
        files += [HubFile(f"{q}/{stem}-{q}-{i:05d}-of-{parts:05d}.gguf", 4_980_000_000, "cd" * 32)
                  for i in range(1, parts + 1)]
    if mmproj:
        files.append(HubFile(f"mmproj-{stem}-f16.gguf", 851_000_000, "ef" * 32))
    if imatrix:
        files.append(HubFile(f"{stem}.imatrix", 5_200_000, None))
    files.append(HubFile("README.md", 4_000, None))
    return tuple(files)


def details(repo_id: str, files: tuple[HubFile, ...], *, card: str = "", license: str | None = "mit",
            gated: bool = False, architecture: str | None = "llama",
            parameters: int | None = 8_030_261_248, context_length: int | None = 131072,
            downloads: int = 123_456, likes: int = 321) -> RepoDetails:
    return RepoDetails(repo_id, "0" * 40, card, license, gated, architecture, parameters,
                       context_length, downloads, likes, 1_721_700_000.0, group_files(files),
                       files)


def group_named(d: RepoDetails, quant: str) -> FileGroup:
    return next(g for g in d.groups if g.quant == quant)


LLAMA_CARD = """---
license: llama3.1
base_model: meta-llama/Meta-Llama-3.1-8B-Instruct
---

## Llamacpp imatrix Quantizations of Meta-Llama-3.1-8B-Instruct

Using [llama.cpp](https://github.com/ggerganov/llama.cpp/) release b3472 for quantization.

All quants made using imatrix option with dataset from [here](https://gist.github.com/bartowski1182).

## Prompt format

```
<|begin_of_text|><|start_header_id|>system<|end_header_id|>

{system_prompt}<|eot_id|><|start_header_id|>user<|end_header_id|>

{prompt}<|eot_id|><|start_header_id|>assistant<|end_header_id|>
```

## Which file should I choose?

| Filename | Quant type | File Size | Description |
| -------- | ---------- | --------- | ----------- |
| Meta-Llama-3.1-8B-Instruct-Q8_0.gguf | Q8_0 | 8.54GB | Extremely high quality, rarely needed. |
| Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf | Q4_K_M | 4.92GB | Good quality, *recommended*. |

A great write up with charts showing various performances is provided by Artefact2
[here](https://gist.github.com/Artefact2/b5f810600771265fc1e39442288e8ec9).
"""


def llama_details() -> RepoDetails:
    stem = "Meta-Llama-3.1-8B-Instruct"
    files = hub_files(stem, {"Q2_K": 3_180_000_000, "Q3_K_M": 4_020_000_000,
                             "Q4_K_M": 4_920_000_000, "Q5_K_M": 5_730_000_000,
                             "Q6_K": 6_600_000_000, "IQ4_XS": 4_450_000_000},
                      split={"Q8_0": 3}, mmproj=True)
    files += (HubFile(f"{stem}.imatrix.gguf", 5_200_000, None),)
    return details("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", files, card=LLAMA_CARD,
                   license="llama3.1", gated=False, architecture="llama",
                   parameters=8_030_261_248, context_length=131072, downloads=1_234_567,
                   likes=640)


def download_row(id: str, title: str, state: str, done: int, total: int | None,
                 speed: float = 0.0, eta: float | None = None, phase: str = "",
                 error: str = "") -> DownloadRow:
    return DownloadRow(id, title, state, done, total, speed, eta, phase or state, error)


def local_row(path: str, name: str, *, size: int = 4_920_000_000, source: str = "Hearth",
              own: bool = True, quantization: str | None = "Q4_K_M",
              architecture: str | None = "llama", parameters: int | None = 8_030_261_248,
              context_length: int | None = 131072, verdict: Any = None,
              error: str | None = None) -> LocalRow:
    return LocalRow(path, name, size, source, own, quantization, architecture, parameters,
                    context_length, verdict, error)
