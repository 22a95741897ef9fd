"""SIGINT and SIGTERM during ``check``: teardown runs, the summary is written, nothing leaks.
SIGKILL cannot be handled: the next run removes what the killed one left."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_testkit.conformance._runner import WORKDIR_PREFIX, sweep_abandoned_workdirs
from harness_testkit.sandbox import DockerSandboxProvider


def _spawn(tmp: Path, out: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "harness_testkit", "check", *args, "--json", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp.parent,  # hypothesis keeps its directory in the working directory
    )


def _wait_for_progress(process: subprocess.Popen[bytes], tmp: Path, limit: float) -> None:
    """Until a check created its work directory (or the limit passes)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.poll() is None:
        if any(tmp.glob("harness-testkit-check-*")):
            return
        time.sleep(0.05)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_tears_down_and_writes_the_summary(
    tmp_path: Path, signum: int, code: int
) -> None:
    out = tmp_path / "report.json"
    work = tmp_path / "tmp"
    work.mkdir()
    process = _spawn(work, out, "--self", "--profile", "smoke", "--bundle-dir", str(tmp_path / "b"))
    try:
        _wait_for_progress(process, work, 60)
        time.sleep(random.uniform(0.0, 1.5))  # a random point inside the run
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = stdout.decode() + stderr.decode()
    assert "Traceback" not in text, text
    if process.returncode in (0, 1):
        pytest.skip("the run finished before the signal arrived")
    assert process.returncode == code, text
    assert "INTERRUPTED" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["verdict"]["interrupted"] is True
    assert list(work.iterdir()) == [], "a temporary directory was left behind"


@pytest.mark.docker
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_docker_run_leaves_no_container(
    tmp_path: Path, signum: int, code: int, docker_provider: DockerSandboxProvider
) -> None:
    # docker_provider skips without an engine (and fails under CI=true). Other runs may
    # share the engine: only containers named by a check run (prefix + run id) count.
    def ours() -> set[str]:
        names = docker_provider.list_kit_resources().containers
        return {name for name in names if re.match(r"harness-testkit-[0-9a-f]{10}-", name)}

    before = ours()
    out = tmp_path / "report.json"
    work = tmp_path / "tmp"
    work.mkdir()
    process = _spawn(
        work,
        out,
        "--self",
        "--profile",
        "smoke",
        "--sandbox",
        "docker",
        "--check",
        "scripted.suspend-running-turn,lifecycle.detach-resume",
        "--bundle-dir",
        str(tmp_path / "b"),
    )
    try:
        _wait_for_progress(process, work, 120)
        time.sleep(random.uniform(0.5, 4.0))
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode in (0, 1, code), stdout.decode() + stderr.decode()
    after = ours()
    assert after <= before, f"containers left behind: {sorted(after - before)}"
    assert list(work.iterdir()) == []


def _dead_pid() -> int:
    """A pid no process has (one that has just exited and been reaped)."""
    done = subprocess.run(["/bin/sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_only_work_directories_of_exited_owners_are_swept(tmp_path: Path) -> None:
    def workdir(name: str) -> Path:
        path = tmp_path / f"{WORKDIR_PREFIX}{name}"
        path.mkdir()
        (path / "sandboxes").mkdir()
        return path

    abandoned = workdir(f"{_dead_pid()}-abc")
    kept = [
        workdir(f"{os.getpid()}-abc"),
        workdir("1-abc"),  # alive (whatever it is, the pid is taken)
        workdir("ab12_xyz"),  # an older kit's name: no owner in it
        workdir(f"{_dead_pid()}abc"),  # no dash after the pid: not a name the kit makes
        workdir("x1-abc"),
    ]
    (tmp_path / f"{WORKDIR_PREFIX}{_dead_pid()}-file").write_text("x", encoding="ascii")
    other = tmp_path / f"other-{_dead_pid()}-abc"
    other.mkdir()

    assert sweep_abandoned_workdirs(tmp_path) == [abandoned]
    assert not abandoned.exists()
    assert all(path.is_dir() for path in kept)
    assert other.is_dir(), "only the kit's work directories are looked at"
    assert sweep_abandoned_workdirs(tmp_path / "missing") == []


#: The next run: its first check's work directory sweeps; its cgroup probe sweeps too.
_NEXT_RUN = """
from harness_testkit.conformance._runner import _workdir
from harness_testkit.sandbox import _cgroup
_cgroup.probe()
with _workdir() as directory:
    print(directory)
"""


def test_the_work_directory_of_a_killed_run_is_removed_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    work = tmp_path / "tmp"
    work.mkdir()
    process = _spawn(work, out, "--self", "--profile", "smoke")
    try:
        _wait_for_progress(process, work, 60)
    finally:
        process.kill()  # SIGKILL: no teardown
        process.communicate(timeout=60)
    left = list(work.glob(f"{WORKDIR_PREFIX}*"))
    if not left:
        pytest.skip("the run ended before it could be killed mid-check")
    assert all(path.name.startswith(f"{WORKDIR_PREFIX}{process.pid}-") for path in left)
    env = {**os.environ, "TMPDIR": str(work)}
    subprocess.run([sys.executable, "-c", _NEXT_RUN], env=env, check=True, timeout=120)
    assert list(work.iterdir()) == [], "the killed run's work directory was left behind"
