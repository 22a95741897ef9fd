"""The ports a sandbox session exposes to a bridge adapter, and the relay in front of them.

Each session of an adapter whose profile asks for ports gets free ``127.0.0.1`` ports,
kept by session id (a resumed or continued session is the same sandbox, and a bridge
left running there listens on its port).

Upstream's sandboxes reach a bridge through a network proxy, so a WebSocket's upgrade
response and the bridge's first frame arrive apart. On this machine the kit's local
sandbox is the same host: both can arrive in one read, and
``@ai-sdk/harness-claude-code`` 1.0.41 then misses the ``bridge-hello`` (its listener is
attached after ``open``; docs/node-adapters.md has the finding). A profile that asks
for it gets this relay: it listens on ``127.0.0.1`` only and hands the response headers
on before what follows them, the way a proxy does, and changes no byte.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._target import NodeAdapterHost

__all__ = ["LoopbackRelay", "free_loopback_ports", "session_ports"]

#: How long the relay holds what follows an upgrade response's headers (a proxy hop).
HOP_SECONDS = 0.05
_CHUNK = 65536


class LoopbackRelay:
    """Relay connections on a free ``127.0.0.1`` port to ``127.0.0.1:target``.

    Args:
        target: The port the bridge listens on.
    """

    def __init__(self, target: int) -> None:
        self.target = target
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name=f"relay-{self.port}", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._closed:
                    client.close()
                    upstream.close()
                    return
                self._sockets += [client, upstream]
            for source, sink, first in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(target=self._pump, args=(source, sink, first), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, split_headers: bool) -> None:
        try:
            while True:
                data = source.recv(_CHUNK)
                if not data:
                    break
                head, mark, rest = data.partition(b"\r\n\r\n")
                if split_headers and mark and rest:
                    sink.sendall(head + mark)
                    time.sleep(HOP_SECONDS)
                    data = rest
                split_headers = split_headers and not mark
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """Stop listening and end every relayed connection (idempotent)."""
        with self._lock:
            self._closed = True
            sockets, self._sockets = self._sockets, []
        with contextlib.suppress(OSError):
            # shutdown wakes the accepting thread; close alone may not.
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
        for item in sockets:
            with contextlib.suppress(OSError):
                item.close()


def free_loopback_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free on 127.0.0.1 now (the OS picks them)."""
    sockets = []
    try:
        for _ in range(count):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(listener)
            listener.bind(("127.0.0.1", 0))
        return [listener.getsockname()[1] for listener in sockets]
    finally:
        for listener in sockets:
            listener.close()


def session_ports(host: NodeAdapterHost, session_id: str) -> dict[str, Any]:
    """What ``doStart``'s ``sandbox`` says of the session's ports: ``ports`` (and
    ``endpoints``, port -> ``127.0.0.1:relay``, with a relay), or nothing."""
    needs = host.sandbox
    if not (needs.network or needs.ports):
        return {}
    ports = host.ports_by_session.get(session_id)
    if ports is None:
        ports = host.ports_by_session[session_id] = free_loopback_ports(needs.ports)
    info: dict[str, Any] = {"ports": list(ports)}
    if needs.relay_ports:
        relays = host.relays_by_session.get(session_id)
        if relays is None:
            relays = host.relays_by_session[session_id] = [LoopbackRelay(p) for p in ports]
        info["endpoints"] = {str(relay.target): f"127.0.0.1:{relay.port}" for relay in relays}
    return info
