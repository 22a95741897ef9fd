"""Judging the endpoint, not the client SDK that talks to it.

How a provider SDK wraps a broken connection changes between its releases (anthropic
2.x wraps the transport's ``RemoteProtocolError`` in ``APIConnectionError``; other
releases raise it bare, from ``httpx`` or ``httpx2``). So the tests ask two things that do
not depend on it: the endpoint cut the response (read with the standard library's
``http.client``, which raises ``IncompleteRead`` for a body that ends early and a timeout
for one that never ends), and the SDK raised some error that is not a timeout.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

import pytest

from harness_testkit.model_endpoint import ModelEndpoint
from harness_testkit.spec import JSONValue

#: Every wait of these helpers ends by then (a hang fails the test instead).
READ_TIMEOUT = 60.0

__all__ = ["READ_TIMEOUT", "CutBody", "client_error", "read_body", "read_cut_body"]


class CutBody:
    """What arrived of a response: its status, headers and body (partial when cut)."""

    def __init__(self, status: int, headers: Mapping[str, str], partial: bytes) -> None:
        self.status = status
        self.headers = headers
        self.partial = partial

    def sse_events(self) -> list[str]:
        """The ``event:`` names of a streamed body, in order."""
        return [
            line.removeprefix("event:").strip()
            for line in self.partial.decode("utf-8", "replace").splitlines()
            if line.startswith("event:")
        ]


def _post(
    endpoint: ModelEndpoint, path: str, body: Mapping[str, JSONValue], *, cut: bool
) -> CutBody:
    url = urlsplit(endpoint.base_url)
    assert url.hostname is not None
    assert url.port is not None
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=READ_TIMEOUT)
    try:
        connection.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={
                "content-type": "application/json",
                "x-api-key": "test-key",
                "authorization": "Bearer test-key",
                "anthropic-version": "2023-06-01",
            },
        )
        response = connection.getresponse()
        if not cut:
            return CutBody(response.status, dict(response.getheaders()), response.read())
        with pytest.raises(http.client.IncompleteRead) as raised:
            response.read()
        return CutBody(response.status, dict(response.getheaders()), raised.value.partial)
    finally:
        connection.close()


def read_cut_body(endpoint: ModelEndpoint, path: str, body: Mapping[str, JSONValue]) -> CutBody:
    """POST ``body`` to ``path`` and read the answer to its end, which must come early.

    Fails the test when the body arrives whole, and (through the socket timeout) when the
    endpoint neither finishes nor closes the connection.
    """
    return _post(endpoint, path, body, cut=True)


def read_body(endpoint: ModelEndpoint, path: str, body: Mapping[str, JSONValue]) -> CutBody:
    """POST ``body`` to ``path`` and read the whole answer (``partial`` is all of it)."""
    return _post(endpoint, path, body, cut=False)


def _is_timeout(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TimeoutError) or "timeout" in type(current).__name__.lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def client_error(call: Callable[[], object]) -> BaseException:
    """Run a client call that must fail, and return its error.

    Whatever class the SDK raises is accepted; a timeout is not (the client would then
    have waited on an endpoint that never answered), nor is a call that succeeds.
    """
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the SDK's class is not judged
        call()
    assert not _is_timeout(raised.value), f"the client timed out instead: {raised.value!r}"
    return raised.value
