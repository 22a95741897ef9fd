"""Simulation memory: RSS of ``simulate`` from 1,000 to 100,000 sessions at concurrency 100.

Each session count runs in its own process (``python -m benchmarks.simulate_memory
--child N``) on a tiny scenario (one prompt, one text step) with the local sandbox, so
the numbers are that process's alone: its peak RSS (``VmHWM``) and RSS sampled at every
1 % of the sessions. Memory bounded by the concurrency shows as

- a peak RSS ratio near 1 between the largest and the smallest run, and
- a slope near 0 bytes per session, both between runs (peak RSS over session count) and
  inside the largest run (least squares over its samples after the first tenth, when
  imports, caches and the allocator have settled).

Nothing here is a test: the targets are reported (met or missed), never asserted.
Run it alone with ``python -m benchmarks --only simulate-memory`` (about 40 minutes for
100,000 sessions on a loaded 2-core machine; ``--quick`` stops at 10,000) or one size with
``python -m benchmarks.simulate_memory --child 5000``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._measure import REPOSITORY, Column, Section, Target, memory_status

__all__ = ["CONCURRENCY", "FULL_SIZES", "QUICK_SIZES", "measure", "run_child"]

CONCURRENCY = 100
FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 3_000, 10_000)
#: Targets: the largest run's peak RSS over the smallest run's, and the growth per session.
RATIO_LIMIT = 1.15
SLOPE_LIMIT_BYTES = 64.0
MIB = 1024 * 1024
_SAMPLES = 100

SCENARIO = textwrap.dedent(
    """\
    version: 1
    name: memory
    sessions: 1
    concurrency: 1
    harness:
      profile: pi
      script:
        turns:
          - steps:
              - actions: [{text: hello}]
    actions:
      - prompt: hi
    """
)


def run_child(sessions: int, concurrency: int, folder: Path) -> dict[str, Any]:
    """Run the simulation in this process and return its memory figures."""
    import anyio

    from harness_testkit.simulate import (
        SessionReport,
        SimulationObserver,
        SimulationOptions,
        load_scenario,
        simulate,
    )

    scenario = folder / "memory.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    every = max(1, sessions // _SAMPLES)
    samples: list[tuple[int, int]] = []

    class Sampler(SimulationObserver):
        ended = 0

        def session_finished(self, report: SessionReport) -> None:
            self.ended += 1
            if self.ended % every == 0:
                samples.append((self.ended, memory_status().get("rss", 0)))

    options = SimulationOptions(
        sessions=sessions,
        concurrency=concurrency,
        out_dir=folder / "out",
        sandbox_root=folder / "sandboxes",
    )
    started = time.perf_counter()
    summary = anyio.run(simulate, load_scenario(scenario), options, Sampler())
    seconds = time.perf_counter() - started
    status = memory_status()
    return {
        "sessions": sessions,
        "concurrency": concurrency,
        "status": summary.status,
        "seconds": seconds,
        "peak_rss": status.get("peak_rss", 0),
        "rss": status.get("rss", 0),
        "samples": samples,
    }


def _slope(points: Sequence[tuple[int, int]]) -> float | None:
    """Least-squares bytes per session through ``(sessions ended, rss)`` points."""
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def _child(sessions: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="harness-testkit-bench-sim-"))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.simulate_memory", "--child", str(sessions)],
            cwd=REPOSITORY,
            env={**os.environ, "HARNESS_TESTKIT_BENCH_DIR": str(folder)},
            capture_output=True,
            text=True,
            timeout=4 * 3600,
            check=False,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"the {sessions}-session run failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(quick: bool) -> Section:
    """Run every size in its own process; report peak RSS, ratios and slopes."""
    started = time.perf_counter()
    sizes = QUICK_SIZES if quick else FULL_SIZES
    section = Section(
        name="simulate-memory",
        title=f"simulate: RSS by session count at concurrency {CONCURRENCY} (one process each)",
        columns=[
            Column("sessions", "sessions", "{:,}"),
            Column("seconds", "seconds", "{:.0f}"),
            Column("peak_rss_mib", "peak RSS MiB", "{:.1f}"),
            Column("final_rss_mib", "final RSS MiB", "{:.1f}"),
            Column("peak_ratio", "peak / smallest", "{:.3f}"),
            Column("in_run_slope_bytes", "in-run slope B/session", "{:.2f}"),
        ],
    )
    rows = []
    for sessions in sizes:
        child = _child(sessions)
        settled = [point for point in child["samples"] if point[0] > sessions // 10]
        rows.append(
            {
                "sessions": sessions,
                "status": child["status"],
                "seconds": child["seconds"],
                "peak_rss_mib": child["peak_rss"] / MIB,
                "final_rss_mib": child["rss"] / MIB,
                "in_run_slope_bytes": _slope(settled),
            }
        )
    smallest, largest = rows[0], rows[-1]
    for row in rows:
        row["peak_ratio"] = row["peak_rss_mib"] / smallest["peak_rss_mib"]
    between = (
        (largest["peak_rss_mib"] - smallest["peak_rss_mib"])
        * MIB
        / (largest["sessions"] - smallest["sessions"])
    )
    section.rows = rows
    section.targets = [
        Target(
            id="simulate.memory.peak-ratio",
            description=(
                f"peak RSS at {largest['sessions']:,} sessions over peak RSS at "
                f"{smallest['sessions']:,} (concurrency {CONCURRENCY})"
            ),
            limit=RATIO_LIMIT,
            measured=largest["peak_ratio"],
            unit="x",
        ),
        Target(
            id="simulate.memory.slope",
            description=(
                "peak RSS growth per extra session between the smallest and the largest run"
            ),
            limit=SLOPE_LIMIT_BYTES,
            measured=max(between, 0.0),
            unit="B",
        ),
    ]
    section.notes.append(
        f"slope between runs: {between:.2f} bytes per session "
        f"({smallest['sessions']:,} -> {largest['sessions']:,}); in-run slope of the largest "
        f"run after its first tenth: {largest['in_run_slope_bytes']:.2f} bytes per session"
    )
    if any(row["status"] != "completed" for row in rows):
        section.notes.append("a run did not complete: its figures are not comparable")
    section.seconds = time.perf_counter() - started
    return section


def main(argv: Sequence[str] | None = None) -> int:
    """``--child N``: run one size here and print its figures as one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.simulate_memory")
    parser.add_argument("--child", type=int, required=True, metavar="SESSIONS")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    arguments = parser.parse_args(argv)
    if arguments.child < 1 or arguments.concurrency < 1:
        parser.error("--child and --concurrency must be positive")
    given = os.environ.get("HARNESS_TESTKIT_BENCH_DIR")
    folder = Path(given) if given else Path(tempfile.mkdtemp(prefix="harness-testkit-bench-sim-"))
    try:
        print(json.dumps(run_child(arguments.child, arguments.concurrency, folder)))
    finally:
        if not given:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
