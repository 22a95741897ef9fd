"""The reference agent next to the official TypeScript agent, on the same five workloads.

``python -m benchmarks --official`` (or ``--only official``). Needs Node.js (20 or newer)
on ``PATH``; the official agent comes from ``benchmarks/official/`` (its own
``package.json`` and lockfile pinning ``@ai-sdk/harness`` 1.0.122 and its peers, the
versions the oracle uses), installed with ``npm ci`` when ``node_modules`` is missing.

Both agents run the scripted adapter of :mod:`benchmarks._scripted` (the Node twin
receives the very same wire parts as JSON) on an in-memory sandbox. A
``node --expose-gc bench.mjs`` process serves official runs of one workload, so its JIT
stays warm across them as the Python interpreter does; no process serves two workloads
(V8 runs a workload slower after it has optimized its code for others, while Python
shows no such history), so the official agent is measured at its best. Each workload's
rounds are split over several fresh processes, one after another (three; two with
``--quick``): warmed the same way, two Node processes of the same build settle on
different plateaus on short turns, so a single process made the published ratio depend
on which plateau it happened to reach. The official figures are medians over all rounds
of all processes; the row keeps each process's median
(``official_cpu_ms_per_turn_by_process``). Before the rounds of a workload, each side
runs until its time per turn stops falling (:func:`benchmarks._measure.warm_until_steady`:
V8 takes tens of runs to reach its plateau, and a single warm-up round measured its
warm-up, inflating Python's lead); the notes say how many runs that took, and when a
side never got there. Every round then runs each side once (Python on asyncio, Python on
trio, the official agent, and the two informational sides below), alternating the order
(ABBA); each figure is the median over rounds, and each ratio the median of per-round
ratios (the runs of a round saw the same machine), shown with the lowest and highest
per-round ratio.

The target, on every workload: **not behind the official agent** (the official agent's
CPU time per turn over the Python agent's, on the standard asyncio loop, at least
:data:`NOT_BEHIND`). A note per workload says ``not behind the official agent`` or
``BEHIND the official agent``; ``python -m benchmarks --check`` exits 1 when a target is
missed. Trio stays within :data:`TRIO_LIMIT` of asyncio (a second target per workload).

When ``uvloop`` is installed, the Python agent also runs on uvloop's event loop (libuv,
in C) as a fourth side: the "speed-up on uvloop" column shows how much of the gap is the
standard asyncio loop's own scheduling, written in Python. It is for information: the
targets are judged on the standard loop.

A fifth side, the *hand-off floor* (``run_python(mode="floor")``), bounds what any
Python agent with the official agent's eager streaming could reach on the standard loop:
the scripted adapter's ``done()`` in a task of its own, every part handed to a reader
task that wakes for it, and nothing done to the parts (no translation, no result). The
"speed-up ceiling" column is the official agent's time over the floor's: a target above
it cannot be met by any amount of work on the agent, only by changing the loop or what a
turn carries; a note says when a target is above the ceiling or within 25% of it. Like
uvloop's, the column is for information; no target reads it.

A sixth side, the same floor on trio, bounds the trio target the same way. Trio's
hand-off costs more than asyncio's ("trio/asyncio floor"), and an agent's trio/asyncio
ratio moves from that toward its own work's as its own work grows: keeping trio within
the limit takes at least ``(trio floor - limit * floor) / (limit - 1)`` of own work a turn
when that work costs the same on both loops, and so caps the speed-up over the official
agent (:func:`trio_limit_ceiling`, the column "speed-up ceiling within the trio limit";
the row also carries the own work's measured trio/asyncio ratio, to check that
assumption against). A note says when a speed-up target is above that cap: the two
targets then exclude each other on these loops.

Columns: CPU milliseconds per turn (the process's user + system time, which other load
on a shared machine disturbs less than wall time) and wall milliseconds per turn for both
agents; the speed-up, official time per turn divided by Python time per turn (above 1:
Python is faster), in CPU and wall time; trio CPU time over asyncio CPU time; RSS growth
per session on the session workloads, one run in a fresh process on each side (after a
two-session warm-up run there; every session alive, after a full collection): measured
after the warm-up rounds instead, Python's growth reads zero, as its process reuses what
earlier runs freed.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ._measure import (
    REPOSITORY,
    Column,
    LineServer,
    Sample,
    Section,
    Target,
    WarmUp,
    interleave_sync,
    median,
    warm_until_steady,
)
from ._scripted import WORKLOADS, Workload, run_python
from .scaling import sessions_in_fresh_process

__all__ = [
    "OFFICIAL_DIR",
    "NodeUnavailable",
    "OfficialServer",
    "ceiling_note",
    "measure",
    "node_problem",
    "not_behind_verdict",
    "trio_limit_ceiling",
    "trio_limit_note",
]

OFFICIAL_DIR = REPOSITORY / "benchmarks" / "official"
#: The target on every workload: not behind the official agent (official CPU time per
#: turn over Python's at least this).
NOT_BEHIND = 1.0
#: Fresh Node processes per workload, one after another, that share its rounds.
OFFICIAL_PROCESSES = 3
#: Trio may cost at most this much more CPU time than asyncio.
TRIO_LIMIT = 1.15
NODE_MAJOR = 20
REQUEST_TIMEOUT = 600.0
NPM_TIMEOUT = 600.0
MIB = 1024 * 1024


class NodeUnavailable(RuntimeError):
    """The official benchmark cannot run here (the message says why and what to do)."""


def node_problem() -> str | None:
    """Why the official benchmark cannot run (``None`` when Node 20+ is on ``PATH``)."""
    node = shutil.which("node")
    if node is None:
        return "node is not on PATH; install Node.js 20 or newer to compare with the official agent"
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"`node --version` failed: {error}"
    version = done.stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        return f"`node --version` printed {version!r}, not a version"
    if major < NODE_MAJOR:
        return f"node {version} is too old; the official agent needs Node.js {NODE_MAJOR} or newer"
    return None


def ensure_installed(directory: Path = OFFICIAL_DIR) -> None:
    """Run ``npm ci`` in ``directory`` when ``@ai-sdk/harness`` is not installed there.

    Raises:
        NodeUnavailable: npm is missing or ``npm ci`` failed.
    """
    if (directory / "node_modules" / "@ai-sdk" / "harness" / "package.json").is_file():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise NodeUnavailable(f"npm is not on PATH; run `npm ci` in {directory} by hand")
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise NodeUnavailable(f"`npm ci` in {directory} took over {NPM_TIMEOUT:.0f} s") from error
    if done.returncode != 0:
        raise NodeUnavailable(
            f"`npm ci` in {directory} failed (exit {done.returncode}): {done.stderr[-1500:]}"
        )


class OfficialServer(LineServer):
    """The ``bench.mjs`` process: one JSON request per line in, one answer per line out."""

    def __init__(self, directory: Path = OFFICIAL_DIR) -> None:
        node = shutil.which("node")
        if node is None:
            raise NodeUnavailable("node is not on PATH")
        super().__init__(
            [node, "--expose-gc", "bench.mjs"], directory, "bench.mjs", NodeUnavailable
        )

    def request(self, message: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Send ``message``; return the answer.

        Raises:
            NodeUnavailable: the process died, timed out or answered ``ok: false``.
        """
        return super().request(message, timeout)

    def run(self, workload: Workload, mode: str = "agent") -> Sample:
        """One official run of a loaded workload, as a :class:`Sample`."""
        answer = self.request(
            {"op": "run", "name": workload.name, "mode": mode, **workload.to_json()}
        )
        sample = Sample(
            seconds=answer["seconds"],
            parts=answer["parts"],
            turns=answer["turns"],
            cpu_seconds=answer["cpuSeconds"],
        )
        if "rssGrowthBytes" in answer:
            sample.extra["rss_growth_bytes"] = float(answer["rssGrowthBytes"])
        return sample


def _per_turn(samples: list[Sample], *, cpu: bool) -> float:
    """The median milliseconds per turn, CPU time (when known) or wall time."""
    return median([_cpu_ms(sample) if cpu else _wall_ms(sample) for sample in samples])


def _cpu_ms(sample: Sample) -> float:
    """CPU milliseconds per turn of one run (wall time when CPU time is unknown)."""
    if sample.cpu_seconds is None:
        return _wall_ms(sample)
    return sample.cpu_seconds / sample.turns * 1000


def _wall_ms(sample: Sample) -> float:
    return sample.seconds / sample.turns * 1000


def _paired(top: list[Sample], bottom: list[Sample], *, cpu: bool) -> list[float]:
    """Per-round ratios of time per turn, ``top`` over ``bottom``."""
    per_turn = _cpu_ms if cpu else _wall_ms
    return [per_turn(a) / per_turn(b) for a, b in zip(top, bottom, strict=True)]


def _range(ratios: list[float]) -> str:
    """The lowest and highest per-round ratio: how far one round can stray."""
    return f"{min(ratios):.2f}-{max(ratios):.2f}x"


def _warmup_note(workload: str, warmups: dict[str, WarmUp]) -> str:
    """What warming each side took; says so when a side never stopped speeding up."""
    parts = [
        f"{name} {warmup.runs} runs ({warmup.first_ms:.3g} -> {warmup.last_ms:.3g} ms/turn"
        + ("" if warmup.steady else ", still getting faster")
        + ")"
        for name, warmup in warmups.items()
    ]
    note = f"{workload} warm-up: " + ", ".join(parts)
    unsteady = [
        name
        for name, warmup in warmups.items()
        if name.startswith("official") and not warmup.steady
    ]
    if unsteady:
        note += (
            f"; the official agent had not reached a steady time ({', '.join(unsteady)}): its "
            "speed-up over Python is overstated"
        )
    return note


def not_behind_verdict(workload: str, speedup: float) -> str:
    """The per-workload line of the target: ``not behind the official agent`` when the
    Python agent's CPU time per turn is at most the official agent's."""
    if speedup >= NOT_BEHIND:
        return f"{workload}: not behind the official agent ({speedup:.2f}x its speed, CPU time)"
    return (
        f"{workload}: BEHIND the official agent ({speedup:.2f}x its speed, CPU time): the "
        "target is missed"
    )


def ceiling_note(workload: str, target: float, ceiling: float) -> str | None:
    """The note for a speed-up target above its ceiling or within 25% of it (``None``
    when the target leaves the agent more room than that)."""
    if ceiling >= 1.25 * target:
        return None
    where = "above" if ceiling < target else "within 25% of"
    return (
        f"{workload}: the speed-up target {target:g}x is {where} the ceiling "
        f"({ceiling:.2f}x): an agent that did nothing with the parts but hand them to the "
        "reader would be that much faster than the official agent on this event loop"
    )


def trio_limit_ceiling(
    official_ms: float, floor_ms: float, trio_floor_ms: float, limit: float = 1.15
) -> float:
    """The most speed-up over the official agent an agent can have with trio within
    ``limit`` of asyncio, when its own work costs the same on both loops.

    Such an agent takes ``floor + work`` on asyncio and ``trio floor + work`` on trio; the
    ratio stays within ``limit`` only with ``work >= (trio floor - limit * floor) / (limit
    - 1)`` (none needed when trio's floor is itself within the limit), and the fastest
    such agent takes ``floor + that work``.
    """
    if limit <= 1:
        raise ValueError(f"the trio limit must be above 1, not {limit!r}")
    work = max(0.0, (trio_floor_ms - limit * floor_ms) / (limit - 1))
    return official_ms / (floor_ms + work)


def trio_limit_note(
    workload: str,
    target: float,
    limit: float,
    floor_ratio: float,
    ceiling: float,
    own_work_ratio: float | None,
) -> str | None:
    """The note for a speed-up target above :func:`trio_limit_ceiling` (``None`` when
    both targets can hold together)."""
    if ceiling >= target:
        return None
    measured = (
        ""
        if own_work_ratio is None
        else f" (this agent's own work measured {own_work_ratio:.2f}x on trio)"
    )
    return (
        f"{workload}: the speed-up target {target:g}x and trio within {limit:g}x of asyncio "
        f"exclude each other on these loops: trio's hand-off floor costs {floor_ratio:.2f}x "
        f"asyncio's, and an agent whose own work costs the same on both loops{measured} "
        f"needs enough of it to dilute that to {limit:g}x, which caps its speed-up at "
        f"{ceiling:.2f}x"
    )


def _own_work_ratio(
    agent: float, floor: float, trio_agent: float, trio_floor: float
) -> float | None:
    """The agent's own work (its time over the floor's) on trio over asyncio; ``None``
    when it measured no own work on asyncio."""
    if agent <= floor:
        return None
    return (trio_agent - trio_floor) / (agent - floor)


def _fresh_rss_mib(server: OfficialServer, workload: Workload) -> tuple[float, float]:
    """RSS growth per session of one run of ``workload`` in a fresh process, Python's and
    the official agent's, by the same protocol: a two-session warm-up run (imports, lazy
    schemas, compiled code), then the measured run, every session alive after a full
    collection. Runs before the workload's warm-up (the Node process is fresh then):
    after tens of runs, either process reuses memory earlier runs freed, and Python's
    growth reads zero."""
    server.run(dataclasses.replace(workload, sessions=2))
    official = server.run(workload).extra["rss_growth_bytes"]
    python = sessions_in_fresh_process(workload.sessions).extra["rss_growth_bytes"]
    return python / workload.sessions / MIB, official / workload.sessions / MIB


def measure(quick: bool, scale: float = 1.0) -> Section:
    """Run the official comparison.

    Args:
        quick: Four rounds over two Node processes instead of nine over three, and
            shorter warm-ups.
        scale: Multiplies every workload's size, turns and sessions (a smoke run; the
            published ratios are at scale 1).

    Returns:
        The section: one row per workload and its targets; a note and no rows when Node
        is missing.
    """
    section = Section(
        name="official",
        title="Python reference agent vs official @ai-sdk/harness agent (same scripted adapter)",
        columns=[
            Column("workload", "workload", "{}"),
            Column("python_cpu_ms_per_turn", "Python CPU ms/turn", "{:.3f}"),
            Column("official_cpu_ms_per_turn", "official CPU ms/turn", "{:.3f}"),
            Column("speedup_cpu_ratio", "speed-up (CPU)", "{:.2f}x"),
            Column("speedup_cpu_range", "per-round speed-up", "{}"),
            Column("python_wall_ms_per_turn", "Python wall ms/turn", "{:.3f}"),
            Column("official_wall_ms_per_turn", "official wall ms/turn", "{:.3f}"),
            Column("speedup_wall_ratio", "speed-up (wall)", "{:.2f}x"),
            Column("trio_over_asyncio_cpu_ratio", "trio/asyncio CPU", "{:.2f}x"),
            Column("speedup_uvloop_cpu_ratio", "speed-up on uvloop (CPU)", "{:.2f}x"),
            Column("speedup_floor_cpu_ratio", "speed-up ceiling (CPU)", "{:.2f}x"),
            Column("trio_floor_over_floor_cpu_ratio", "trio/asyncio floor", "{:.2f}x"),
            Column(
                "speedup_ceiling_within_trio_limit",
                "speed-up ceiling within the trio limit",
                "{:.2f}x",
            ),
            Column("python_rss_mib_per_session", "Python RSS MiB/session (fresh)", "{:.4f}"),
            Column("official_rss_mib_per_session", "official RSS MiB/session (fresh)", "{:.4f}"),
        ],
    )
    started = time.perf_counter()
    problem = node_problem()
    if problem is not None:
        section.notes.append(f"skipped: {problem}")
        return section
    ensure_installed()
    # Nine rounds: on a shared 2-core machine single rounds of the same build vary by a
    # factor of two, and the median of five moved by 15% between runs. They are split
    # over fresh Node processes (the module's docstring says why).
    processes = 2 if quick else OFFICIAL_PROCESSES
    rounds_per_process = 2 if quick else 3
    uvloop = importlib.util.find_spec("uvloop") is not None
    if not uvloop:
        section.notes.append(
            "uvloop is not installed: `pip install uvloop` adds the Python agent on uvloop's "
            "event loop (for information; the targets are on the standard asyncio loop)"
        )
    with OfficialServer() as server:
        versions = server.request({"op": "versions"})
    section.notes.append(
        f"official: @ai-sdk/harness {versions.get('harness')} on Node "
        f"{versions.get('node')}; {processes * rounds_per_process} rounds (ABBA order) after "
        f"each side was warmed to a steady time, split over {processes} fresh Node processes "
        f"per workload ({rounds_per_process} rounds each)"
        + (f"; workloads scaled by {scale:g} (not the published sizes)" if scale != 1 else "")
    )
    for workload in WORKLOADS:
        _measure_workload(
            section, workload.scaled(scale), processes, rounds_per_process, quick, uvloop
        )
    section.seconds = time.perf_counter() - started
    return section


def _add_trio_floor(
    section: Section, row: dict[str, Any], samples: dict[str, list[Sample]], target: float
) -> None:
    """The trio floor's fields (and the note when the trio limit caps the speed-up below
    ``target``): per-round figures, medians, as every ratio of the row."""
    floor, trio_floor = samples["floor"], samples["trio_floor"]
    row["trio_floor_cpu_ms_per_turn"] = _per_turn(trio_floor, cpu=True)
    row["trio_floor_over_floor_cpu_ratio"] = median(_paired(trio_floor, floor, cpu=True))
    official, agent, trio = samples["official"], samples["asyncio"], samples["trio"]
    ceilings = [
        trio_limit_ceiling(_cpu_ms(o), _cpu_ms(f), _cpu_ms(t), TRIO_LIMIT)
        for o, f, t in zip(official, floor, trio_floor, strict=True)
    ]
    row["speedup_ceiling_within_trio_limit"] = median(ceilings)
    row["speedup_ceiling_within_trio_limit_range"] = _range(ceilings)
    own = [
        _own_work_ratio(_cpu_ms(a), _cpu_ms(f), _cpu_ms(t), _cpu_ms(tf))
        for a, f, t, tf in zip(agent, floor, trio, trio_floor, strict=True)
    ]
    measured = [ratio for ratio in own if ratio is not None]
    row["trio_own_work_ratio"] = median(measured) if measured else None
    note = trio_limit_note(
        row["workload"],
        target,
        TRIO_LIMIT,
        row["trio_floor_over_floor_cpu_ratio"],
        row["speedup_ceiling_within_trio_limit"],
        row["trio_own_work_ratio"],
    )
    if note is not None:
        section.notes.append(note)


def _measure_workload(
    section: Section,
    workload: Workload,
    processes: int,
    rounds_per_process: int,
    quick: bool,
    uvloop: bool,
) -> None:
    """Warm each side, run the interleaved rounds of one workload (``rounds_per_process``
    in each of ``processes`` fresh Node processes, one after another), add its row and
    targets."""
    turn = workload.parts()
    python_sides: list[tuple[str, Callable[[], Sample]]] = [
        ("asyncio", functools.partial(run_python, workload, turn=turn)),
        ("trio", functools.partial(run_python, workload, backend="trio", turn=turn)),
    ]
    if uvloop:
        python_sides.append(
            ("uvloop", functools.partial(run_python, workload, turn=turn, use_uvloop=True))
        )
    python_sides.append(("floor", functools.partial(run_python, workload, mode="floor", turn=turn)))
    python_sides.append(
        (
            "trio_floor",
            functools.partial(run_python, workload, mode="floor", backend="trio", turn=turn),
        )
    )
    max_runs = 20 if quick else 80
    # Each side warmed until its time per turn stops falling (V8's JIT takes tens of
    # runs; one warm-up round measured its warm-up), then interleaved rounds. Python's
    # sides are warmed once; every Node process is warmed before its rounds.
    warmups = {name: warm_until_steady(run, max_runs=max_runs) for name, run in python_sides}
    samples: dict[str, list[Sample]] = {"official": [], **{name: [] for name, _ in python_sides}}
    pids: list[int] = []
    by_process: list[float] = []
    fresh_rss: tuple[float, float] | None = None
    for number in range(processes):
        with OfficialServer() as server:
            server.request({"op": "load", "name": workload.name, "turn": turn})
            pids.append(server.pid)
            if number == 0 and workload.sessions > 1:
                fresh_rss = _fresh_rss_mib(server, workload)
            official_run: Callable[[], Sample] = functools.partial(server.run, workload)
            warmups["official" if number == 0 else f"official {number + 1}"] = warm_until_steady(
                official_run, max_runs=max_runs
            )
            # (the official agent third, as it always ran: ABBA keeps the order fair)
            variants: list[tuple[str, Callable[[], Sample]]] = [
                *python_sides[:2],
                ("official", official_run),
                *python_sides[2:],
            ]
            got = interleave_sync(rounds_per_process, variants)
        for name, runs in got.items():
            samples[name].extend(runs)
        by_process.append(_per_turn(got["official"], cpu=True))
    python, trio, official = samples["asyncio"], samples["trio"], samples["official"]
    speedups_cpu = _paired(official, python, cpu=True)
    speedup_cpu = median(speedups_cpu)
    row: dict[str, Any] = {
        "workload": workload.name,
        "harness_parts_per_turn": len(turn),
        "turns": workload.turns,
        "sessions": workload.sessions,
        "rounds": processes * rounds_per_process,
        "python_consumer_parts_per_turn": python[0].parts / python[0].turns,
        "official_consumer_parts_per_turn": official[0].parts / official[0].turns,
        "python_cpu_ms_per_turn": _per_turn(python, cpu=True),
        "official_cpu_ms_per_turn": _per_turn(official, cpu=True),
        "trio_cpu_ms_per_turn": _per_turn(trio, cpu=True),
        "python_wall_ms_per_turn": _per_turn(python, cpu=False),
        "official_wall_ms_per_turn": _per_turn(official, cpu=False),
        "speedup_cpu_ratio": speedup_cpu,
        "speedup_wall_ratio": median(_paired(official, python, cpu=False)),
        "trio_over_asyncio_cpu_ratio": median(_paired(trio, python, cpu=True)),
        "speedup_cpu_samples": speedups_cpu,
        "speedup_cpu_range": _range(speedups_cpu),
        "warmup": {name: asdict(warmup) for name, warmup in warmups.items()},
        "official_pids": pids,
        "official_cpu_ms_per_turn_by_process": by_process,
    }
    # The informational sides: uvloop's loop (when installed) and the hand-off floor
    # (whose speed-up over the official agent is the ceiling any agent could reach).
    for side in ("uvloop", "floor") if uvloop else ("floor",):
        row[f"{side}_cpu_ms_per_turn"] = _per_turn(samples[side], cpu=True)
        side_speedups = _paired(official, samples[side], cpu=True)
        row[f"speedup_{side}_cpu_ratio"] = median(side_speedups)
        row[f"speedup_{side}_cpu_range"] = _range(side_speedups)
        row[f"{side}_over_asyncio_cpu_ratio"] = median(_paired(samples[side], python, cpu=True))
    ceiling = ceiling_note(workload.name, NOT_BEHIND, row["speedup_floor_cpu_ratio"])
    if ceiling is not None:
        section.notes.append(ceiling)
    _add_trio_floor(section, row, samples, NOT_BEHIND)
    if fresh_rss is not None:
        row["python_rss_mib_per_session"], row["official_rss_mib_per_session"] = fresh_rss
    section.rows.append(row)
    if row["python_consumer_parts_per_turn"] != row["official_consumer_parts_per_turn"]:
        section.notes.append(
            f"{workload.name}: the agents emitted different numbers of consumer parts "
            f"per turn ({row['python_consumer_parts_per_turn']:g} vs "
            f"{row['official_consumer_parts_per_turn']:g}); the runs are not like for like"
        )
    section.notes.append(_warmup_note(workload.name, warmups))
    if len(by_process) > 1:
        section.notes.append(
            f"{workload.name}: the official agent's CPU ms/turn by Node process (medians of "
            "its rounds): " + ", ".join(f"{ms:.4g}" for ms in by_process)
        )
    section.targets.append(
        Target(
            id=f"official.not-behind.{workload.name}",
            description=(
                f"not behind the official agent on {workload.name}: official CPU time per "
                "turn over the Python agent's"
            ),
            limit=NOT_BEHIND,
            measured=speedup_cpu,
            unit="x",
            at_least=True,
        )
    )
    section.notes.append(not_behind_verdict(workload.name, speedup_cpu))
    section.targets.append(
        Target(
            id=f"official.trio.{workload.name}",
            description=f"Python CPU time per turn on trio over asyncio, {workload.name}",
            limit=TRIO_LIMIT,
            measured=row["trio_over_asyncio_cpu_ratio"],
            unit="x",
        )
    )
