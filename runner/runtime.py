"""The llama.cpp libraries this runner process serves with: its runtime, chosen once per process.

A runtime is a folder made by ``installers/build_runtime.py``::

    <folder>/manifest.json   {"name", "backend", "llama_cpp_python", "build_options", ...}
    <folder>/lib/            libllama, libggml*, the backend and CPU-variant modules

``hearth-runner --runtime <folder> <command>`` serves (probes, lists devices, self-tests) with
that build (``--runtime NAME`` one of the runtime folders' runtimes, ``--runtime built-in``
llama-cpp-python's own libraries), as given: the app passes the runtime it chose, and it is
never chosen again here. Without it, or with ``--runtime auto``, :func:`choose` picks one by the
app's rules (``runner/wire``) from a plain look at this machine (:func:`this_machine`: the
display devices the kernel lists, the NVIDIA driver, the system and processor) and checks that
need no llama.cpp (:func:`light_check`: the driver, the Vulkan loader, the bindings' version);
``HEARTH_RUNTIME`` is the wish there, as it is the app's. llama_cpp reads
``LLAMA_CPP_LIB_PATH`` once, when it is first imported, so the choice must be made before
anything imports it: :func:`use` refuses once it has been.

Runtimes are ``GGML_BACKEND_DL`` builds: libggml registers no backend by itself, and
``llama_backend_init`` only looks next to the executable and in the working directory.
:func:`llama` therefore asks ggml to load every backend module in the runtime's folder, which
also picks the best CPU variant for this processor. Every ggml call goes through libllama's
own handle: opening ``libggml.so`` by path would load a second ggml with its own, empty, backend
registry (the wheel ships copies, not links). libmtmd (images) is loaded from the same folder
(``MTMD_CPP_LIB``), after libllama, so it links to that ggml: :func:`mtmd_available` says
beforehand whether the folder has it.
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import json
import logging
import os
import platform
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from runner import nvidia
from runner.wire import choose as rules
from runner.wire import runtimes as wire

MANIFEST = wire.MANIFEST
MTMD_LIBRARIES = ("libmtmd.so", "libmtmd.dylib", "mtmd.dll")  # what llama_cpp.mtmd_cpp loads
CPU_DEVICE = 0  # enum ggml_backend_dev_type
GIVEN = "given with --runtime"
# PCI vendor ids of the display devices the kernel lists (the same table as app/hardware/vulkan).
VENDOR_IDS = {0x10DE: "nvidia", 0x1002: "amd", 0x1022: "amd", 0x8086: "intel", 0x106B: "apple"}
VULKAN_LOADER = {"win32": "vulkan-1.dll", "darwin": "libvulkan.1.dylib"}.get(sys.platform,
                                                                             "libvulkan.so.1")
# Windows' class of display adapters: one numbered key per adapter, with its PCI ids and name.
DISPLAY_CLASS = r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}"

_lock = threading.Lock()
_chosen: dict[str, Any] | None = None  # the manifest of the runtime in use; None: built-in
_notes: tuple[rules.Note, ...] = ()  # why it serves (last), and why better ones did not
_backends_loaded = False


class RuntimeUnusable(RuntimeError):
    """A runtime folder that cannot be used; the message says what to do."""


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of the runtime in ``folder``; raises RuntimeUnusable if it is not one."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RuntimeUnusable(f"{folder} is not a runtime: it has no {MANIFEST}. Build one with "
                            "installers/build_runtime.py.") from None
    except (OSError, ValueError) as exc:
        raise RuntimeUnusable(f"{path} cannot be read ({exc}); build the runtime again.") from None
    if not isinstance(data, dict):
        raise RuntimeUnusable(f"{path} is not a runtime manifest; build the runtime again.")
    lib = folder / "lib"
    if not any((lib / n).exists() for n in wire.LIBRARIES):
        raise RuntimeUnusable(f"the runtime in {folder} has no llama library in {lib}; build it "
                            "again.")
    return data


def use(folder: str | Path) -> dict[str, Any]:
    """Serve with the runtime in ``folder`` from now on (before llama_cpp is imported)."""
    global _chosen
    path = Path(folder).expanduser().resolve()
    manifest = read_manifest(path)
    built_for = str(manifest.get("llama_cpp_python", ""))
    ours = _bindings_version()
    if built_for and ours and built_for != ours:
        # The bindings declare llama.cpp's structs by hand: another version's libraries would
        # be called with the wrong layouts and crash, not fail.
        raise RuntimeUnusable(f"the runtime in {path} was built for llama-cpp-python "
                              f"{built_for}, and this runner has {ours}: build it again with "
                              "installers/build_runtime.py.")
    with _lock:
        if "llama_cpp.llama_cpp" in sys.modules:
            loaded = getattr(sys.modules["llama_cpp.llama_cpp"], "_base_path", None)
            if loaded is None or Path(loaded).resolve() != path / "lib":
                raise RuntimeUnusable("llama.cpp is already loaded from another folder; the "
                                    "runtime must be chosen first.")
        lib = str(path / "lib")
        os.environ["LLAMA_CPP_LIB_PATH"] = lib
        os.environ["MTMD_CPP_LIB"] = lib
        if sys.platform == "win32":
            os.add_dll_directory(lib)
        _chosen = {**manifest, "path": str(path)}
    return _chosen


def _bindings_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return ""


def chosen() -> dict[str, Any]:
    """What this process serves with, and why, for ``devices``, ``selftest`` and
    ``/runner/status``."""
    why = _notes[-1].params.get("why", "") if _notes else ""
    if _chosen is None:
        return {"name": wire.BUILTIN_NAME, "backend": "", "path": "", "why": why}
    return {**{k: _chosen[k] for k in ("name", "backend", "llama_cpp_python", "path",
                                       "min_driver", "cuda_major") if k in _chosen}, "why": why}


def choose(given: str | None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Serve with the runtime ``--runtime`` names (``given``), or choose one (None or ``auto``),
    before llama_cpp is imported; what :func:`chosen` then says."""
    global _notes
    choice = decide(given, env=env)
    if choice.runtime.path is not None:
        use(choice.runtime.path)
    with _lock:
        _notes = choice.notes
    return chosen()


def log_choice(log: logging.Logger) -> None:
    """Say which runtime serves and why (once the command has set up its logging)."""
    for note in _notes[:-1]:
        log.info("%s", note.text(), extra={"event": "runtime_skipped",
                                           "runtime": note.params.get("runtime", "")})
    if _notes:
        info = chosen()
        log.info("%s", _notes[-1].text(), extra={"event": "runtime_chosen", "runtime": info["name"],
                                                 "path": info["path"], "why": info["why"]})


def decide(given: str | None, *, env: Mapping[str, str] | None = None,
           folders: Sequence[Path] | None = None, machine: rules.Machine | None = None,
           check: rules.Check | None = None) -> rules.Choice:
    """Which runtime serves: the one ``given`` names, as is (a folder, a runtime's name,
    ``built-in``), else (None, "" or ``auto``) the app's choice for this machine.

    ``env`` (``HEARTH_RUNTIMES``, ``HEARTH_HOME``; ``HEARTH_RUNTIME``, the wish when nothing is
    given), ``folders`` (instead of the usual runtime folders), ``machine`` and ``check`` (instead
    of looking at this machine) are for tests. Raises RuntimeUnusable for a name not installed.
    """
    env = os.environ if env is None else env
    look = wire.runtime_folders(env) if folders is None else list(folders)
    if given is not None and wire.wish(given):
        return _given(given, look)
    runtimes = wire.list_runtimes(look)
    wanted = "" if given is not None else wire.wish(env.get(wire.WISH_VARIABLE))
    if machine is None or check is None:
        if wire.is_builtin(wanted) or all(rt.builtin or rt.problem for rt in runtimes):
            # Nothing to choose between: no need to look at the machine (or load libcuda).
            machine, check = machine or rules.Machine(), check or (lambda rt: None)
        else:
            driver = nvidia.read_driver()
            machine = machine or this_machine(driver)
            check = check or light_check(driver)
    return rules.choose(machine, runtimes, check, wanted,
                        not_installed="runtimes are looked for in " + ", ".join(map(str, look)),
                        checked_by="the runner's checks", asked=f"{wire.WISH_VARIABLE} names it")


def _given(given: str, look: Sequence[Path]) -> rules.Choice:
    def as_given(rt: wire.Runtime) -> rules.Choice:
        return rules.Choice(rt, (rules.Note(rules.CHOSEN, {"runtime": rt.label(), "why": GIVEN}),))

    if wire.is_builtin(given):
        return as_given(wire.BUILTIN)
    path = Path(given).expanduser()
    if path.is_dir():
        return as_given(wire.read_runtime(path))  # use() says what is wrong with it, if anything
    runtimes = wire.list_runtimes(look)
    for rt in runtimes:
        if rt.name == given and not rt.builtin:
            if rt.problem:
                raise RuntimeUnusable(f"the runtime {given} in {rt.path} cannot be used: "
                                      f"{rt.problem}; build it again.")
            return as_given(rt)
    if any(sep in given for sep in ("/", os.sep)) or given.startswith("."):
        read_manifest(path)  # raises, saying it is not a runtime folder
    names = ", ".join(rt.name for rt in runtimes if not rt.builtin) or "none"
    raise RuntimeUnusable(f"no runtime named {given} (installed: {names}; looked for in "
                          f"{', '.join(map(str, look))}): give a runtime's name or folder, "
                          f"{wire.BUILTIN_NAME}, or {wire.AUTO} to choose.")


def mtmd_available(env: Mapping[str, str] | None = None) -> str | None:
    """None when libmtmd (images) can be loaded from the llama.cpp this process serves with: the
    chosen runtime's ``lib`` folder, or llama-cpp-python's own libraries when none was chosen
    (``built-in``); else a sentence that says why not and what to do.

    Call it before loading a projector: ``import llama_cpp.mtmd_cpp`` without the library fails
    with a bare FileNotFoundError. It looks for the file and does not load it: loaded before
    libllama, libmtmd would bring in libllama by its soname, and llama_cpp's own load by path
    would then map a second copy wherever the files are copies, not links (as in the wheel).
    ``env`` (``MTMD_CPP_LIB``, which llama_cpp.mtmd_cpp obeys) is for tests.
    """
    env = os.environ if env is None else env
    with _lock:
        runtime = _chosen
    if runtime is not None:
        return mtmd_problem(Path(runtime["path"]) / "lib", runtime=Path(runtime["path"]))
    override = env.get("MTMD_CPP_LIB")
    return mtmd_problem(Path(override) if override else _builtin_lib())


def mtmd_problem(lib: Path | None, runtime: Path | None = None) -> str | None:
    """None when ``lib`` holds libmtmd, else why not: ``runtime`` is the runtime folder ``lib``
    belongs to (None: llama-cpp-python's own libraries; ``lib`` None: no llama-cpp-python)."""
    if lib is None:
        return "llama-cpp-python is not installed, so there is no libmtmd (image support)."
    if any((lib / name).exists() for name in MTMD_LIBRARIES):
        return None
    if runtime is not None:
        return (f"the runtime in {runtime} was built without image support (libmtmd); build it "
                "again with installers/build_runtime.py.")
    return (f"llama-cpp-python's own libraries in {lib} have no libmtmd (image support); "
            "install a llama-cpp-python built with it, or serve with a runtime built by "
            "installers/build_runtime.py.")


def _builtin_lib() -> Path | None:
    """llama-cpp-python's own library folder, found without importing llama_cpp (which would
    fix LLAMA_CPP_LIB_PATH)."""
    module = sys.modules.get("llama_cpp")
    origin = getattr(module, "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec("llama_cpp")
        origin = spec.origin if spec is not None else None
    return Path(origin).parent / "lib" if origin else None


def this_machine(driver: nvidia.NvidiaDriver | None, *, system: str | None = None,
                 arch: str | None = None, root: Path = Path("/"),
                 adapters: Sequence[tuple[int, str]] | None = None) -> rules.Machine:
    """This machine as the choice needs it, from a plain look (no hardware report).

    ``driver``: :func:`runner.nvidia.read_driver`'s answer. GPU vendors come from the display
    devices the kernel lists (``adapters``: PCI vendor id and name; read from sysfs under
    ``root`` on Linux, from the registry on Windows); an NVIDIA GPU also from the driver's own
    list (``/proc/driver/nvidia/gpus``), and counts for CUDA only where the driver loads.
    Apple Silicon is macOS on arm64.
    """
    system = system or platform.system()
    arch = (arch or platform.machine()).lower()
    if adapters is None:
        adapters = _drm_adapters(root) if system == "Linux" else (
            _windows_adapters() if system == "Windows" else [])
    vendors = {VENDOR_IDS[v] for v, _ in adapters if v in VENDOR_IDS}
    names = [n for v, n in adapters if n and VENDOR_IDS.get(v) != "nvidia"]
    listed = _nvidia_gpus(root) if system == "Linux" else [n for v, n in adapters
                                                             if VENDOR_IDS.get(v) == "nvidia"]
    # Where the kernel's list cannot be read off Linux, a driver that loads stands for its GPU.
    if listed or (driver is not None and not adapters and system != "Linux"):
        vendors.add("nvidia")
    cuda = driver.cuda[0] if driver is not None and driver.cuda and "nvidia" in vendors else 0
    apple_silicon = system == "Darwin" and arch in ("arm64", "aarch64")
    if apple_silicon:
        vendors.add("apple")
    return rules.Machine(frozenset(vendors), cuda, apple_silicon,
                         tuple(n for n in (*listed, *names) if n))


def _drm_adapters(root: Path) -> list[tuple[int, str]]:
    """(PCI vendor id, "") of each card under ``<root>/sys/class/drm``."""
    out = []
    try:
        cards = sorted(p for p in (root / "sys/class/drm").iterdir()
                       if re.fullmatch(r"card\d+", p.name))
    except OSError:
        return []
    for card in cards:
        try:
            out.append((int((card / "device" / "vendor").read_text().strip(), 0), ""))
        except (OSError, ValueError):
            continue
    return out


def _nvidia_gpus(root: Path) -> list[str]:
    """The names of the GPUs the NVIDIA driver lists (``/proc/driver/nvidia/gpus``)."""
    try:
        gpus = sorted((root / "proc/driver/nvidia/gpus").iterdir())
    except OSError:
        return []
    names = []
    for gpu in gpus:
        try:
            text = (gpu / "information").read_text("utf-8", errors="replace")
        except OSError:
            text = ""
        m = re.search(r"^Model:\s*(.+?)\s*$", text, re.MULTILINE)
        names.append(m.group(1) if m else "NVIDIA GPU")
    return names


def _windows_adapters() -> list[tuple[int, str]]:
    """(PCI vendor id, name) of each display adapter in the registry."""
    if sys.platform != "win32":
        return []
    import winreg

    out: list[tuple[int, str]] = []
    try:
        adapters = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, DISPLAY_CLASS)
    except OSError:
        return []
    with adapters:
        for i in itertools.count():
            try:
                sub = winreg.EnumKey(adapters, i)
            except OSError:
                break
            if not sub.isdigit():
                continue
            try:
                with winreg.OpenKey(adapters, sub) as key:
                    device = str(winreg.QueryValueEx(key, "MatchingDeviceId")[0])
                    name = str(winreg.QueryValueEx(key, "DriverDesc")[0])
            except OSError:
                continue
            m = re.search(r"ven_([0-9a-f]{4})", device, re.IGNORECASE)
            if m:
                out.append((int(m.group(1), 16), name))
    return out


def light_check(driver: nvidia.NvidiaDriver | None, *,
                vulkan_loader: Callable[[], bool] | None = None,
                bindings: str | None = None) -> rules.Check:
    """What the runner can tell about a runtime without loading it: a CUDA runtime needs an
    NVIDIA driver new enough (:func:`runner.nvidia.driver_problem`), a Vulkan one the Vulkan
    loader, any one this runner's llama-cpp-python version (its structs are declared by hand).
    The app's self-test proves more; a runner started by hand has only these."""
    ours = _bindings_version() if bindings is None else bindings
    loader = vulkan_loader or _vulkan_loader_present

    def check(rt: wire.Runtime) -> rules.Verdict | None:
        if rt.llama_cpp_python and ours and rt.llama_cpp_python != ours:
            return rules.Verdict(False, f"it was built for llama-cpp-python {rt.llama_cpp_python} "
                                        f"and this runner has {ours}")
        if rt.backend == "cuda":
            problem = nvidia.driver_problem({"backend": "cuda", "min_driver": rt.min_driver,
                                             "cuda_major": rt.cuda_major}, driver)
            if problem:
                return rules.Verdict(False, problem)
        if rt.backend == "vulkan" and not loader():
            return rules.Verdict(False, f"the Vulkan loader ({VULKAN_LOADER}) is not installed")
        return None

    return check


def _vulkan_loader_present() -> bool:
    try:
        ctypes.CDLL(VULKAN_LOADER)
    except OSError:
        return False
    return True


def llama() -> ModuleType:
    """llama_cpp, imported from the chosen runtime, with its backends loaded (once)."""
    global _backends_loaded
    import llama_cpp

    with _lock:
        if not _backends_loaded:
            _load_backends(llama_cpp)
            _backends_loaded = True
    return llama_cpp


def lib() -> ctypes.CDLL:
    """libllama's handle: its symbol lookups reach the ggml that llama really uses."""
    handle: ctypes.CDLL = llama().llama_cpp._lib
    return handle


def _fn(handle: ctypes.CDLL, name: str, restype: Any, argtypes: list[Any]) -> Any:
    fn = getattr(handle, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


def _load_backends(llama_cpp: ModuleType) -> None:
    handle = llama_cpp.llama_cpp._lib
    reg_count = _fn(handle, "ggml_backend_reg_count", ctypes.c_size_t, [])
    if reg_count() > 0:
        return  # a build with its backends linked in (the built-in wheel)
    load_all = getattr(handle, "ggml_backend_load_all_from_path", None)
    folder = os.environ.get("LLAMA_CPP_LIB_PATH") or str(
        Path(str(llama_cpp.__file__)).parent / "lib")
    if load_all is not None:
        load_all.restype = None
        load_all.argtypes = [ctypes.c_char_p]
        load_all(folder.encode())
    if reg_count() == 0:
        raise RuntimeUnusable(f"no llama.cpp backend could be loaded from {folder}: the runtime is "
                            "incomplete or was built for another processor; build it again.")


def cpu_buffer_type() -> int:
    """The CPU's buffer type, found through the device registry (the CPU may be a module)."""
    handle = lib()
    dev = _fn(handle, "ggml_backend_dev_by_type", ctypes.c_void_p, [ctypes.c_int])(CPU_DEVICE)
    if not dev:
        raise RuntimeUnusable("this runtime has no CPU device")
    buft = _fn(handle, "ggml_backend_dev_buffer_type", ctypes.c_void_p, [ctypes.c_void_p])(dev)
    return int(buft)


def cpu_variant() -> str:
    """Which CPU module ggml loaded (``x64``, ``haswell``, ``skylakex``, …), or "" if built in.

    Read from the process's own memory map, so it names the file that really runs.
    """
    names: set[str] = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                m = re.search(r"libggml-cpu-([\w.-]+?)\.so", line)
                if m:
                    names.add(m.group(1))
    except OSError:
        return ""
    return ",".join(sorted(names))
