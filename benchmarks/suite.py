"""The conformance suite: wall time of ``harness-testkit check --self`` per profile.

Each run is a fresh process (``python -m harness_testkit check --self --profile P``), in
a temporary directory so reports and replay bundles stay out of the repository; the wall
time includes interpreter start-up and imports, as a user sees it. The run's JSON
document holds one report per fake-harness profile (``reports[]``); they give the
examples: the sum of ``results[].examples`` divided by the summed ``duration_seconds`` of
the checks that ran examples.

``smoke`` always runs; ``standard`` only without ``--quick``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._measure import Column, Section, median

__all__ = ["measure", "run_self_check"]


def run_self_check(profile: str, *options: str) -> dict[str, Any]:
    """One ``check --self --profile PROFILE`` run (with ``options``): its wall time and
    what its reports say."""
    with tempfile.TemporaryDirectory(prefix="harness-testkit-bench-suite-") as directory:
        work = Path(directory)
        command = [
            sys.executable,
            "-m",
            "harness_testkit",
            "check",
            "--self",
            "--profile",
            profile,
            "--json",
            str(work / "report.json"),
            "--bundle-dir",
            str(work / "bundles"),
            # The report keeps each check's duration only when asked (reports are
            # deterministic by default).
            "--timings",
            *options,
        ]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        # One JSON document per run, holding one report per checked target.
        documents = [
            json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(work.glob("report*.json"))
        ]
    reports = [report for document in documents for report in document["reports"]]
    if not reports:
        raise RuntimeError(
            f"`{' '.join(command)}` wrote no report (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-2000:]}"
        )
    results = [result for report in reports for result in report["results"]]
    with_examples = [result for result in results if result.get("examples")]
    statuses: dict[str, int] = {}
    for result in results:
        statuses[result["status"]] = statuses.get(result["status"], 0) + 1
    return {
        "wall_seconds": wall,
        "exit_code": done.returncode,
        "targets": [report["adapter"] for report in reports],
        "checks": len(results),
        "statuses": statuses,
        "failed": sorted(
            f"{report['adapter']} {result['check_id']}"
            for report in reports
            for result in report["results"]
            if result["status"] in ("fail", "xpass", "blocked")
        ),
        "examples": sum(result["examples"] for result in with_examples),
        "check_seconds": sum(result["duration_seconds"] for result in results),
        "example_seconds": sum(result["duration_seconds"] for result in with_examples),
    }


def measure(quick: bool) -> Section:
    """Time the self check per conformance profile.

    Args:
        quick: Only ``smoke``, once; otherwise ``smoke`` and ``standard``, twice each.

    Returns:
        The section: one row per conformance profile.
    """
    section = Section(
        name="suite",
        title="Conformance suite: harness-testkit check --self (every fake profile)",
        columns=[
            Column("profile", "profile", "{}"),
            Column("wall_seconds", "wall s", "{:.1f}"),
            Column("checks", "checks", "{:.0f}"),
            Column("examples", "examples", "{:,.0f}"),
            Column("examples_per_second", "examples/s", "{:.1f}"),
            Column("outcome", "outcome", "{}"),
        ],
    )
    started = time.perf_counter()
    profiles = ["smoke"] if quick else ["smoke", "standard"]
    repeats = 1 if quick else 2
    runs: dict[str, list[dict[str, Any]]] = {profile: [] for profile in profiles}
    for _ in range(repeats):
        for profile in profiles:  # interleaved, so drift hits both profiles
            runs[profile].append(run_self_check(profile))
    for profile, samples in runs.items():
        first = samples[0]
        rate = median(
            [s["examples"] / s["example_seconds"] for s in samples if s["example_seconds"]]
        )
        section.rows.append(
            {
                "profile": profile,
                "runs": len(samples),
                "wall_seconds": median([s["wall_seconds"] for s in samples]),
                "check_seconds": median([s["check_seconds"] for s in samples]),
                "targets": first["targets"],
                "checks": first["checks"],
                "statuses": first["statuses"],
                "examples": first["examples"],
                "examples_per_second": rate,
                "exit_code": first["exit_code"],
                "outcome": "pass" if first["exit_code"] == 0 else "FAIL",
                "wall_seconds_samples": [s["wall_seconds"] for s in samples],
            }
        )
        failing = sorted({name for sample in samples for name in sample["failed"]})
        if failing:
            section.notes.append(
                f"`check --self --profile {profile}` reported failures (the timing still "
                f"counts, but the reference run should pass): {', '.join(failing)}"
            )
    section.seconds = time.perf_counter() - started
    return section
