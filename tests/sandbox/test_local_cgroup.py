"""The local provider's process trees in cgroups, and its fallback to the marker sweep.

Where this process may create and enter child cgroups (cgroup v2, root or a delegated
subtree), ``process_tracking="cgroup"`` must work; elsewhere the cgroup tests skip with
the probe's reason, except under ``CI=true``: CI runs as root, so a missing cgroup there is
a failure unless ``HARNESS_TESTKIT_ALLOW_NO_CGROUP=1`` declares the CI host has none (the
skip then names the variable, so it is never silent).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from harness_testkit.sandbox import LocalSandboxProvider, LocalSandboxSession, _cgroup
from harness_testkit.spec import SandboxTimeoutError, SandboxUnavailableError

pytestmark = pytest.mark.anyio

#: A grandchild that leaves the process group *and* clears its environment (so the marker
#: sweep cannot find it) and holds the output pipes; it writes its pid to {pid}.
_ESCAPEE = "setsid env -i /bin/sh -c 'sleep 60 & echo $! > {pid}; wait' & sleep 60"
_HANG_GUARD = 30.0


def _cgroups_or_skip() -> None:
    support = _cgroup.probe()
    if support.base is not None:
        return
    if os.environ.get("CI", "").lower() == "true":
        if os.environ.get("HARNESS_TESTKIT_ALLOW_NO_CGROUP") != "1":
            pytest.fail(
                f"CI=true expects a writable cgroup v2 (CI runs as root): {support.reason}. "
                "Set HARNESS_TESTKIT_ALLOW_NO_CGROUP=1 if this CI host has none."
            )
        pytest.skip(f"no cgroup here (HARNESS_TESTKIT_ALLOW_NO_CGROUP=1): {support.reason}")
    pytest.skip(f"no usable cgroup v2 here: {support.reason}")


@pytest.fixture
def cgroup_provider(tmp_path: Path) -> LocalSandboxProvider:
    """A local provider that must use cgroups (skips or fails as the module says)."""
    _cgroups_or_skip()
    return LocalSandboxProvider(tmp_path / "sandboxes", process_tracking="cgroup")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            return not any(line.startswith("State:") and "Z" in line for line in status)
    except FileNotFoundError:
        return False


async def _gone(pid: int) -> bool:
    for _poll in range(200):
        if not _alive(pid):
            return True
        await anyio.sleep(0.05)
    return False


async def _pid_from(session: LocalSandboxSession, name: str) -> int:
    text = ""
    with anyio.fail_after(_HANG_GUARD):
        for _poll in range(int(_HANG_GUARD * 20)):
            text = (await session.read_text_file(name) or "").strip()
            if text:
                break
            await anyio.sleep(0.05)
    return int(text)


def _leftover_cgroups(session: LocalSandboxSession) -> list[Path]:
    base = _cgroup.probe().base
    assert base is not None
    token = session._resource.token
    return _cgroup.owned_cgroups(base, session_token=token)


@pytest.mark.requirement("SANDBOX-038")
async def test_an_env_cleared_setsid_grandchild_dies_at_the_timeout(
    cgroup_provider: LocalSandboxProvider,
) -> None:
    session = await cgroup_provider.create_session()
    try:
        assert session.process_tracking == "cgroup"
        assert "cgroup.kill" in session.description
        with anyio.fail_after(_HANG_GUARD), pytest.raises(SandboxTimeoutError):
            await session.run(_ESCAPEE.format(pid="gc.pid"), timeout=1)
        pid = await _pid_from(session, "gc.pid")
        assert await _gone(pid), f"the env -i setsid grandchild {pid} survived the timeout"
        assert _leftover_cgroups(session) == []
        usable = await session.run("echo usable")
        assert usable.stdout == "usable\n"
    finally:
        await session.destroy()


@pytest.mark.requirement("SANDBOX-038")
async def test_an_env_cleared_setsid_grandchild_dies_with_destroy(
    cgroup_provider: LocalSandboxProvider,
) -> None:
    session = await cgroup_provider.create_session()
    try:
        process = await session.spawn(
            "setsid env -i /bin/sh -c 'sleep 60 & echo $! > gc.pid; wait' >/dev/null 2>&1 &"
            " sleep 60"
        )
        pid = await _pid_from(session, "gc.pid")
        assert process.pid is not None
        assert _leftover_cgroups(session) != []
    finally:
        await session.destroy()
    assert await _gone(pid), f"the env -i setsid grandchild {pid} survived destroy()"
    assert _leftover_cgroups(session) == []


async def test_a_resumed_session_kills_the_cgroups_of_the_original(
    cgroup_provider: LocalSandboxProvider, tmp_path: Path
) -> None:
    """Cgroups are named from the session (not the handle), so another instance finds them."""
    session = await cgroup_provider.create_session(session_id="kept")
    await session.spawn("setsid env -i /bin/sh -c 'sleep 60 & echo $! > gc.pid; wait' & wait")
    pid = await _pid_from(session, "gc.pid")
    other = LocalSandboxProvider(tmp_path / "sandboxes", process_tracking="cgroup")
    resumed = await other.resume_session("kept")
    await resumed.destroy()
    assert await _gone(pid)
    assert _leftover_cgroups(session) == []
    await session.destroy()


#: A kit process that puts a sleeping command in a command cgroup of its own, prints the
#: cgroup and the command's pid, and waits to be killed.
_KILLED_KIT = """
import subprocess, sys, time
from harness_testkit.sandbox import _cgroup
base = _cgroup.probe().base
cgroup = _cgroup.new_command_cgroup(base, "sweep", "orphan")
command = subprocess.Popen(_cgroup.enter_command(cgroup, ["sleep", "60"]))
print(cgroup, command.pid, flush=True)
time.sleep(60)
"""


def _killed_kit_leftovers() -> tuple[Path, int]:
    """Run :data:`_KILLED_KIT`, kill it outright; its command cgroup and command's pid."""
    with subprocess.Popen(
        [sys.executable, "-c", _KILLED_KIT], stdout=subprocess.PIPE, text=True
    ) as kit:
        try:
            assert kit.stdout is not None
            ready, _, _ = select.select([kit.stdout], [], [], _HANG_GUARD)
            assert ready, "the kit process did not start its command"
            path, pid = kit.stdout.readline().split()
        finally:
            kit.kill()  # SIGKILL: it cannot clean up
            kit.wait(_HANG_GUARD)
    return Path(path), int(pid)


async def test_the_cgroups_of_a_kit_process_killed_outright_are_swept() -> None:
    _cgroups_or_skip()
    base = _cgroup.probe().base
    assert base is not None
    orphan, command = _killed_kit_leftovers()
    assert orphan.is_dir(), "a kit process killed outright leaves its command cgroup"
    assert _alive(command), "and the command running in it"
    mine = _cgroup.new_command_cgroup(base, "sweep", "live")  # this process is alive
    try:
        swept = _cgroup.sweep_orphans(base)
        # (Another kit process probing at this moment, a CLI run by a parallel test, may
        # sweep the orphan first: what must hold is that it is gone.)
        assert not orphan.exists()
        assert await _gone(command), f"the orphaned command {command} survived the sweep"
        assert mine not in swept, "a live creator's cgroup is left alone"
        assert mine.is_dir()
    finally:
        _cgroup.kill_cgroup(mine, 5)


def test_only_the_kits_own_cgroup_names_can_be_orphans() -> None:
    dead = _dead_pid()
    assert _cgroup._creator_gone(f"harness-testkit.{dead}.session.process")
    assert _cgroup._creator_gone(f"harness-testkit.probe.{dead}.token")
    assert not _cgroup._creator_gone(f"harness-testkit.{os.getpid()}.session.process")
    assert not _cgroup._creator_gone("harness-testkit.1.session.process")  # init is alive
    for name in (f"other.{dead}.a.b", f"harness-testkit.{dead}.a", "harness-testkit.x.a.b"):
        assert not _cgroup._creator_gone(name), name


def _dead_pid() -> int:
    """A pid no process has (one that has just exited and been reaped)."""
    done = subprocess.run(["/bin/sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(done.stdout)


async def test_every_command_runs_in_a_cgroup_of_its_own(
    cgroup_provider: LocalSandboxProvider,
) -> None:
    session = await cgroup_provider.create_session()
    try:
        first = await session.run("tail -n 1 /proc/self/cgroup")
        second = await session.run("tail -n 1 /proc/self/cgroup")
        assert first.exit_code == 0
        assert f"/{_cgroup.CGROUP_PREFIX}.{os.getpid()}." in first.stdout
        assert first.stdout != second.stdout
        assert _leftover_cgroups(session) == []
    finally:
        await session.destroy()


async def test_without_cgroups_auto_falls_back_to_the_sweep_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cgroup() -> Path:
        raise OSError("no cgroup2 filesystem is mounted (planted by the test)")

    monkeypatch.setattr(_cgroup, "_own_cgroup", no_cgroup)
    monkeypatch.setattr(_cgroup, "_cached", None)
    session = await LocalSandboxProvider(tmp_path / "auto").create_session()
    try:
        assert session.process_tracking == "sweep"
        assert "planted by the test" in session.description
        # The fallback still takes a setsid grandchild (environment kept) down.
        with pytest.raises(SandboxTimeoutError):
            await session.run(
                "setsid sh -c 'sleep 60 & echo $! > gc.pid; wait' >/dev/null 2>&1 & sleep 60",
                timeout=1,
            )
        assert await _gone(await _pid_from(session, "gc.pid"))
    finally:
        await session.destroy()
    strict = LocalSandboxProvider(tmp_path / "strict", process_tracking="cgroup")
    with pytest.raises(SandboxUnavailableError, match="planted by the test"):
        await strict.create_session()
    assert not (tmp_path / "strict" / "sessions").exists() or not any(
        (tmp_path / "strict" / "sessions").iterdir()
    )


async def test_sweep_can_be_chosen_and_bad_choices_are_named(tmp_path: Path) -> None:
    session = await LocalSandboxProvider(tmp_path, process_tracking="sweep").create_session()
    try:
        assert session.process_tracking == "sweep"
        assert "process_tracking='sweep'" in session.description
    finally:
        await session.destroy()
    with pytest.raises(ValueError, match="use 'auto', 'cgroup' or 'sweep'"):
        LocalSandboxProvider(tmp_path, process_tracking="cgroups")  # type: ignore[arg-type]  # a misspelling on purpose
