"""The provider suite's lifecycle and isolation checks.

Lifecycle (every provider): ``stop()``/``destroy()`` idempotency, a fresh working
directory per session, resume by id (``resume``), ``on_first_create`` with and without an
identity (``snapshots``). Isolation (claimed capabilities): the network (``lo`` only) and
resource limits (a memory hog, a fork bomb).
"""

from __future__ import annotations

import uuid
from contextlib import suppress

import anyio

from harness_testkit.spec import (
    SandboxError,
    SandboxProvider,
    SandboxSession,
    SandboxTimeoutError,
)

from ._model import (
    QUICK,
    SandboxCheck,
    SandboxCheckContext,
    sandbox_check,
)

__all__ = ["LIFECYCLE_CHECKS"]


# -- checks: lifecycle -----------------------------------------------------------------


async def _check_stop_destroy_idempotent(ctx: SandboxCheckContext) -> None:
    provider = ctx.target.provider
    session = await provider.create_session(session_id=ctx.new_session_id())
    try:
        await session.write_text_file("kept.txt", "x")
        with anyio.fail_after(60):
            await session.stop()
            await session.stop()
    finally:
        with anyio.fail_after(60):
            await session.destroy()
            await session.destroy()
    running = await provider.create_session(session_id=ctx.new_session_id())
    with anyio.fail_after(60):
        await running.destroy()
        await running.stop()
        await running.destroy()
    try:
        with anyio.fail_after(QUICK):
            await running.run("true")
    except SandboxError:
        pass
    except TimeoutError:
        raise ctx.fail("a destroyed session fails fast", "run hung") from None
    else:
        raise ctx.fail("SandboxError when running in a destroyed session", "it ran")


async def _check_fresh_working_directory(ctx: SandboxCheckContext) -> None:
    provider = ctx.target.provider
    first = await provider.create_session(session_id=ctx.new_session_id())
    try:
        listing = await first.run("ls -A")
        ctx.expect(
            listing.exit_code == 0 and listing.stdout.strip() == "",
            "a new session's default working directory is empty",
            listing,
        )
        await first.write_text_file("mine.txt", "first session")
        async with ctx.session() as second:
            alone = await second.read_text_file("mine.txt")
            ctx.expect(alone is None, "sessions do not share their directory", alone)
        resume = getattr(provider, "resume_session", None)
        if resume is not None:
            again = await resume(first.id)
            kept = await again.read_text_file("mine.txt")
            ctx.expect(kept == "first session", "resume_session(id) in-process", kept)
    finally:
        with anyio.CancelScope(shield=True):
            await first.destroy()
    directory = first.default_working_directory
    if ctx.capabilities.host_directory:
        exists = await anyio.Path(directory).exists()
        ctx.expect(not exists, f"destroy() removes {directory}", "it still exists")


async def _check_resume(ctx: SandboxCheckContext) -> None:
    provider = ctx.target.provider
    resume = getattr(provider, "resume_session", None)
    ctx.expect(callable(resume), "the provider has resume_session", resume)
    fresh = ctx.target.fresh_provider() if ctx.target.fresh_provider else provider
    session_id = ctx.new_session_id()
    try:
        async with ctx.session(session_id=session_id) as session:
            await session.write_text_file("state.txt", "survives")
            await session.stop()
            resumed = await fresh.resume_session(session_id)  # type: ignore[attr-defined]
            ctx.expect(resumed.id == session.id, "the same id", resumed.id)
            kept = await resumed.read_text_file("state.txt")
            ctx.expect(kept == "survives", "files written before are still there", kept)
            ran = await resumed.run("cat state.txt")
            ctx.expect(ran.stdout == "survives", "the resumed session runs commands", ran)
        try:
            await fresh.resume_session(session_id)  # type: ignore[attr-defined]
        except SandboxError:
            pass
        else:
            raise ctx.fail("SandboxError resuming a destroyed session", "it resumed")
    finally:
        if fresh is not provider:
            closer = getattr(fresh, "aclose", None)
            if closer is not None:
                await closer()


async def _forget(provider: SandboxProvider, identity: str) -> None:
    forget = getattr(provider, "forget_identity", None)
    if forget is not None:
        await forget(identity)


async def _check_on_first_create_without_identity(ctx: SandboxCheckContext) -> None:
    calls: list[str] = []

    async def setup(restricted: SandboxSession) -> None:
        calls.append("called")
        await restricted.write_text_file("set-up.txt", "by on_first_create")

    async with ctx.session(on_first_create=setup) as session:
        seen = await session.read_text_file("set-up.txt")
        ctx.expect(seen == "by on_first_create", "on_first_create ran on the new session", seen)
    ctx.expect(calls == ["called"], "on_first_create ran once", calls)


async def _check_snapshot_once(ctx: SandboxCheckContext) -> None:
    provider = ctx.target.provider
    identity = f"conformance-{uuid.uuid4().hex[:12]}"
    calls: list[int] = []

    async def setup(restricted: SandboxSession) -> None:
        calls.append(1)
        result = await restricted.run("mkdir -p baked && echo baked > baked/marker.txt")
        if result.exit_code != 0:
            raise SandboxError(f"setup failed: {result}")

    try:
        for _ in range(2):
            async with ctx.session(identity=identity, on_first_create=setup) as session:
                seen = await session.read_text_file("baked/marker.txt")
                ctx.expect(seen == "baked\n", "every session starts with the setup's effects", seen)
        ctx.expect(len(calls) == 1, "on_first_create ran once for two sessions", len(calls))
        concurrent_identity = f"{identity}-concurrent"
        calls.clear()
        seen_markers: list[str | None] = []

        async def create_one() -> None:
            async with ctx.session(identity=concurrent_identity, on_first_create=setup) as session:
                seen_markers.append(await session.read_text_file("baked/marker.txt"))

        try:
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(create_one)
        finally:
            await _forget(provider, concurrent_identity)
        ctx.expect(len(calls) == 1, "concurrent first creations run the setup once", len(calls))
        ctx.expect(seen_markers == ["baked\n"] * 3, "all of them see its effects", seen_markers)
    finally:
        await _forget(provider, identity)


# -- checks: isolation -----------------------------------------------------------------


async def _check_network_isolation(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        result = await session.run(
            "if [ -d /sys/class/net ]; then ls /sys/class/net; "
            "else tail -n +3 /proc/net/dev | cut -d: -f1; fi"
        )
        interfaces = sorted(name.strip() for name in result.stdout.split() if name.strip())
        ctx.expect(
            result.exit_code == 0 and interfaces == ["lo"],
            "the only network interface is lo",
            (interfaces, result.stderr),
        )


async def _usable_again(session: SandboxSession) -> bool:
    with anyio.move_on_after(60):
        while True:
            with suppress(SandboxError):
                result = await session.run("echo usable", timeout=10)
                if result.stdout.strip() == "usable":
                    return True
            await anyio.sleep(0.5)
    return False


async def _check_memory_hog(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        try:
            # Doubles a shell string until the memory limit stops it.
            hog = await session.run('x=a; while :; do x="$x$x"; done', timeout=60)
            ctx.expect(hog.exit_code != 0, "the memory hog is stopped by the limit", hog)
        except SandboxTimeoutError:
            raise ctx.fail("the memory limit stops the hog", "it ran for 60 s") from None
        except SandboxError:
            pass  # failing with a named error is acceptable
        ctx.expect(await _usable_again(session), "the session stays usable", "it does not")


async def _check_fork_bomb(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        with suppress(SandboxError):
            await session.run("bomb() { bomb | bomb & }; bomb; sleep 3", timeout=3)
        ctx.expect(await _usable_again(session), "the session stays usable after a fork bomb", "no")


#: The lifecycle and isolation checks, in the suite's order.
LIFECYCLE_CHECKS: tuple[SandboxCheck, ...] = (
    sandbox_check(
        "stop_destroy_idempotent",
        ("SANDBOX-018", "SANDBOX-019"),
        "stop() and destroy() are idempotent; destroy works running or stopped; a "
        "destroyed session fails fast.",
        _check_stop_destroy_idempotent,
    ),
    sandbox_check(
        "fresh_working_directory",
        ("SANDBOX-029",),
        "Each session gets its own fresh, empty default working directory, resumable by "
        "id in-process and freed by destroy() (removed from the host for host "
        "directories).",
        _check_fresh_working_directory,
    ),
    sandbox_check(
        "resume",
        ("SANDBOX-026",),
        "resume_session(session_id) from a fresh provider finds the session with its "
        "files; a destroyed one is a SandboxError.",
        _check_resume,
        "resume",
    ),
    sandbox_check(
        "on_first_create_without_identity",
        ("SANDBOX-027",),
        "Without an identity, on_first_create runs once on the new session.",
        _check_on_first_create_without_identity,
    ),
    sandbox_check(
        "snapshot_once",
        ("SANDBOX-027",),
        "on_first_create runs once per identity, also for concurrent first creations, "
        "and every session sees its effects.",
        _check_snapshot_once,
        "snapshots",
    ),
    sandbox_check(
        "network_isolation",
        ("SANDBOX-033",),
        "The only network interface inside the sandbox is lo (kit decision for Docker).",
        _check_network_isolation,
        "network_isolation",
    ),
    sandbox_check(
        "memory_hog_contained",
        ("SANDBOX-034",),
        "A memory hog is stopped by the memory limit and the session stays usable.",
        _check_memory_hog,
        "resource_limits",
    ),
    sandbox_check(
        "fork_bomb_contained",
        ("SANDBOX-035",),
        "A fork bomb is contained by the process limit and the session stays usable.",
        _check_fork_bomb,
        "resource_limits",
    ),
)
