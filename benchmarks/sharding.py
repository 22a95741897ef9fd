"""Sharded simulation: sessions per second in one process and on a two-worker local cluster.

Both run the shipped ``many-sessions`` scenario at the same seed, session count and
per-process concurrency, side by side, alternating, so the ratio compares like with like
on the same (possibly loaded) machine. The cluster is started once, before the measured
rounds (its start-up is reported on its own row): what a team pays per run on a
long-lived cluster is the sharded row, the start-up is what a local ``--engine dask`` run
adds.

Nothing here is a test: the numbers are reported, never asserted. Needs the ``dask``
extra; without it the section says so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import anyio

from ._measure import Column, Section, median

__all__ = ["measure"]

#: Sessions per measured run, and rounds (each round runs both variants once).
QUICK = (200, 2)
FULL = (2_000, 3)
CONCURRENCY = 20
WORKERS = 2


def measure(quick: bool) -> Section:
    """Time single-process and sharded runs of one scenario; report their throughput."""
    started = time.perf_counter()
    sessions, rounds = QUICK if quick else FULL
    section = Section(
        name="sharding",
        title=f"simulate: sessions/s, one process vs {WORKERS} Dask workers (local cluster)",
        columns=[
            Column("variant", "variant"),
            Column("sessions", "sessions", "{:,}"),
            Column("seconds", "median s", "{:.2f}"),
            Column("sessions_per_second", "sessions/s", "{:.0f}"),
            Column("ratio", "vs one process", "{:.2f}x"),
        ],
    )
    try:
        import distributed  # noqa: F401
    except ImportError:
        section.notes.append("skipped: the `dask` extra (distributed) is not installed")
        section.seconds = time.perf_counter() - started
        return section
    from harness_testkit.simulate import (
        DaskEngine,
        SimulationOptions,
        builtin_scenario_path,
        load_scenario,
        simulate,
        simulate_sharded,
    )
    from harness_testkit.simulate._engine import local_cluster

    loaded = load_scenario(builtin_scenario_path("many-sessions"))
    scratch = Path(tempfile.mkdtemp(prefix="harness-testkit-bench-shard-"))
    cluster_started = time.perf_counter()
    cluster = local_cluster(WORKERS)
    cluster_seconds = time.perf_counter() - cluster_started
    timings: dict[str, list[float]] = {"one process": [], "sharded": []}
    try:
        for round_ in range(rounds + 1):  # the first round warms up, unrecorded
            options = SimulationOptions(
                sessions=sessions, concurrency=CONCURRENCY, seed=0, out_dir=scratch / "single"
            )
            began = time.perf_counter()
            anyio.run(simulate, loaded, options)
            single = time.perf_counter() - began
            options = SimulationOptions(
                sessions=sessions, concurrency=CONCURRENCY, seed=0, out_dir=scratch / "sharded"
            )
            began = time.perf_counter()
            simulate_sharded(
                loaded, options, engine=DaskEngine(scheduler=cluster.scheduler_address)
            )
            sharded = time.perf_counter() - began
            if round_:
                timings["one process"].append(single)
                timings["sharded"].append(sharded)
    finally:
        cluster.close(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)
    base = median(timings["one process"])
    for variant, values in timings.items():
        seconds = median(values)
        section.rows.append(
            {
                "variant": variant,
                "sessions": sessions,
                "seconds": seconds,
                "sessions_per_second": sessions / seconds,
                "ratio": base / seconds,
            }
        )
    section.rows.append({"variant": "cluster start-up", "seconds": cluster_seconds})
    section.notes.append(
        f"{os.cpu_count()} cores: the client process (writing transcripts, folding the "
        f"summary) shares them with the {WORKERS} workers."
    )
    section.seconds = time.perf_counter() - started
    return section
