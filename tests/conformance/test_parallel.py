"""``check --jobs N``: checks in worker processes, reports as at ``--jobs 1``.

The reports of a parallel run equal those of a sequential one at the same seed
(durations aside); an exclusive check runs alone; no worker outlives an interrupted or
killed run. No assertion is on time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_testkit.conformance import RunOptions, run_suite
from harness_testkit.conformance._adapter._registry import REGISTRY, ordered_checks
from harness_testkit.conformance._parallel import WorkerPool
from harness_testkit.conformance._runner import WORKDIR_PREFIX, Selection
from harness_testkit.conformance._watchdog import TurnCounts, TurnLedger
from harness_testkit.conformance._zoo._catalog import get_mutant
from harness_testkit.conformance._zoo._good_targets import self_test_target

#: A JUnit test case's duration: the one field two runs may differ in.
_JUNIT_TIME = re.compile(rb' time="[0-9.]+"')


def _check(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness_testkit", "check", "--self", "--profile", "smoke", *args],
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp,  # hypothesis keeps its directory in the working directory
    )


def _reports(tmp: Path, name: str, *args: str) -> dict[str, bytes]:
    out = tmp / name
    paths = {kind: out / f"report.{kind}" for kind in ("json", "md", "xml", "html")}
    process = _check(
        tmp,
        *args,
        "--json",
        str(paths["json"]),
        "--report",
        str(paths["md"]),
        "--junit-xml",
        str(paths["xml"]),
        "--html",
        str(paths["html"]),
        "--bundle-dir",
        str(out / "bundles"),
    )
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, (stdout + stderr).decode()
    written = {kind: path.read_bytes() for kind, path in paths.items()}
    written["xml"] = _JUNIT_TIME.sub(b"", written["xml"])
    return written


@pytest.mark.slow
@pytest.mark.requirement("DECISION-020")
@pytest.mark.parametrize("seed", ["0", "11"])
def test_reports_at_jobs_2_equal_those_at_jobs_1(tmp_path: Path, seed: str) -> None:
    sequential = _reports(tmp_path, "one", "--jobs", "1", "--seed", seed)
    parallel = _reports(tmp_path, "two", "--jobs", "2", "--seed", seed)
    for kind in sequential:
        assert parallel[kind] == sequential[kind], f"the {kind} reports differ"
    assert json.loads(sequential["json"])["verdict"]["ok"] is True


def _children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (from /proc): its workers and the resource
    tracker of ``multiprocessing`` (which ends by itself once the run's end of its pipe
    closes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii")
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the fields follow it.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _is_worker(pid: int) -> bool:
    """Whether ``pid`` is a worker (``spawn`` runs it through ``spawn_main``)."""
    try:
        return b"spawn_main" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that still runs (a zombie has ended)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for_workers(
    process: subprocess.Popen[bytes], tmp: Path, count: int
) -> tuple[list[int], list[int]]:
    """The run's worker pids and its other child pids, once ``count`` workers run and a
    check made its work directory."""
    deadline = time.monotonic() + 120
    workers: list[int] = []
    others: list[int] = []
    while time.monotonic() < deadline and process.poll() is None:
        children = _children(process.pid)
        workers = [pid for pid in children if _is_worker(pid)]
        others = [pid for pid in children if pid not in workers]
        if len(workers) >= count and any(tmp.glob(f"{WORKDIR_PREFIX}*")):
            break
        time.sleep(0.05)
    return workers, others


def _gone(pids: list[int], limit: float) -> list[int]:
    """Those of ``pids`` still running after at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    return [pid for pid in pids if _alive(pid)]


@pytest.mark.slow
@pytest.mark.requirement("DECISION-020")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_every_worker_and_writes_the_partial_report(
    tmp_path: Path, signum: int, code: int
) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    out = tmp_path / "report.json"
    process = _check(tmp_path, "--jobs", "2", "--json", str(out), env={"TMPDIR": str(work)})
    try:
        workers, others = _wait_for_workers(process, work, 2)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = (stdout + stderr).decode()
    if process.returncode in (0, 1):
        pytest.skip("the run finished before the signal arrived")
    assert len(workers) == 2, text
    assert process.returncode == code, text
    assert "Traceback" not in text, text
    assert json.loads(out.read_text(encoding="utf-8"))["verdict"]["interrupted"] is True
    # The run reaped its workers before it exited; the tracker ends on its own after it.
    assert [pid for pid in workers if _alive(pid)] == [], "a worker outlived the run"
    assert _gone(others, 10) == [], "a process of the run outlived it"
    assert list(work.iterdir()) == [], "a work directory was left behind"


@pytest.mark.slow
@pytest.mark.requirement("DECISION-020")
def test_workers_of_a_killed_run_end_by_themselves(tmp_path: Path) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    process = _check(tmp_path, "--jobs", "2", env={"TMPDIR": str(work)})
    try:
        workers, others = _wait_for_workers(process, work, 2)
    finally:
        process.kill()  # SIGKILL: the run cannot stop its workers
        process.communicate(timeout=60)
    assert len(workers) == 2
    assert _gone(workers + others, 30) == [], "a process outlived its killed run"


@pytest.mark.requirement("DECISION-020")
def test_an_exclusive_check_runs_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = [item for item in ordered_checks() if not item.depends_on][:6]
    alone = chosen[2]
    # Exclusivity is the scheduler's business: the run process reads the flag, the
    # worker only runs the check it is sent.
    monkeypatch.setitem(REGISTRY, alone.id, dataclasses.replace(alone, exclusive=True))
    target = self_test_target("minimal")
    selection = Selection(checks=tuple(item.id for item in chosen))
    with WorkerPool(2) as pool:
        report = run_suite(target, RunOptions(profile="smoke"), selection=selection, pool=pool)
        history = list(pool.history)
        started = pool.started
    assert [r.check_id for r in report.results] == [item.id for item in chosen]
    assert started == 2
    spans = {check_id: (begin, end) for check_id, begin, end in history}
    assert set(spans) == {item.id for item in chosen}
    begin, end = spans[alone.id]
    beside = [
        check_id
        for check_id, (other_begin, other_end) in spans.items()
        if check_id != alone.id and other_begin < end and other_end > begin
    ]
    assert beside == [], f"{beside} ran beside the exclusive {alone.id}"


def test_a_check_ledger_goes_on_from_the_runs_counts() -> None:
    run = TurnLedger()
    run.turn_started()
    run.turn_settled(0.5)
    before = run.counts()
    worker = TurnLedger.from_counts(before)
    worker.turn_attempted()
    worker.turn_started()
    worker.turn_settled(2.0)
    worker.turn_attempted(refuse=False)  # a check about aborting: never refused
    run.add(before, worker.counts())
    assert run.counts() == TurnCounts(started=2, settled=2, attempted=1, slowest=2.0)


def test_jobs_below_one_is_refused() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "harness_testkit", "check", "--self", "--jobs", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 2
    assert "--jobs" in process.stderr


@pytest.mark.requirement("DECISION-020")
@pytest.mark.parametrize("name", ["turn-never-settles", "crash-leaves-turn-unsettled"])
def test_a_hang_is_reported_at_jobs_2_as_at_jobs_1(name: str) -> None:
    """The run owns the turn ledger: checks that ran beside the one that hung, and
    started a turn the sequential run would have refused, are blocked by it there too."""

    def results(jobs: int) -> list[dict[str, object]]:
        report = run_suite(get_mutant(name).target, RunOptions(profile="smoke"), jobs=jobs)
        return [result.model_dump(exclude={"duration_seconds"}) for result in report.results]

    sequential = results(1)
    assert results(2) == sequential
    assert any(result["status"] == "fail" for result in sequential)
