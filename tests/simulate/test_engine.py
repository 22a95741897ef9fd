"""Sharded simulation on Dask: the single-process transcripts, and no worker left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.simulate import (
    DaskEngine,
    SessionReport,
    SimulationObserver,
    SimulationOptions,
    builtin_scenario_path,
    load_scenario,
    normalize_transcript_line,
    simulate,
    simulate_sharded,
)
from harness_testkit.simulate._engine import local_cluster

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A two-worker local cluster on loopback, shared by the module's runs (the
    ``scheduler`` path: the same one a real cluster takes)."""
    cluster = local_cluster(2)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close(timeout=60)


def _summary(out: Path) -> dict[str, Any]:
    return normalize_transcript_line(json.loads((out / "summary.json").read_text()))


@pytest.mark.parametrize(
    ("backend", "seed", "builtin"),
    [("asyncio", 0, "quickstart"), ("trio", 11, "cross-process")],
)
def test_sharded_run_writes_the_single_process_transcripts(
    scheduler: str,
    tmp_path: Path,
    backend: Literal["asyncio", "trio"],
    seed: int,
    builtin: str,
) -> None:
    loaded = load_scenario(builtin_scenario_path(builtin))
    single = tmp_path / "single"
    sharded = tmp_path / "sharded"
    anyio.run(
        simulate,
        loaded,
        SimulationOptions(sessions=7, concurrency=2, seed=seed, out_dir=single),
        backend=backend,
    )
    finished: list[str] = []

    class Seen(SimulationObserver):
        def session_finished(self, report: SessionReport) -> None:
            finished.append(report.session_id)

    summary = simulate_sharded(
        loaded,
        SimulationOptions(sessions=7, concurrency=2, seed=seed, out_dir=sharded),
        Seen(),
        # Shards of 3: two workers, three shards, the last one short.
        engine=DaskEngine(scheduler=scheduler, shard_size=3),
        backend=backend,
    )
    names = sorted(path.name for path in (single / "sessions").glob("*.jsonl"))
    assert names == sorted(path.name for path in (sharded / "sessions").glob("*.jsonl"))
    assert len(names) == 7
    for name in names:  # byte for byte: no wall-clock field without --timings
        assert (sharded / "sessions" / name).read_bytes() == (
            single / "sessions" / name
        ).read_bytes(), name
    assert _summary(sharded) == _summary(single)
    assert summary.status == "completed"
    assert finished == [f"sim-{seed}-{index}" for index in range(7)]


def _runner() -> CliRunner:
    # click 8.1 (the lowest the kit allows) mixes stderr into stdout unless told not to;
    # from 8.2 the two are always apart and the argument is gone.
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1 only
    except TypeError:
        return CliRunner()


def _cli(*args: str) -> tuple[int, str, str]:
    result = _runner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_workers_without_the_dask_engine_is_a_usage_error() -> None:
    code, _, err = _cli("--builtin", "quickstart", "--workers", "2")
    assert code == 2
    assert "--engine dask" in err


def test_a_missing_dask_extra_is_a_set_up_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, _, err = _cli("--builtin", "quickstart", "--engine", "dask")
    assert code == 2
    assert err.strip().splitlines() == [
        "Error: Sharding a simulation on Dask needs the `dask` extra (distributed is not "
        "installed): pip install 'harness-testkit[dask]'"
    ]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("interrupt", [False, True], ids=["completes", "sigint"])
def test_the_cli_local_cluster_leaves_no_process(tmp_path: Path, interrupt: bool) -> None:
    """The run's own local cluster: every worker is gone when the CLI exits, after a
    complete run and after SIGINT."""
    out = tmp_path / "out"
    sessions = "400" if interrupt else "6"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "harness_testkit", "simulate", "--builtin", "quickstart"),
            *("--engine", "dask", "--workers", "2", "--sessions", sessions),
            *("--concurrency", "1", "--quiet", "--out", str(out)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the workers join it
    )
    pgid = process.pid
    try:
        if interrupt:
            deadline = time.monotonic() + 90
            while not any((out / "sessions").glob("*.jsonl")):
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "no shard came back"
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    log = stderr.decode(errors="replace")[-4000:]
    try:
        assert _wait_group_gone(pgid, 30), f"a worker outlived the run:\n{log}"
    finally:
        if _group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
    assert b"Traceback" not in stderr, log
    summary = json.loads((out / "summary.json").read_text())
    if interrupt:
        assert process.returncode == 130, log
        assert summary["status"] == "interrupted"
        assert 0 < summary["sessionsRun"] < 400
    else:
        assert process.returncode == 0, log
        assert summary["status"] == "completed"
        assert summary["sessionsRun"] == 6
        assert stdout


def test_an_unreachable_scheduler_is_a_set_up_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_testkit.simulate import _engine

    # Nothing listens on port 1 of the loopback; the client gives up after the limit.
    monkeypatch.setattr(_engine, "_CLUSTER_TIMEOUT", 2.0)
    code, _, err = _cli(
        "--builtin", "quickstart", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:1"
    )
    assert code == 2
    line = err.strip().splitlines()[-1]  # after the progress heading, one sentence
    assert line.startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:1 ")
    assert "leave --scheduler out for a local cluster" in line
