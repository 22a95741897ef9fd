"""The Docker provider's own behaviour (the shared contract is in the conformance suite).

Tests marked ``docker`` need an engine: they skip without one, and fail under ``CI=true``.
"""

from __future__ import annotations

import socket
import sys
import textwrap
import uuid
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from harness_testkit.sandbox import _docker_engine
from harness_testkit.sandbox._cli import sandbox
from harness_testkit.sandbox._docker import (
    DEFAULT_SANDBOX_IMAGE,
    DockerSandboxProvider,
    find_static_busybox,
)
from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    NetworkSandboxSession,
    SandboxError,
    SandboxProvider,
    SandboxSession,
    SandboxUnavailableError,
)

# -- without an engine -----------------------------------------------------------------


def test_construction_does_no_io() -> None:
    provider = DockerSandboxProvider(memory="256m", cpus=0.5, pids_limit=64)
    assert isinstance(provider, SandboxProvider)
    assert provider.provider_id == "docker"
    assert provider.image == DEFAULT_SANDBOX_IMAGE
    provider.close()


def _engine_refusal(status: int, explanation: str) -> Exception:
    import docker.errors
    import requests

    response = requests.Response()
    response.status_code = status
    error: Exception = docker.errors.APIError("refused", response=response, explanation=explanation)
    return error


def test_a_request_refused_as_paused_is_tried_again_until_the_engine_catches_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After an unpause the engine may still apply the earlier pause's containerd event and
    # report the running container paused for a moment: an exec right after
    # resume_session was refused (seen once in a full run).
    pytest.importorskip("docker")
    provider = DockerSandboxProvider()
    paused = "Container c is paused, unpause the container before exec"
    refusals = [_engine_refusal(409, paused), _engine_refusal(409, paused)]

    def exec_after_resume() -> str:
        if refusals:
            raise refusals.pop(0)
        return "fine"

    assert provider._guarded(exec_after_resume) == "fine"
    assert not refusals

    # A container that stays paused is reported once the settling time is over; other
    # refusals are reported at once.
    monkeypatch.setattr(_docker_engine, "PAUSED_SETTLE_SECONDS", 0.2)
    calls: list[int] = []

    def always(status: int, explanation: str) -> None:
        calls.append(status)
        raise _engine_refusal(status, explanation)

    with pytest.raises(SandboxError, match="is paused"):
        provider._guarded(always, 409, paused)
    assert len(calls) > 1
    calls.clear()
    with pytest.raises(SandboxError, match="status 409"):
        provider._guarded(always, 409, "Conflict. The container name is already in use")
    assert calls == [409]


def test_working_directory_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="absolute container path"):
        DockerSandboxProvider(working_directory="workspace")


@pytest.mark.anyio
async def test_missing_engine_says_how_to_start_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/harness-testkit-docker.sock")
    provider = DockerSandboxProvider(engine_timeout=1)
    with pytest.raises(SandboxUnavailableError, match="Start a Docker engine"):
        await provider.create_session(session_id="never")
    await provider.aclose()


@pytest.mark.anyio
async def test_refused_connection_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dead = tmp_path / "dead.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dead))  # exists, but nobody accepts connections
    listener.close()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{dead}")
    provider = DockerSandboxProvider(engine_timeout=1)
    with pytest.raises(SandboxUnavailableError, match="Start a Docker engine"):
        await provider.check_engine()
    await provider.aclose()


def test_busybox_lookup_errors(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match="apt-get install busybox-static"):
        find_static_busybox(tmp_path / "no-busybox")
    dynamic = Path(sys.executable).resolve()
    with pytest.raises(SandboxUnavailableError, match="dynamically linked"):
        find_static_busybox(dynamic)


# -- with an engine --------------------------------------------------------------------


@pytest.mark.docker
def test_static_busybox_is_found(docker_provider: DockerSandboxProvider) -> None:
    # Only where the kit's image could be built: with an engine, skipped without one.
    assert find_static_busybox().is_file()


@pytest.mark.docker
@pytest.mark.anyio
async def test_container_is_labelled_limited_and_offline(
    docker_provider: DockerSandboxProvider,
) -> None:
    session_id = f"labels/ü check {uuid.uuid4().hex[:8]}"
    session = await docker_provider.create_session(session_id=session_id)
    try:
        assert isinstance(session, NetworkSandboxSession)
        assert session.container_name.startswith("harness-testkit-labels-")
        details = docker_provider._api.inspect_container(session.container_name)
        labels = details["Config"]["Labels"]
        assert labels["harness-testkit.kind"] == "session"
        assert labels["harness-testkit.session-id"] == session_id
        host = details["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["Memory"] == 512 * 1024 * 1024
        assert host["NanoCpus"] == 1_000_000_000
        assert host["PidsLimit"] == 256
        assert details["Config"]["User"] == "1000:1000"
        identity = await session.run("id -u; pwd; ls -ld /workspace | cut -c1-10")
        assert identity.stdout.split() == ["1000", "/workspace", "drwxr-xr-x"]
        await session.write_text_file("nested/owned.txt", "mine")
        owners = await session.run("stat -c '%u %g' nested nested/owned.txt")
        assert owners.stdout.split("\n")[:2] == ["1000 1000", "1000 1000"]
        assert session.container_name in session.description
        assert "No network" in session.description
        with pytest.raises(HarnessCapabilityUnsupportedError, match="Port 8080"):
            await session.get_port_endpoint(8080)
    finally:
        await session.destroy()


@pytest.mark.docker
@pytest.mark.anyio
async def test_absolute_paths_and_symlinks(docker_provider: DockerSandboxProvider) -> None:
    session = await docker_provider.create_session(session_id=f"paths-{uuid.uuid4().hex[:8]}")
    try:
        passwd = await session.read_text_file("/etc/passwd")
        assert passwd is not None
        assert "sandbox:x:1000:1000" in passwd
        await session.write_text_file("/tmp/scratch/file.txt", "in tmp")
        assert await session.read_text_file("/tmp/scratch/file.txt") == "in tmp"
        await session.run("ln -s /tmp/scratch/file.txt link && ln -s ../workspace/link rel")
        assert await session.read_text_file("link") == "in tmp"
        with pytest.raises(SandboxError, match="it is a directory"):
            await session.read_binary_file("/tmp/scratch")
        await session.write_text_file("plain", "x")
        with pytest.raises(SandboxError, match="is a file, not a directory"):
            await session.write_text_file("plain/child.txt", "x")
    finally:
        await session.destroy()


@pytest.mark.docker
@pytest.mark.anyio
async def test_parent_directories_whose_names_end_in_newlines_are_created(
    docker_provider: DockerSandboxProvider,
) -> None:
    # A shell command substitution drops trailing newlines: the parent of "a\n/f" came
    # out as the workspace itself, was never created, and the write failed.
    session = await docker_provider.create_session(session_id=f"nl-{uuid.uuid4().hex[:8]}")
    try:
        for path in ("a\n/f", "b\n\n/c\n/g", "/tmp/d\n/h"):
            await session.write_text_file(path, path)
            assert await session.read_text_file(path) == path
        # the directory is "a" followed by a newline, not the workspace or "a"
        probe = await session.run("d=$(printf 'a\\nx'); [ -d \"${d%x}\" ] && [ ! -e a ]")
        assert probe.exit_code == 0, probe
    finally:
        await session.destroy()


@pytest.mark.docker
@pytest.mark.anyio
@pytest.mark.requirement("SANDBOX-039")
@pytest.mark.requirement("SANDBOX-040")
async def test_read_only_root_with_a_size_limited_workspace(
    docker_provider: DockerSandboxProvider,
) -> None:
    provider = DockerSandboxProvider(workspace_size="4m", client=docker_provider._connect())
    session = await provider.create_session(session_id=f"quota-{uuid.uuid4().hex[:8]}")
    try:
        host = docker_provider._api.inspect_container(session.container_name)["HostConfig"]
        assert host["ReadonlyRootfs"] is True
        assert "size=4m" in host["Tmpfs"]["/workspace"]
        assert set(host["Tmpfs"]) == {"/workspace", "/tmp", "/home/sandbox"}
        with pytest.raises(SandboxError, match="read-only root filesystem"):
            await session.write_text_file("/etc/passwd", "root::0:0::/:/bin/sh\n")
        with pytest.raises(SandboxError, match="workspace quota is exhausted"):
            await session.write_binary_file("big.bin", b"\0" * (5 << 20))
        await session.run("rm -f big.bin")
        # The workspace is its own filesystem: no hard link to a system file can exist in it.
        linked = await session.run("ln /etc/passwd hard-link")
        assert linked.exit_code != 0
        await session.write_text_file("fits.txt", "fine")
        assert await session.read_text_file("fits.txt") == "fine"
        # Stopping pauses the container: the tmpfs workspace survives a resume.
        await session.stop()
        resumed = await provider.resume_session(session.id)
        assert await resumed.read_text_file("fits.txt") == "fine"
    finally:
        await session.destroy()
        await provider.aclose()


@pytest.mark.docker
@pytest.mark.anyio
async def test_engine_errors_are_named(docker_provider: DockerSandboxProvider) -> None:
    session = await docker_provider.create_session(session_id=f"errors-{uuid.uuid4().hex[:8]}")
    try:
        too_long = "x" * 5000
        assert await session.read_binary_file(too_long) is None  # no such file can exist
        with pytest.raises(SandboxError, match="too long") as raised:
            await session.write_text_file(too_long, "x")
        assert "Server Error" not in str(raised.value)
        assert "http+docker" not in str(raised.value)
        docker_provider._api.remove_container(session.container_name, force=True)
        with pytest.raises(SandboxError) as gone:
            await session.write_text_file("after.txt", "x")
        assert "http+docker" not in str(gone.value)
        assert session.container_name in str(gone.value) or "could not" in str(gone.value)
    finally:
        await session.destroy()


@pytest.mark.docker
@pytest.mark.anyio
async def test_resume_starts_a_stopped_container_from_another_process(
    docker_provider: DockerSandboxProvider,
) -> None:
    session_id = f"resume-{uuid.uuid4().hex[:8]}"
    session = await docker_provider.create_session(session_id=session_id)
    try:
        await session.write_text_file("kept.txt", "kept")
        await session.stop()
        with pytest.raises(SandboxError, match="is stopped; resume it"):
            await session.run("true")
        with anyio.fail_after(120):
            output = await anyio.run_process(
                [
                    sys.executable,
                    "-c",
                    textwrap.dedent(
                        f"""
                        import anyio
                        from harness_testkit.sandbox._docker import (
                            DockerSandboxProvider,
                        )

                        async def main():
                            provider = DockerSandboxProvider()
                            session = await provider.resume_session({session_id!r})
                            print((await session.run("cat kept.txt")).stdout, end="")
                            await provider.aclose()

                        anyio.run(main)
                        """
                    ),
                ],
                check=False,
            )
        assert output.returncode == 0, output.stderr.decode()
        assert output.stdout == b"kept"
    finally:
        await session.destroy()
    with pytest.raises(SandboxError, match="no container named"):
        await docker_provider.resume_session(session_id)


@pytest.mark.docker
@pytest.mark.anyio
async def test_duplicate_session_and_foreign_containers(
    docker_provider: DockerSandboxProvider,
) -> None:
    session_id = f"dup-{uuid.uuid4().hex[:8]}"
    session = await docker_provider.create_session(session_id=session_id)
    try:
        with pytest.raises(SandboxError, match="already exists"):
            await docker_provider.create_session(session_id=session_id)
    finally:
        await session.destroy()


@pytest.mark.docker
@pytest.mark.anyio
async def test_snapshot_image_is_labelled_and_forgettable(
    docker_provider: DockerSandboxProvider,
) -> None:
    identity = f"test-{uuid.uuid4().hex[:8]}"

    async def setup(restricted: SandboxSession) -> None:
        await restricted.write_text_file("baked.txt", "baked")

    session = await docker_provider.create_session(
        session_id=f"snap-{identity}", identity=identity, on_first_create=setup
    )
    try:
        assert await session.read_text_file("baked.txt") == "baked"
        tag = f"harness-testkit-snapshot:{identity}"
        image = docker_provider._api.inspect_image(tag)
        assert image["Config"]["Labels"]["harness-testkit.kind"] == "snapshot"
        assert image["Config"]["Labels"]["harness-testkit.identity"] == identity
    finally:
        await session.destroy()
        await docker_provider.forget_identity(identity)
    assert tag not in docker_provider.list_kit_resources(owner=docker_provider.owner).images


@pytest.mark.docker
@pytest.mark.anyio
async def test_user_image_must_exist(docker_provider: DockerSandboxProvider) -> None:
    provider = DockerSandboxProvider(image="harness-testkit-absent:never")
    try:
        with pytest.raises(SandboxUnavailableError, match="does not pull images"):
            await provider.create_session(session_id="absent")
    finally:
        await provider.aclose()


@pytest.mark.docker
@pytest.mark.anyio
async def test_output_streams_survive_silence(docker_provider: DockerSandboxProvider) -> None:
    session = await docker_provider.create_session(session_id=f"quiet-{uuid.uuid4().hex[:8]}")
    try:
        process = await session.spawn("sleep 1.5; echo after silence; echo err >&2")
        with anyio.fail_after(30):
            assert await process.stdout.receive() == b"after silence\n"
            assert await process.stderr.receive() == b"err\n"
            assert await process.wait() == 0
    finally:
        await session.destroy()


@pytest.mark.docker
def test_cli_prune_and_build_image(docker_provider: DockerSandboxProvider) -> None:
    runner = CliRunner()
    listed = runner.invoke(sandbox, ["prune", "--dry-run"])
    assert listed.exit_code == 0, listed.output
    tag = f"harness-testkit-sandbox:cli-{uuid.uuid4().hex[:8]}"
    try:
        built = runner.invoke(sandbox, ["build-image", "--tag", tag])
        assert built.exit_code == 0, built.output
        assert f"Built {tag}" in built.output
        docker_provider._api.inspect_image(tag)
    finally:
        docker_provider._remove_image(tag)
    provider = DockerSandboxProvider()
    name = f"harness-testkit-leak-{uuid.uuid4().hex[:8]}"
    try:
        provider._create_container(name, DEFAULT_SANDBOX_IMAGE, {"harness-testkit.kind": "session"})
        dry = runner.invoke(sandbox, ["prune", "--dry-run"])
        assert f"Would remove container {name}" in dry.output
        assert name in provider.list_kit_resources().containers
        # Only this provider's resources: other tests (xdist workers) may be running.
        pruned = runner.invoke(sandbox, ["prune", "--owner", provider.owner])
        assert pruned.exit_code == 0, pruned.output
        assert pruned.output == f"Removed container {name}\n"
        assert name not in provider.list_kit_resources().containers
        again = runner.invoke(sandbox, ["prune", "--owner", provider.owner])
        assert "Nothing to remove" in again.output
    finally:
        provider._remove_container(name)
        provider.close()


@pytest.mark.docker
@pytest.mark.anyio
async def test_destroy_while_a_task_reads_the_output(
    docker_provider: DockerSandboxProvider,
) -> None:
    session = await docker_provider.create_session(session_id=f"reader-{uuid.uuid4().hex[:8]}")
    process = await session.spawn("echo first; sleep 30")
    received: list[bytes] = []

    async def read() -> None:
        async for chunk in process.stdout:
            received.append(chunk)

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(read)
                await anyio.sleep(0.5)
                await session.destroy()
    finally:
        await session.destroy()
    assert b"".join(received) == b"first\n"
