"""A Node adapter as the suite's target: its host, its wiring to the model endpoint, its factory.

One :class:`NodeAdapterHost` is one adapter host process, started on first use and
shared by every adapter the run makes (each session gets a harness instance of its own
inside it); it ends when the run ends (:func:`close_hosts`, also at interpreter exit),
and with it every process the adapter started. The host runs with a scrubbed
environment: ``PATH``, a ``HOME`` and ``TMPDIR`` of its own, and nothing else, so no API
key or gateway variable of the machine reaches the adapter.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness_testkit.spec import (
    HOST_PROTOCOL_VERSION,
    HostDescription,
    HostProtocolError,
)

from ._host import HostProcess

if TYPE_CHECKING:
    from ._bootstrap import PreparedBootstrap
from ._install import (
    HOST_DIR,
    MIN_NODE,
    NodeRuntime,
    NodeTargetSpec,
    find_node,
    install_package,
)

__all__ = [
    "OFFLINE_API_KEY",
    "EndpointWiring",
    "NodeAdapterHost",
    "SandboxNeeds",
    "close_hosts",
    "make_factory",
    "register",
]

#: What adapters are given as API key for the kit's local endpoint (never a secret).
OFFLINE_API_KEY = "harness-testkit-offline"
#: The longest starting a host may take (Node start-up plus loading the adapter).
STARTUP_TIMEOUT = 120.0
#: The endpoint URL adapters are described with (port 9, discard: nothing listens).
_NO_ENDPOINT = "http://127.0.0.1:9"
_PLACEHOLDER = re.compile(r"\{\{\s*endpoint\.(baseUrl|apiKey|openaiBaseUrl)\s*\}\}")


@dataclass(frozen=True)
class EndpointWiring:
    """How to point an adapter at the kit's scripted model endpoint.

    Attributes:
        template: Settings merged over the target's for every session; strings may hold
            ``{{endpoint.baseUrl}}`` (Anthropic style), ``{{endpoint.openaiBaseUrl}}``
            (with ``/v1``) and ``{{endpoint.apiKey}}``.
        model: The model a turn that names none runs with (the adapter's own string,
            e.g. ``anthropic/claude-sonnet-4-5`` for pi), or ``None``.
        protocol: The wire protocol the adapter speaks to the endpoint.
        host_tool_server: The in-process MCP server its runtime offers host tools
            through (their names are ``mcp__<server>__<name>``), or ``None`` when they
            keep their own names.
        home_files: Files written under the sandbox session's ``$HOME`` before each
            ``doStart`` (path relative to it -> content, with the same placeholders):
            a runtime that reads its model's URL only from a config file gets it there.
    """

    template: Mapping[str, Any]
    model: str | None = None
    protocol: Literal["anthropic", "openai-responses", "openai-chat"] = "anthropic"
    host_tool_server: str | None = None
    home_files: Mapping[str, str] = field(default_factory=dict)

    def host_tool_name(self, name: str) -> str:
        """The name the runtime offers host tool ``name`` under (to its model)."""
        if self.host_tool_server is None:
            return name
        return f"mcp__{self.host_tool_server}__{name}"

    def settings(self, base_url: str) -> dict[str, Any]:
        """The template with the endpoint's URL and key filled in."""
        filled: dict[str, Any] = _fill(dict(self.template), base_url)
        return filled

    def filled_home_files(self, base_url: str) -> dict[str, str]:
        """``home_files`` with the endpoint's URL and key filled in."""
        return {path: str(_fill(text, base_url)) for path, text in self.home_files.items()}

    @staticmethod
    def uses_endpoint(settings: Mapping[str, Any]) -> bool:
        """Whether ``settings`` hold an ``{{endpoint.*}}`` placeholder anywhere."""
        return bool(_PLACEHOLDER.search(repr(settings)))


def _fill(template: Any, base_url: str) -> Any:
    """``template`` with every ``{{endpoint.*}}`` placeholder replaced."""
    values = {
        "baseUrl": base_url,
        "openaiBaseUrl": base_url.rstrip("/") + "/v1",
        "apiKey": OFFLINE_API_KEY,
    }

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return _PLACEHOLDER.sub(lambda match: values[match[1]], value)
        if isinstance(value, Mapping):
            return {key: fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        return value

    return fill(template)


@dataclass(frozen=True)
class SandboxNeeds:
    """What an adapter needs of the sandbox session beyond files and processes.

    Attributes:
        network: Hand the adapter a network sandbox session (``restricted()``,
            ``ports``, ``getPortEndpoint``, no-op ``stop``/``destroy``: the kit owns the
            sandbox), not a bare one.
        ports: How many ports the session exposes (implies ``network``): free loopback
            ports the kit picks per session; their endpoints are ``127.0.0.1`` only.
        env: Variables under every command's own ``env`` (the sandbox's default
            environment: the command's values win).
        prepare_bootstrap: Apply the adapter's bootstrap recipe once on this machine
            instead of in each session: an absolute ``bootstrapDir`` is linked to the
            kit's cache, a relative one into each session root; see ``_bootstrap``.
        relay_ports: Hand out each port's endpoint through a loopback relay that
            delivers a response's headers apart from what follows, as a sandbox's port
            proxy does (see ``_relay``).
    """

    network: bool = False
    ports: int = 0
    env: Mapping[str, str] = field(default_factory=dict)
    prepare_bootstrap: bool = False
    relay_ports: bool = False


@dataclass
class NodeAdapterHost:
    """An adapter host process for one target, shared by the run.

    Args:
        target: The parsed target (``npm:NAME@VERSION`` or a local path).
        settings: Settings for the adapter's factory (JSON).
        wiring: How to point it at the scripted endpoint (``None``: the adapter talks to
            whatever its settings say, and the scripting extension is off).
        faults: The host's self-test defects (the kit's own tests only).
        minimum_node: The oldest Node the adapter runs on.
        sandbox: What it needs of the sandbox session beyond files and processes.
    """

    target: NodeTargetSpec
    settings: Mapping[str, Any] = field(default_factory=dict)
    wiring: EndpointWiring | None = None
    faults: Sequence[str] = ()
    minimum_node: tuple[int, int, int] = MIN_NODE
    sandbox: SandboxNeeds = field(default_factory=SandboxNeeds)
    script_cursors: dict[str, int] = field(default_factory=dict)
    #: The loopback ports each sandbox session exposes, by session id: a resumed or
    #: continued session is the same sandbox, and a bridge left running there listens
    #: on its port.
    ports_by_session: dict[str, list[int]] = field(default_factory=dict)
    #: The model endpoint's port of each session, by session id: a resumed session gets
    #: the same one back when it is free.
    endpoint_ports: dict[str, int] = field(default_factory=dict)
    #: The relays in front of those ports, by session id (closed with the host).
    relays_by_session: dict[str, list[Any]] = field(default_factory=dict)
    tracking: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._process: HostProcess | None = None
        self._home: str | None = None
        self._description: HostDescription | None = None
        self._versions: dict[str, str] = {}
        self._handles = 0
        #: The adapter's recipe prepared in the cache (``None``: none to prepare).
        self.bootstrap: PreparedBootstrap | None = None
        self.locked: bool | None = None

    # -- starting ------------------------------------------------------------------------

    def start(self) -> None:
        """Install what is missing, start the host and load the adapter (idempotent).

        Raises:
            HostSetupError: npm, Node or the target is not available (a set-up error).
            HostProtocolError: the host started but broke the protocol or died.
        """
        with self._lock:
            if self._process is not None and self._process.broken is None:
                return
            if self._process is not None:
                # The host died: the run goes on with a fresh one (the failure was
                # reported by the check that saw it).
                self._close_process()
            self._start()

    def _start(self) -> None:
        if self.target.kind == "npm":
            assert self.target.name is not None
            assert self.target.version is not None
            installed = install_package(self.target.name, self.target.version)
            self.locked = installed.locked
            locator: dict[str, Any] = {
                "module": self.target.name,
                "resolveFrom": str(installed.resolve_from),
            }
        else:
            assert self.target.path is not None
            locator = {"module": str(self.target.path)}
        if self.target.export is not None:
            locator["export"] = self.target.export
        locator["settings"] = dict(self.settings)
        runtime = find_node(self.minimum_node)
        self._home = tempfile.mkdtemp(prefix="harness-testkit-node-host-")
        home = Path(self._home)
        (home / "home").mkdir()
        (home / "tmp").mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home / "home"),
            "TMPDIR": str(home / "tmp"),
            "LANG": "C.UTF-8",
            "NODE_NO_WARNINGS": "1",
        }
        process = HostProcess(
            [runtime.executable, str(HOST_DIR / "host.mjs")],
            env=env,
            cwd=str(home),
            label=self.target.label,
        )
        self._process = process
        try:
            init = process.call(
                "initialize",
                {
                    "protocolVersion": HOST_PROTOCOL_VERSION,
                    "adapter": locator,
                    "faults": list(self.faults),
                },
                timeout=STARTUP_TIMEOUT,
            )
            self._check_initialized(init)
            # The adapter object is described as sessions will make it: with the wiring's
            # settings (the endpoint URL of a closed loopback port: describing never
            # calls the model).
            probe = self.wiring.settings(_NO_ENDPOINT) if self.wiring is not None else {}
            described = process.call("describe", {"settings": probe}, timeout=STARTUP_TIMEOUT)
            self._description = HostDescription.model_validate(described)
            if self.sandbox.prepare_bootstrap and self._description.has_bootstrap:
                self._prepare_bootstrap(process, probe, runtime)
        except BaseException:
            self._close_process()
            raise
        package = (init.get("adapter") or {}).get("package") or {}
        versions = {
            "adapter-host": str(init["host"]["version"]),
            "host-protocol": str(init["protocolVersion"]),
            "node": str(init["host"].get("node") or runtime.version),
        }
        if package.get("name"):
            versions[str(package["name"])] = str(package.get("version"))
        if self.target.kind == "npm":
            versions["dependency-lock"] = (
                "committed" if self.locked else "resolved today (no committed lockfile)"
            )
        self._versions = versions

    def _prepare_bootstrap(
        self, process: HostProcess, settings: Mapping[str, Any], runtime: NodeRuntime
    ) -> None:
        from ._bootstrap import prepare_bootstrap

        made = process.call("createHarness", {"settings": dict(settings)}, timeout=STARTUP_TIMEOUT)
        recipe = process.call("getBootstrap", {"harness": made["harness"]}, timeout=STARTUP_TIMEOUT)
        if isinstance(recipe, dict):
            self.bootstrap = prepare_bootstrap(recipe, runtime)

    def _check_initialized(self, init: Any) -> None:
        if not isinstance(init, dict) or not isinstance(init.get("protocolVersion"), str):
            raise HostProtocolError(
                "HOST-004",
                f"{self.target.label}: initialize answered {init!r}, without a protocolVersion",
            )
        if init["protocolVersion"].split(".")[0] != HOST_PROTOCOL_VERSION.split(".")[0]:
            raise HostProtocolError(
                "HOST-004",
                f"{self.target.label}: the host speaks protocol {init['protocolVersion']}, the kit "
                f"{HOST_PROTOCOL_VERSION}",
            )
        if not isinstance(init.get("host"), dict) or "version" not in init["host"]:
            raise HostProtocolError(
                "HOST-004", f"{self.target.label}: initialize named no host version"
            )

    # -- what adapters use ---------------------------------------------------------------

    @property
    def process(self) -> HostProcess:
        """The running host (started on first use)."""
        self.start()
        assert self._process is not None
        return self._process

    @property
    def description(self) -> HostDescription:
        """What the adapter declared (``describe``)."""
        self.start()
        assert self._description is not None
        return self._description

    @property
    def versions(self) -> Mapping[str, str]:
        """The adapter package, Node, the host and the protocol, with their versions."""
        self.start()
        return dict(self._versions)

    def new_handle(self, prefix: str) -> str:
        """A handle no other session or turn of this host has (``s12``)."""
        with self._lock:
            self._handles += 1
            return f"{prefix}{self._handles}"

    def harness(self) -> Any:
        """A fresh :class:`~._harness.NodeHarness` on this host (the suite's factory)."""
        from ._harness import NodeHarness

        self.start()
        return NodeHarness(self)

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """End the host and everything it started; remove its private folders."""
        with self._lock:
            self._close_process()

    def _close_process(self) -> None:
        for relays in self.relays_by_session.values():
            for relay in relays:
                relay.close()
        self.relays_by_session.clear()
        if self._process is not None:
            self._process.close()
            self._process = None
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None


_HOSTS: list[NodeAdapterHost] = []
_HOSTS_LOCK = threading.Lock()


def register(host: NodeAdapterHost) -> NodeAdapterHost:
    """Keep ``host`` to be closed by :func:`close_hosts` (and at interpreter exit)."""
    with _HOSTS_LOCK:
        _HOSTS.append(host)
    return host


def close_hosts() -> None:
    """Close every host made in this process (idempotent)."""
    with _HOSTS_LOCK:
        hosts = list(_HOSTS)
        _HOSTS.clear()
    for host in hosts:
        host.close()


atexit.register(close_hosts)


def make_factory(host: NodeAdapterHost) -> Callable[[], Any]:
    """The suite's factory for ``host``: a fresh adapter each call, all on one host."""

    def factory() -> Any:
        return host.harness()

    return factory
