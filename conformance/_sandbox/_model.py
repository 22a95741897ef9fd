"""The sandbox provider suite's model: capabilities, target, check type, context.

Sandbox checks are conformance :class:`~harness_testkit.conformance.Check` objects (the
same ids, titles, requirement ids and ``needs``), fail with
:class:`~harness_testkit.conformance.CheckFailed` and skip with
:class:`~harness_testkit.conformance.CheckSkipped`, so their results go into the same
:class:`~harness_testkit.conformance.Report` and gate as the adapter checks. What differs
is what a check receives: a :class:`SandboxCheckContext` over a :class:`SandboxTarget`
(a provider) instead of an adapter context.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_testkit.spec import (
    NetworkSandboxSession,
    OnFirstCreate,
    SandboxProvider,
    SandboxSession,
)

from .._checks import Check, CheckFailed, CheckSkipped

__all__ = [
    "QUICK",
    "SandboxCapabilities",
    "SandboxCheck",
    "SandboxCheckContext",
    "SandboxCheckFailed",
    "SandboxCheckSkipped",
    "SandboxTarget",
    "alive_script",
    "gone",
    "line_numbers",
    "line_texts",
    "read_all",
    "run_sandbox_check",
    "sandbox_check",
    "sandbox_file_contents",
    "sandbox_relative_paths",
    "skip_reason",
]

_T = TypeVar("_T")

#: Upper bound for anything the suite expects to be quick (a killed ``sleep 30``...).
#: Generous on purpose: the checks verify behaviour, never performance.
QUICK = 15.0

# -- declarations ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SandboxCapabilities:
    """What a provider claims beyond the required contract; all off by default.

    A check that needs an unclaimed capability is skipped with the capability's name;
    claiming one the provider lacks makes that check fail.

    Attributes:
        resume: ``resume_session(session_id)`` reopens a session, also from a fresh
            provider instance (another process), with its files intact.
        snapshots: ``identity`` + ``on_first_create`` run the setup once per identity and
            later sessions start from its effects (SANDBOX-027 in full, concurrency
            included).
        path_confinement: File paths resolving outside the session root (``..``,
            absolute paths, symlinks, hard links, a symlink swapped in concurrently) are
            refused with ``SandboxPathError``.
        kills_process_tree: Timeouts, aborts, ``kill()`` and ``destroy()`` take the
            command's descendants down too, ``setsid`` ones included, not only the shell.
        network_isolation: The only network interface inside the sandbox is ``lo``.
        resource_limits: Memory and process-count limits contain a memory hog and a fork
            bomb; the session stays usable afterwards. Never claim it for a provider
            that runs commands on the host: the checks really run a fork bomb.
        host_directory: The default working directory is a directory of the host running
            the checks (the local provider), so its removal by ``destroy()`` is checked
            on the host too.
        protects_system_files: Neither the file API nor commands can modify or create
            system files: the file API acts as the session user and the root filesystem
            is read-only (the working directory and ``/tmp`` stay writable).
        disk_quota: The working directory holds at most this many bytes (a claim the
            suite tests by writing past it); ``None``: no quota claimed.
    """

    resume: bool = False
    snapshots: bool = False
    path_confinement: bool = False
    kills_process_tree: bool = False
    network_isolation: bool = False
    resource_limits: bool = False
    host_directory: bool = False
    protects_system_files: bool = False
    disk_quota: int | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The capability names, in declaration order."""
        return tuple(field.name for field in fields(cls))


@dataclass(frozen=True, kw_only=True)
class SandboxTarget:
    """The provider under test and how to check it.

    Attributes:
        provider: The provider; checks create (and always destroy) their own sessions.
        capabilities: What the provider claims.
        fresh_provider: Builds a new provider instance over the same backing store, used
            to resume sessions "from another process"; ``None`` reuses ``provider``.
        max_examples: Hypothesis examples per property check (each example is a few
            sandbox round trips).
        replay: The command that reruns one check, ``{check}`` replaced by its name;
            quoted in failure messages.
        race_rounds: File API round trips of the symlink-swap race check. The race is
            probabilistic: a path-string check (realpath, then open) leaked about 8 times
            in 20,000 tight-loop tries here, so raise it for a deeper hunt.
    """

    provider: SandboxProvider
    capabilities: SandboxCapabilities = SandboxCapabilities()
    fresh_provider: Callable[[], SandboxProvider] | None = None
    max_examples: int = 10
    replay: str = "pytest -k {check}"
    race_rounds: int = 1000


class SandboxCheckFailed(CheckFailed):
    """A provider broke a requirement; the message says which, expected vs observed.

    A :class:`~harness_testkit.conformance.CheckFailed` (``requirement`` is the first id
    the check verifies), with the sandbox suite's older constructor.

    Args:
        check: The check's name.
        requirements: The requirement ids it verifies.
        expected: What the requirement demands.
        observed: What the provider did.
        replay: The command that reruns the check.
    """

    def __init__(
        self, check: str, requirements: Sequence[str], expected: str, observed: str, replay: str
    ) -> None:
        self.check = check
        self.requirements = tuple(requirements)
        self.replay = replay
        ids = ", ".join(self.requirements) or "no catalogue id yet"
        super().__init__(
            self.requirements[0] if self.requirements else "SANDBOX",
            f"sandbox check {check} failed (verifies {ids}); replay: {replay}",
            expected=expected,
            observed=observed,
        )


class SandboxCheckSkipped(CheckSkipped):
    """The check needs a capability the target does not claim.

    Args:
        check: The check's name.
        capability: The missing capability (a :class:`SandboxCapabilities` field).
    """

    def __init__(self, check: str, capability: str) -> None:
        self.check = check
        self.capability = capability
        super().__init__(
            f"sandbox check {check} needs capability {capability!r}, which the provider "
            "does not claim (SandboxCapabilities)."
        )


@dataclass(frozen=True)
class SandboxCheck(Check):
    """One provider check: a conformance :class:`~harness_testkit.conformance.Check`.

    ``id``, ``title``, ``requirements`` and ``needs`` (at most one capability) are the
    core's; ``function`` receives a :class:`SandboxCheckContext`. ``name``,
    ``statement`` and ``capability`` are the older names of ``id``, ``title`` and
    ``needs``.
    """

    function: Callable[[SandboxCheckContext], Awaitable[None]] | None = None

    @classmethod
    def capability_names(cls) -> frozenset[str]:
        """Provider checks name the provider's capabilities (:class:`SandboxCapabilities`)."""
        return frozenset(field.name for field in dataclasses.fields(SandboxCapabilities))

    @property
    def name(self) -> str:
        """The check's id (the older name)."""
        return self.id

    @property
    def statement(self) -> str:
        """The check's title (the older name)."""
        return self.title

    @property
    def capability(self) -> str | None:
        """The capability it needs, if any."""
        return self.needs[0] if self.needs else None


def sandbox_check(
    name: str,
    requirements: tuple[str, ...],
    statement: str,
    function: Callable[[SandboxCheckContext], Awaitable[None]],
    capability: str | None = None,
) -> SandboxCheck:
    """A black-box provider check (``capability``: the one it needs, if any)."""
    return SandboxCheck(
        id=name,
        title=statement,
        requirements=requirements,
        tier="black-box",
        needs=(capability,) if capability else (),
        function=function,
    )


def skip_reason(check: SandboxCheck, capabilities: SandboxCapabilities) -> str | None:
    """Why ``check`` does not apply to a provider with ``capabilities`` (``None``: it does)."""
    for name in check.needs:
        if not getattr(capabilities, name):
            return str(SandboxCheckSkipped(check.id, name))
    return None


async def run_sandbox_check(check: SandboxCheck, target: SandboxTarget) -> None:
    """Run one check against ``target``.

    Args:
        check: The check.
        target: The provider and its claims.

    Raises:
        SandboxCheckSkipped: The check needs a capability the target does not claim.
        SandboxCheckFailed: The provider broke the requirement.
    """
    for name in check.needs:
        if not getattr(target.capabilities, name):
            raise SandboxCheckSkipped(check.id, name)
    assert check.function is not None, f"sandbox check {check.id} has no function"
    await check.function(SandboxCheckContext(check, target))


# -- strategies ------------------------------------------------------------------------

_name_characters = st.characters(codec="utf-8", exclude_characters="/\0", min_codepoint=1)
_path_components = st.text(_name_characters, min_size=1, max_size=24).filter(
    lambda name: name not in {".", ".."} and len(name.encode()) <= 200
)

#: Relative file paths of one to three unicode components (no ``.``/``..``, no NUL).
sandbox_relative_paths: st.SearchStrategy[str] = st.lists(
    _path_components, min_size=1, max_size=3
).map("/".join)

#: File contents: unicode text (any line endings) or raw bytes, empty included.
sandbox_file_contents: st.SearchStrategy[str | bytes] = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=300),
    st.binary(max_size=2048),
)

line_texts = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=8),
    max_size=8,
).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda ending: ending.join(lines))
)
line_numbers = st.none() | st.integers(min_value=-2, max_value=12)


# -- helpers ---------------------------------------------------------------------------


class SandboxCheckContext:
    """What a check function receives: the target plus assertion and session helpers."""

    def __init__(self, check: SandboxCheck, target: SandboxTarget) -> None:
        self.check = check
        self.target = target
        self.capabilities = target.capabilities

    def fail(self, expected: str, observed: str) -> SandboxCheckFailed:
        return SandboxCheckFailed(
            self.check.name,
            self.check.requirements,
            expected,
            observed,
            self.target.replay.format(check=self.check.name),
        )

    def expect(self, condition: bool, expected: str, observed: object) -> None:
        if not condition:
            raise self.fail(expected, repr(observed))

    @staticmethod
    def new_session_id() -> str:
        return f"conformance-{uuid.uuid4().hex[:16]}"

    @asynccontextmanager
    async def session(
        self,
        *,
        provider: SandboxProvider | None = None,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: OnFirstCreate | None = None,
    ) -> AsyncIterator[NetworkSandboxSession]:
        """A fresh session, destroyed afterwards whatever happens."""
        chosen = provider or self.target.provider
        session = await chosen.create_session(
            session_id=session_id or self.new_session_id(),
            identity=identity,
            on_first_create=on_first_create,
        )
        try:
            yield session
        finally:
            with anyio.CancelScope(shield=True):
                await session.destroy()

    async def examples(
        self,
        strategy: st.SearchStrategy[_T],
        body: Callable[[_T], Coroutine[Any, Any, None]],
    ) -> None:
        """Run ``body`` on hypothesis examples of ``strategy`` (on this event loop)."""

        def drive() -> None:
            @settings(
                max_examples=self.target.max_examples,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            )
            @given(strategy)
            def property_check(example: _T) -> None:
                anyio.from_thread.run(body, example)

            property_check()

        await anyio.to_thread.run_sync(drive)


async def read_all(stream: Any, *, until: bytes | None = None) -> bytes:
    """Read a byte stream to its end (or until ``until`` appears)."""
    data = b""
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        while until is None or until not in data:
            data += await stream.receive()
    return data


def alive_script(pid_file: str) -> str:
    # A zombie still answers kill -0; it counts as gone (nothing runs any more).
    return (
        f'p=$(cat "{pid_file}" 2>/dev/null) || exit 1; [ -n "$p" ] || exit 1; '
        'kill -0 "$p" 2>/dev/null || exit 1; '
        'grep -qs "^State:[[:space:]]*Z" "/proc/$p/status" && exit 1; exit 0'
    )


async def gone(ctx: SandboxCheckContext, session: SandboxSession, pid_file: str) -> bool:
    """Whether the process whose pid is in ``pid_file`` is gone (polls briefly)."""
    with anyio.move_on_after(QUICK):
        while True:
            result = await session.run(alive_script(pid_file), timeout=QUICK)
            if result.exit_code != 0:
                return True
            await anyio.sleep(0.1)
    return False
