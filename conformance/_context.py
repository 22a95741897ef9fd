"""What a check works with: the adapter under test, sandboxes, agents and transcripts."""

from __future__ import annotations

import functools
import importlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit.reference import (
    AgentSession,
    GenerateResult,
    HarnessAgent,
    LocalSandboxProvider,
    StreamResult,
)
from harness_testkit.spec import ConsumerPart, HarnessAdapter, MissingExtraError, SandboxProvider

from ._adapter._recording import RecordingAdapter
from ._capabilities import AdapterCapabilities, resolve_capabilities
from ._checks import CheckFailed
from ._watchdog import HANG_FACTOR, HANG_FLOOR, TurnLedger

if TYPE_CHECKING:
    from ._runner import Expectations

__all__ = [
    "PROFILES",
    "AdapterTarget",
    "CheckContext",
    "Profile",
    "load_target",
]

AdapterFactory = Callable[[], HarnessAdapter]

#: The longest a check's agent waits for an aborted turn's done() (the agent's default);
#: an adapter declaring a shorter turn timeout gets that.
ABORT_GRACE = 10.0


@dataclass(frozen=True)
class Profile:
    """A conformance depth: how many generated examples each property check runs."""

    name: str
    max_examples: int
    description: str


PROFILES: Mapping[str, Profile] = {
    "smoke": Profile("smoke", 5, "fast gate, under a minute on 2 cores"),
    "standard": Profile("standard", 25, "CI default"),
    "exhaustive": Profile("exhaustive", 200, "nightly"),
}


@dataclass(frozen=True)
class AdapterTarget:
    """The adapter under test: a factory plus its declared capabilities.

    Attributes:
        factory: Returns a fresh adapter each call.
        capabilities: What the adapter claims to support.
        name: How reports and replay commands name it (``package.module:factory``).
        expectations: The target's own known deviations (strict xfail), merged under
            the run's expectations; ``None`` when it has none.
        recipe: A picklable callable that builds this target again in another process
            (``functools.partial`` of a module-level loader), so ``check --jobs N``
            can run its checks in worker processes; ``None``: the checks run one after
            another in this process. :func:`load_target`, the Node loader and the
            ``--self`` targets set it.
    """

    factory: AdapterFactory
    capabilities: AdapterCapabilities = field(default_factory=AdapterCapabilities)
    name: str = "adapter"
    expectations: Expectations | None = None
    recipe: Callable[[], AdapterTarget] | None = field(default=None, compare=False, repr=False)


def load_target(spec: str, capabilities: AdapterCapabilities | None = None) -> AdapterTarget:
    """Import ``package.module:factory``.

    The declaration comes from ``capabilities`` when given, else from a
    ``capabilities`` attribute on the factory (an ``AdapterCapabilities`` or a dict);
    what it leaves undeclared is inferred where the adapter shows it (approvals,
    filtering, scripting), else the conservative defaults (``resolve_capabilities``).
    The target's known deviations come from an ``expectations`` attribute on the factory
    (an ``Expectations`` or a dict ``{check_id: reason}``), when it has one.

    Raises:
        ValueError: naming what is wrong with ``spec``.
        MissingExtraError: the adapter's module needs an extra that is not installed.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"adapter {spec!r} must look like 'package.module:factory'")
    try:
        module = importlib.import_module(module_name)
    except MissingExtraError:
        raise  # its one sentence names the extra; wrapping it would bury that
    except ImportError as error:
        raise ValueError(f"cannot import {module_name!r} for adapter {spec!r}: {error}") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"{module_name}.{attribute} is missing or not callable")
    raw = getattr(factory, "capabilities", None)
    declared = capabilities if capabilities is not None else raw
    origin = "given" if capabilities is not None else "the factory's `capabilities`"
    if not isinstance(declared, AdapterCapabilities | Mapping):
        declared, origin = None, "none (inferred from the adapter, else defaults)"
    resolved = resolve_capabilities(factory, declared, origin=origin)
    return AdapterTarget(
        factory=factory,
        capabilities=resolved.capabilities,
        name=spec,
        expectations=_declared_expectations(getattr(factory, "expectations", None), spec),
        recipe=functools.partial(load_target, spec, capabilities),
    )


def _declared_expectations(raw: object, spec: str) -> Expectations | None:
    from ._runner import Expectations

    if raw is None or isinstance(raw, Expectations):
        return raw
    if isinstance(raw, Mapping) and all(
        isinstance(key, str) and isinstance(value, str) for key, value in raw.items()
    ):
        return Expectations(xfail=dict(raw))
    raise ValueError(
        f"{spec}: the factory's `expectations` must be an Expectations or a mapping "
        "{check_id: reason} of strings"
    )


class CheckContext:
    """Per-check resources; everything it creates is torn down by :meth:`aclose`.

    Args:
        target: The adapter under test.
        profile: The conformance depth.
        seed: Seed for generated scenarios and ids.
        sandbox: ``local`` (default) or ``docker``.
        workdir: A private directory for local sandboxes.
        turns: The run's turn ledger (``None``: turns are neither counted nor refused,
            and a turn may take the declared ``turn_timeout``).
        refuse_turns: Whether the ledger may refuse this check's turns.
    """

    def __init__(
        self,
        target: AdapterTarget,
        *,
        profile: Profile,
        seed: int,
        sandbox: Literal["local", "docker"],
        workdir: Path,
        turns: TurnLedger | None = None,
        refuse_turns: bool = True,
    ) -> None:
        self.target = target
        #: The run's turn ledger, shared by its checks (see ``TurnLedger``).
        self.turns = turns
        self.refuse_turns = refuse_turns
        self.capabilities = target.capabilities
        declared = target.capabilities.turn_timeout
        limit = turns.turn_limit(declared) if turns is not None else declared
        #: How the turn limit in ``capabilities.turn_timeout`` was set, for messages.
        self.turn_limit_note = "(declared turn_timeout)"
        if limit < declared:
            # Every wait of the check on a turn reads capabilities.turn_timeout.
            self.capabilities = target.capabilities.model_copy(update={"turn_timeout": limit})
            self.turn_limit_note = (
                f"(the hang limit: {HANG_FACTOR:g} times the slowest turn this run settled, "
                f"at least {HANG_FLOOR:g} s; declared turn_timeout {declared:g} s)"
            )
        self.profile = profile
        self.seed = seed
        self.sandbox_kind = sandbox
        self.workdir = workdir
        #: Unique per check run: names every container of this run (no clash across
        #: runs, profiles or a process killed mid-check).
        self.run_id = uuid.uuid4().hex[:10]
        self.adapters: list[RecordingAdapter] = []
        self._sessions: list[AgentSession] = []
        self._provider: SandboxProvider | None = None
        self.notes: dict[str, Any] = {}

    # -- resources -----------------------------------------------------------------------

    def adapter(self) -> RecordingAdapter:
        """A fresh adapter from the factory, wrapped for recording."""
        adapter = RecordingAdapter(self.target.factory(), self.turns, refuse=self.refuse_turns)
        self.adapters.append(adapter)
        return adapter

    def sandbox_provider(self) -> SandboxProvider:
        """The sandbox provider shared by the check's sessions."""
        if self._provider is None:
            if self.sandbox_kind == "docker":
                from harness_testkit.reference import DockerSandboxProvider

                self._provider = DockerSandboxProvider(
                    container_prefix=f"harness-testkit-{self.run_id}"
                )
            else:
                self._provider = LocalSandboxProvider(root_dir=self.workdir / "sandboxes")
        return self._provider

    def agent(self, adapter: HarnessAdapter | None = None, **settings: Any) -> HarnessAgent:
        """A reference agent over ``adapter`` (default: a fresh recorded adapter)."""
        # Failed turns are what checks look for; the report carries them, not stderr.
        settings.setdefault("error_log", None)
        # An aborted turn (a check's timeout) waits for done() no longer than a turn may
        # take: with the agent's default grace every hung turn cost 10 s more, and a
        # check that hangs turn after turn (one per property example) ran for minutes.
        settings.setdefault("abort_grace", min(self.capabilities.turn_timeout, ABORT_GRACE))
        return HarnessAgent(
            harness=adapter if adapter is not None else self.adapter(),
            sandbox=self.sandbox_provider(),
            **settings,
        )

    async def create_session(self, agent: HarnessAgent, **options: Any) -> AgentSession:
        """``agent.create_session`` with the session destroyed when the check ends."""
        session = await agent.create_session(**options)
        self._sessions.append(session)
        return session

    def session_id(self, name: str) -> str:
        """A session id unique to this check run (``name`` plus the run id)."""
        return f"{name}-{self.run_id}"

    async def aclose(self) -> None:
        """Destroy every session the check created, then every container the check's
        Docker provider still owns (a suspended or detached session keeps its sandbox
        running); errors are swallowed. Idempotent."""
        with anyio.CancelScope(shield=True):
            sessions, self._sessions = self._sessions, []
            for session in reversed(sessions):
                try:
                    with anyio.move_on_after(30):
                        await session.destroy()
                except Exception:  # teardown must not hide the check's own outcome
                    pass
            provider, self._provider = self._provider, None
            prune = getattr(provider, "prune", None)
            owner = getattr(provider, "owner", None)
            if prune is not None and owner is not None:
                try:
                    with anyio.move_on_after(60):
                        await anyio.to_thread.run_sync(lambda: prune(owner=owner))
                except Exception:  # an engine gone away leaves nothing we can remove
                    pass
            close = getattr(provider, "aclose", None)
            if close is not None:
                try:
                    with anyio.move_on_after(10):
                        await close()
                except Exception:  # closing the client is best effort
                    pass

    # -- turns ---------------------------------------------------------------------------

    async def collect(self, result: StreamResult) -> list[ConsumerPart]:
        """All consumer parts of a result, bounded by the declared turn timeout."""
        parts: list[ConsumerPart] = []
        with anyio.fail_after(self.capabilities.turn_timeout):
            async for part in result.full_stream:
                parts.append(part)
        return parts

    async def run_prompt(
        self, agent: HarnessAgent, session: AgentSession, prompt: str, **options: Any
    ) -> list[ConsumerPart]:
        """Stream one prompt turn and return its consumer parts (bounded)."""
        try:
            with anyio.fail_after(self.capabilities.turn_timeout):
                result = await agent.stream(session=session, prompt=prompt, **options)
                return await self.collect(result)
        except TimeoutError as error:
            # Nothing aborted this turn, so ADAPTER-042 (settling after an abort) does not
            # apply: a done() that neither returns nor raises breaks the control contract.
            raise CheckFailed(
                "ADAPTER-044",
                f"the turn did not settle within {self.capabilities.turn_timeout:g} s "
                f"{self.turn_limit_note}: done() neither returned nor raised",
            ) from error

    async def generate(
        self, agent: HarnessAgent, session: AgentSession, prompt: str, **options: Any
    ) -> GenerateResult:
        """``agent.generate`` bounded by the declared turn timeout."""
        with anyio.fail_after(self.capabilities.turn_timeout):
            return await agent.generate(session=session, prompt=prompt, **options)

    def transcript(self) -> list[dict[str, Any]]:
        """What every adapter of this check recorded (JSON-ready)."""
        return [session for adapter in self.adapters for session in adapter.transcript()]

    @property
    def prompts(self) -> Sequence[str]:
        """Prompts the adapter accepts (declared)."""
        return self.capabilities.prompts
