"""Provider checks that try what an attacker would (issue 15), each bounded and fast.

Hard links and a symlink swapped in while the file API runs (``path_confinement``), a
FIFO and a directory given to the file API (every provider), a ``setsid`` grandchild
(``kills_process_tree``), writes to system files (``protects_system_files``) and a write
past the workspace quota (``disk_quota``).
"""

from __future__ import annotations

import os
import uuid
from contextlib import suppress

import anyio

from harness_testkit.spec import SandboxError, SandboxPathError, SandboxTimeoutError

from ._model import QUICK, SandboxCheck, SandboxCheckContext, gone

__all__ = ["ATTACK_CHECKS"]


async def _check_hard_link(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        outside = f"../hard-link-target-{uuid.uuid4().hex[:12]}.txt"
        made = await session.run(f"printf secret > {outside} && ln {outside} linked.txt")
        try:
            ctx.expect(made.exit_code == 0, "a hard link to a file outside was made", made)
            try:
                seen = await session.read_text_file("linked.txt")
            except SandboxPathError as error:
                ctx.expect("linked.txt" in str(error), "the error names the path", str(error))
            else:
                raise ctx.fail("SandboxPathError reading a hard link to outside", repr(seen))
            with suppress(SandboxPathError):
                await session.write_text_file("linked.txt", "overwritten")
            after = await session.run(f"cat {outside}")
            ctx.expect(
                after.stdout == "secret", "the file outside is untouched by the write", after
            )
        finally:
            await session.run(f"rm -f {outside}")


async def _check_symlink_swap_race(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        outside = f"../swap-outside-{uuid.uuid4().hex[:12]}"
        prepared = await session.run(
            f"mkdir -p {outside} && printf outside-secret > {outside}/secret.txt && "
            "mkdir -p d && printf inside > d/secret.txt"
        )
        ctx.expect(prepared.exit_code == 0, "the race is set up", prepared)
        swapper = await session.spawn(
            f"while :; do mv d d.real; ln -sfn {outside} d; rm -f d; mv d.real d; done"
        )
        leaked_reads = 0
        try:
            for _round in range(ctx.target.race_rounds):
                with suppress(SandboxError):
                    if await session.read_text_file("d/secret.txt") == "outside-secret":
                        leaked_reads += 1
                with suppress(SandboxError):
                    await session.write_text_file("d/written.txt", "escaped")
        finally:
            await swapper.kill()
        landed = await session.run(f"ls {outside}")
        try:
            ctx.expect(leaked_reads == 0, "no read through the swapped symlink", leaked_reads)
            ctx.expect(
                "written.txt" not in landed.stdout,
                "no write through the swapped symlink lands outside",
                landed.stdout,
            )
        finally:
            await session.run(f"rm -rf {outside}")


async def _check_fifo(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        made = await session.run("mkfifo pipe")
        ctx.expect(made.exit_code == 0, "a FIFO was made", made)
        for operation in ("read", "write"):
            try:
                with anyio.fail_after(QUICK):
                    if operation == "read":
                        await session.read_text_file("pipe")
                    else:
                        await session.write_text_file("pipe", "into the pipe")
            except TimeoutError:
                raise ctx.fail(f"a {operation} of a FIFO fails at once", "it blocked") from None
            except SandboxError as error:
                ctx.expect("pipe" in str(error), "the error names the path", str(error))
            else:
                raise ctx.fail(f"SandboxError for a {operation} of a FIFO", "no error")


async def _check_directory_read(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        made = await session.run("mkdir -p big && head -c 2000000 /dev/zero > big/blob")
        ctx.expect(made.exit_code == 0, "a directory with a 2 MB file was made", made)
        for read in (session.read_binary_file, session.read_text_file):
            try:
                with anyio.fail_after(QUICK):
                    await read("big")
            except SandboxError as error:
                ctx.expect("directory" in str(error), "the error says directory", str(error))
            else:
                raise ctx.fail("SandboxError reading a directory", "no error")


_GRANDCHILD = "setsid sh -c 'sleep 60 & echo $! > {pid}; wait' >/dev/null 2>&1 & sleep 60"
_GRANDCHILD_HOLDING_PIPES = "setsid sh -c 'sleep 60 & echo $! > {pid}; wait' & sleep 60"


async def _check_setsid_grandchild(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        try:
            with anyio.fail_after(QUICK):
                await session.run(_GRANDCHILD_HOLDING_PIPES.format(pid="gc.pid"), timeout=1.5)
        except SandboxTimeoutError:
            pass  # (a TimeoutError too: caught first)
        except TimeoutError:
            raise ctx.fail("run returns at its timeout", "a setsid grandchild kept it") from None
        else:
            raise ctx.fail("SandboxTimeoutError", "the run ended without one")
        ctx.expect(await gone(ctx, session, "gc.pid"), "the setsid grandchild is killed", "alive")
    provider = ctx.target.provider
    session = await provider.create_session(session_id=ctx.new_session_id())
    pid = ""
    try:
        await session.spawn(_GRANDCHILD.format(pid="destroy-gc.pid"))
        with anyio.move_on_after(QUICK):
            while not pid:
                pid = (await session.read_text_file("destroy-gc.pid") or "").strip()
                await anyio.sleep(0.05)
        ctx.expect(pid.isdigit(), "the grandchild wrote its pid", pid)
    finally:
        with anyio.CancelScope(shield=True):
            await session.destroy()
    if not ctx.capabilities.host_directory:
        return  # a container's processes end with it; only host processes can outlive it
    for _poll in range(int(QUICK * 10)):
        if not _host_process_alive(int(pid)):
            break
        await anyio.sleep(0.1)
    ctx.expect(not _host_process_alive(int(pid)), "destroy() kills the setsid grandchild", pid)


def _host_process_alive(pid: int) -> bool:
    """Whether ``pid`` runs on this host (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with suppress(OSError), open(f"/proc/{pid}/status", encoding="utf-8") as status:
        return not any(line.startswith("State:") and "Z" in line for line in status)
    return True


async def _check_system_files(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        before = await session.read_text_file("/etc/passwd")
        for path in ("/etc/passwd", "/bin/x"):
            try:
                await session.write_text_file(path, "replaced\n")
            except SandboxError as error:
                ctx.expect(path in str(error), "the error names the path", str(error))
            else:
                raise ctx.fail(f"SandboxError writing {path}", "the write succeeded")
        shell = await session.run("echo x >> /etc/passwd; touch /bin/x")
        ctx.expect(shell.exit_code != 0, "commands cannot write system files either", shell)
        after = await session.read_text_file("/etc/passwd")
        ctx.expect(after == before, "/etc/passwd is unchanged", after)
        created = await session.run("test -e /bin/x")
        ctx.expect(created.exit_code != 0, "/bin/x was not created", created)
        await session.write_text_file("/tmp/scratch.txt", "tmp is writable")
        await session.write_text_file("owned.txt", "the workspace is writable")
        owner = await session.run('[ "$(stat -c %u owned.txt)" = "$(id -u)" ]')
        ctx.expect(owner.exit_code == 0, "files are written as the session user", owner)


async def _check_disk_quota(ctx: SandboxCheckContext) -> None:
    quota = ctx.capabilities.disk_quota
    assert quota is not None
    too_much = quota + (1 << 20)
    async with ctx.session() as session:
        try:
            await session.write_binary_file("too-big.bin", b"\0" * too_much)
        except SandboxError:
            pass
        else:
            raise ctx.fail(f"SandboxError writing {too_much} bytes", "the write succeeded")
        await session.run("rm -f too-big.bin")
        shell = await session.run(f"head -c {too_much} /dev/zero > too-big.bin")
        ctx.expect(shell.exit_code != 0, "a command writing past the quota fails", shell)
        await session.run("rm -f too-big.bin")
        await session.write_text_file("small.txt", "still usable")
        seen = await session.read_text_file("small.txt")
        ctx.expect(seen == "still usable", "the session stays usable", seen)


def _attack(
    name: str, requirement: str, title: str, function: object, capability: str | None = None
) -> SandboxCheck:
    return SandboxCheck(
        id=name,
        title=title,
        requirements=(requirement,),
        tier="black-box",
        needs=(capability,) if capability else (),
        function=function,  # type: ignore[arg-type]
    )


#: The attack checks, appended to the suite's.
ATTACK_CHECKS: tuple[SandboxCheck, ...] = (
    _attack(
        "hard_link_refused",
        "SANDBOX-036",
        "A hard link to a file outside the root is neither read nor written through.",
        _check_hard_link,
        "path_confinement",
    ),
    _attack(
        "symlink_swap_race",
        "SANDBOX-036",
        "Reads and writes (SandboxTarget.race_rounds) while a directory is swapped for a "
        "symlink to outside never land outside.",
        _check_symlink_swap_race,
        "path_confinement",
    ),
    _attack(
        "fifo_refused",
        "SANDBOX-037",
        "Reading or writing a FIFO is a SandboxError at once, not a hang.",
        _check_fifo,
    ),
    _attack(
        "directory_read_refused",
        "SANDBOX-037",
        "Reading a directory (holding 2 MB) is a SandboxError saying so.",
        _check_directory_read,
    ),
    _attack(
        "setsid_grandchild_killed",
        "SANDBOX-038",
        "A setsid grandchild holding the pipes neither delays run past its timeout nor "
        "survives it or destroy().",
        _check_setsid_grandchild,
        "kills_process_tree",
    ),
    _attack(
        "system_files_protected",
        "SANDBOX-039",
        "Writes to /etc/passwd and /bin/x fail through the file API and commands; the "
        "workspace and /tmp are writable, as the session user.",
        _check_system_files,
        "protects_system_files",
    ),
    _attack(
        "disk_quota_enforced",
        "SANDBOX-040",
        "Writing past the declared quota fails through the file API and commands; the "
        "session stays usable.",
        _check_disk_quota,
        "disk_quota",
    ),
)
