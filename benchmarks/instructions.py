"""The agent's overhead in instructions: ratios that do not drift with the machine.

CPU time on a shared machine drifts between whole runs (by up to 45% on the machine the
README's tables come from), so a CPU-time ratio near its limit is met in one run and
missed in the next. The number of instructions a run executes does not depend on other
load. This section counts them with valgrind's callgrind tool, for the text-heavy,
tool-heavy and short-turn workloads of :mod:`benchmarks._scripted`, run by the reference
agent and by the minimal scripted adapter alone (the baseline of the agent overhead
targets), under asyncio.

Each count is taken twice in a fresh interpreter (``PYTHONHASHSEED=0``): once with ``n``
turns after one warm-up turn, once with the warm-up turn only. The difference divided by
``n`` is the cost of one turn alone; imports, set-up and warm-up cancel out. The two runs
of a pair go side by side (the counts do not depend on it).

Trio is left out: under valgrind its counts are not comparable with asyncio's (the
minimal adapter alone executes 5x the instructions of asyncio on short turns but takes
1.3x the CPU time outside valgrind). Needs ``valgrind`` on ``PATH``; runs only when asked
for (``--only instructions``, a few minutes).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ._measure import REPOSITORY, Column, Section, Target

__all__ = ["Case", "count_instructions", "measure", "parse_collected", "valgrind_problem"]

#: Target: the agent's instructions per turn over the minimal adapter's (the CPU-time
#: targets' limit, judged on counts).
OVERHEAD_LIMIT = 3.0
#: Seconds one run under valgrind may take (a full text-heavy run takes about a minute).
RUN_TIMEOUT = 900.0

_COLLECTED = re.compile(r"==\d+== Collected : (\d+)")


@dataclass(frozen=True)
class Case:
    """One workload as counted: its parts and how many turns the counted run times."""

    name: str
    kind: str
    size: int
    turns: int


#: Full-size cases (the workload sizes of the CPU-time tables).
CASES = (
    Case("text-heavy", "text", 20_000, 1),
    Case("tool-heavy", "tools", 200, 3),
    Case("short-turns", "short", 0, 200),
)
#: ``--quick`` cases: a tenth of the work.
QUICK_CASES = (
    Case("text-heavy", "text", 2_000, 1),
    Case("tool-heavy", "tools", 20, 3),
    Case("short-turns", "short", 0, 20),
)
#: The cases whose overhead is a target (as the CPU-time ones).
_TARGETED = ("text-heavy", "tool-heavy")


def valgrind_problem() -> str | None:
    """Why the counts cannot be taken here (``None``: valgrind is on ``PATH``)."""
    if shutil.which("valgrind") is None:
        return "valgrind is not on PATH (install it, e.g. `apt-get install valgrind`)"
    return None


def parse_collected(stderr: str) -> int:
    """The instruction count callgrind reports at exit.

    Raises:
        RuntimeError: the output has no count (valgrind or the program failed).
    """
    found = _COLLECTED.findall(stderr)
    if not found:
        tail = "\n".join(stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"callgrind reported no instruction count; its output ended:\n{tail}")
    return int(found[-1])


def _count_run(case: Case, mode: str, turns: int) -> int:
    """Instructions of one fresh interpreter running ``case`` (warm-up plus ``turns``)."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "benchmarks.instructions",
        case.kind,
        str(case.size),
        mode,
        str(turns),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            command,
            cwd=REPOSITORY,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(
            f"{case.name} ({mode}) under callgrind took over {RUN_TIMEOUT:.0f} s"
        ) from None
    if done.returncode != 0:
        raise RuntimeError(
            f"{case.name} ({mode}) under callgrind exited with {done.returncode}:\n"
            + "\n".join(done.stderr.strip().splitlines()[-15:])
        )
    return parse_collected(done.stderr)


def count_instructions(case: Case, mode: str) -> float:
    """Instructions per turn of ``case`` run by ``mode`` (``agent`` or ``adapter``).

    Raises:
        ValueError: an unknown mode.
        RuntimeError: a counted run failed or timed out.
    """
    if mode not in ("agent", "adapter"):
        raise ValueError(f"unknown mode {mode!r}; use 'agent' or 'adapter'")
    with ThreadPoolExecutor(max_workers=2) as pool:
        timed = pool.submit(_count_run, case, mode, case.turns)
        base = pool.submit(_count_run, case, mode, 0)
        return (timed.result() - base.result()) / case.turns


def measure(quick: bool) -> Section:
    """Count the cases (agent and adapter alone) and report the overhead ratios.

    Raises:
        RuntimeError: valgrind is missing, or a counted run failed.
    """
    problem = valgrind_problem()
    if problem is not None:
        raise RuntimeError(f"cannot count instructions: {problem}")
    started = time.perf_counter()
    section = Section(
        name="instructions",
        title="Instructions per turn (callgrind, asyncio): agent over the minimal adapter",
        columns=[
            Column("workload", "workload", "{}"),
            Column("size", "deltas or steps", "{:,}"),
            Column("turns", "turns counted", "{:,}"),
            Column("agent_instructions", "agent instructions/turn", "{:,.0f}"),
            Column("adapter_instructions", "adapter instructions/turn", "{:,.0f}"),
            Column("overhead", "overhead", "{:.2f}x"),
        ],
    )
    for case in QUICK_CASES if quick else CASES:
        agent = count_instructions(case, "agent")
        adapter = count_instructions(case, "adapter")
        overhead = agent / adapter
        section.rows.append(
            {
                "workload": case.name,
                "size": case.size or 4,
                "turns": case.turns,
                "agent_instructions": agent,
                "adapter_instructions": adapter,
                "overhead": overhead,
            }
        )
        if case.name in _TARGETED:
            section.targets.append(
                Target(
                    id=f"instructions.overhead.{case.name}",
                    description=(
                        f"agent instructions per turn over the minimal scripted adapter "
                        f"alone, {case.name} (callgrind, asyncio)"
                    ),
                    limit=OVERHEAD_LIMIT,
                    measured=overhead,
                    unit="x",
                )
            )
    section.notes.append(
        "A run of n turns minus a run of the warm-up alone, in fresh interpreters with "
        "PYTHONHASHSEED=0: the counts do not depend on the machine's load and repeat to "
        "within about 1% at full size. The CPU-time targets stay the ones the issue "
        "states. Trio is not counted (its counts under valgrind are not comparable)."
    )
    if quick:
        section.notes.append("--quick: a tenth of the work per case; ratios only indicative.")
    section.seconds = time.perf_counter() - started
    return section


def _child(argv: list[str]) -> None:
    """Run one counted case (the program callgrind runs)."""
    import anyio

    from ._scripted import ScriptedAdapter, Workload, _adapter_turns, _agent_turns

    kind, size, mode, turns = argv[0], int(argv[1]), argv[2], int(argv[3])
    if kind not in ("text", "tools", "short"):
        raise SystemExit(f"unknown workload kind {kind!r}; use text, tools or short")
    # The workload builds the turn's parts, as for the CPU-time tables.
    adapter = ScriptedAdapter(Workload("counted", kind, size=size).parts())  # type: ignore[arg-type]  # kind checked above
    run = _agent_turns if mode == "agent" else _adapter_turns
    anyio.run(run, adapter, 1, 1)  # the warm-up turn (both runs of a pair have it)
    if turns:
        anyio.run(run, adapter, 1, turns)


if __name__ == "__main__":
    _child(sys.argv[1:])
