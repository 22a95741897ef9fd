"""The sandbox provider conformance suite: plain async checks, no pytest.

Any :class:`~harness_testkit.spec.SandboxProvider` (the kit's or a user's) is checked
through a :class:`SandboxTarget`: the provider, a factory for a fresh instance over the
same backing store (to prove resume works "from another process"), and the
:class:`SandboxCapabilities` it claims. Every check in :data:`SANDBOX_CHECKS` names the
catalogue requirements it verifies. The checks are conformance ``Check`` objects
(:class:`SandboxCheck`); a check whose capability is not claimed raises
:class:`SandboxCheckSkipped` (a ``CheckSkipped``) naming the capability, and a failed
expectation raises :class:`SandboxCheckFailed` (a ``CheckFailed``) with the requirement,
expected vs observed, and the replay command. ``harness-testkit check-sandbox`` runs
them into the same report and gate as ``check`` (see ``_run``).

Property checks draw their examples with hypothesis in a worker thread and run each
example on the caller's event loop, so one session serves all examples on asyncio and
trio alike.

Usage from pytest (one fixture, as in the kit's own tests)::

    @pytest.mark.anyio
    @pytest.mark.parametrize("check", SANDBOX_CHECKS, ids=lambda check: check.name)
    async def test_sandbox(check, sandbox_target):
        try:
            await run_sandbox_check(check, sandbox_target)
        except SandboxCheckSkipped as skipped:
            pytest.skip(str(skipped))
"""

from __future__ import annotations

import os
import time
from contextlib import suppress

import anyio
from hypothesis import strategies as st

from harness_testkit.sandbox import extract_lines
from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    NetworkSandboxSession,
    SandboxAbortedError,
    SandboxError,
    SandboxPathError,
    SandboxProcess,
    SandboxProvider,
    SandboxSession,
    SandboxTimeoutError,
)

from ._attacks import ATTACK_CHECKS
from ._lifecycle import LIFECYCLE_CHECKS
from ._model import (
    QUICK,
    SandboxCapabilities,
    SandboxCheck,
    SandboxCheckContext,
    SandboxCheckFailed,
    SandboxCheckSkipped,
    SandboxTarget,
    gone,
    line_numbers,
    line_texts,
    read_all,
    run_sandbox_check,
    sandbox_check,
    sandbox_file_contents,
    sandbox_relative_paths,
)

__all__ = [
    "SANDBOX_CHECKS",
    "SandboxCapabilities",
    "SandboxCheck",
    "SandboxCheckFailed",
    "SandboxCheckSkipped",
    "SandboxTarget",
    "run_sandbox_check",
    "sandbox_file_contents",
    "sandbox_relative_paths",
]


# -- checks: shape ---------------------------------------------------------------------


async def _check_session_shape(ctx: SandboxCheckContext) -> None:
    provider = ctx.target.provider
    ctx.expect(isinstance(provider, SandboxProvider), "a SandboxProvider", type(provider))
    ctx.expect(
        isinstance(provider.provider_id, str) and bool(provider.provider_id),
        "provider_id is a non-empty string",
        provider.provider_id,
    )
    async with ctx.session() as session:
        ctx.expect(
            isinstance(session, NetworkSandboxSession),
            "create_session returns a NetworkSandboxSession",
            type(session),
        )
        ctx.expect(
            isinstance(session.description, str) and bool(session.description.strip()),
            "description is a non-empty string",
            session.description,
        )
        ctx.expect(isinstance(session.id, str) and bool(session.id), "a non-empty id", session.id)
        directory = session.default_working_directory
        ctx.expect(
            isinstance(directory, str) and directory.startswith("/"),
            "default_working_directory is absolute",
            directory,
        )
        ctx.expect(
            all(isinstance(port, int) for port in session.ports),
            "ports is a sequence of ints",
            session.ports,
        )
        restricted = session.restricted()
        ctx.expect(
            isinstance(restricted, SandboxSession), "restricted() is a SandboxSession", restricted
        )


async def _check_restricted_view(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        restricted = session.restricted()
        lifecycle = [
            name for name in ("stop", "destroy", "restricted") if hasattr(restricted, name)
        ]
        ctx.expect(not lifecycle, "restricted() has no lifecycle members", lifecycle)
        await restricted.write_text_file("through-restricted.txt", "from the view")
        seen = await session.read_text_file("through-restricted.txt")
        ctx.expect(seen == "from the view", "the session reads what the view wrote", seen)
        await session.write_text_file("through-session.txt", "from the session")
        result = await restricted.run("cat through-session.txt")
        ctx.expect(
            result.stdout == "from the session",
            "the view's processes see what the session wrote",
            result,
        )


async def _check_port_endpoint(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        exposed = set(session.ports)
        port = next(candidate for candidate in range(3000, 65535) if candidate not in exposed)
        try:
            endpoint = await session.get_port_endpoint(port, "ws")
        except HarnessCapabilityUnsupportedError as error:
            ctx.expect(str(port) in str(error), f"the error names port {port}", str(error))
        else:
            raise ctx.fail(
                f"HarnessCapabilityUnsupportedError for unexposed port {port}",
                repr(endpoint),
            )


# -- checks: files ---------------------------------------------------------------------


async def _check_missing_files(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        for path in ("missing.txt", "missing/deeper/file.bin"):
            text = await session.read_text_file(path)
            ctx.expect(text is None, f"read_text_file({path!r}) is None", text)
            data = await session.read_binary_file(path)
            ctx.expect(data is None, f"read_binary_file({path!r}) is None", data)
        ranged = await session.read_text_file("missing.txt", start_line=1, end_line=2)
        ctx.expect(ranged is None, "a ranged read of a missing file is None", ranged)


async def _check_file_round_trips(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        counter = iter(range(1_000_000))

        async def round_trip(example: tuple[str, str | bytes]) -> None:
            relative, content = example
            # A fresh folder per example: one example's file may be another's folder.
            path = f"round-trip/{next(counter)}/{relative}"
            if isinstance(content, str):
                await session.write_text_file(path, content)
                back: str | bytes | None = await session.read_text_file(path)
                raw = await session.read_binary_file(path)
                ctx.expect(raw == content.encode(), "the text's UTF-8 bytes on disk", (path, raw))
            else:
                await session.write_binary_file(path, content)
                back = await session.read_binary_file(path)
            ctx.expect(back == content, "the content reads back unchanged", (path, back))

        await ctx.examples(st.tuples(sandbox_relative_paths, sandbox_file_contents), round_trip)


async def _check_empty_and_large_files(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        await session.write_binary_file("empty.bin", b"")
        empty = await session.read_binary_file("empty.bin")
        ctx.expect(empty == b"", "an empty file reads as b''", empty)
        await session.write_text_file("empty.txt", "")
        empty_text = await session.read_text_file("empty.txt")
        ctx.expect(empty_text == "", "an empty text file reads as ''", empty_text)
        large = os.urandom(1 << 20)
        await session.write_binary_file("large/one-mebibyte.bin", large)
        back = await session.read_binary_file("large/one-mebibyte.bin")
        ctx.expect(back == large, "1 MiB of random bytes reads back unchanged", len(back or b""))
        text = "ünïcødé ☃ line\r\n" * 40_000
        await session.write_text_file("large/text.txt", text)
        text_back = await session.read_text_file("large/text.txt")
        ctx.expect(text_back == text, "large text reads back unchanged", len(text_back or ""))


async def _check_writes_create_parents_and_overwrite(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        await session.write_text_file("a/b/c/d.txt", "first version, longer")
        await session.write_text_file("a/b/c/d.txt", "second")
        seen = await session.read_text_file("a/b/c/d.txt")
        ctx.expect(seen == "second", "the second write replaces the file", seen)
        await session.write_binary_file("a/b/other.bin", b"\x00\x01")
        listing = await session.run("ls a/b")
        ctx.expect(
            listing.exit_code == 0 and set(listing.stdout.split()) == {"c", "other.bin"},
            "parent directories exist for processes too",
            listing,
        )


async def _check_paths_shared_with_processes(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        root = session.default_working_directory.rstrip("/") or "/"
        await session.write_text_file("relative/file.txt", "relative")
        absolute = await session.read_text_file(f"{root}/relative/file.txt")
        ctx.expect(
            absolute == "relative",
            "a relative path resolves against default_working_directory",
            absolute,
        )
        shown = await session.run("cat relative/file.txt")
        ctx.expect(shown.stdout == "relative", "processes see written files", shown)
        made = await session.run("mkdir -p made && printf 'by a process' > made/by-process.txt")
        ctx.expect(made.exit_code == 0, "the process wrote a file", made)
        seen = await session.read_text_file("made/by-process.txt")
        ctx.expect(seen == "by a process", "file reads see files written by processes", seen)


async def _check_line_ranges(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        await session.write_text_file("lines.txt", "a\r\nb\r\nc\r\nd")
        middle = await session.read_text_file("lines.txt", start_line=2, end_line=3)
        ctx.expect(middle == "b\r\nc", "lines 2..3 joined with the file's \\r\\n", middle)
        past = await session.read_text_file("lines.txt", start_line=3, end_line=99)
        ctx.expect(past == "c\r\nd", "an end past EOF reads through the end", past)
        clamped = await session.read_text_file("lines.txt", start_line=-5, end_line=1)
        ctx.expect(clamped == "a", "start_line clamps to 1", clamped)

        async def compare(example: tuple[str, int | None, int | None]) -> None:
            text, start, end = example
            await session.write_text_file("property.txt", text)
            seen = await session.read_text_file("property.txt", start_line=start, end_line=end)
            wanted = extract_lines(text, start, end)
            ctx.expect(
                seen == wanted,
                f"provider-utils extractLines of {text!r} lines {start}..{end}: {wanted!r}",
                seen,
            )

        await ctx.examples(st.tuples(line_texts, line_numbers, line_numbers), compare)


async def _check_path_confinement(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        root = session.default_working_directory.rstrip("/")
        outside = [
            "../escape.txt",
            "inner/../../escape.txt",
            "/etc/hostname",
            f"{root}/../escape.txt",
        ]
        made = await session.run("ln -s / link-to-root && ln -s .. link-to-parent")
        ctx.expect(made.exit_code == 0, "symlinks created", made)
        outside += ["link-to-root/etc/hostname", "link-to-parent/escape.txt"]
        for path in outside:
            for operation in ("read", "write"):
                try:
                    if operation == "read":
                        await session.read_text_file(path)
                    else:
                        await session.write_text_file(path, "escaped")
                except SandboxPathError as error:
                    ctx.expect(path in str(error), "the error names the path", str(error))
                else:
                    raise ctx.fail(f"SandboxPathError for {operation} of {path!r}", "no error")
        escaped = await session.run("ls ../escape.txt")
        ctx.expect(escaped.exit_code != 0, "nothing was written outside the root", escaped)
        await session.write_text_file("inside/../inside.txt", "fine")
        inside = await session.read_text_file("inside.txt")
        ctx.expect(inside == "fine", "'..' that stays inside the root is allowed", inside)


# -- checks: processes -----------------------------------------------------------------


async def _check_run_results(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        ok = await session.run("printf out; printf err >&2")
        ctx.expect(
            (ok.exit_code, ok.stdout, ok.stderr) == (0, "out", "err"),
            "exit 0 with stdout 'out' and stderr 'err' kept apart",
            ok,
        )
        for code in (1, 3, 127, 255):
            failed = await session.run(f"exit {code}")
            ctx.expect(failed.exit_code == code, f"exit code {code} reported, not raised", failed)
        unknown = await session.run("definitely-not-a-command-xyz")
        ctx.expect(unknown.exit_code == 127, "a missing command exits 127 (shell)", unknown)
        piped = await session.run("echo one two | wc -w")
        ctx.expect(piped.stdout.strip() == "2", "commands run with a shell (pipes work)", piped)
        big = await session.run("i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done")
        lines = big.stdout.splitlines()
        ctx.expect(
            len(lines) == 20000 and lines[-1] == "line-19999",
            "large outputs arrive complete and in order",
            (len(lines), lines[-1:] if lines else None),
        )

        async def run_one(index: int, results: dict[int, str]) -> None:
            result = await session.run(f"sleep 0.2; echo run-{index}")
            results[index] = result.stdout.strip()

        results: dict[int, str] = {}
        async with anyio.create_task_group() as group:
            for index in range(4):
                group.start_soon(run_one, index, results)
        ctx.expect(
            results == {index: f"run-{index}" for index in range(4)},
            "concurrent runs on one session keep their outputs apart",
            results,
        )


async def _check_env_merge(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        base = await session.run("printf '%s' \"$HOME\"")
        ctx.expect(base.exit_code == 0, "printing $HOME works", base)
        merged = await session.run(
            'printf \'%s|%s|%s\' "$HARNESS_CHECK" "$HOME" "$(command -v sh)"',
            env={"HARNESS_CHECK": "value with spaces ✓", "HOME": "/overridden-home"},
        )
        parts = merged.stdout.split("|")
        ctx.expect(
            len(parts) == 3
            and parts[0] == "value with spaces ✓"
            and parts[1] == "/overridden-home",
            "env values are visible and win over the default environment",
            merged,
        )
        ctx.expect(
            bool(parts[2:]) and parts[2] != "",
            "the rest of the default environment (PATH) is kept",
            merged,
        )
        after = await session.run("printf '%s' \"$HOME\"")
        ctx.expect(after.stdout == base.stdout, "env does not leak into later commands", after)
        process = await session.spawn("printf '%s' \"$SPAWNED\"", env={"SPAWNED": "yes"})
        output = await read_all(process.stdout)
        await process.wait()
        ctx.expect(output == b"yes", "spawn merges env too", output)


async def _check_working_directory(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        root = session.default_working_directory
        default = await session.run("pwd")
        ctx.expect(
            default.stdout.strip() == root,
            f"commands start in default_working_directory {root}",
            default,
        )
        await session.run("mkdir -p sub/dir")
        relative = await session.run("pwd", working_directory="sub/dir")
        ctx.expect(
            relative.stdout.strip().endswith("/sub/dir"),
            "a relative working_directory resolves against the default one",
            relative,
        )
        absolute_dir = f"{root.rstrip('/')}/sub"
        absolute = await session.run("pwd", working_directory=absolute_dir)
        ctx.expect(absolute.stdout.strip().endswith("/sub"), "an absolute one works", absolute)
        process = await session.spawn("pwd", working_directory="sub")
        output = await read_all(process.stdout)
        await process.wait()
        ctx.expect(output.strip().endswith(b"/sub"), "spawn honours working_directory", output)
        try:
            result = await session.run("pwd", working_directory="does/not/exist")
        except SandboxError:
            pass
        else:
            raise ctx.fail("SandboxError for a missing working directory", repr(result))


async def _check_spawn_streams(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        process = await session.spawn("echo ready; sleep 30")
        ctx.expect(isinstance(process, SandboxProcess), "spawn returns a SandboxProcess", process)
        started = time.monotonic()
        with anyio.move_on_after(QUICK):
            early = await read_all(process.stdout, until=b"ready")
        ctx.expect(
            b"ready" in early and time.monotonic() - started < QUICK,
            "output streams while the command still runs",
            early,
        )
        await process.kill()
        with anyio.fail_after(QUICK):
            code = await process.wait()
        ctx.expect(code != 0, "a killed process reports a non-zero exit", code)
        both = await session.spawn("printf out; printf err >&2; exit 7")
        with anyio.fail_after(QUICK):
            out, err = await read_all(both.stdout), await read_all(both.stderr)
            code = await both.wait()
        ctx.expect(
            (out, err, code) == (b"out", b"err", 7),
            "stdout and stderr stream apart and wait() returns 7 without raising",
            (out, err, code),
        )


async def _check_kill_idempotent(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        process = await session.spawn("sleep 30")
        with anyio.fail_after(QUICK):
            await process.kill()
            await process.kill()
            await process.wait()
        finished = await session.spawn("true")
        with anyio.fail_after(QUICK):
            await read_all(finished.stdout)
            code = await finished.wait()
            await finished.kill()
        ctx.expect(code == 0, "kill() after the exit does not raise", code)


async def _check_abort(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        abort = anyio.Event()
        started = time.monotonic()

        async def set_later() -> None:
            await anyio.sleep(0.3)
            abort.set()

        outcome: object = None
        async with anyio.create_task_group() as group:
            group.start_soon(set_later)
            try:
                with anyio.fail_after(QUICK):
                    outcome = await session.run("echo $$ > aborted.pid; exec sleep 30", abort=abort)
            except SandboxAbortedError as error:
                outcome = error
            except TimeoutError:
                outcome = "still running"
        ctx.expect(
            isinstance(outcome, SandboxAbortedError),
            "run raises SandboxAbortedError soon after abort is set",
            outcome,
        )
        ctx.expect(
            time.monotonic() - started < QUICK, "abort acts at once", time.monotonic() - started
        )
        ctx.expect(await gone(ctx, session, "aborted.pid"), "the aborted process is gone", "alive")
        spawn_abort = anyio.Event()
        process = await session.spawn("sleep 30", abort=spawn_abort)
        spawn_abort.set()
        try:
            with anyio.fail_after(QUICK):
                code = await process.wait()
            raise ctx.fail("wait() raises SandboxAbortedError", f"exit code {code}")
        except SandboxAbortedError:
            pass


async def _check_pre_set_abort(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        abort = anyio.Event()
        abort.set()
        for operation in ("run", "spawn"):
            try:
                if operation == "run":
                    await session.run("touch should-not-exist", abort=abort)
                else:
                    await session.spawn("touch should-not-exist", abort=abort)
            except SandboxAbortedError:
                pass
            else:
                raise ctx.fail(
                    f"{operation} with a set abort raises SandboxAbortedError", "no error"
                )
        await anyio.sleep(0.2)
        data = await session.read_binary_file("should-not-exist")
        ctx.expect(data is None, "nothing ran", data)


async def _check_timeout_kills(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        started = time.monotonic()
        try:
            with anyio.fail_after(QUICK):
                result = await session.run("echo $$ > timed-out.pid; exec sleep 30", timeout=0.5)
            raise ctx.fail("SandboxTimeoutError", repr(result))
        except SandboxTimeoutError as error:
            ctx.expect(isinstance(error, TimeoutError), "a TimeoutError", type(error))
        except TimeoutError:
            raise ctx.fail(
                "run(timeout=0.5) to end soon", f"still running after {QUICK} s"
            ) from None
        elapsed = time.monotonic() - started
        ctx.expect(elapsed < 10, "run(timeout=0.5) of sleep 30 returns quickly", f"{elapsed:.1f} s")
        ctx.expect(
            await gone(ctx, session, "timed-out.pid"), "the timed-out process is gone", "alive"
        )
        fine = await session.run("echo still usable", timeout=QUICK)
        ctx.expect(fine.stdout.strip() == "still usable", "the session stays usable", fine)


async def _check_kills_process_tree(ctx: SandboxCheckContext) -> None:
    async with ctx.session() as session:
        with suppress(SandboxTimeoutError):
            await session.run("sleep 30 & echo $! > child.pid; wait", timeout=0.5)
        ctx.expect(await gone(ctx, session, "child.pid"), "a timeout kills children", "alive")
        abort = anyio.Event()
        process = await session.spawn("sleep 30 & echo $! > spawned-child.pid; wait", abort=abort)
        await anyio.sleep(0.3)
        await process.kill()
        with anyio.fail_after(QUICK):
            await process.wait()
        ctx.expect(await gone(ctx, session, "spawned-child.pid"), "kill() kills children", "alive")


# -- the registry ----------------------------------------------------------------------


#: Every check, in a stable order.
_CONTRACT_CHECKS: tuple[SandboxCheck, ...] = (
    sandbox_check(
        "session_shape",
        ("SANDBOX-001", "SANDBOX-017", "SANDBOX-025"),
        "Providers create network sessions with a description, id, absolute default "
        "working directory, ports and a restricted view.",
        _check_session_shape,
    ),
    sandbox_check(
        "restricted_view",
        ("SANDBOX-020",),
        "restricted() is bound to the same resource and has no lifecycle members.",
        _check_restricted_view,
    ),
    sandbox_check(
        "port_endpoint_unexposed",
        ("SANDBOX-022",),
        "get_port_endpoint of an unexposed port raises HarnessCapabilityUnsupportedError "
        "naming the port.",
        _check_port_endpoint,
    ),
    sandbox_check(
        "missing_files",
        ("SANDBOX-002",),
        "Reading a missing file returns None, text or binary, ranged or not.",
        _check_missing_files,
    ),
    sandbox_check(
        "file_round_trips",
        ("SANDBOX-003", "SANDBOX-008"),
        "Generated paths and contents (unicode, binary, empty) read back unchanged.",
        _check_file_round_trips,
    ),
    sandbox_check(
        "empty_and_large_files",
        ("SANDBOX-008",),
        "Empty files and 1 MiB files read back unchanged.",
        _check_empty_and_large_files,
    ),
    sandbox_check(
        "writes_create_parents_and_overwrite",
        ("SANDBOX-007",),
        "Writes create missing parents and overwrite existing files.",
        _check_writes_create_parents_and_overwrite,
    ),
    sandbox_check(
        "paths_shared_with_processes",
        ("SANDBOX-009",),
        "Relative paths resolve against the default working directory; files and "
        "processes see each other's writes.",
        _check_paths_shared_with_processes,
    ),
    sandbox_check(
        "line_ranges",
        ("SANDBOX-004", "SANDBOX-005", "SANDBOX-006"),
        "Ranged reads equal provider-utils extractLines on generated texts and ranges.",
        _check_line_ranges,
    ),
    sandbox_check(
        "path_confinement",
        ("SANDBOX-032",),
        "Paths resolving outside the session root (.., absolute, symlinks) are refused "
        "with SandboxPathError (kit decision for the local provider).",
        _check_path_confinement,
        "path_confinement",
    ),
    sandbox_check(
        "run_results",
        ("SANDBOX-010",),
        "run reports exit codes and separate stdout/stderr, large and concurrent outputs "
        "included, without raising on failure.",
        _check_run_results,
    ),
    sandbox_check(
        "env_merge",
        ("SANDBOX-011",),
        "env merges over the default environment for run and spawn, the given values win.",
        _check_env_merge,
    ),
    sandbox_check(
        "working_directory",
        ("SANDBOX-011",),
        "working_directory is honoured (relative or absolute); a missing one is a SandboxError.",
        _check_working_directory,
    ),
    sandbox_check(
        "spawn_streams",
        ("SANDBOX-012",),
        "spawn returns at once; its output streams while it runs; wait() returns the code.",
        _check_spawn_streams,
    ),
    sandbox_check(
        "kill_idempotent",
        ("SANDBOX-016",),
        "kill() terminates the process and is idempotent, also after the exit.",
        _check_kill_idempotent,
    ),
    sandbox_check(
        "abort",
        ("SANDBOX-013",),
        "Setting abort kills the process: run raises SandboxAbortedError, and so does "
        "the spawned process's wait().",
        _check_abort,
    ),
    sandbox_check(
        "pre_set_abort",
        ("SANDBOX-015",),
        "An abort already set fails run and spawn at once without running anything.",
        _check_pre_set_abort,
    ),
    sandbox_check(
        "timeout_kills",
        ("SANDBOX-014",),
        "A run whose timeout passes raises SandboxTimeoutError quickly and the process is gone.",
        _check_timeout_kills,
    ),
    sandbox_check(
        "kills_process_tree",
        ("SANDBOX-014", "SANDBOX-016"),
        "Timeouts and kill() also kill the command's children.",
        _check_kills_process_tree,
        "kills_process_tree",
    ),
)

#: Every check, in a stable order: the contract, lifecycle and isolation, then the attacks.
SANDBOX_CHECKS: tuple[SandboxCheck, ...] = (*_CONTRACT_CHECKS, *LIFECYCLE_CHECKS, *ATTACK_CHECKS)
