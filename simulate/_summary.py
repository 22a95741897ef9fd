"""What a simulation reports, kept in memory bounded by the concurrency, not the run's size.

A finished session's report is not kept: it is the ``session-end`` line of the session's
own transcript (status, counts, error, slice latencies). The run keeps only running
totals (:class:`SimulationSummary`): counts, how many sessions ended how, a
:class:`LatencySketch` of every slice latency and the first few failures. Reports are read
back from the transcripts when asked for (:class:`SessionReports`), one at a time, and
``summary.json`` is written entry by entry.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, overload

from harness_testkit import __version__
from harness_testkit.spec import ConsumerPart

__all__ = [
    "FAILURES_KEPT",
    "VOLATILE_FIELDS",
    "LatencySketch",
    "SessionCounts",
    "SessionReport",
    "SessionReports",
    "SimulationSummary",
    "TranscriptWriter",
    "percentile",
    "read_last_line",
    "session_id_for",
]

#: Keys whose values differ between two runs of the same scenario and seed (measured
#: with a monotonic clock or read from the wall clock); everything else is reproducible.
VOLATILE_FIELDS: frozenset[str] = frozenset({"latencySeconds", "latency", "durationSeconds"})

#: How many failed sessions' reports the summary keeps (the CLI prints them).
FAILURES_KEPT = 5

SessionStatusName = Literal["completed", "failed", "cancelled"]

# Tool names under which the agent reports runtime file changes and compactions.
_FILE_CHANGE_TOOL = "fileChange"
_COMPACTION_TOOL = "compaction"
# The last line of a transcript is read backwards in chunks of this size.
_TAIL_CHUNK = 8192


def session_id_for(seed: int, index: int) -> str:
    """The deterministic id of session ``index`` of a run with ``seed``."""
    return f"sim-{seed}-{index}"


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-th percentile (``0 < q <= 100``); ``None`` without values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


class LatencySketch:
    """Latency samples in logarithmic buckets: percentiles within a relative error.

    Memory depends on the range of the values (at most about 2,100 buckets from a
    nanosecond to a million seconds at 1 %), never on how many were added, so a run of a
    million sessions summarises its latencies in the same space as a run of ten. The
    percentile is nearest-rank over the buckets, reported as the value the bucket stands
    for: within ``relative_error`` of the exact nearest-rank sample (the DDSketch bound).

    Args:
        relative_error: The bound on ``|reported - exact| / exact``, in ``(0, 1)``.
    """

    #: Values are clamped into this range (seconds) before bucketing.
    SMALLEST = 1e-9
    LARGEST = 1e6

    def __init__(self, relative_error: float = 0.01) -> None:
        if not 0 < relative_error < 1:
            raise ValueError(f"relative_error must be in (0, 1), not {relative_error!r}")
        self.relative_error = relative_error
        self._gamma = (1 + relative_error) / (1 - relative_error)
        self._log_gamma = math.log(self._gamma)
        self._buckets: dict[int, int] = {}
        self.samples = 0

    def add(self, value: float) -> None:
        """Count one sample (negative, NaN and tiny values count as the smallest)."""
        if not value >= self.SMALLEST:  # also NaN
            value = self.SMALLEST
        key = math.ceil(math.log(min(value, self.LARGEST)) / self._log_gamma)
        self._buckets[key] = self._buckets.get(key, 0) + 1
        self.samples += 1

    def update(self, values: Sequence[float]) -> None:
        """Count every value of ``values``."""
        for value in values:
            self.add(value)

    @property
    def buckets(self) -> int:
        """How many buckets are in use (what the sketch's memory grows with)."""
        return len(self._buckets)

    def percentile(self, q: float) -> float | None:
        """The nearest-rank ``q``-th percentile (``0 < q <= 100``); ``None`` when empty."""
        if not self.samples:
            return None
        rank = max(1, math.ceil(q / 100 * self.samples))
        seen = 0
        for key in sorted(self._buckets):
            seen += self._buckets[key]
            if seen >= rank:
                # The bucket holds (gamma^(key-1), gamma^key]; this point is within
                # relative_error of both ends.
                return 2 * self._gamma**key / (self._gamma + 1)
        raise AssertionError("unreachable: the ranks add up to the sample count")

    def to_wire(self) -> dict[str, Any]:
        """``{unit, samples, p50, p90, p99, relativeError}``."""
        return {
            "unit": "seconds",
            "samples": self.samples,
            "p50": self.percentile(50),
            "p90": self.percentile(90),
            "p99": self.percentile(99),
            "relativeError": self.relative_error,
        }


@dataclass
class SessionCounts:
    """What happened in a session (or a run), counted from consumer parts and actions.

    ``denials`` counts denied tool calls (a denied approval, an automatic denial, an
    inactive host tool), once per call; the session runner counts them (it sees which
    call a part belongs to), :meth:`count_part` counts the rest.
    """

    turns: int = 0
    slices: int = 0
    steps: int = 0
    tool_calls: int = 0
    approvals: int = 0
    file_changes: int = 0
    compactions: int = 0
    tool_errors: int = 0
    denials: int = 0
    errors: int = 0

    def count_part(self, part: ConsumerPart) -> None:
        """Count one consumer part."""
        kind = part.type
        if kind == "finish-step":
            self.steps += 1
        elif kind == "tool-call":
            name = getattr(part, "tool_name", "")
            if name == _FILE_CHANGE_TOOL:
                self.file_changes += 1
            elif name == _COMPACTION_TOOL:
                self.compactions += 1
            else:
                self.tool_calls += 1
        elif kind == "tool-approval-request":
            self.approvals += 1
        elif kind == "tool-error":
            self.tool_errors += 1
        elif kind in ("error", "abort"):
            self.errors += 1

    def add(self, other: SessionCounts) -> None:
        """Add ``other``'s counts to these."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_wire(self) -> dict[str, int]:
        """camelCase counts."""
        return {
            "turns": self.turns,
            "slices": self.slices,
            "steps": self.steps,
            "toolCalls": self.tool_calls,
            "approvals": self.approvals,
            "fileChanges": self.file_changes,
            "compactions": self.compactions,
            "toolErrors": self.tool_errors,
            "denials": self.denials,
            "errors": self.errors,
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> SessionCounts:
        """The counts of a :meth:`to_wire` document (missing keys count zero)."""
        counts = cls()
        for name, key in zip(cls.__dataclass_fields__, counts.to_wire(), strict=True):
            value = wire.get(key, 0)
            setattr(counts, name, value if isinstance(value, int) else 0)
        return counts


def _exact_latency(values: Sequence[float]) -> dict[str, Any]:
    return {
        "unit": "seconds",
        "samples": len(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
    }


@dataclass
class SessionReport:
    """How one session went.

    Attributes:
        session_id: ``sim-<seed>-<n>``.
        status: ``completed``, ``failed`` (an action could not be applied or raised) or
            ``cancelled`` (the run was interrupted).
        counts: Its counts.
        latencies: Seconds per turn slice (prompt and continuations), monotonic clock.
        error: What failed, when it failed.
        transcript: The transcript file.
        timed: The latencies are written to the transcript and the summary entry (the
            run's ``timings`` option); a report read back from a transcript without
            them has no latencies.
    """

    session_id: str
    status: SessionStatusName = "completed"
    counts: SessionCounts = field(default_factory=SessionCounts)
    latencies: list[float] = field(default_factory=list)
    error: str | None = None
    transcript: Path | None = None
    timed: bool = True

    def to_wire(self, out_dir: Path) -> dict[str, Any]:
        """The summary entry of the session (its latency percentiles, exact, when
        :attr:`timed`)."""
        entry: dict[str, Any] = {
            "sessionId": self.session_id,
            "status": self.status,
            "counts": self.counts.to_wire(),
        }
        if self.timed:
            entry["latency"] = _exact_latency(self.latencies)
        if self.error is not None:
            entry["error"] = self.error
        if self.transcript is not None:
            entry["transcript"] = self.transcript.relative_to(out_dir).as_posix()
        return entry

    def end_line(self) -> dict[str, Any]:
        """The transcript's ``session-end`` line, from which :meth:`from_transcript`
        rebuilds this report."""
        line: dict[str, Any] = {
            "kind": "session-end",
            "status": self.status,
            "counts": self.counts.to_wire(),
        }
        if self.timed:
            line["latencySeconds"] = [round(value, 6) for value in self.latencies]
        if self.error is not None:
            line["error"] = self.error
        return line

    @classmethod
    def from_transcript(cls, session_id: str, path: Path) -> SessionReport:
        """The report a transcript's ``session-end`` line records.

        A transcript without one (its process was killed mid-session) or without a file
        reads as ``cancelled``, with the reason as its error.
        """
        try:
            last = read_last_line(path)
        except OSError as problem:
            return cls(
                session_id,
                "cancelled",
                error=f"no transcript: {problem}",
                transcript=path,
                timed=False,
            )
        try:
            line = json.loads(last) if last else None
        except ValueError:
            line = None
        if not isinstance(line, dict) or line.get("kind") != "session-end":
            return cls(
                session_id,
                "cancelled",
                error="the transcript ends without a session-end line",
                transcript=path,
                timed=False,
            )
        status = line.get("status")
        latencies = line.get("latencySeconds")
        message = line.get("error")
        return cls(
            session_id,
            status if status in ("completed", "failed", "cancelled") else "cancelled",
            SessionCounts.from_wire(line.get("counts") or {}),
            [float(value) for value in latencies if isinstance(value, int | float)]
            if isinstance(latencies, list)
            else [],
            message if isinstance(message, str) else None,
            path,
            timed=isinstance(latencies, list),
        )


def read_last_line(path: Path) -> str:
    """The last non-empty line of a text file, read from its end (UTF-8)."""
    with path.open("rb") as file:
        end = file.seek(0, 2)
        tail = b""
        position = end
        while position > 0:
            step = min(_TAIL_CHUNK, position)
            position -= step
            file.seek(position)
            tail = file.read(step) + tail
            stripped = tail.rstrip(b"\n")
            if b"\n" in stripped:
                return stripped.rsplit(b"\n", 1)[1].decode("utf-8")
        return tail.rstrip(b"\n").decode("utf-8")


class SessionReports(Sequence[SessionReport]):
    """The reports of a run's sessions, in index order, read from their transcripts.

    Nothing is cached: each access reads the one transcript's last line, so holding this
    sequence costs nothing whatever the run's size.

    Args:
        sessions_dir: The run's ``sessions`` folder.
        seed: The run's seed (it names the files).
        started: How many sessions started (indices ``0 .. started - 1``: sessions start
            in index order).
    """

    def __init__(self, sessions_dir: Path, seed: int, started: int) -> None:
        self.sessions_dir = sessions_dir
        self.seed = seed
        self.started = started

    def __len__(self) -> int:
        return self.started

    @overload
    def __getitem__(self, index: int) -> SessionReport: ...

    @overload
    def __getitem__(self, index: slice) -> list[SessionReport]: ...

    def __getitem__(self, index: int | slice) -> SessionReport | list[SessionReport]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self.started))]
        position = index + self.started if index < 0 else index
        if not 0 <= position < self.started:
            raise IndexError(f"session index {index} out of range ({self.started} sessions)")
        session_id = session_id_for(self.seed, position)
        return SessionReport.from_transcript(session_id, self.sessions_dir / f"{session_id}.jsonl")

    def __iter__(self) -> Iterator[SessionReport]:
        for position in range(self.started):
            yield self[position]


@dataclass
class SimulationSummary:
    """The run's outcome (written as ``summary.json``), accumulated session by session.

    Attributes:
        scenario: The scenario's name.
        digest: The scenario's digest.
        seed: The simulation seed.
        sandbox: The sandbox kind.
        concurrency: Sessions run at once.
        planned: Sessions the run was asked for.
        out_dir: Where the files are.
        sessions: One report per session that started, in index order, read from the
            transcripts on access (see :class:`SessionReports`).
        interrupted: The run was cancelled before every session ended.
        duration_seconds: Wall time of the whole run (volatile).
        totals: Counts summed over the sessions that ended.
        ended: Sessions that ended, by status.
        latency: Every turn-slice latency of the run, as a :class:`LatencySketch`.
        failures: The first :data:`FAILURES_KEPT` failed sessions' reports.
    """

    scenario: str
    digest: str
    seed: int
    sandbox: str
    concurrency: int
    planned: int
    out_dir: Path
    sessions: Sequence[SessionReport] = ()
    interrupted: bool = False
    duration_seconds: float = 0.0
    totals: SessionCounts = field(default_factory=SessionCounts)
    ended: dict[SessionStatusName, int] = field(
        default_factory=lambda: {"completed": 0, "failed": 0, "cancelled": 0}
    )
    latency: LatencySketch = field(default_factory=LatencySketch)
    failures: list[SessionReport] = field(default_factory=list)

    def record(self, report: SessionReport) -> None:
        """Fold an ended session's report into the totals (the report is not kept,
        unless it is one of the first failures)."""
        self.totals.add(report.counts)
        self.ended[report.status] = self.ended.get(report.status, 0) + 1
        self.latency.update(report.latencies)
        if report.status == "failed" and len(self.failures) < FAILURES_KEPT:
            self.failures.append(report)

    @property
    def status(self) -> Literal["completed", "failed", "interrupted"]:
        """``interrupted``, else ``failed`` when a session did not complete, else
        ``completed``."""
        if self.interrupted:
            return "interrupted"
        if self.ended.get("failed", 0) or self.ended.get("cancelled", 0):
            return "failed"
        return "completed"

    def to_wire(self, *, with_sessions: bool = True) -> dict[str, Any]:
        """The ``summary.json`` document; ``with_sessions=False`` leaves out the
        per-session entries (reading them costs one file read per session)."""
        document: dict[str, Any] = {
            "kitVersion": __version__,
            "scenario": self.scenario,
            "scenarioDigest": self.digest,
            "seed": self.seed,
            "sandbox": self.sandbox,
            "concurrency": self.concurrency,
            "status": self.status,
            "sessionsPlanned": self.planned,
            "sessionsRun": len(self.sessions),
            "sessionsFailed": self.ended.get("failed", 0),
            "totals": self.totals.to_wire(),
            "latency": self.latency.to_wire(),
            "durationSeconds": self.duration_seconds,
            "volatileFields": sorted(VOLATILE_FIELDS),
        }
        if with_sessions:
            document["sessions"] = [report.to_wire(self.out_dir) for report in self.sessions]
        return document

    def write(self) -> Path:
        """Write ``summary.json`` into ``out_dir``, one session entry at a time, and
        return its path (the same text as ``json.dumps(to_wire(), indent=2)``)."""
        path = self.out_dir / "summary.json"
        header = json.dumps(self.to_wire(with_sessions=False), indent=2, ensure_ascii=False)
        with path.open("w", encoding="utf-8") as file:
            file.write(header[: header.rindex("\n}")])
            file.write(',\n  "sessions": [')
            _write_entries(file, (report.to_wire(self.out_dir) for report in self.sessions))
            file.write("\n}\n")
        return path


def _write_entries(file: IO[str], entries: Iterator[dict[str, Any]]) -> None:
    first = True
    for entry in entries:
        text = json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        file.write(("\n    " if first else ",\n    ") + text)
        first = False
    file.write("]" if first else "\n  ]")


class TranscriptWriter:
    """Appends JSON lines to a transcript, flushing each so an interrupted run keeps them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = path.open("w", encoding="utf-8")

    def write(self, line: Mapping[str, Any]) -> None:
        """Write one line (compact JSON, keys in insertion order)."""
        if self._file is None:
            return
        self._file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; later writes are dropped."""
        if self._file is not None:
            self._file.close()
            self._file = None
