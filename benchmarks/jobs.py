"""Checks in parallel: wall time of ``check --self`` at ``--jobs 1`` and ``--jobs 2``.

Each run is a fresh process (``benchmarks.suite.run_self_check``), so the wall time
includes interpreter start-up, imports and, at ``--jobs 2``, starting the two worker
processes, as a user sees it. The two variants run side by side in the same rounds,
alternating which goes first, and each ratio is the median of per-round ratios, so a
loaded machine moves the absolute times more than the ratio.

``smoke`` always runs; ``standard`` (the profile the target is about) only without
``--quick``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ._measure import Column, Section, Target, median
from .suite import run_self_check

__all__ = ["measure"]

#: The parallel variant's workers (the machine the target is stated for has two cores).
JOBS = 2
#: ``--jobs 2`` over ``--jobs 1`` wall time for the standard profile, at most.
STANDARD_LIMIT = 0.6


def measure(quick: bool) -> Section:
    """Time ``check --self`` at ``--jobs 1`` and ``--jobs 2`` per conformance profile.

    Args:
        quick: Only ``smoke``, one round; otherwise ``smoke`` and ``standard``, two
            rounds each.

    Returns:
        The section: one row per profile, with the ratio of the two wall times.
    """
    section = Section(
        name="jobs",
        title=f"check --self: wall time at --jobs 1 and --jobs {JOBS} (every fake profile)",
        columns=[
            Column("profile", "profile", "{}"),
            Column("sequential_seconds", "--jobs 1 s", "{:.1f}"),
            Column("parallel_seconds", f"--jobs {JOBS} s", "{:.1f}"),
            Column("ratio", f"--jobs {JOBS} / --jobs 1", "{:.2f}x"),
            Column("same_results", "same results", "{}"),
        ],
    )
    started = time.perf_counter()
    profiles = ["smoke"] if quick else ["smoke", "standard"]
    rounds = 1 if quick else 2
    samples: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {p: [] for p in profiles}
    for round_ in range(rounds):
        for profile in profiles:
            if round_ % 2 == 0:
                one = run_self_check(profile, "--jobs", "1")
                many = run_self_check(profile, "--jobs", str(JOBS))
            else:  # the other order, so drift hits both variants
                many = run_self_check(profile, "--jobs", str(JOBS))
                one = run_self_check(profile, "--jobs", "1")
            samples[profile].append((one, many))
    for profile, pairs in samples.items():
        ratio = median([many["wall_seconds"] / one["wall_seconds"] for one, many in pairs])
        same = all(
            one["statuses"] == many["statuses"] and one["exit_code"] == many["exit_code"]
            for one, many in pairs
        )
        section.rows.append(
            {
                "profile": profile,
                "runs": len(pairs),
                "sequential_seconds": median([one["wall_seconds"] for one, _ in pairs]),
                "parallel_seconds": median([many["wall_seconds"] for _, many in pairs]),
                "ratio": ratio,
                "same_results": "yes" if same else "NO",
                "checks": pairs[0][0]["checks"],
                "exit_codes": sorted({r["exit_code"] for pair in pairs for r in pair}),
                "ratio_samples": [
                    many["wall_seconds"] / one["wall_seconds"] for one, many in pairs
                ],
            }
        )
        if not same:
            section.notes.append(
                f"{profile}: the statuses or exit codes at --jobs {JOBS} differ from --jobs 1"
            )
        if profile == "standard":
            section.targets.append(
                Target(
                    id="jobs.standard",
                    description=(
                        f"check --self --profile standard at --jobs {JOBS} over --jobs 1 "
                        "(wall time)"
                    ),
                    limit=STANDARD_LIMIT,
                    measured=ratio,
                    unit="x",
                )
            )
    section.notes.append(
        f"{os.cpu_count()} cores; the run's own process (scheduling, reports) shares them "
        f"with its {JOBS} workers, and other processes on the machine share them too."
    )
    section.seconds = time.perf_counter() - started
    return section
