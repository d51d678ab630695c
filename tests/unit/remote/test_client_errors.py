"""The sentences for failures below HTTP (app/remote/client.py transport_error), from the same
exception chains httpx2 raises (the real ones are exercised in
tests/integration/test_remote_servers.py)."""

from __future__ import annotations

import errno
import socket
import ssl

import httpx2

from app.remote.client import ServerTLSError, ServerUnreachable, transport_error


def _connect_error(cause: BaseException) -> httpx2.ConnectError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise httpx2.ConnectError(str(inner)) from inner
    except httpx2.ConnectError as exc:
        return exc


def test_dns_refused_timeout_and_tls_each_have_their_sentence() -> None:
    url = "http://box.lan:8080/v1"
    dns = transport_error("Box", url, _connect_error(socket.gaierror(-2, "Name not known")))
    assert isinstance(dns, ServerUnreachable) and "could not find the server “box.lan”" in str(dns)
    refused = transport_error("Box", url, _connect_error(
        ConnectionRefusedError(errno.ECONNREFUSED, "refused")))
    assert "Nothing answers at http://box.lan:8080/v1" in str(refused)
    slow = transport_error("Box", url, httpx2.ConnectTimeout("timed out"))
    assert isinstance(slow, ServerUnreachable) and "did not answer within" in str(slow)
    cert = ssl.SSLCertVerificationError(1, "certificate verify failed")
    cert.verify_message = "self-signed certificate"
    tls = transport_error("Box", "https://box.lan/v1", _connect_error(cert))
    assert isinstance(tls, ServerTLSError) and tls.code == "tls"
    assert "certificate of Box (box.lan) is not trusted: self-signed certificate" in str(tls)
    lost = transport_error("Box", url, httpx2.RemoteProtocolError("closed"), during=True)
    assert "lost during the reply" in str(lost)
