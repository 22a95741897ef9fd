"""``python -m benchmarks`` runs and writes a well-formed results file (no timing asserted)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks._measure import Sample, warm_until_steady
from benchmarks._scripted import WORKLOADS, _FloorHandoff, run_python
from benchmarks.official import ceiling_note, trio_limit_ceiling, trio_limit_note
from tests.sandbox.support import docker_provider_or_skip

ROOT = Path(__file__).resolve().parents[1]


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def _check_targets(results: dict[str, Any], section: str) -> None:
    for target in results["targets"]:
        assert target["section"] == section
        assert _positive(target["limit"])
        assert _positive(target["measured"])
        assert isinstance(target["met"], bool)
        if target["at_least"]:
            assert target["met"] == (target["measured"] >= target["limit"])
        else:
            assert target["met"] == (target["measured"] <= target["limit"])


def _numbers_named(value: Any, suffix: str, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``(path, value)`` whose key ends with ``suffix``, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}"
            if key.endswith(suffix):
                yield here, item
            yield from _numbers_named(item, suffix, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers_named(item, suffix, f"{path}[{index}]")


def _positive(value: Any) -> bool:
    """A finite number above zero (a bool is not a number here)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def test_quick_agent_benchmark_writes_valid_results(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--scale", "0.1", "--only", "agent", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Agent overhead" in done.stdout  # the rich table was printed

    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["schema_version"] == 1
    assert results["quick"] is True
    assert results["command"].startswith("python -m benchmarks --quick")
    # the results file a person reads, beside the JSON: machine, load, commit, tables
    markdown = out.with_suffix(".md").read_text(encoding="utf-8")
    assert markdown.startswith("# Benchmark results\n")
    assert f"- commit: `{results['machine']['commit']}`" in markdown
    assert "- load average (1, 5, 15 min) before the run: " in markdown
    assert "| agent.overhead.minimal.text-heavy |" in markdown
    assert "## Agent overhead" in markdown
    assert {"nproc", "lscpu_head", "python", "commit"} <= results["machine"].keys()
    assert results["machine"]["nproc"] >= 1
    assert list(results["benchmarks"]) == ["agent"]

    agent = results["benchmarks"]["agent"]
    assert {"title", "seconds", "rows", "targets", "notes"} <= agent.keys()
    assert [(row["script"], row["baseline"]) for row in agent["rows"]] == [
        ("text-heavy", "minimal adapter"),
        ("tool-heavy", "minimal adapter"),
        ("text-heavy", "fake harness"),
        ("tool-heavy", "fake harness"),
    ]
    for row in agent["rows"][:2]:
        # the agent adds start/start-step per turn and per step: it never has fewer parts
        assert row["agent_parts_per_turn"] >= row["baseline_parts_per_turn"] > 0
        for key in ("baseline_cpu_ms_per_turn", "agent_cpu_ms_per_turn", "overhead_cpu_ratio"):
            assert _positive(row[key]), (key, row[key])
    for row in agent["rows"][2:]:
        for key in (
            "fake_parts_per_second",
            "agent_parts_per_second",
            "fake_turns_per_second",
            "agent_turns_per_second",
            "overhead_ratio",
            "turn_time_ratio",
        ):
            assert _positive(row[key]), (key, row[key])

    ratios = list(_numbers_named(results, "ratio"))
    assert ratios, "no ratio in the results"
    for where, value in ratios:
        assert _positive(value), (where, value)

    assert [target["id"] for target in results["targets"]] == [
        "agent.overhead.minimal.text-heavy",
        "agent.overhead.minimal.tool-heavy",
        "agent.overhead.text-heavy",
        "agent.overhead.tool-heavy",
    ]
    assert {target["unit"] for target in results["targets"]} == {"x"}
    _check_targets(results, "agent")
    assert all(isinstance(note, str) and note for note in results["notes"])
    fake_missed = sum(1 for t in results["targets"][2:] if not t["met"])
    assert len(results["notes"]) >= fake_missed


def test_scaling_benchmark_reports_growth_and_rss_slope(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--scale", "0.02", "--only", "scaling", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["scale"] == 0.02
    rows = results["benchmarks"]["scaling"]["rows"]
    deltas = [row for row in rows if "deltas" in row]
    assert [row["deltas"] for row in deltas] == [20, 200, 2000]
    assert all(_positive(row["cpu_us_per_delta"]) for row in deltas)
    (growth,) = [row for row in rows if "delta_cost_growth_ratio" in row]
    assert _positive(growth["delta_cost_growth_ratio"])
    sessions = [row for row in rows if "sessions" in row]
    assert [row["sessions"] for row in sessions] == [2, 20]
    assert all(row["rss_mib_per_session"] >= 0 for row in sessions)
    (slope,) = [row for row in rows if "rss_slope_mib_per_session" in row]
    assert _positive(slope["session_cost_growth_ratio"])
    ids = [target["id"] for target in results["targets"]]
    assert ids == ["scaling.per-delta-cost", "scaling.rss-per-session.20"]


def test_sandbox_benchmark_measures_both_providers_next_to_their_floors(tmp_path: Path) -> None:
    # The Docker rows run for real where an engine answers (and must under CI=true): the
    # file floor once used the archive API, which the read-only root filesystem refuses.
    docker_provider_or_skip().close()
    out = tmp_path / "results.json"
    done = _run("--quick", "--only", "sandbox", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["benchmarks"]["sandbox"]["rows"]
    assert [row["operation"] for row in rows] == [
        f"{provider} {operation}"
        for provider in ("local", "docker")
        for operation in ("create+destroy", "run('true')", "64 KiB write+read")
    ]
    for row in rows:
        assert row["status"] == "measured", row
        assert _positive(row["provider_ms"]), row
        assert _positive(row["floor_ms"]), row


def test_suite_benchmark_times_the_self_check(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--only", "suite", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    section = json.loads(out.read_text(encoding="utf-8"))["benchmarks"]["suite"]
    (row,) = section["rows"]
    assert row["profile"] == "smoke"
    assert row["outcome"] == "pass", section["notes"]
    # One report per fake-harness profile, each with its checks.
    assert len(row["targets"]) >= 2
    assert row["checks"] > len(row["targets"])
    assert _positive(row["examples"])
    assert _positive(row["examples_per_second"])


@pytest.mark.slow
def test_jobs_benchmark_times_the_self_check_at_both_job_counts(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--only", "jobs", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    section = json.loads(out.read_text(encoding="utf-8"))["benchmarks"]["jobs"]
    (row,) = section["rows"]
    assert row["profile"] == "smoke"
    assert row["same_results"] == "yes", section["notes"]
    assert row["exit_codes"] == [0]
    assert _positive(row["sequential_seconds"])
    assert _positive(row["parallel_seconds"])
    assert row["ratio"] == row["parallel_seconds"] / row["sequential_seconds"]
    # The target is about the standard profile, which --quick leaves out.
    assert section["targets"] == []


def test_continuation_and_concurrency_benchmarks_report_every_row(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--only", "continuations,concurrency", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    continuations = results["benchmarks"]["continuations"]["rows"]
    assert [(row["turn"], row["variant"]) for row in continuations] == [
        (turn, variant)
        for turn in ("typical", "long")
        for variant in ("uninterrupted", "paused", "suspended")
    ]
    for row in continuations:
        # the same turn however it was split, and every variant timed
        assert row["events"] == continuations[0 if row["turn"] == "typical" else 3]["events"]
        assert row["parts_seen"] >= row["events"], row
        assert _positive(row["ms_per_turn"]), row
    concurrency = results["benchmarks"]["concurrency"]["rows"]
    assert [row["sessions"] for row in concurrency] == [1, 10, 100, 1000]
    # --quick makes no untraced throughput run at 1,000 sessions (memory only).
    assert all(_positive(row["turns_per_second"]) for row in concurrency[:3])
    assert all(_positive(row["peak_traced_mib_per_session"]) for row in concurrency)
    for section in ("continuations", "concurrency"):
        _check_targets(
            {"targets": [t for t in results["targets"] if t["section"] == section]}, section
        )
    assert {t["section"] for t in results["targets"]} == {"continuations", "concurrency"}


def test_official_without_node_exits_2_and_says_why(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _run(
        "--official", "--out", str(tmp_path / "r.json"), env={**os.environ, "PATH": str(empty)}
    )
    assert done.returncode == 2
    assert "node is not on PATH" in done.stdout
    assert not (tmp_path / "r.json").exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_official_comparison_runs_both_agents_on_the_same_parts(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--official", "--quick", "--scale", "0.01", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert list(results["benchmarks"]) == ["official"]
    section = results["benchmarks"]["official"]
    assert [row["workload"] for row in section["rows"]] == [
        "text-heavy",
        "tool-heavy",
        "short-turns",
        "sessions-100",
        "sessions-1000",
    ]
    # each workload's official rounds ran in fresh Node processes of its own (V8 carries
    # history), two with --quick, one after another, two rounds each
    pids = [pid for row in section["rows"] for pid in row["official_pids"]]
    assert len(set(pids)) == len(pids) == 2 * len(section["rows"])
    for row in section["rows"]:
        assert row["rounds"] == 4
        assert len(row["speedup_cpu_samples"]) == 4
        by_process = row["official_cpu_ms_per_turn_by_process"]
        assert len(by_process) == 2
        assert all(_positive(ms) for ms in by_process)
        assert min(by_process) <= row["official_cpu_ms_per_turn"] <= max(by_process)
        assert any(
            note.startswith(f"{row['workload']}: the official agent's CPU ms/turn by Node process")
            for note in section["notes"]
        )
    for row in section["rows"]:
        # identical wire parts in, identical consumer part counts out
        assert row["python_consumer_parts_per_turn"] == row["official_consumer_parts_per_turn"]
        for key in ("python_cpu_ms_per_turn", "official_cpu_ms_per_turn", "speedup_cpu_ratio"):
            assert _positive(row[key]), (key, row[key])
    assert any("@ai-sdk/harness 1.0.122" in note for note in results["notes"])
    uvloop = importlib.util.find_spec("uvloop") is not None
    for row in section["rows"]:
        # every side warmed before the rounds, and the notes say how
        assert set(row["warmup"]) == {
            "asyncio",
            "trio",
            "official",
            "official 2",
            "floor",
            "trio_floor",
        } | ({"uvloop"} if uvloop else set())
        assert all(warmup["runs"] >= 2 for warmup in row["warmup"].values())
        assert any(note.startswith(f"{row['workload']} warm-up: ") for note in section["notes"])
        if uvloop:  # the fourth side, for information
            assert _positive(row["speedup_uvloop_cpu_ratio"])
            assert _positive(row["uvloop_over_asyncio_cpu_ratio"])
        else:
            assert "speedup_uvloop_cpu_ratio" not in row
        # the hand-off floor, for information: the most any agent could gain here
        for key in ("floor_cpu_ms_per_turn", "speedup_floor_cpu_ratio"):
            assert _positive(row[key]), (key, row[key])
        assert _positive(row["floor_over_asyncio_cpu_ratio"])
        # the same floor on trio, and the speed-up the trio limit leaves
        for key in (
            "trio_floor_cpu_ms_per_turn",
            "trio_floor_over_floor_cpu_ratio",
            "speedup_ceiling_within_trio_limit",
        ):
            assert _positive(row[key]), (key, row[key])
        # round by round at most the floor's ceiling (own work only lowers it): so the median
        assert row["speedup_ceiling_within_trio_limit"] <= row["speedup_floor_cpu_ratio"] * (
            1 + 1e-9
        )
        # memory per session: one run in a fresh process on each side (after warm-up
        # rounds Python's process reuses what earlier runs freed, and its growth read 0)
        rss = ("python_rss_mib_per_session", "official_rss_mib_per_session")
        if row["sessions"] > 1:
            assert all(row[key] >= 0 for key in rss), row
        else:
            assert not set(rss) & set(row)
    assert uvloop != any("uvloop is not installed" in note for note in section["notes"])
    speedups = [t for t in results["targets"] if t["id"].startswith("official.not-behind.")]
    assert len(speedups) == 5
    # the target on every workload: not behind the official agent, said per workload
    assert {t["limit"] for t in speedups} == {1.0}
    for row in section["rows"]:
        verdicts = [
            note
            for note in section["notes"]
            if note.startswith(f"{row['workload']}: not behind the official agent (")
            or note.startswith(f"{row['workload']}: BEHIND the official agent (")
        ]
        assert len(verdicts) == 1
        assert ("not behind" in verdicts[0]) == (row["speedup_cpu_ratio"] >= 1.0)
    assert "not behind the official agent" in out.with_suffix(".md").read_text(encoding="utf-8")
    assert not [t for t in results["targets"] if "uvloop" in t["id"] or "floor" in t["id"]]
    assert all(target["at_least"] for target in speedups)
    _check_targets(results, "official")


def test_the_scripted_workloads_run_on_uvloop_only_under_asyncio() -> None:
    short = WORKLOADS[2].scaled(1)
    with pytest.raises(ValueError, match="use_uvloop needs the asyncio backend, not 'trio'"):
        run_python(short, backend="trio", use_uvloop=True)
    if importlib.util.find_spec("uvloop") is None:
        pytest.skip("uvloop is not installed (it is in the test extra)")
    sample = run_python(short, use_uvloop=True)
    assert sample.turns == short.turns
    assert sample.parts == run_python(short).parts


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_hand_off_floor_reads_every_part_on_both_loops(backend: str) -> None:
    for workload in WORKLOADS:
        scaled = workload.scaled(1 if workload.sessions == 1 else 0.1)
        floor = run_python(scaled, mode="floor", backend=backend)
        # every harness part of every turn reaches the reader, concurrent sessions included
        assert floor.parts == run_python(scaled, mode="adapter", backend=backend).parts
        assert floor.parts == len(workload.parts()) * scaled.turns * scaled.sessions
        assert floor.turns == scaled.turns * scaled.sessions


def test_the_trio_floors_reader_can_be_cancelled_while_it_waits() -> None:
    trio = pytest.importorskip("trio")

    async def wait_then_give_up() -> tuple[bool, object]:
        handoff = _FloorHandoff(trio)

        async def end_it_anyway() -> None:  # so a reader deaf to cancellation fails, not hangs
            await trio.sleep(2)
            handoff.close()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(end_it_anyway)
            with trio.move_on_after(0.05) as scope:
                await handoff.drain()  # nothing is put: only the cancellation ends it early
            nursery.cancel_scope.cancel()
        return scope.cancelled_caught, handoff.waiter

    assert trio.run(wait_then_give_up) == (True, None)


def test_the_ceiling_note_names_a_target_above_or_near_what_any_agent_could_reach() -> None:
    above = ceiling_note("text-heavy", 2.0, 1.9)
    assert above is not None
    assert "target 2x is above the ceiling (1.90x)" in above
    near = ceiling_note("text-heavy", 2.0, 2.24)
    assert near is not None
    assert "target 2x is within 25% of the ceiling (2.24x)" in near
    assert ceiling_note("short-turns", 2.0, 2.5) is None  # room enough: no note
    assert ceiling_note("tool-heavy", 4.0, 5.33) is None


def test_the_trio_limit_ceiling_is_the_fastest_agent_trio_keeps_within_the_limit() -> None:
    # trio's floor within the limit: no own work needed, the ceiling is the floor's
    assert trio_limit_ceiling(177.0, 80.0, 90.0, 1.15) == pytest.approx(177.0 / 80.0)
    # 1.3x: 80 ms of own work dilutes (104 + 80) / (80 + 80) to exactly 1.15x
    assert trio_limit_ceiling(177.0, 80.0, 104.0, 1.15) == pytest.approx(177.0 / 160.0)
    with pytest.raises(ValueError, match=r"the trio limit must be above 1, not 1\.0"):
        trio_limit_ceiling(177.0, 80.0, 104.0, 1.0)


@settings(max_examples=200)
@given(
    floor=st.floats(0.01, 1000),
    trio_over_floor=st.floats(0.5, 3),
    official=st.floats(0.01, 1000),
    limit=st.floats(1.01, 2),
)
def test_the_trio_limit_ceiling_leaves_exactly_the_work_the_limit_needs(
    floor: float, trio_over_floor: float, official: float, limit: float
) -> None:
    trio_floor = floor * trio_over_floor
    work = official / trio_limit_ceiling(official, floor, trio_floor, limit) - floor
    assert work >= -1e-9 * floor
    # with that much own work (the same on both loops) trio is within the limit...
    assert (trio_floor + work) / (floor + work) <= limit * (1 + 1e-9)
    if work > 1e-9 * floor:
        # ...and with any less it is not: the ceiling is the fastest such agent
        less = work * 0.99
        assert (trio_floor + less) / (floor + less) > limit


def test_the_trio_limit_note_names_targets_that_exclude_each_other() -> None:
    note = trio_limit_note("text-heavy", 2.0, 1.15, 1.29, 1.16, 0.98)
    assert note is not None
    assert "the speed-up target 2x and trio within 1.15x of asyncio exclude each other" in note
    assert "trio's hand-off floor costs 1.29x asyncio's" in note
    assert "(this agent's own work measured 0.98x on trio)" in note
    assert "caps its speed-up at 1.16x" in note
    assert "measured" not in (trio_limit_note("tool-heavy", 4.0, 1.15, 1.28, 3.1, None) or "")
    assert trio_limit_note("short-turns", 2.0, 1.15, 1.36, 2.13, 1.24) is None


def _falling_then_flat(times_ms: list[float]) -> tuple[list[int], Callable[[], Sample]]:
    """A run whose CPU time per turn follows ``times_ms`` (then stays at the last one),
    and the list its calls are counted in."""
    calls: list[int] = []

    def run() -> Sample:
        index = min(len(calls), len(times_ms) - 1)
        calls.append(index)
        return Sample(seconds=1.0, turns=2, cpu_seconds=2 * times_ms[index] / 1e3)

    return calls, run


def test_warm_up_stops_once_the_time_per_turn_stops_falling() -> None:
    # A JIT's shape: slow first runs, a pause, then a plateau from the 14th run on.
    calls, run = _falling_then_flat([90, 60, 40, 30, 19, 19, 19, 19, 19, 17, 15, 14, 13.5, 13])
    warmup = warm_until_steady(run, window=3, confirmations=3, max_runs=50)
    assert warmup.steady
    # The pause at 19 does not stop it (it is followed by a fall); the plateau does.
    assert 16 <= warmup.runs <= 22
    assert len(calls) == warmup.runs
    assert warmup.first_ms == pytest.approx(90)
    assert warmup.last_ms == pytest.approx(13)


def test_warm_up_that_never_levels_off_says_so() -> None:
    _, run = _falling_then_flat([100 * 0.8**index for index in range(200)])
    warmup = warm_until_steady(run, window=3, max_runs=20)
    assert not warmup.steady
    assert warmup.runs == 20


# -- instruction counts (callgrind) ---------------------------------------------------------


def _valgrind() -> None:
    if shutil.which("valgrind") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "CI=true requires valgrind for the instruction counts (apt-get install valgrind)"
            )
        pytest.skip("valgrind is not installed (apt-get install valgrind)")


def test_instruction_counts_without_valgrind_exit_2_and_say_why(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _run(
        "--only",
        "instructions",
        "--out",
        str(tmp_path / "r.json"),
        env={**os.environ, "PATH": str(empty)},
    )
    assert done.returncode == 2
    assert "cannot count instructions: valgrind is not on PATH" in done.stdout
    assert not (tmp_path / "r.json").exists()


def test_instruction_counts_are_read_from_callgrinds_summary() -> None:
    from benchmarks.instructions import parse_collected

    stderr = (
        "==41== Callgrind, a call-graph generating cache profiler\n==41== Collected : 1234567\n"
    )
    assert parse_collected(stderr) == 1234567
    with pytest.raises(RuntimeError, match=r"(?s)no instruction count.*valgrind: bad option"):
        parse_collected("valgrind: bad option\n")


def test_instruction_counts_refuse_an_unknown_mode() -> None:
    from benchmarks.instructions import CASES, count_instructions

    with pytest.raises(ValueError, match="unknown mode 'agnet'; use 'agent' or 'adapter'"):
        count_instructions(CASES[0], "agnet")


@pytest.mark.slow
def test_instruction_counts_of_a_short_case_under_callgrind() -> None:
    """A real count: the agent executes more per turn than the adapter it drives."""
    _valgrind()
    from benchmarks.instructions import Case, count_instructions

    case = Case("short-turns", "short", 0, 5)
    adapter = count_instructions(case, "adapter")
    agent = count_instructions(case, "agent")
    assert adapter > 10_000  # a turn's parts, emitted and checkpointed
    # Parsed, translated, forwarded and read back: the agent's own work per turn. Compared
    # as a difference: with five turns counted, both counts carry the same fixed cost of
    # the counted run, which a ratio would not cancel.
    assert agent - adapter > 100_000


def test_the_sharding_benchmark_times_both_variants_on_one_scenario(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("distributed")
    from benchmarks import sharding

    monkeypatch.setattr(sharding, "QUICK", (6, 1))
    section = sharding.measure(quick=True)
    rows = {row["variant"]: row for row in section.rows}
    assert list(rows) == ["one process", "sharded", "cluster start-up"]
    assert rows["one process"]["ratio"] == 1.0
    for variant in ("one process", "sharded"):
        assert rows[variant]["sessions"] == 6
        assert _positive(rows[variant]["sessions_per_second"])
    assert _positive(rows["cluster start-up"]["seconds"])


def test_check_exits_1_when_a_target_is_missed(tmp_path: Path) -> None:
    """``--check`` turns a missed target into exit status 1 (a run without it exits 0)."""
    out = tmp_path / "results.json"
    done = _run("--quick", "--scale", "0.1", "--only", "agent", "--check", "--out", str(out))
    results = json.loads(out.read_text(encoding="utf-8"))
    missed = [target["id"] for target in results["targets"] if not target["met"]]
    assert done.returncode == (1 if missed else 0), done.stderr[-4000:]
    if missed:
        assert f"missed targets: {', '.join(missed)}" in " ".join(done.stdout.split())


def test_fast_paths_benchmark_measures_each_path_of_the_one_module(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--scale", "0.02", "--only", "fast-paths", "--out", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    section = results["benchmarks"]["fast-paths"]
    assert [row["workload"] for row in section["rows"]] == [w.name for w in WORKLOADS]
    paths = [target["id"] for target in results["targets"]]
    assert paths == [
        "fast-paths.pays.trusted_construction",
        "fast-paths.pays.wire_readers",
    ]
    for row in section["rows"]:
        assert _positive(row["shipped_cpu_ms_per_turn"])
        for path in ("trusted_construction", "wire_readers"):
            assert _positive(row[f"{path}_off_cpu_ratio"])
    _check_targets(results, "fast-paths")
    unpaid = [target for target in results["targets"] if not target["met"]]
    for target in unpaid:
        name = target["id"].removeprefix("fast-paths.pays.").replace("_", " ")
        assert any(note.startswith(f"{name}: switching it off costs") for note in section["notes"])
