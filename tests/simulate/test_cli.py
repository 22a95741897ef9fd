"""``harness-testkit simulate``: rendering, exit statuses, --example, --builtin, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.simulate._loading import builtin_scenario_path, load_scenario
from harness_testkit.simulate._scenario import render_json_schema

from .support import read_lines, write_scenario


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_one_session_is_rendered_live(tmp_path: Path) -> None:
    code, out, _ = _run("--builtin", "quickstart", "--out", str(tmp_path / "out"))
    assert code == 0, out
    for expected in (
        "» prompt: What is the weather in Paris?",
        "? approval requested weather",
        "approved weather",
        "← weather",
        "Let me check the weather first.",
        "✎ file create notes/index.md",
        "⟳ compaction",
        "· step tool-calls",
        "■ finish stop",
        "turn latency p99",
        "wall time",
    ):
        assert expected in out
    assert (tmp_path / "out" / "sessions" / "sim-0-0.jsonl").is_file()


def test_many_sessions_show_a_progress_bar_and_a_summary(tmp_path: Path) -> None:
    code, out, progress = _run(
        "--builtin",
        "many-sessions",
        "--sessions",
        "5",
        "--concurrency",
        "3",
        "--seed",
        "2",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 0, out
    # Not a terminal: one progress line per finished session, on stderr.
    assert "many-sessions: 5 sessions" in progress
    assert (
        sum(line.startswith("[") and " completed " in line for line in progress.splitlines()) == 5
    )
    assert "[5/5] completed" in progress
    assert "5 of 5" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["sessionsRun"] == 5
    assert summary["concurrency"] == 3
    assert summary["seed"] == 2
    assert sorted(p.name for p in (tmp_path / "out" / "sessions").iterdir()) == [
        f"sim-2-{n}.jsonl" for n in range(5)
    ]


def test_a_bad_scenario_exits_2_naming_file_path_and_problem(tmp_path: Path) -> None:
    file = write_scenario(tmp_path, "actions:\n  - prompt: hi\n  - aprove: weather\n", "bad.yaml")
    code, out, err = _run(str(file), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"{file}:3: actions[1]: an action has exactly one of the keys" in err
    assert "Traceback" not in out + err
    assert not (tmp_path / "out").exists()


def test_a_failing_session_exits_1(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path, "agent: {tools: {t: {output: 1}}}\nactions: [{prompt: hi}, {approve: t}]\n"
    )
    code, out, _ = _run(str(file), "--out", str(tmp_path / "out"), "--quiet")
    assert code == 1
    assert "failed" in out


def test_a_session_that_does_not_match_names_the_mismatch_not_a_class(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path, "agent: {tools: {t: {output: 1}}}\nactions: [{prompt: hi}, {approve: t}]\n"
    )
    code, out, _ = _run(str(file), "--out", str(tmp_path / "out"), "--quiet")
    assert code == 1
    assert "ScenarioMismatch: action 1 answers approvals of t" in " ".join(out.split())
    assert "_ActionFailed" not in out


@pytest.mark.requirement("DECISION-018")
def test_an_undeclared_host_tool_is_refused_before_any_session_runs(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path,
        """
        sessions: 50
        agent:
          tools:
            deploy: {output: {ok: true}}
        harness:
          script:
            turns:
              - steps:
                  - actions: [{hostTool: deploy_prod, id: dep-1}]
        actions: [{prompt: Deploy}]
        """,
    )
    code, out, err = _run(str(file), "--out", str(tmp_path / "out"))
    assert code == 2
    assert (
        f"{file}:9: harness.script.turns[0].steps[0].actions[0]: host tool 'deploy_prod' is "
        "not declared under agent.tools (declared: deploy)" in err
    )
    assert "Traceback" not in out + err
    assert not (tmp_path / "out").exists()


@pytest.mark.requirement("DECISION-017")
def test_two_runs_at_one_seed_write_identical_transcripts_unless_timed(tmp_path: Path) -> None:
    runs = {}
    for run, extra in (("a", ()), ("b", ()), ("timed", ("--timings",))):
        code, out, _ = _run("--builtin", "quickstart", "--out", str(tmp_path / run), *extra)
        assert code == 0, out
        runs[run] = (tmp_path / run / "sessions" / "sim-0-0.jsonl").read_bytes()
    assert runs["a"] == runs["b"]
    assert b"latencySeconds" not in runs["a"]
    assert b"latencySeconds" in runs["timed"]


def test_a_denied_call_is_rendered_as_denied(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path,
        """
        agent:
          tools: {deploy: {output: {ok: true}}}
          inactiveTools: [deploy]
        harness:
          script:
            turns:
              - steps:
                  - actions: [{hostTool: deploy, id: dep-1}]
        actions: [{prompt: Deploy}]
        """,
    )
    code, out, _ = _run(str(file), "--out", str(tmp_path / "out"))
    assert code == 0, out
    assert "⊘ deploy denied Tool 'deploy' is inactive" in out
    assert "← deploy" not in out


def test_example_writes_a_starter_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(cli, ["simulate", "--example"])
    assert first.exit_code == 0, first.output
    written = tmp_path / "scenario.yaml"
    assert written.read_text() == builtin_scenario_path("quickstart").read_text()
    # The starter's `$schema` names a file that exists next to it, and is the schema.
    assert "$schema=scenario.schema.json" in written.read_text()
    assert (tmp_path / "scenario.schema.json").read_text() == render_json_schema()
    again = runner.invoke(cli, ["simulate", "--example"])
    assert again.exit_code == 2
    assert "--force" in again.stderr
    assert runner.invoke(cli, ["simulate", "--example", "--force"]).exit_code == 0
    assert runner.invoke(cli, ["simulate", "--example", "mine.yaml"]).exit_code == 0
    assert load_scenario(tmp_path / "mine.yaml").name == "quickstart"
    ran = runner.invoke(cli, ["simulate", "scenario.yaml", "--out", "out", "--quiet"])
    assert ran.exit_code == 0, ran.output
    assert (tmp_path / "out" / "summary.json").is_file()


def test_builtin_names_are_listed_and_checked(tmp_path: Path) -> None:
    code, out, _ = _run("--list")
    assert code == 0
    assert {"quickstart", "cross-process", "many-sessions"} <= set(out.split())
    code, _, err = _run("--builtin", "nope")
    assert code == 2
    assert "quickstart" in err
    code, _, err = _run()
    assert code == 2
    assert "--builtin quickstart" in err


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_ctrl_c_stops_cleanly(tmp_path: Path, backend: str) -> None:
    scenario = write_scenario(
        tmp_path,
        """
        sessions: 4
        concurrency: 2
        agent:
          tools:
            slow: {output: {ok: true}, delaySeconds: 0.5}
        harness:
          script:
            turns:
              - steps:
                  - actions: [{text: calling}, {hostTool: slow, id: s1}]
                  - actions: [{text: done}]
        actions: [{prompt: one}, {prompt: two}, {prompt: three}, {prompt: four}]
        """,
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness_testkit",
            "simulate",
            str(scenario),
            "--out",
            str(out),
            "--quiet",
            "--backend",
            backend,
        ],
        env={**os.environ, "TMPDIR": str(temp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = out / "sessions" / "sim-0-0.jsonl"
        deadline = time.monotonic() + 30
        while not (first.is_file() and '"tool-call"' in first.read_text()):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the simulation never reached a tool call"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr.decode()
    assert b"Interrupted" in stdout
    assert b"Traceback" not in stderr
    assert json.loads((out / "summary.json").read_text())["status"] == "interrupted"
    lines = read_lines(first)
    assert any(line["kind"] == "part" for line in lines)
    assert lines[-1]["kind"] == "session-end"
    assert lines[-1]["status"] == "cancelled"
    assert list(temp.iterdir()) == [], "a sandbox directory was left behind"


@pytest.mark.parametrize("spelling", ["--sessions=0", "--concurrency=0"])
def test_counts_must_be_positive(spelling: str) -> None:
    code, _, _ = _run("--builtin", "quickstart", spelling)
    assert code == 2


def test_schema_prints_the_committed_schema() -> None:
    from harness_testkit.simulate._scenario import render_json_schema

    code, out, _ = _run("--schema")
    assert code == 0
    assert out == render_json_schema()
