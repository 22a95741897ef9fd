"""The CI scripts that manage the Docker engine: ``.ci/docker-up`` records the engine it
starts, ``.ci/docker-down`` stops it, so ``.ci/run`` leaves no engine behind.

A fake ``dockerd`` (a Python script on ``PATH`` answering ``/_ping`` on the socket it is
given) stands in for the real engine: the scripts' own logic is what is tested here; the
real engine is started and stopped by every CI run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
DOCKER_UP = REPOSITORY / ".ci" / "docker-up"
DOCKER_DOWN = REPOSITORY / ".ci" / "docker-down"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the CI scripts run on Linux (they read /proc)"
)

_FAKE_DOCKERD = """\
#!{python}
# A stand-in for dockerd: answers /_ping with 200 on the socket of --host unix://PATH.
import os, socket, sys
path = sys.argv[sys.argv.index("--host") + 1].removeprefix("unix://")
with open(os.environ["FAKE_DOCKERD_PIDS"], "a") as pids:
    pids.write(f"{{os.getpid()}}\\n")
if os.environ.get("FAKE_DOCKERD_SILENT"):  # an engine that never answers
    import time
    time.sleep(300)
if os.environ.get("FAKE_DOCKERD_IGNORE_TERM"):
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen()
while True:
    connection, _ = server.accept()
    connection.recv(4096)
    connection.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nOK")
    connection.close()
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has stopped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _reap(pid: int) -> None:
    """Collect ``pid`` if it is this process's child (a no-op otherwise)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


@pytest.fixture
def fake_engine(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment that makes docker-up start the fake dockerd on a socket of its own
    (its log and pid files in ``tmp_path``); whatever it started is killed afterwards."""
    if not any(Path(path).exists() for path in ("/bin/busybox", "/usr/bin/busybox")):
        # (docker-up would install docker.io and busybox-static with apt-get first)
        pytest.skip("busybox is not installed: docker-up would run apt-get")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dockerd"
    fake.write_text(_FAKE_DOCKERD.format(python=sys.executable))
    fake.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        # (a unix socket's path has room for about 100 bytes: tmp_path can be longer)
        "HARNESS_TESTKIT_DOCKER_SOCKET": f"/tmp/htk-{os.getpid()}-{id(tmp_path)}.sock",
        "HARNESS_TESTKIT_DOCKERD_LOG": str(tmp_path / "dockerd.log"),
        "HARNESS_TESTKIT_DOCKERD_WAIT": "20",
        "HARNESS_TESTKIT_DOCKERD_PIDFILE": str(tmp_path / "dockerd.pid"),
        # (every fake engine notes its pid here, so none outlives its test)
        "FAKE_DOCKERD_PIDS": str(tmp_path / "fake-dockerd.pids"),
    }
    yield env
    pids = Path(env["FAKE_DOCKERD_PIDS"])
    for pid in map(int, pids.read_text().split() if pids.exists() else []):
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
    Path(env["HARNESS_TESTKIT_DOCKER_SOCKET"]).unlink(missing_ok=True)


def _run(
    script: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _wait_stopped(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        _reap(pid)
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


def test_docker_up_records_the_engine_it_starts_and_docker_down_stops_it(
    fake_engine: dict[str, str],
) -> None:
    started = _run(DOCKER_UP, env=fake_engine)
    assert started.returncode == 0, started.stderr
    assert "engine ready" in started.stdout
    pid_file = Path(fake_engine["HARNESS_TESTKIT_DOCKERD_PIDFILE"])
    pid = int(pid_file.read_text())
    assert _running(pid)

    stopped = _run(DOCKER_DOWN, str(pid_file), env=fake_engine)
    assert stopped.returncode == 0, stopped.stderr
    assert "engine stopped" in stopped.stdout
    assert _wait_stopped(pid)
    assert not pid_file.exists()


def test_docker_up_records_nothing_when_an_engine_already_answers(
    fake_engine: dict[str, str], tmp_path: Path
) -> None:
    first = _run(DOCKER_UP, env=fake_engine)
    assert first.returncode == 0, first.stderr
    ours = Path(fake_engine["HARNESS_TESTKIT_DOCKERD_PIDFILE"]).read_text()

    other_pid_file = tmp_path / "second.pid"
    second = _run(
        DOCKER_UP, env={**fake_engine, "HARNESS_TESTKIT_DOCKERD_PIDFILE": str(other_pid_file)}
    )
    assert second.returncode == 0, second.stderr
    assert "already answers" in second.stdout
    # Not started by the second call: not the second caller's to stop.
    assert not other_pid_file.exists()
    assert _run(DOCKER_DOWN, str(other_pid_file)).returncode == 0
    assert _running(int(ours))


def test_an_engine_that_never_answers_is_recorded_so_docker_down_stops_it(
    fake_engine: dict[str, str],
) -> None:
    env = {**fake_engine, "FAKE_DOCKERD_SILENT": "1", "HARNESS_TESTKIT_DOCKERD_WAIT": "1"}
    started = _run(DOCKER_UP, env=env)
    assert started.returncode == 1
    assert "did not answer" in started.stderr
    pid_file = Path(env["HARNESS_TESTKIT_DOCKERD_PIDFILE"])
    pid = int(pid_file.read_text())
    assert _running(pid)

    assert _run(DOCKER_DOWN, str(pid_file), env=env).returncode == 0
    assert _wait_stopped(pid)


def test_docker_down_kills_an_engine_that_ignores_sigterm(
    fake_engine: dict[str, str],
) -> None:
    env = {**fake_engine, "FAKE_DOCKERD_IGNORE_TERM": "1", "HARNESS_TESTKIT_DOCKERD_STOP_WAIT": "1"}
    assert _run(DOCKER_UP, env=env).returncode == 0
    pid_file = Path(env["HARNESS_TESTKIT_DOCKERD_PIDFILE"])
    pid = int(pid_file.read_text())

    stopped = _run(DOCKER_DOWN, str(pid_file), env=env)
    assert stopped.returncode == 0
    assert "ignored SIGTERM" in stopped.stderr
    assert _wait_stopped(pid)


def test_docker_down_treats_a_zombie_as_stopped(tmp_path: Path) -> None:
    # A child of this process that exited and is not reaped yet still answers kill -0.
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while _running(child.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    pid_file = tmp_path / "engine.pid"
    pid_file.write_text(f"{child.pid}\n")
    try:
        done = _run(DOCKER_DOWN, str(pid_file))
    finally:
        child.wait(timeout=10)
    assert done.returncode == 0
    assert "not running" in done.stdout


@pytest.mark.parametrize("content", ["", None])
def test_docker_down_without_a_pid_does_nothing(tmp_path: Path, content: str | None) -> None:
    pid_file = tmp_path / "engine.pid"
    if content is not None:
        pid_file.write_text(content)
    done = _run(DOCKER_DOWN, str(pid_file))
    assert done.returncode == 0
    assert done.stdout == ""
    assert not pid_file.exists()


def test_docker_down_rejects_a_file_that_holds_no_pid(tmp_path: Path) -> None:
    pid_file = tmp_path / "engine.pid"
    pid_file.write_text("dockerd\n")
    done = _run(DOCKER_DOWN, str(pid_file))
    assert done.returncode == 1
    assert "not a pid" in done.stderr


def test_docker_down_names_its_argument_when_called_without_one() -> None:
    done = _run(DOCKER_DOWN)
    assert done.returncode != 0
    assert "usage: .ci/docker-down PIDFILE" in done.stderr


def _engine_block() -> str:
    """The Docker engine section of ``.ci/run`` (up to the next section's header)."""
    script = (REPOSITORY / ".ci" / "run").read_text()
    start = script.index("# --- Docker engine")
    end = script.index("# ---", start + 1)
    return script[start:end]


@pytest.mark.parametrize("keep", [False, True])
def test_ci_run_stops_the_engine_it_started_however_it_ends(
    fake_engine: dict[str, str], keep: bool
) -> None:
    # .ci/run's own engine section, run as it is, then a failing exit: the engine it started
    # is stopped and the exit status kept (or, with HARNESS_TESTKIT_KEEP_DOCKERD=1, kept up).
    env = {
        key: value for key, value in fake_engine.items() if key != "HARNESS_TESTKIT_DOCKERD_PIDFILE"
    }
    if keep:
        env["HARNESS_TESTKIT_KEEP_DOCKERD"] = "1"
    seen = Path(fake_engine["HARNESS_TESTKIT_DOCKERD_PIDFILE"])
    script = f"""set -euo pipefail
cd {REPOSITORY}
{_engine_block()}
cp "$dockerd_pid_file" {seen}
echo "$dockerd_pid_file" > {seen}.name
exit 3
"""
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3, done.stderr
    pid = int(seen.read_text())
    if keep:
        assert _running(pid)
        assert "docker-down" not in done.stdout
    else:
        assert "engine stopped" in done.stdout
        assert _wait_stopped(pid)
    # The pid file is removed either way.
    assert not Path(Path(f"{seen}.name").read_text().strip()).exists()
