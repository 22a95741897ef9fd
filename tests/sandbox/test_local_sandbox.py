"""The local provider's own behaviour (the shared contract is in the conformance suite)."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from pathlib import Path

import anyio
import pytest

from harness_testkit.sandbox._local import LocalSandboxProvider, default_local_base_dir
from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    NetworkSandboxSession,
    SandboxError,
    SandboxPathError,
    SandboxProvider,
    SandboxSession,
)

pytestmark = pytest.mark.anyio


async def _run_python(code: str, *arguments: str) -> str:
    """Run ``code`` in a separate interpreter (another process) and return its stdout."""
    with anyio.fail_after(60):
        completed = await anyio.run_process(
            [sys.executable, "-c", textwrap.dedent(code), *arguments], check=False
        )
    assert completed.returncode == 0, completed.stderr.decode()
    return completed.stdout.decode()


@pytest.mark.requirement("SANDBOX-029")
def test_construction_does_no_io(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "not-yet"
    provider = LocalSandboxProvider(base)
    assert not base.exists()
    assert provider.provider_id == "local"
    assert isinstance(provider, SandboxProvider)
    assert LocalSandboxProvider().base_dir == default_local_base_dir()
    monkeypatch.setenv("HARNESS_TESTKIT_LOCAL_DIR", str(tmp_path / "configured"))
    assert default_local_base_dir() == tmp_path / "configured"
    assert not (tmp_path / "configured").exists()
    monkeypatch.setenv("HARNESS_TESTKIT_LOCAL_DIR", "relative/dir")
    with pytest.raises(ValueError, match="must be an absolute path"):
        default_local_base_dir()
    monkeypatch.delenv("HARNESS_TESTKIT_LOCAL_DIR")
    assert default_local_base_dir() == Path(tempfile.gettempdir()) / "harness-testkit-local"


@pytest.mark.requirement("SANDBOX-029")
async def test_session_directory_is_named_from_the_id(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="team/alpha ü")
    try:
        assert isinstance(session, NetworkSandboxSession)
        root = anyio.Path(session.default_working_directory)
        assert await root.is_dir()
        assert root.parent.name == "sessions"
        assert root.name.startswith("team-alpha")
        assert session.id == "team/alpha ü"
        assert str(root) in session.description
        other = await local_provider.create_session(session_id="team-alpha ü")
        try:
            assert other.default_working_directory != session.default_working_directory
        finally:
            await other.destroy()
    finally:
        await session.destroy()
    assert not await root.exists()


@pytest.mark.requirement("SANDBOX-029")
async def test_random_session_ids_are_resumable(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session()
    try:
        resumed = await local_provider.resume_session(session.id)
        assert resumed.default_working_directory == session.default_working_directory
    finally:
        await session.destroy()


async def test_duplicate_session_id_is_refused(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="twice")
    try:
        with pytest.raises(SandboxError, match=r"already exists.*resume_session"):
            await local_provider.create_session(session_id="twice")
    finally:
        await session.destroy()


async def test_resume_missing_session_names_the_fix(local_provider: LocalSandboxProvider) -> None:
    with pytest.raises(SandboxError, match=r"No local sandbox session 'ghost'.*create_session"):
        await local_provider.resume_session("ghost")


async def test_resume_from_another_process(tmp_path: Path) -> None:
    base = tmp_path / "sandboxes"
    await _run_python(
        f"""
        import anyio
        from harness_testkit.sandbox._local import LocalSandboxProvider

        async def main():
            provider = LocalSandboxProvider({str(base)!r})
            session = await provider.create_session(session_id="shared")
            await session.write_text_file("from-child.txt", "hello from another process")
            await session.stop()

        anyio.run(main)
        """
    )
    provider = LocalSandboxProvider(base)
    session = await provider.resume_session("shared")
    try:
        assert await session.read_text_file("from-child.txt") == "hello from another process"
    finally:
        await session.destroy()


async def test_identity_template_is_baked_once_across_processes(tmp_path: Path) -> None:
    base = tmp_path / "sandboxes"
    counter = tmp_path / "on-first-create-calls.txt"
    script = f"""
        import sys
        import anyio
        from harness_testkit.sandbox._local import LocalSandboxProvider

        async def setup(session):
            # Slow on purpose, so the processes really overlap.
            await session.run("echo called >> {counter}; sleep 0.5; echo baked > baked.txt")

        async def main():
            provider = LocalSandboxProvider({str(base)!r})
            session = await provider.create_session(
                session_id=sys.argv[1], identity="shared-identity", on_first_create=setup
            )
            print(await session.read_text_file("baked.txt"), end="")
            await session.destroy()

        anyio.run(main)
    """
    outputs: list[str] = []

    async def one(index: int) -> None:
        outputs.append(await _run_python(script, f"s{index}"))

    async with anyio.create_task_group() as group:
        for index in range(3):
            group.start_soon(one, index)
    assert outputs == ["baked\n"] * 3
    assert await anyio.Path(counter).read_text() == "called\n"


async def test_failed_setup_leaves_no_template(local_provider: LocalSandboxProvider) -> None:
    attempts: list[int] = []

    async def flaky(session: SandboxSession) -> None:
        attempts.append(1)
        await session.write_text_file("partial.txt", "half done")
        if len(attempts) == 1:
            raise RuntimeError("setup failed on purpose")

    with pytest.raises(RuntimeError, match="on purpose"):
        await local_provider.create_session(session_id="a", identity="flaky", on_first_create=flaky)
    templates = local_provider.base_dir / "templates"
    assert [path.name for path in templates.iterdir()] == []
    session = await local_provider.create_session(
        session_id="b", identity="flaky", on_first_create=flaky
    )
    try:
        assert attempts == [1, 1]
        assert await session.read_text_file("partial.txt") == "half done"
    finally:
        await session.destroy()
    await local_provider.forget_identity("flaky")
    assert not (templates / "flaky").exists()


async def test_failed_setup_without_identity_removes_the_session(
    local_provider: LocalSandboxProvider,
) -> None:
    async def broken(session: SandboxSession) -> None:
        raise RuntimeError("broken setup")

    with pytest.raises(RuntimeError, match="broken setup"):
        await local_provider.create_session(session_id="broken", on_first_create=broken)
    assert not local_provider.session_root("broken").exists()


async def test_symlink_escapes_are_refused(
    local_provider: LocalSandboxProvider, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    session = await local_provider.create_session(session_id="links")
    try:
        root = Path(session.default_working_directory)
        (root / "escape").symlink_to(outside)
        (root / "inside-link").symlink_to(root / "real.txt")
        await session.write_text_file("real.txt", "through a link that stays inside")
        assert await session.read_text_file("inside-link") == "through a link that stays inside"
        with pytest.raises(SandboxPathError, match="outside the session root"):
            await session.read_text_file("escape/secret.txt")
        with pytest.raises(SandboxPathError):
            await session.write_binary_file("escape/new.bin", b"x")
        with pytest.raises(SandboxPathError):
            await session.run("true", working_directory="escape")
        with pytest.raises(SandboxPathError, match="NUL"):
            await session.read_text_file("bad\0name")
        assert not (outside / "new.bin").exists()
    finally:
        await session.destroy()
    assert (outside / "secret.txt").exists()


async def test_file_errors_name_the_path(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="errors")
    try:
        await session.write_text_file("dir/file.txt", "x")
        with pytest.raises(SandboxError, match="'dir': it is a directory"):
            await session.read_text_file("dir")
        with pytest.raises(SandboxError, match=r"a parent of .* is a file"):
            await session.write_text_file("dir/file.txt/child.txt", "x")
        assert await session.read_text_file("dir/file.txt/child.txt") is None
    finally:
        await session.destroy()


async def test_base_env_and_shell_are_configurable(tmp_path: Path) -> None:
    provider = LocalSandboxProvider(
        tmp_path, base_env={"PATH": os.environ["PATH"], "ONLY": "base"}, shell=["/bin/sh", "-c"]
    )
    session = await provider.create_session(session_id="env")
    try:
        result = await session.run("env | sort", env={"EXTRA": "call"})
        names = {line.partition("=")[0] for line in result.stdout.splitlines()}
        assert {"ONLY", "EXTRA", "PATH"} <= names
        assert "HOME" not in names
        assert "/bin/sh" in session.description
    finally:
        await session.destroy()


async def test_stop_kills_processes_and_blocks_use(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="stopping")
    restricted = session.restricted()
    process = await session.spawn("sleep 30")
    pid = process.pid
    assert pid is not None
    await session.stop()
    with anyio.fail_after(10):
        assert await process.wait() != 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(SandboxError, match="is stopped; resume it"):
        await restricted.run("true")
    with pytest.raises(SandboxError, match="is stopped"):
        await session.read_text_file("anything")
    resumed = await local_provider.resume_session("stopping")
    assert (await resumed.run("echo back")).stdout == "back\n"
    await resumed.destroy()
    with pytest.raises(SandboxError, match="is destroyed"):
        await resumed.run("true")


@pytest.mark.requirement("SANDBOX-029")
async def test_destroy_removes_read_only_trees(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="read-only")
    root = anyio.Path(session.default_working_directory)
    result = await session.run(
        "mkdir -p locked/inner && touch locked/inner/f && chmod -R a-w locked"
    )
    assert result.exit_code == 0
    await session.destroy()
    assert not await root.exists()


async def test_ports_are_not_supported(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="ports")
    try:
        assert list(session.ports) == []
        with pytest.raises(HarnessCapabilityUnsupportedError, match="Port 8080"):
            await session.get_port_endpoint(8080, "http")
    finally:
        await session.destroy()


async def test_spawn_abort_kills_without_a_waiter(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="detached-abort")
    try:
        abort = anyio.Event()
        process = await session.spawn("echo started; sleep 30", abort=abort)
        assert await process.stdout.receive() == b"started\n"
        abort.set()
        # Nobody calls wait(): reading to EOF ends only because abort killed the process.
        with anyio.fail_after(10):
            async for _chunk in process.stdout:
                pass
    finally:
        await session.destroy()


async def test_stop_while_a_task_reads_the_output(local_provider: LocalSandboxProvider) -> None:
    session = await local_provider.create_session(session_id="reader")
    process = await session.spawn("echo first; sleep 30")
    received: list[bytes] = []

    async def read() -> None:
        async for chunk in process.stdout:
            received.append(chunk)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await anyio.sleep(0.3)
            await session.destroy()
    assert b"".join(received) == b"first\n"


async def test_home_is_inside_the_root_the_file_api_reaches(
    local_provider: LocalSandboxProvider,
) -> None:
    session = await local_provider.create_session(session_id="home")
    try:
        root = session.default_working_directory
        # Not made up front: a fresh root stays empty until something writes there.
        assert [entry async for entry in anyio.Path(root).iterdir()] == []
        shown = await session.run('printf %s "$HOME"')
        assert shown.stdout == f"{root}/.home"
        written = await session.run('mkdir -p "$HOME/.tool" && printf kept > "$HOME/.tool/state"')
        assert written.exit_code == 0, written.stderr
        assert await session.read_text_file(f"{root}/.home/.tool/state") == "kept"
        overridden = await session.run('printf %s "$HOME"', env={"HOME": "/elsewhere"})
        assert overridden.stdout == "/elsewhere"
    finally:
        await session.destroy()
