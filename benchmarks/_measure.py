"""What every benchmark shares: samples, interleaved rounds, memory, targets, the machine.

Machines here are noisy (shared, 2 cores), so a benchmark never compares two numbers
taken minutes apart: the variants it compares run in the same rounds, alternating their
order (ABBA) so drift and warm-up hit both sides alike, and each side reports its median.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

__all__ = [
    "REPOSITORY",
    "Column",
    "Sample",
    "Section",
    "Stopwatch",
    "Target",
    "WarmUp",
    "hot_path",
    "interleave",
    "interleave_sync",
    "machine",
    "median",
    "memory_status",
    "paired_ratios",
    "reset_peak_rss",
    "source_contains",
    "warm_until_steady",
]

#: The repository root (benchmarks/ sits at its top).
REPOSITORY = Path(__file__).resolve().parents[1]

_PROJECT_DIRS = ("reference", "fake_harness", "spec", "conformance")


@dataclass
class Sample:
    """One timed run: wall seconds and how much work it did.

    Attributes:
        seconds: Wall time of the timed part.
        parts: Stream parts seen (consumer parts for the agent, harness parts alone).
        turns: Turns completed.
        extra: Anything else worth keeping (phase times, byte counts).
        cpu_seconds: CPU time of this process (all threads) over the same span: less
            sensitive to other processes on a shared machine, blind to child processes.
    """

    seconds: float
    parts: int = 0
    turns: int = 0
    extra: dict[str, float] = field(default_factory=dict)
    cpu_seconds: float | None = None

    @property
    def parts_per_second(self) -> float:
        """Parts per wall second."""
        return self.parts / self.seconds

    @property
    def turns_per_second(self) -> float:
        """Turns per wall second."""
        return self.turns / self.seconds


class Stopwatch:
    """Wall and CPU time from construction to :meth:`sample`."""

    def __init__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def sample(self, *, parts: int = 0, turns: int = 0) -> Sample:
        """A :class:`Sample` of the time elapsed so far."""
        return Sample(
            seconds=time.perf_counter() - self._wall,
            parts=parts,
            turns=turns,
            cpu_seconds=time.process_time() - self._cpu,
        )


def paired_ratios(
    numerators: Sequence[Sample], denominators: Sequence[Sample], *, cpu: bool = False
) -> list[float]:
    """Per-round ratios of seconds per part (rounds pair the runs that ran side by side).

    Pairing cancels drift between rounds (another process starting, a thermal change):
    both runs of a round saw the same machine.
    """
    ratios = []
    for numerator, denominator in zip(numerators, denominators, strict=True):
        if cpu:
            assert numerator.cpu_seconds is not None
            assert denominator.cpu_seconds is not None
            top, bottom = numerator.cpu_seconds, denominator.cpu_seconds
        else:
            top, bottom = numerator.seconds, denominator.seconds
        ratios.append((top / max(numerator.parts, 1)) / (bottom / max(denominator.parts, 1)))
    return ratios


def median(values: Sequence[float]) -> float:
    """The median (the benchmarks' robust statistic on a noisy machine)."""
    return float(statistics.median(values))


async def interleave(
    rounds: int,
    variants: Sequence[tuple[str, Callable[[], Awaitable[Sample]]]],
    *,
    warmup: int = 1,
) -> dict[str, list[Sample]]:
    """Run every variant once per round, alternating the order, after ``warmup`` rounds.

    Args:
        rounds: Measured rounds (each variant runs once per round).
        variants: ``(name, run)`` pairs; ``run`` returns a :class:`Sample`.
        warmup: Unrecorded rounds first (imports, caches, lazy pydantic schemas).

    Returns:
        The samples of each variant, in round order.
    """
    samples: dict[str, list[Sample]] = {name: [] for name, _ in variants}
    for number in range(warmup + rounds):
        order = list(variants) if number % 2 == 0 else list(reversed(variants))
        for name, run in order:
            gc.collect()
            sample = await run()
            if number >= warmup:
                samples[name].append(sample)
    return samples


def interleave_sync(
    rounds: int,
    variants: Sequence[tuple[str, Callable[[], Sample]]],
    *,
    warmup: int = 1,
) -> dict[str, list[Sample]]:
    """:func:`interleave` for variants that run their own event loop (or another process)."""
    samples: dict[str, list[Sample]] = {name: [] for name, _ in variants}
    for number in range(warmup + rounds):
        order = list(variants) if number % 2 == 0 else list(reversed(variants))
        for name, run in order:
            gc.collect()
            sample = run()
            if number >= warmup:
                samples[name].append(sample)
    return samples


@dataclass(frozen=True)
class WarmUp:
    """How a variant was warmed before its measured rounds.

    Attributes:
        runs: Runs made (none of them measured).
        steady: Whether its time per turn stopped falling before a cap was hit.
        first_ms: CPU (or wall) milliseconds per turn of the first run.
        last_ms: The median of the last runs' (the plateau when ``steady``).
    """

    runs: int
    steady: bool
    first_ms: float
    last_ms: float


def warm_until_steady(
    run: Callable[[], Sample],
    *,
    window: int = 8,
    confirmations: int = 3,
    tolerance: float = 0.05,
    max_runs: int = 80,
    max_seconds: float = 45.0,
) -> WarmUp:
    """Run ``run`` until its time per turn stops falling: ``confirmations`` runs in a row
    after each of which the median of the last ``window`` runs is no more than
    ``tolerance`` below the median of the ``window`` before them. At most ``max_runs``
    runs and about ``max_seconds``.

    A JIT warms over many runs, not one, and in steps: the official agent on Node pauses
    on a plateau for a few runs before it settles from about its twentieth, while
    Python's runs take the same time from the first. A comparison after a single warm-up
    round measures the JIT's warm-up, not the agent; a short window or a single
    confirmation stops on the pause. CPU time where the
    samples have it, else wall time.
    """
    times: list[float] = []
    started = time.perf_counter()
    steady = False
    confirmed = 0
    while len(times) < max_runs:
        gc.collect()
        sample = run()
        seconds = sample.cpu_seconds if sample.cpu_seconds is not None else sample.seconds
        times.append(seconds / max(sample.turns, 1))
        if len(times) >= 2 * window:
            recent = statistics.median(times[-window:])
            before = statistics.median(times[-2 * window : -window])
            confirmed = confirmed + 1 if recent >= (1 - tolerance) * before else 0
            if confirmed >= confirmations:
                steady = True
                break
        if time.perf_counter() - started > max_seconds:
            break
    return WarmUp(
        runs=len(times),
        steady=steady,
        first_ms=times[0] * 1e3,
        last_ms=statistics.median(times[-window:]) * 1e3,
    )


# -- memory -------------------------------------------------------------------------------


def memory_status() -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak RSS) of this process in bytes, from ``/proc``.

    Returns:
        ``{"rss": ..., "peak_rss": ...}``; empty where ``/proc`` is missing (not Linux).
    """
    status: dict[str, int] = {}
    try:
        text = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return status
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            status["rss" if key == "VmRSS" else "peak_rss"] = int(value.split()[0]) * 1024
    return status


def reset_peak_rss() -> bool:
    """Reset the kernel's peak RSS mark (``VmHWM``) to the current RSS.

    Returns:
        Whether it worked (Linux 4.0+, writable ``/proc/self/clear_refs``).
    """
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


# -- results ------------------------------------------------------------------------------


@dataclass
class Target:
    """A goal stated as a ratio or a per-session figure, so it holds on any machine.

    Attributes:
        id: Stable id (``agent.overhead.text-heavy``).
        description: What is compared, in one sentence.
        limit: The bound: a ceiling, or a floor with ``at_least``.
        measured: The measurement (``None`` when it could not be taken).
        unit: ``x`` for ratios, ``MiB`` ...
        at_least: The limit is a floor (a speed-up), not a ceiling.
    """

    id: str
    description: str
    limit: float
    measured: float | None
    unit: str
    at_least: bool = False

    @property
    def met(self) -> bool:
        """Whether the measurement is on the right side of the limit (or equal to it)."""
        if self.measured is None:
            return False
        return self.measured >= self.limit if self.at_least else self.measured <= self.limit

    @property
    def bound(self) -> str:
        """``<= 3x`` or ``>= 2x``."""
        return f"{'>=' if self.at_least else '<='} {self.limit:g}{self.unit}"

    def to_json(self, section: str) -> dict[str, Any]:
        """The JSON form (with ``met`` and the section it belongs to)."""
        return {**asdict(self), "section": section, "met": self.met}


@dataclass(frozen=True)
class Column:
    """How the console table shows one row key."""

    key: str
    header: str
    format: str = "{:.2f}"

    def render(self, row: dict[str, Any]) -> str:
        """The cell text (``-`` when the row lacks the key)."""
        value = row.get(self.key)
        if value is None:
            return "-"
        if isinstance(value, str):
            return value
        return self.format.format(value)


@dataclass
class Section:
    """What one benchmark produced: rows for the table, targets, notes.

    Attributes:
        name: The ``--only`` name.
        title: The table title.
        columns: What the console table shows (the JSON keeps every row key).
        rows: One dict per measured case.
        targets: Targets this section decides.
        notes: Findings: profiles of missed targets, skips and why, caveats.
        seconds: How long the benchmark took.
    """

    name: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "title": self.title,
            "seconds": self.seconds,
            "rows": self.rows,
            "targets": [target.to_json(self.name) for target in self.targets],
            "notes": self.notes,
        }


# -- worker processes ------------------------------------------------------------------------


class LineServer:
    """A child process that answers each JSON line it is sent with one JSON line holding
    ``ok`` (and ``error`` when not ok).

    Attributes:
        name: What the messages call the process (``bench.mjs``).
        failure: The exception raised when it dies, times out or answers ``ok: false``.
    """

    def __init__(
        self, argv: Sequence[str], cwd: Path, name: str, failure: type[Exception] = RuntimeError
    ) -> None:
        self.name = name
        self.failure = failure
        self._process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    @property
    def pid(self) -> int:
        """The process's id."""
        return self._process.pid

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``message``; return the answer.

        Raises:
            Exception: :attr:`failure`, when the process died, timed out or answered
                ``ok: false``.
        """
        process = self._process
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
        except BrokenPipeError as error:
            raise self.failure(f"{self.name} exited: {self._stderr()}") from error
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise self.failure(f"{self.name} did not answer {message.get('op')!r} in {timeout:g} s")
        line = process.stdout.readline()
        if not line:
            raise self.failure(f"{self.name} exited: {self._stderr()}")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise self.failure(
                f"{self.name} failed on {message.get('op')!r}: {answer.get('error')}"
            )
        return answer

    def _stderr(self) -> str:
        self.close()
        assert self._process.stderr is not None
        return self._process.stderr.read()[-1500:] or "(no stderr)"

    def close(self) -> None:
        """End the process (closing stdin ends its loop; kill it if it lingers)."""
        process = self._process
        if process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.close()
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait(timeout=10)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# -- the machine --------------------------------------------------------------------------


def _command(*argv: str) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine() -> dict[str, Any]:
    """What the numbers were taken on: ``nproc``, ``lscpu | head``, Python, the commit."""
    lscpu = _command("lscpu")
    commit = _command("git", "-C", str(REPOSITORY), "rev-parse", "--short", "HEAD")
    dirty = _command("git", "-C", str(REPOSITORY), "status", "--porcelain")
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 0
    return {
        "nproc": usable,
        "cpu_count": os.cpu_count(),
        "lscpu_head": lscpu.splitlines()[:10] if lscpu else [],
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "memory_total_mib": _total_memory_mib(),
        # other processes on the machine while the benchmark ran (1, 5, 15 minutes)
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "commit": None if commit is None else commit + ("-dirty" if dirty else ""),
    }


def _total_memory_mib() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


# -- profiles of missed targets -------------------------------------------------------------


def source_contains(location: str, needle: str) -> bool:
    """Whether the source of ``module:qualified.name`` still contains ``needle``.

    Findings name code by location; they are shown only while that code is unchanged, so
    a fixed hot path does not keep its note.

    Args:
        location: ``"harness_testkit.reference._slice_runner:SliceRunner._next"``.
        needle: Text the unfixed code contains.

    Returns:
        False when the location no longer exists or its source lacks ``needle``.
    """
    module_name, _, qualified = location.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for name in qualified.split("."):
            target = getattr(target, name)
        return needle in inspect.getsource(target)
    except (ImportError, AttributeError, OSError, TypeError):
        return False


async def hot_path(run: Callable[[], Awaitable[object]], *, top: int = 6) -> str | None:
    """Profile ``run`` with pyinstrument and name the project functions the time goes to.

    Each sample's self time is charged to the nearest project frame on its stack
    (``reference/``, ``fake_harness/``, ``spec/``, ``conformance/``), so a function's
    share includes the library code (anyio, pydantic) it calls directly.

    Args:
        run: The workload (awaited once, inside the running event loop).
        top: How many functions to name.

    Returns:
        ``"pyinstrument: reference/_slice_runner.py SliceRunner._next 54%, ..."``, or ``None``
        when pyinstrument is not installed.
    """
    try:
        from pyinstrument import Profiler
    except ImportError:
        return None
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    try:
        await run()
    finally:
        session = profiler.stop()
    root = session.root_frame()
    if root is None or root.time <= 0:
        return None
    charged: dict[str, float] = {}
    stack: list[tuple[Any, str | None]] = [(root, None)]
    while stack:
        frame, owner = stack.pop()
        name = _project_name(frame)
        if name is not None:
            owner = name
        own = frame.time - sum(child.time for child in frame.children)
        if owner is not None and own > 0:
            charged[owner] = charged.get(owner, 0.0) + own
        stack.extend((child, owner) for child in frame.children)
    total = root.time
    ranked = sorted(charged.items(), key=lambda item: item[1], reverse=True)[:top]
    return "pyinstrument: " + ", ".join(
        f"{name} {share / total:.0%}" for name, share in ranked if share / total >= 0.01
    )


def _project_name(frame: Any) -> str | None:
    path = getattr(frame, "file_path", None)
    if not path:
        return None
    try:
        relative = Path(path).resolve().relative_to(REPOSITORY)
    except ValueError:
        return None
    if relative.parts[0] not in _PROJECT_DIRS:
        return None
    qualified = f"{frame.class_name}.{frame.function}" if frame.class_name else frame.function
    return f"{relative.as_posix()} {qualified}"
