"""``simulate``: bad input is a named error, signals tear down, sessions are produced lazily."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.simulate import ScenarioError, load_scenario


def _scenario_error(path: Path | str, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=fragment):
        load_scenario(path)


@pytest.mark.requirement("DECISION-008")
def test_special_deep_and_aliased_files_are_refused(tmp_path: Path) -> None:
    _scenario_error("/dev/zero", "not a regular file")
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    _scenario_error(deep, "nesting deeper")
    deep_json = tmp_path / "deep.json"
    deep_json.write_text("[" * 3000 + "]" * 3000, encoding="utf-8")
    _scenario_error(deep_json, "nesting deeper")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text('a: &a ["x", "x"]\nb: &b [*a, *a]\n', encoding="utf-8")
    _scenario_error(bomb, "aliases")
    huge = tmp_path / "huge.yaml"
    huge.write_text(f"seed: {2**80}\n", encoding="utf-8")
    _scenario_error(huge, "JSON-safe")


@pytest.mark.requirement("DECISION-008")
def test_a_script_file_is_read_within_the_same_limits(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "version: 1\nname: s\nharness: {script: /dev/zero}\nactions: [{prompt: hi}]\n",
        encoding="utf-8",
    )
    _scenario_error(scenario, "not a regular file")
    (tmp_path / "deep.yaml").write_text("turns: " + "[" * 2000 + "]" * 2000, encoding="utf-8")
    scenario.write_text(
        "version: 1\nname: s\nharness: {script: deep.yaml}\nactions: [{prompt: hi}]\n",
        encoding="utf-8",
    )
    _scenario_error(scenario, "nesting deeper")


@pytest.mark.requirement("DECISION-010")
def test_sessions_are_produced_by_concurrency_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Many sessions, concurrency 2: never more than 2 session runs exist at once.
    from harness_testkit.simulate import _runner

    alive = [0]
    peak = [0]
    original = _runner._SessionRun.run

    async def counted(self: _runner._SessionRun) -> object:
        alive[0] += 1
        peak[0] = max(peak[0], alive[0])
        try:
            return await original(self)
        finally:
            alive[0] -= 1

    monkeypatch.setattr(_runner._SessionRun, "run", counted)
    tasks_at_start: list[int] = []
    original_init = _runner._SessionRun.__init__

    def init(self: _runner._SessionRun, *args: object, **kwargs: object) -> None:
        tasks_at_start.append(len(anyio_tasks()))
        original_init(self, *args, **kwargs)  # type: ignore[arg-type]  # passed through as given

    def anyio_tasks() -> list[object]:
        import asyncio

        return list(asyncio.all_tasks())

    monkeypatch.setattr(_runner._SessionRun, "__init__", init)
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "--builtin",
            "quickstart",
            "--sessions",
            "12",
            "--concurrency",
            "2",
            "--quiet",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert peak[0] <= 2
    # Task count does not grow with the session count (was: one waiting task per session).
    assert max(tasks_at_start) < 12


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 130)])
def test_a_signal_mid_simulation_destroys_the_sandboxes_and_writes_the_summary(
    tmp_path: Path, signum: int, code: int
) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness_testkit",
            "simulate",
            "--builtin",
            "many-sessions",
            "--sessions",
            "200",
            "--quiet",
            "--out",
            str(out),
        ],
        env={**os.environ, "TMPDIR": str(work)},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any((out / "sessions").glob("*.jsonl")):
            time.sleep(0.05)
        time.sleep(random.uniform(0.0, 1.0))
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = stdout.decode() + stderr.decode()
    if process.returncode in (0, 1):
        pytest.skip("the simulation finished before the signal arrived")
    assert process.returncode == code, text
    assert "Traceback" not in text
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "interrupted"
    assert list(work.iterdir()) == [], "a sandbox directory was left behind"
