"""The model's path stays on this computer (issue 25, 12): /v1/models showed the file's full path
(the person's account and folders) to every client, other devices included when shared."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.hostile.test_runner_connections import _address, _lan_address
from tests.integration.conftest import StartRunner


@pytest.mark.timeout(120)
def test_models_names_the_file_not_its_folders(start_runner: StartRunner,
                                               tiny_model: Path) -> None:
    r = start_runner()
    with r.client() as http:
        body = http.get("/v1/models").text
        status = http.get("/runner/status").json()
    assert str(tiny_model.parent) not in body, body
    assert tiny_model.name in body
    # The app, on this computer, still reads the path it loaded.
    assert status["model"]["path"] == str(tiny_model)


@pytest.mark.timeout(120)
def test_another_device_sees_no_path_in_the_status(start_runner: StartRunner,
                                                   tiny_model: Path) -> None:
    lan = _lan_address()
    if lan is None:
        pytest.skip("this machine has no address other than loopback")
    # A draft model beside it (the model itself will do): named, not placed, too.
    r = start_runner("--host", "0.0.0.0", "--allow-remote", "--spec-draft-model", str(tiny_model))
    port = _address(r)[1]
    with httpx2.Client(base_url=f"http://{lan}:{port}", headers=r.headers, trust_env=False,
                       timeout=60) as http:
        text = http.get("/runner/status").text + http.get("/v1/models").text
    assert str(tiny_model.parent) not in text
    assert tiny_model.name in text
