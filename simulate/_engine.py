"""A simulation sharded over a Dask cluster: the same transcripts, written by many workers.

Why Dask (``distributed``) rather than Ray: it is pure Python with no daemon of its own, a
local cluster is a few processes on loopback (what the tests start), and a real cluster
is one address (``tcp://scheduler:8786``). Ray would bring a large native runtime and its
own object store to move a few kilobytes of transcript per session.

How a run is split: the session indices ``0 .. sessions - 1`` are cut into contiguous
shards of ``shard_size`` sessions. A worker runs one shard with the run's ``concurrency``
(through the same :func:`run_sessions` as a single-process run, into a private temporary
folder) and sends back each session's transcript bytes and report. Every session's ids
derive from the run's seed and its index, never from where it ran, so the transcripts
the client writes are the single-process ones (volatile fields aside).

Memory stays bounded: a worker holds one shard (its ``concurrency`` live sessions and
``shard_size`` finished transcripts), and the client keeps at most ``in_flight`` shards
submitted, writing and folding each into the summary in index order, then dropping it.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import anyio

from harness_testkit.spec import MissingExtraError

from ._loading import LoadedScenario
from ._runner import (
    SimulationObserver,
    SimulationOptions,
    fresh_sessions_dir,
    run_counts,
    run_sessions,
)
from ._summary import SessionReport, SessionReports, SimulationSummary, session_id_for

__all__ = [
    "ClusterUnavailableError",
    "DaskEngine",
    "local_cluster",
    "require_dask",
    "simulate_sharded",
]

#: Shards per worker kept submitted, so a worker never waits for the client.
_IN_FLIGHT_PER_WORKER = 2
#: Sessions per shard, as a multiple of the run's concurrency (when not given).
_SHARD_ROUNDS = 4
#: Seconds a local cluster may take to start its workers, and to stop them.
_CLUSTER_TIMEOUT = 60.0


class ClusterUnavailableError(OSError):
    """The Dask cluster cannot be started or reached (a set-up error: the CLI exits 2)."""


@dataclass(frozen=True)
class DaskEngine:
    """Where a sharded simulation runs.

    Attributes:
        scheduler: The address of a running Dask scheduler (for example
            ``tcp://10.0.0.5:8786``; its workers need ``harness-testkit[dask]`` installed),
            or ``None`` for a local cluster of ``workers`` processes on 127.0.0.1 that the
            run starts and stops.
        workers: Worker processes of the local cluster (default: the machine's cores).
        shard_size: Sessions per shard (default: four times the run's concurrency).
        shard_timeout: Seconds one shard may take before the run fails.
    """

    scheduler: str | None = None
    workers: int | None = None
    shard_size: int | None = None
    shard_timeout: float = 600.0


@dataclass(frozen=True)
class _Shard:
    """What a worker sends back: each session's transcript and report, in index order."""

    start: int
    transcripts: tuple[bytes, ...]
    reports: tuple[SessionReport, ...]
    backend_seconds: float


class _Collector(SimulationObserver):
    def __init__(self) -> None:
        self.reports: dict[str, SessionReport] = {}

    def session_finished(self, report: SessionReport) -> None:
        self.reports[report.session_id] = report


def require_dask() -> Any:
    """The ``distributed`` module, or a set-up error naming the extra.

    Dask's API is only partly typed; it is used as ``Any`` here, within this module.

    Raises:
        MissingExtraError: ``distributed`` cannot be imported.
    """
    try:
        return importlib.import_module("distributed")
    except ImportError as error:
        raise MissingExtraError(
            "Sharding a simulation on Dask", "dask", missing="distributed"
        ) from error


def run_shard(
    loaded: LoadedScenario,
    options: SimulationOptions,
    seed: int,
    start: int,
    stop: int,
    backend: str,
) -> _Shard:
    """Run sessions ``start .. stop - 1`` of a run (on a worker) and return them."""
    began = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix="harness-testkit-shard-"))
    try:
        collector = _Collector()
        shard_options = replace(options, out_dir=scratch, seed=seed, sandbox_root=None)
        anyio.run(
            partial(run_sessions, loaded, shard_options, collector, indices=range(start, stop)),
            backend=backend,
        )
        transcripts: list[bytes] = []
        reports: list[SessionReport] = []
        for index in range(start, stop):
            session_id = session_id_for(seed, index)
            path = scratch / "sessions" / f"{session_id}.jsonl"
            transcripts.append(path.read_bytes() if path.exists() else b"")
            report = collector.reports.get(session_id) or SessionReport.from_transcript(
                session_id, path
            )
            reports.append(replace(report, transcript=None))
        return _Shard(start, tuple(transcripts), tuple(reports), time.perf_counter() - began)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _shards(count: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, count, size):
        yield start, min(start + size, count)


def local_cluster(workers: int) -> Any:
    """A ``distributed.LocalCluster`` of ``workers`` processes on 127.0.0.1.

    Loopback only; one thread per worker, so a worker runs one shard at a time. Close it
    when done. The scheduler serves HTTP (health, metrics) even without a dashboard, by
    default on port 8787 of every interface: here on a free loopback port, so that two
    clusters on one machine (parallel test workers, two runs) never race for 8787.
    """
    return require_dask().LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=40,
        timeout=_CLUSTER_TIMEOUT,
    )


class _Cluster:
    """The client, and the local cluster it owns (if any); closing stops every worker."""

    def __init__(self, engine: DaskEngine) -> None:
        dask = require_dask()
        self.cluster: Any = None
        self.client: Any = None
        try:
            if engine.scheduler is None:
                self.cluster = local_cluster(engine.workers or os.cpu_count() or 1)
                self.client = dask.Client(self.cluster, timeout=_CLUSTER_TIMEOUT)
            else:
                self.client = dask.Client(engine.scheduler, timeout=_CLUSTER_TIMEOUT)
            self.workers = max(1, len(self.client.scheduler_info(n_workers=-1)["workers"]))
        except (OSError, TimeoutError) as error:
            self.close()
            where = engine.scheduler or "a local cluster on 127.0.0.1"
            raise ClusterUnavailableError(
                f"cannot reach the Dask scheduler at {where} within {_CLUSTER_TIMEOUT:.0f} s "
                f"({error}); check the address, or leave --scheduler out for a local cluster"
            ) from error

    def close(self) -> None:
        try:
            if self.client is not None:
                self.client.close(timeout=_CLUSTER_TIMEOUT)
        finally:
            if self.cluster is not None:
                self.cluster.close(timeout=_CLUSTER_TIMEOUT)


def simulate_sharded(
    loaded: LoadedScenario,
    options: SimulationOptions | None = None,
    observer: SimulationObserver | None = None,
    *,
    engine: DaskEngine | None = None,
    backend: Literal["asyncio", "trio"] = "asyncio",
) -> SimulationSummary:
    """Run a scenario like :func:`simulate`, its sessions sharded over a Dask cluster.

    The transcripts and ``summary.json`` equal a single-process run's at the same seed
    (volatile fields aside). Blocks until the run ends; every worker of a local cluster
    is stopped before it returns or raises.

    Args:
        loaded: The scenario (see :func:`load_scenario`).
        options: Overrides and output folder, as for :func:`simulate`; ``concurrency`` is
            per worker.
        observer: Receives ``session_finished`` for each session as its shard returns
            (the other events happen on the workers).
        engine: Where to run (default: a local cluster, one worker per core).
        backend: The anyio backend each worker runs its shard on.

    Returns:
        The summary (also written to ``<out_dir>/summary.json``).

    Raises:
        MissingExtraError: ``distributed`` is not installed (the ``dask`` extra).
        ClusterUnavailableError: The scheduler cannot be reached, or the local cluster
            cannot start.
        TimeoutError: A shard took longer than ``engine.shard_timeout``.
    """
    dask = require_dask()
    options = options or SimulationOptions()
    observer = observer or SimulationObserver()
    engine = engine or DaskEngine()
    seed, count, concurrency = run_counts(loaded, options)
    shard_size = engine.shard_size or max(1, concurrency * _SHARD_ROUNDS)
    sessions_dir = fresh_sessions_dir(options.out_dir)
    sandbox = options.sandbox or loaded.scenario.sandbox
    summary = SimulationSummary(
        scenario=loaded.name,
        digest=loaded.digest,
        seed=seed,
        sandbox="docker" if sandbox == "docker" else "local",
        concurrency=min(concurrency, count),
        planned=count,
        out_dir=options.out_dir,
    )
    started = time.perf_counter()
    written = 0
    cluster = _Cluster(engine)
    pending: deque[Any] = deque()  # distributed.Future[_Shard]
    try:
        shards = _shards(count, shard_size)
        window = cluster.workers * _IN_FLIGHT_PER_WORKER

        def submit_next() -> None:
            for start, stop in shards:
                pending.append(
                    cluster.client.submit(
                        run_shard, loaded, options, seed, start, stop, backend, pure=False
                    )
                )
                return

        for _ in range(window):
            submit_next()
        while pending:
            future = pending.popleft()
            dask.wait([future], timeout=engine.shard_timeout)
            shard: _Shard = future.result()
            submit_next()
            for offset, (text, report) in enumerate(
                zip(shard.transcripts, shard.reports, strict=True)
            ):
                path = sessions_dir / f"{session_id_for(seed, shard.start + offset)}.jsonl"
                path.write_bytes(text)
                report = replace(report, transcript=path)
                summary.record(report)
                observer.session_finished(report)
            written = shard.start + len(shard.reports)
    except BaseException:
        summary.interrupted = True
        for future in pending:
            future.cancel()
        raise
    finally:
        try:
            cluster.close()
        finally:
            summary.sessions = SessionReports(sessions_dir, seed, written)
            summary.duration_seconds = round(time.perf_counter() - started, 6)
            summary.write()
    return summary
