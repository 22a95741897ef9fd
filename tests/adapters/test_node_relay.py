"""The loopback relay in front of a bridge's port: bytes unchanged, headers handed on first."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from harness_testkit.adapters.node._relay import LoopbackRelay

RESPONSE = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
FRAME = b"\x81\x05hello"


@pytest.fixture
def bridge() -> Iterator[socket.socket]:
    """A server that writes an upgrade response and its first frame in one write."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            request = connection.recv(1024)
            connection.sendall(RESPONSE + FRAME + request)

    threading.Thread(target=serve, daemon=True).start()
    yield server
    server.close()


def test_the_relay_hands_the_headers_on_before_the_frame_and_changes_no_byte(
    bridge: socket.socket,
) -> None:
    relay = LoopbackRelay(bridge.getsockname()[1])
    try:
        with socket.create_connection(("127.0.0.1", relay.port), timeout=10) as client:
            client.sendall(b"GET / HTTP/1.1\r\n\r\n")
            first = client.recv(65536)
            received = first
            while len(received) < len(RESPONSE + FRAME) + 18:
                chunk = client.recv(65536)
                if not chunk:
                    break
                received += chunk
    finally:
        relay.close()
    assert RESPONSE.startswith(first)
    assert received == RESPONSE + FRAME + b"GET / HTTP/1.1\r\n\r\n"


def test_a_closed_relay_accepts_no_connection(bridge: socket.socket) -> None:
    relay = LoopbackRelay(bridge.getsockname()[1])
    relay.close()
    relay.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", relay.port), timeout=10)
