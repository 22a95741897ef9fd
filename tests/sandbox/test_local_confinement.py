"""The local provider's confinement, on both resolution paths (openat2 and the walk).

The conformance suite attacks the provider from outside (hard links, a symlink-swap race,
FIFOs, setsid grandchildren); these tests pin the mechanics deterministically, including a
swap injected at the worst moment of the walk.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.sandbox import LocalSandboxProvider, LocalSandboxSession, _confine
from harness_testkit.spec import SandboxError, SandboxPathError

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["openat2", "walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with openat2 (when the kernel has it) and with the fallback walk."""
    if request.param == "openat2":
        if not _confine.openat2_available():
            pytest.skip("this kernel has no openat2; the walk is tested on its own")
    else:
        monkeypatch.setattr(_confine, "_openat2_state", False)
    return str(request.param)


async def _session(provider: LocalSandboxProvider) -> LocalSandboxSession:
    return await provider.create_session()


@pytest.mark.requirement("SANDBOX-036")
async def test_hard_links_are_not_read_and_writes_replace_them(
    local_provider: LocalSandboxProvider, resolution: str, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    session = await _session(local_provider)
    try:
        root = Path(session.default_working_directory)
        os.link(outside, root / "linked.txt")
        with pytest.raises(SandboxPathError, match="hard links"):
            await session.read_text_file("linked.txt")
        await session.write_text_file("linked.txt", "replaced")
        assert outside.read_text(encoding="utf-8") == "secret"
        assert (root / "linked.txt").read_text(encoding="utf-8") == "replaced"
        assert (root / "linked.txt").stat().st_ino != outside.stat().st_ino
    finally:
        await session.destroy()


@pytest.mark.requirement("SANDBOX-037")
async def test_special_files_are_refused_without_blocking(
    local_provider: LocalSandboxProvider, resolution: str
) -> None:
    session = await _session(local_provider)
    try:
        root = Path(session.default_working_directory)
        os.mkfifo(root / "pipe")
        with anyio.fail_after(10):
            with pytest.raises(SandboxError, match="named pipe"):
                await session.read_binary_file("pipe")
            with pytest.raises(SandboxError, match="named pipe"):
                await session.write_text_file("pipe", "x")
            with pytest.raises(SandboxError, match="directory"):
                await session.read_binary_file(".")
        try:
            os.mknod(root / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except PermissionError:
            return  # creating device nodes needs CAP_MKNOD
        with pytest.raises(SandboxError, match="character device"):
            await session.read_binary_file("null")
    finally:
        await session.destroy()


@pytest.mark.requirement("SANDBOX-032")
async def test_symlinks_resolve_beneath_the_root(
    local_provider: LocalSandboxProvider, resolution: str, tmp_path: Path
) -> None:
    session = await _session(local_provider)
    try:
        root = Path(session.default_working_directory)
        (root / "real").mkdir()
        (root / "real" / "file.txt").write_text("inside", encoding="utf-8")
        (root / "relative-link").symlink_to("real")
        (root / "absolute-link").symlink_to(root / "real")
        (root / "escape").symlink_to(tmp_path)
        assert await session.read_text_file("relative-link/file.txt") == "inside"
        assert await session.read_text_file("absolute-link/file.txt") == "inside"
        await session.write_text_file("absolute-link/new.txt", "via an absolute link")
        assert (root / "real" / "new.txt").read_text(encoding="utf-8") == "via an absolute link"
        for path in ("escape/x.txt", "real/../../x.txt", str(tmp_path / "x.txt")):
            with pytest.raises(SandboxPathError, match="outside the session root"):
                await session.write_text_file(path, "escaped")
        assert not (tmp_path / "x.txt").exists()
        with pytest.raises(SandboxPathError):
            await session.run("pwd", working_directory="escape")
    finally:
        await session.destroy()


@pytest.mark.requirement("SANDBOX-036")
async def test_a_swap_during_the_walk_never_leaves_the_root(
    local_provider: LocalSandboxProvider, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Swap ``d`` for a symlink to outside right after the walk opened it: the write
    lands in the directory the walk holds (now ``d.real``), never outside."""
    monkeypatch.setattr(_confine, "_openat2_state", False)
    outside = tmp_path / "outside"
    outside.mkdir()
    session = await _session(local_provider)
    try:
        root = Path(session.default_working_directory)
        (root / "d").mkdir()
        real_open = os.open
        swapped: list[bool] = []

        def open_then_swap(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_open(path, flags, *args, **kwargs)
            if path == "d" and not swapped:
                swapped.append(True)
                os.rename(root / "d", root / "d.real")
                os.symlink(outside, root / "d")
            return fd

        monkeypatch.setattr(os, "open", open_then_swap)
        await session.write_text_file("d/written.txt", "held by descriptor")
        monkeypatch.setattr(os, "open", real_open)
        assert swapped
        assert list(outside.iterdir()) == []
        assert (root / "d.real" / "written.txt").read_text(encoding="utf-8") == (
            "held by descriptor"
        )
        with pytest.raises(SandboxPathError):
            await session.read_text_file("d/written.txt")
    finally:
        await session.destroy()


async def test_writes_keep_the_mode_and_leave_no_temporary_files(
    local_provider: LocalSandboxProvider, resolution: str
) -> None:
    session = await _session(local_provider)
    try:
        root = Path(session.default_working_directory)
        await session.write_text_file("script.sh", "#!/bin/sh\necho one\n")
        (root / "script.sh").chmod(0o755)
        await session.write_text_file("script.sh", "#!/bin/sh\necho two\n")
        assert stat.S_IMODE((root / "script.sh").stat().st_mode) == 0o755
        assert (await session.run("./script.sh")).stdout == "two\n"
        assert sorted(os.listdir(root)) == ["script.sh"]
        with pytest.raises(SandboxError, match="parent of it is a file"):
            await session.write_text_file("script.sh/child.txt", "x")
        await session.make_directory("a/b/c")
        assert (root / "a" / "b" / "c").is_dir()
    finally:
        await session.destroy()


@pytest.mark.requirement("SANDBOX-038")
async def test_no_setsid_descendant_outlives_its_run(
    local_provider: LocalSandboxProvider,
) -> None:
    """A daemon that left the process group does not outlive the run that started it."""
    session = await _session(local_provider)
    root = Path(session.default_working_directory)
    try:
        await session.run(
            "setsid sh -c 'sleep 60 & echo $! > daemon.pid' >/dev/null 2>&1 & sleep 0.5"
        )
        pid = int((root / "daemon.pid").read_text(encoding="utf-8"))
    finally:
        await session.destroy()
    for _poll in range(200):
        if not _alive(pid):
            break
        await anyio.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        return "zombie" not in status.read()


def test_the_session_marker_is_in_every_command_environment() -> None:
    from harness_testkit.sandbox._tree import MARKER_VARIABLE, marker

    assert MARKER_VARIABLE == "HARNESS_TESTKIT_SANDBOX_TREE"
    assert marker("session", "process") == "session/process"
