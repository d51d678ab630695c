"""Finding the models other apps already downloaded, in the folders those apps really use.

Each test lays a folder out the way the app itself does (Ollama's manifests and content-addressed
blobs, the Hugging Face cache's snapshot symlinks, LM Studio's publisher/repo folders, Jan's
model ids, GPT4All's flat folder) with tiny GGUF files whose headers are real.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from app.jobs import CancelledError, CancelToken
from app.library import scan as scan_mod
from app.library.scan import FoundModel, ModelSource, SourceKind, default_sources, scan
from tests.fixtures.header_only import Shape, write_header_only

TINY = Shape("tiny", "llama", 2, 256, 4, 2, 512, 300, 2048)
TINY_B = Shape("tiny-b", "llama", 3, 256, 4, 2, 512, 300, 4096)


def gguf(path: Path, shape: Shape = TINY) -> Path:
    """A tiny model whose header is real (the weights are a sparse hole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_header_only(path, shape)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- each app's layout, as the app writes it ----------------------------------------------------


def hf_cache_repo(hub: Path, repo_id: str, files: dict[str, Path], *, commit: str = "a" * 40,
                  extra_commits: tuple[str, ...] = ()) -> Path:
    """``models--owner--name``: blobs named by sha256, snapshots of relative symlinks, refs/main.

    ``files`` maps the name in the repository to a file whose bytes become the blob.
    """
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    digests = {name: sha256(src) for name, src in files.items()}
    for name, src in files.items():
        blob = repo / "blobs" / digests[name]
        if not blob.exists():
            os.replace(src, blob)
    for rev in (commit, *extra_commits):
        for name, digest in digests.items():
            link = repo / "snapshots" / rev / name
            link.parent.mkdir(parents=True, exist_ok=True)
            depth = len(Path(name).parts) + 1  # snapshots/<rev>/<name...> back to the repo folder
            link.symlink_to(Path(*([".."] * depth)) / "blobs" / digest)
    # A small file kept in git, not LFS: its blob is named by a 40-hex git sha1.
    readme = repo / "blobs" / ("b" * 40)
    readme.write_text("# model card\n")
    (repo / "snapshots" / commit / "README.md").symlink_to(Path("..") / ".." / "blobs" / ("b" * 40))
    # An interrupted download leaves <hash>.incomplete in blobs and no snapshot link.
    (repo / "blobs" / ("c" * 64 + ".incomplete")).write_bytes(b"GGUF partial")
    return repo


def ollama_pull(models: Path, name: str, blob_source: Path | None, *, host: str =
                "registry.ollama.ai", namespace: str = "library", media_type: str =
                "application/vnd.ollama.image.model", digest: str | None = None) -> str:
    """manifests/<host>/<namespace>/<model>/<tag> JSON and blobs/sha256-<hex>, as ``ollama pull``."""
    model, tag = name.split(":")
    blobs = models / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    layers: list[dict[str, object]] = []
    model_hex = ""
    if blob_source is not None:
        hexdigest = model_hex = sha256(blob_source)
        target = blobs / f"sha256-{hexdigest}"
        if not target.exists():
            os.replace(blob_source, target)
        layers.append({"mediaType": media_type, "digest": digest or f"sha256:{hexdigest}",
                       "size": target.stat().st_size})
    template = b"{{ .Prompt }}"
    template_hex = hashlib.sha256(template).hexdigest()
    (blobs / f"sha256-{template_hex}").write_bytes(template)
    layers.append({"mediaType": "application/vnd.ollama.image.template",
                   "digest": f"sha256:{template_hex}", "size": len(template)})
    config = json.dumps({"model_format": "gguf", "model_family": "llama"}).encode()
    config_hex = hashlib.sha256(config).hexdigest()
    (blobs / f"sha256-{config_hex}").write_bytes(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "digest": f"sha256:{config_hex}", "size": len(config)},
        "layers": layers,
    }
    path = models / "manifests" / host / namespace / model / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return model_hex


def source(kind: SourceKind, root: Path, own: bool = False) -> ModelSource:
    return ModelSource.of(kind, root, own=own)


def by_name(models: list[FoundModel]) -> dict[str, FoundModel]:
    return {m.name: m for m in models}


# -- default_sources: where each app keeps its folder, per OS -----------------------------------


def test_linux_defaults_find_every_app_in_its_own_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    own = tmp_path / "hearth-models"
    own.mkdir()
    places = {
        SourceKind.HF_CACHE: home / ".cache" / "huggingface" / "hub",
        SourceKind.LMSTUDIO: home / ".lmstudio" / "models",
        SourceKind.OLLAMA: home / ".ollama" / "models",
        SourceKind.JAN: home / ".local" / "share" / "Jan" / "data" / "llamacpp" / "models",
        SourceKind.GPT4ALL: home / ".local" / "share" / "nomic.ai" / "GPT4All",
    }
    for p in places.values():
        p.mkdir(parents=True)
    got = default_sources(models_dir=own, home=home, env={}, platform="linux",
                          system_root=tmp_path / "sys")
    assert [(s.kind, s.root) for s in got] == [(SourceKind.HEARTH, own), *places.items()]
    assert got[0].own and got[0].name == "Hearth"
    assert not any(s.own for s in got[1:])
    assert [s.name for s in got[1:]] == ["Hugging Face cache", "LM Studio", "Ollama", "Jan",
                                         "GPT4All"]


def test_only_folders_that_exist_are_returned(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    got = default_sources(models_dir=own, extra_folders=[tmp_path / "gone"], home=tmp_path / "h",
                          env={}, platform="linux", system_root=tmp_path / "sys")
    assert [s.root for s in got] == [own]


def test_macos_defaults(tmp_path: Path) -> None:
    home = tmp_path / "Users" / "ann"
    support = home / "Library" / "Application Support"
    expected = [
        (SourceKind.HF_CACHE, home / ".cache" / "huggingface" / "hub"),
        (SourceKind.LMSTUDIO, home / ".cache" / "lm-studio" / "models"),  # before LM Studio 0.3
        (SourceKind.OLLAMA, home / ".ollama" / "models"),
        (SourceKind.JAN, support / "Jan" / "data" / "llamacpp" / "models"),
        (SourceKind.GPT4ALL, support / "nomic.ai" / "GPT4All"),
    ]
    for _, p in expected:
        p.mkdir(parents=True)
    # The Linux service folder is not looked at on a Mac.
    (tmp_path / "usr" / "share" / "ollama" / ".ollama" / "models").mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=home, env={}, platform="darwin",
                          system_root=tmp_path)
    assert [(s.kind, s.root) for s in got] == expected


def test_windows_defaults_use_appdata_and_localappdata(tmp_path: Path) -> None:
    home = tmp_path / "Users" / "ann"
    roaming = home / "AppData" / "Roaming"
    local = home / "AppData" / "Local"
    env = {"APPDATA": str(roaming), "LOCALAPPDATA": str(local), "USERPROFILE": str(home)}
    expected = [
        (SourceKind.HF_CACHE, home / ".cache" / "huggingface" / "hub"),
        (SourceKind.LMSTUDIO, home / ".lmstudio" / "models"),
        (SourceKind.OLLAMA, home / ".ollama" / "models"),
        (SourceKind.JAN, roaming / "Jan" / "data" / "llamacpp" / "models"),
        (SourceKind.GPT4ALL, local / "nomic.ai" / "GPT4All"),
    ]
    for _, p in expected:
        p.mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=home, env=env, platform="win32")
    assert [(s.kind, s.root) for s in got] == expected


def test_environment_moves_the_hub_cache_and_ollama(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hub = tmp_path / "big-disk" / "hub"
    ollama = tmp_path / "big-disk" / "ollama"
    hf_home = tmp_path / "hf-home"
    for p in (hub, ollama, hf_home / "hub", home / ".ollama" / "models"):
        p.mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=home,
                          env={"HF_HUB_CACHE": str(hub), "HF_HOME": str(hf_home),
                               "OLLAMA_MODELS": str(ollama)},
                          platform="linux", system_root=tmp_path / "sys")
    # HF_HUB_CACHE outranks HF_HOME; OLLAMA_MODELS first, the default folder still looked at.
    assert [(s.kind, s.root) for s in got] == [
        (SourceKind.HF_CACHE, hub), (SourceKind.OLLAMA, ollama),
        (SourceKind.OLLAMA, home / ".ollama" / "models")]


def test_hf_home_and_xdg_cache_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "hfh" / "hub").mkdir(parents=True)
    (tmp_path / "xdg" / "huggingface" / "hub").mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=home,
                          env={"HF_HOME": str(tmp_path / "hfh")}, platform="linux")
    assert [s.root for s in got] == [tmp_path / "hfh" / "hub"]
    got = default_sources(models_dir=tmp_path / "none", home=home,
                          env={"XDG_CACHE_HOME": str(tmp_path / "xdg")}, platform="linux")
    assert [s.root for s in got] == [tmp_path / "xdg" / "huggingface" / "hub"]


def test_ollama_linux_service_install(tmp_path: Path) -> None:
    service = tmp_path / "usr" / "share" / "ollama" / ".ollama" / "models"
    service.mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=tmp_path / "home", env={},
                          platform="linux", system_root=tmp_path)
    assert [(s.kind, s.root) for s in got] == [(SourceKind.OLLAMA, service)]


def test_lmstudio_home_pointer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    moved = tmp_path / "D" / "lmstudio"
    (moved / "models").mkdir(parents=True)
    (home / ".lmstudio-home-pointer").write_text(f"{moved}\n")
    got = default_sources(models_dir=tmp_path / "none", home=home, env={}, platform="linux",
                          system_root=tmp_path / "sys")
    assert [(s.kind, s.root) for s in got] == [(SourceKind.LMSTUDIO, moved / "models")]


def test_jan_custom_data_folder_and_older_layouts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / ".local" / "share"
    custom = tmp_path / "ssd" / "jan-data"
    (custom / "llamacpp" / "models").mkdir(parents=True)
    (data / "jan.ai.app").mkdir(parents=True)
    (data / "jan.ai.app" / "settings.json").write_text(json.dumps({"data_folder": str(custom)}))
    legacy_05 = home / ".config" / "Jan" / "data" / "models"  # Jan 0.5 (Electron) on Linux
    legacy_04 = home / "jan" / "models"
    legacy_05.mkdir(parents=True)
    legacy_04.mkdir(parents=True)
    got = default_sources(models_dir=tmp_path / "none", home=home, env={}, platform="linux",
                          system_root=tmp_path / "sys")
    assert [(s.kind, s.root) for s in got] == [
        (SourceKind.JAN, custom / "llamacpp" / "models"), (SourceKind.JAN, legacy_05),
        (SourceKind.JAN, legacy_04)]


def test_gpt4all_model_path_setting_on_linux(tmp_path: Path) -> None:
    home = tmp_path / "home"
    custom = tmp_path / "models-here"
    custom.mkdir()
    ini = home / ".config" / "nomic.ai" / "GPT4All.ini"
    ini.parent.mkdir(parents=True)
    ini.write_text(f"[General]\nmodelPath={custom}/\nsaveChatsContext=false\n")
    got = default_sources(models_dir=tmp_path / "none", home=home, env={}, platform="linux",
                          system_root=tmp_path / "sys")
    assert [(s.kind, s.root) for s in got] == [(SourceKind.GPT4ALL, custom)]


def test_a_folder_listed_twice_is_one_source(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    home = tmp_path / "home"
    lm = home / ".lmstudio" / "models"
    lm.mkdir(parents=True)
    got = default_sources(models_dir=own, extra_folders=[own, lm, lm / ".." / "models"],
                          home=home, env={}, platform="linux", system_root=tmp_path / "sys")
    assert [(s.kind, s.root) for s in got] == [
        (SourceKind.HEARTH, own), (SourceKind.LMSTUDIO, lm)]


# -- scan: each layout --------------------------------------------------------------------------


def test_hearth_own_folder(tmp_path: Path) -> None:
    own = tmp_path / "models"
    gguf(own / "bartowski" / "Llama-3.2-1B-Instruct-GGUF" / "Llama-3.2-1B-Instruct-Q4_K_M.gguf")
    gguf(own / "loose.gguf")
    # Downloads in progress and their journals are not models.
    (own / "bartowski" / "Llama-3.2-1B-Instruct-GGUF" / "Llama-3.2-1B-Instruct-Q8_0.gguf.part"
     ).write_bytes(b"GGUF")
    (own / "x.gguf.part.json").write_text("{}")
    gguf(own / ".hearth-downloads" / "journal.gguf")
    found = by_name(scan([source(SourceKind.HEARTH, own, own=True)]))
    assert set(found) == {"Llama-3.2-1B-Instruct-Q4_K_M.gguf", "loose.gguf"}
    model = found["Llama-3.2-1B-Instruct-Q4_K_M.gguf"]
    assert model.own and model.source == "Hearth" and model.complete
    assert model.repo_id == "bartowski/Llama-3.2-1B-Instruct-GGUF"
    assert model.size == model.path.stat().st_size > 0
    assert found["loose.gguf"].repo_id is None


def test_hugging_face_cache_snapshots_and_blobs(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    src = gguf(tmp_path / "incoming" / "model.gguf")
    digest = sha256(src)
    repo = hf_cache_repo(hub, "bartowski/Llama-3.2-1B-Instruct-GGUF",
                         {"Llama-3.2-1B-Instruct-Q4_K_M.gguf": src},
                         extra_commits=("0" * 40,))  # an older revision, same blob
    # A dataset and a Space are not models.
    gguf(hub / "datasets--someone--data" / "snapshots" / ("d" * 40) / "x.gguf")
    models = scan([source(SourceKind.HF_CACHE, hub)])
    assert len(models) == 1  # two snapshots, one blob: listed once
    m = models[0]
    assert m.name == "bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q4_K_M.gguf"
    assert m.repo_id == "bartowski/Llama-3.2-1B-Instruct-GGUF"
    assert m.expected_sha256 == digest
    # The path to load is the snapshot link (llama.cpp finds split parts beside it), not the blob.
    assert m.path == repo / "snapshots" / ("a" * 40) / "Llama-3.2-1B-Instruct-Q4_K_M.gguf"
    assert m.path.is_symlink() and m.path.resolve().parent.name == "blobs"
    assert m.source == "Hugging Face cache" and not m.own


def test_hugging_face_cache_file_in_a_subfolder_and_a_changed_file(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    old = gguf(tmp_path / "old.gguf", TINY)
    new = gguf(tmp_path / "new.gguf", TINY_B)
    hf_cache_repo(hub, "unsloth/Qwen3-8B-GGUF", {"Q4_K_M/Qwen3-8B-Q4_K_M.gguf": old},
                  commit="1" * 40)
    repo = hub / "models--unsloth--Qwen3-8B-GGUF"
    # A newer commit changed the file: a new blob, a new snapshot, refs/main moved.
    hf_cache_repo(hub, "unsloth/Qwen3-8B-GGUF", {"Q4_K_M/Qwen3-8B-Q4_K_M.gguf": new},
                  commit="2" * 40)
    assert (repo / "refs" / "main").read_text() == "2" * 40
    names = sorted(m.name for m in scan([source(SourceKind.HF_CACHE, hub)]))
    assert names == ["unsloth/Qwen3-8B-GGUF/Q4_K_M/Qwen3-8B-Q4_K_M.gguf",
                     "unsloth/Qwen3-8B-GGUF/Q4_K_M/Qwen3-8B-Q4_K_M.gguf @1111111"]


def test_hugging_face_cache_copies_without_symlinks(tmp_path: Path) -> None:
    # Windows without developer mode: snapshots hold copies, so no blob name to check against.
    hub = tmp_path / "hub"
    gguf(hub / "models--org--repo" / "snapshots" / ("e" * 40) / "m-Q8_0.gguf")
    (m,) = scan([source(SourceKind.HF_CACHE, hub)])
    assert m.name == "org/repo/m-Q8_0.gguf" and m.expected_sha256 is None


def test_lmstudio_publisher_repo_folders_with_a_projector(tmp_path: Path) -> None:
    root = tmp_path / ".lmstudio" / "models"
    repo = root / "lmstudio-community" / "gemma-3-4b-it-GGUF"
    gguf(repo / "gemma-3-4b-it-Q4_K_M.gguf")
    gguf(repo / "mmproj-model-f16.gguf")
    (repo / "imatrix.dat").write_bytes(b"x")
    gguf(repo / "gemma-3-4b-it.imatrix.gguf")
    (m,) = scan([source(SourceKind.LMSTUDIO, root)])
    assert m.name == "gemma-3-4b-it-Q4_K_M.gguf"
    assert m.repo_id == "lmstudio-community/gemma-3-4b-it-GGUF"
    assert m.mmproj == repo / "mmproj-model-f16.gguf"
    assert m.source == "LM Studio"


def test_ollama_manifests_name_their_blobs(tmp_path: Path) -> None:
    models = tmp_path / ".ollama" / "models"
    blob_src = gguf(tmp_path / "llama.gguf")
    digest = ollama_pull(models, "llama3.2:3b", blob_src)
    # "latest" names the same blob as "3b", as after `ollama pull llama3.2`.
    latest = models / "manifests" / "registry.ollama.ai" / "library" / "llama3.2" / "latest"
    latest.write_text((latest.parent / "3b").read_text())
    hf_src = gguf(tmp_path / "hf.gguf", TINY_B)
    hf_digest = ollama_pull(models, "Llama-3.2-1B-Instruct-GGUF:Q4_K_M", hf_src, host="hf.co",
                            namespace="bartowski")
    user_src = gguf(tmp_path / "user.gguf", Shape("u", "llama", 4, 256, 4, 2, 512, 300, 2048))
    ollama_pull(models, "mymodel:v1", user_src, namespace="alice")
    found = by_name(scan([source(SourceKind.OLLAMA, models)]))
    assert set(found) == {"llama3.2:3b", "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
                          "alice/mymodel:v1"}
    m = found["llama3.2:3b"]
    assert m.path == models / "blobs" / f"sha256-{digest}"
    assert m.expected_sha256 == digest and m.source == "Ollama" and m.repo_id is None
    hf = found["hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"]
    assert hf.repo_id == "bartowski/Llama-3.2-1B-Instruct-GGUF"
    assert hf.expected_sha256 == hf_digest


def test_ollama_ignores_what_is_not_a_gguf_model(tmp_path: Path) -> None:
    models = tmp_path / "ollama"
    # A safetensors-format model layer (newer Ollama engines) is not a GGUF.
    fake = tmp_path / "st.bin"
    fake.write_bytes(b'{"__metadata__": {}}' + b"\0" * 64)
    ollama_pull(models, "newarch:latest", fake)
    # A manifest with no model layer (an adapter-only or embedding-less entry).
    ollama_pull(models, "template-only:latest", None)
    # A digest that tries to leave the blobs folder for a model lying outside it.
    evil = gguf(tmp_path / "evil.gguf")
    ollama_pull(models, "evil:latest", evil, digest="sha256:x/../../../outside.gguf")
    (models / "blobs" / "sha256-x").mkdir()
    gguf(tmp_path / "outside.gguf")
    # A manifest whose blob was pruned, and a manifest that is not JSON.
    ollama_pull(models, "pruned:latest", None)
    pruned = models / "manifests" / "registry.ollama.ai" / "library" / "pruned" / "latest"
    data = json.loads(pruned.read_text())
    data["layers"].insert(0, {"mediaType": "application/vnd.ollama.image.model",
                              "digest": "sha256:" + "f" * 64, "size": 10})
    pruned.write_text(json.dumps(data))
    broken = pruned.parent.parent / "broken" / "latest"
    broken.parent.mkdir()
    broken.write_text("{not json")
    assert scan([source(SourceKind.OLLAMA, models)]) == []


def test_jan_model_folders(tmp_path: Path) -> None:
    root = tmp_path / "Jan" / "data" / "llamacpp" / "models"
    folder = root / "unsloth" / "gemma-3-4b-it-Q4_K_M"
    gguf(folder / "model.gguf")
    (folder / "model.yml").write_text(
        "model_path: llamacpp/models/unsloth/gemma-3-4b-it-Q4_K_M/model.gguf\n"
        "name: unsloth/gemma-3-4b-it-Q4_K_M\nsize_bytes: 1000\n")
    gguf(folder / "mmproj.gguf")
    legacy = tmp_path / "jan" / "models"
    gguf(legacy / "tinyllama-1.1b" / "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf")
    found = by_name(scan([source(SourceKind.JAN, root), source(SourceKind.JAN, legacy)]))
    assert set(found) == {"unsloth/gemma-3-4b-it-Q4_K_M", "tinyllama-1.1b"}
    m = found["unsloth/gemma-3-4b-it-Q4_K_M"]
    assert m.path == folder / "model.gguf" and m.mmproj == folder / "mmproj.gguf"
    assert m.source == "Jan" and m.repo_id is None  # Jan's ids add the quant: not a repo


def test_gpt4all_flat_folder_skips_incomplete_downloads(tmp_path: Path) -> None:
    root = tmp_path / "nomic.ai" / "GPT4All"
    gguf(root / "Llama-3.2-1B-Instruct-Q4_0.gguf")
    (root / "incomplete-Phi-3-mini-4k-instruct.Q4_0.gguf").write_bytes(b"GGUF\x03")
    (root / "test_write.txt").write_text("")
    (root / "localdocs_v2.db").write_bytes(b"SQLite")
    (m,) = scan([source(SourceKind.GPT4ALL, root)])
    assert m.name == "Llama-3.2-1B-Instruct-Q4_0.gguf" and m.source == "GPT4All"


# -- scan: split models, damaged folders, duplicates --------------------------------------------


def test_split_models_are_grouped(tmp_path: Path) -> None:
    root = tmp_path / "f"
    for i in (1, 2, 3):
        gguf(root / f"big-Q4_K_M-{i:05d}-of-00003.gguf")
    gguf(root / "gap-00001-of-00003.gguf")
    gguf(root / "gap-00003-of-00003.gguf")
    found = by_name(scan([source(SourceKind.FOLDER, root)]))
    assert set(found) == {"big-Q4_K_M.gguf", "gap.gguf"}
    big = found["big-Q4_K_M.gguf"]
    assert big.complete and big.part_count == 3
    assert big.path == root / "big-Q4_K_M-00001-of-00003.gguf"
    assert [p.name for p in big.paths] == [f"big-Q4_K_M-{i:05d}-of-00003.gguf" for i in (1, 2, 3)]
    assert big.size == sum(p.stat().st_size for p in big.paths)
    gap = found["gap.gguf"]
    assert not gap.complete and gap.part_count == 3 and len(gap.paths) == 2


def test_split_parts_in_the_hf_cache_keep_their_blob_hashes(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    parts = {f"Q8_0/m-Q8_0-{i:05d}-of-00002.gguf": gguf(tmp_path / f"p{i}.gguf",
                                                        TINY if i == 1 else TINY_B)
             for i in (1, 2)}
    digests = [sha256(p) for p in parts.values()]
    hf_cache_repo(hub, "org/m-GGUF", parts)
    (m,) = scan([source(SourceKind.HF_CACHE, hub)])
    assert m.name == "org/m-GGUF/Q8_0/m-Q8_0.gguf" and m.complete
    assert m.part_sha256 == tuple(digests) and m.expected_sha256 is None


def test_broken_links_loops_and_bad_files_never_stop_a_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    gguf(root / "good.gguf")
    (root / "dangling.gguf").symlink_to(tmp_path / "nowhere.gguf")
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root)  # a link back up the tree
    (root / "not-a-model.gguf").write_text("hello")  # listed: describe() explains it
    (root / "folder.gguf").mkdir()  # a folder named like a model
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        listed.append(os.path.realpath(path))
        return real_scandir(path)

    monkeypatch.setattr(scan_mod.os, "scandir", scandir)
    found = by_name(scan([source(SourceKind.FOLDER, root)]))
    assert set(found) == {"good.gguf", "not-a-model.gguf"}
    assert sorted(listed) == sorted({*listed})  # each folder entered once, loop or not


def test_unreadable_folder_is_skipped_quietly(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    gguf(root / "a" / "visible.gguf")
    gguf(root / "locked" / "hidden.gguf")
    other = tmp_path / "other"
    gguf(other / "also.gguf")
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    # Tests run as root here, where chmod 000 does not lock anything: refuse the listing instead.
    monkeypatch.setattr(scan_mod.os, "scandir", scandir)
    names = {m.name for m in scan([source(SourceKind.FOLDER, root),
                                   source(SourceKind.FOLDER, other)])}
    assert names == {"visible.gguf", "also.gguf"}


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any folder")
def test_unreadable_folder_by_permissions(tmp_path: Path) -> None:
    root = tmp_path / "f"
    gguf(root / "ok.gguf")
    gguf(root / "locked" / "no.gguf")
    (root / "locked").chmod(0)
    try:
        assert [m.name for m in scan([source(SourceKind.FOLDER, root)])] == ["ok.gguf"]
    finally:
        (root / "locked").chmod(0o755)


def test_a_missing_source_root_is_skipped(tmp_path: Path) -> None:
    gguf(tmp_path / "b" / "x.gguf")
    got = scan([source(SourceKind.OLLAMA, tmp_path / "gone"),
                source(SourceKind.HF_CACHE, tmp_path / "gone2"),
                source(SourceKind.FOLDER, tmp_path / "b")])
    assert [m.name for m in got] == ["x.gguf"]


def test_the_same_file_reached_twice_is_listed_once_and_own_wins(tmp_path: Path) -> None:
    own = tmp_path / "own"
    target = gguf(own / "org" / "repo" / "m.gguf")
    other = tmp_path / "other"
    other.mkdir()
    (other / "link.gguf").symlink_to(target)
    os.link(target, other / "hard.gguf")
    got = scan([source(SourceKind.HEARTH, own, own=True), source(SourceKind.FOLDER, other)])
    assert [(m.name, m.own) for m in got] == [("m.gguf", True)]


def test_a_symlinked_folder_of_models_is_followed(tmp_path: Path) -> None:
    drive = tmp_path / "drive"
    gguf(drive / "m.gguf")
    root = tmp_path / "f"
    root.mkdir()
    (root / "models-on-drive").symlink_to(drive)
    assert [m.path for m in scan([source(SourceKind.FOLDER, root)])] == [
        root / "models-on-drive" / "m.gguf"]


def test_depth_is_limited(tmp_path: Path) -> None:
    root = tmp_path / "f"
    gguf(root.joinpath(*["d"] * 5) / "deep-enough.gguf")
    gguf(root.joinpath(*["d"] * 9) / "too-deep.gguf")
    assert [m.name for m in scan([source(SourceKind.FOLDER, root)])] == ["deep-enough.gguf"]


def test_cancel_stops_the_scan(tmp_path: Path) -> None:
    gguf(tmp_path / "f" / "m.gguf")
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        scan([source(SourceKind.FOLDER, tmp_path / "f")], token)
