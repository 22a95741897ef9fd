"""The run's leak check (``LeakWatch``) finds what a sandbox leaves behind, and removes it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio

from harness_testkit.sandbox import LocalSandboxProvider, _cgroup
from harness_testkit.sandbox._tree import MARKER_VARIABLE
from tests.sandbox.support import RUN_VARIABLE, LeakWatch


def test_leaked_processes_cgroups_and_session_directories_are_reported_and_removed(
    tmp_path: Path,
) -> None:
    outer = os.environ.get(RUN_VARIABLE)
    watch = LeakWatch(tmp_path / "local")
    watch.start()
    session = anyio.run(LocalSandboxProvider().create_session)  # the watch's default dir
    assert Path(session.default_working_directory).is_relative_to(tmp_path / "local")
    leaked = subprocess.Popen(
        ["sleep", "60"],
        env={**os.environ, MARKER_VARIABLE: "planted/leak"},
        start_new_session=True,
    )
    foreign = subprocess.Popen(  # another run's command: not this run's leak
        ["sleep", "60"],
        env={**os.environ, MARKER_VARIABLE: "planted/other", RUN_VARIABLE: "another-run"},
        start_new_session=True,
    )
    base = _cgroup.probe().base
    cgroup = _cgroup.new_command_cgroup(base, "planted", "leak") if base is not None else None
    try:
        problems = watch.finish()
        assert leaked.wait(timeout=30) == -9
        assert foreign.poll() is None
    finally:
        foreign.kill()
        foreign.wait(timeout=30)
        leaked.kill()
        leaked.wait(timeout=30)
    assert os.environ.get(RUN_VARIABLE) == outer
    assert f"process {leaked.pid} (sleep 60)" in problems
    assert not any(str(foreign.pid) in problem for problem in problems)
    assert f"directory {session.default_working_directory}" in problems
    assert not Path(session.default_working_directory).exists()
    if cgroup is not None:
        assert f"cgroup {cgroup}" in problems
        assert not cgroup.exists()
    assert len(problems) == 3 if cgroup is not None else 2


def test_a_clean_run_reports_nothing(tmp_path: Path) -> None:
    watch = LeakWatch(tmp_path / "local")
    watch.start()

    async def use_and_destroy() -> None:
        session = await LocalSandboxProvider().create_session()
        await session.spawn("sleep 60")
        await session.destroy()

    anyio.run(use_and_destroy)
    assert watch.finish() == []
