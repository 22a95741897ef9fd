"""A loopback TCP relay in front of a bridge's port, as a sandbox's port proxy is.

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

__all__ = ["LoopbackRelay"]

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
