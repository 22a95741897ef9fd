"""What a CI pipeline meets: progress lines, no escape codes on request, set-up errors,
baselines, reports that two runs write alike, and commands that run as printed."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance._runner import _without_workdirs

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = "tests.conformance.ci_adapters"
MINIMAL = "tests.conformance.gate_adapters:minimal"
#: Runs the console script's entry point in an isolated interpreter (``-I``): neither the
#: current folder nor the environment's PYTHONPATH is on the import path, exactly as for
#: the installed ``harness-testkit`` script.
_ENTRY = (
    "import sys; from harness_testkit._cli import main; sys.argv[0] = 'harness-testkit'; main()"
)
#: No Docker engine answers here (a socket path that cannot exist).
NO_ENGINE = "unix:///nonexistent/harness-testkit/docker.sock"


def _command(*args: str) -> list[str]:
    return [sys.executable, "-I", "-c", _ENTRY, *args]


def _run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, prelude: str = ""
) -> subprocess.CompletedProcess[str]:
    command = _command(*args)
    if prelude:
        command[3] = prelude + "; " + _ENTRY
    return subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=env)


def _one_sentence(output: str, *fragments: str) -> None:
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    for fragment in fragments:
        assert fragment in lines[0], output


# -- the current folder, and the printed replay command --------------------------------------

_PLANTED = '''
"""A planted bug in the current folder: the fake harness drops every finish-step."""
from harness_testkit.fake_harness import DropFinishStepFault, FakeHarness


def make():
    return FakeHarness(profile="minimal", faults=[DropFinishStepFault()])


make.capabilities = {"scripting": False}
'''


@pytest.mark.requirement("DECISION-016")
def test_check_imports_from_the_current_folder_and_its_replay_command_runs_as_printed(
    tmp_path: Path,
) -> None:
    (tmp_path / "fx.py").write_text(textwrap.dedent(_PLANTED), encoding="utf-8")
    checked = _run(
        "check", "fx:make", "--profile", "smoke", "--check", "stream.grammar", cwd=tmp_path
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    printed = [line for line in checked.stdout.splitlines() if "replay with " in line]
    assert len(printed) == 1, checked.stdout
    words = shlex.split(printed[0].split("replay with ", 1)[1])
    assert words[:2] == ["harness-testkit", "replay"]
    assert "--adapter" in words
    replayed = _run(*words[1:], cwd=tmp_path)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stderr.startswith("reproduced:"), replayed.stderr


# -- progress and the console in logs --------------------------------------------------------


@pytest.mark.requirement("DECISION-014")
def test_a_log_gets_a_line_per_finished_check_and_unwrapped_ids(tmp_path: Path) -> None:
    result = _invoke(
        "check",
        f"{ADAPTERS}:temp_path_error",
        "--profile",
        "smoke",
        "--check",
        "stream.grammar",
        "--bundle-dir",
        str(tmp_path),
    )
    assert result.exit_code == 1, result.output
    assert f"{ADAPTERS}:temp_path_error (smoke): 2 checks" in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert [line.split()[:3] for line in lines] == [
        ["[1/2]", "pass", "adapter.surface"],
        ["[2/2]", "fail", "stream.grammar"],
    ]
    # The replay command, however long, is one line; a row names its check id whole.
    replay = [line for line in result.stdout.splitlines() if "replay with" in line]
    assert len(replay) == 1
    assert replay[0].rstrip().endswith(f"{ADAPTERS}:temp_path_error")
    assert any("│ stream.grammar " in line for line in result.stdout.splitlines())
    # A failure's line runs to its end, far past 80 columns, instead of wrapping.
    failure = [line for line in result.stdout.splitlines() if line.startswith("stream.grammar (")]
    assert len(failure) == 1
    assert failure[0].rstrip().endswith("scratch file <tmp>/state.json')"), result.stdout


def _on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> bytes:
    """Everything ``args`` writes to a pseudo-terminal (stdout and stderr)."""
    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key not in _COLOUR_ENV}
    process = subprocess.Popen(
        args,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env={**environment, "TERM": "xterm-256color", "COLUMNS": "120", **env},
        close_fds=True,
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
        os.close(leader)
    return b"".join(chunks)


_COLOUR_ENV = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "CI", "GITHUB_ACTIONS")


@pytest.mark.requirement("DECISION-014")
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            ["check", MINIMAL, "--profile", "smoke", "--check", "session.identity"], id="check"
        ),
        pytest.param(
            ["simulate", "--builtin", "quickstart", "--sessions", "2", "--out", "SIM"],
            id="simulate",
        ),
        pytest.param(["spec", "requirements", "--area", "STOP"], id="spec"),
    ],
)
def test_no_color_removes_every_escape_code_on_a_terminal(
    command: list[str], tmp_path: Path
) -> None:
    args = _command(*[str(tmp_path / "sim") if word == "SIM" else word for word in command])
    coloured = _on_a_terminal(args, {}, ROOT)
    plain = _on_a_terminal(args, {"NO_COLOR": "1"}, ROOT)
    # On a terminal the command styles its output (so the test can fail) ...
    assert b"\x1b[" in coloured, coloured.decode(errors="replace")
    # ... and NO_COLOR leaves not one escape code, and the same words.
    assert b"\x1b" not in plain, plain.decode(errors="replace")
    assert b"Traceback" not in plain


# -- set-up errors ---------------------------------------------------------------------------


@pytest.mark.requirement("DECISION-012", "DECISION-003")
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            ["check", "--self", "--sandbox", "docker", "--check", "session.identity"], id="check"
        ),
        pytest.param(["simulate", "--builtin", "quickstart", "--sandbox", "docker"], id="simulate"),
        pytest.param(["sandbox", "prune", "--dry-run"], id="sandbox-prune"),
        pytest.param(
            [
                "check-sandbox",
                "harness_testkit.sandbox:DockerSandboxProvider",
                "--check",
                "session_shape",
            ],
            id="check-sandbox",
        ),
    ],
)
def test_no_docker_engine_is_a_set_up_error_in_every_command(
    args: list[str], tmp_path: Path
) -> None:
    completed = _run(*args, cwd=tmp_path, env={"DOCKER_HOST": NO_ENGINE})
    assert completed.returncode == 2, completed.stdout + completed.stderr
    _one_sentence(completed.stdout + completed.stderr, "Docker engine")
    assert not (tmp_path / "harness-testkit-out" / "bundles").exists()


@pytest.mark.requirement("DECISION-012", "DECISION-003")
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["check", MINIMAL, "--sandbox", "docker"], id="check"),
        pytest.param(["sandbox", "prune"], id="sandbox-prune"),
    ],
)
def test_docker_without_its_extra_is_a_set_up_error(args: list[str]) -> None:
    completed = _run(*args, cwd=ROOT, prelude="import sys; sys.modules['docker'] = None")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    _one_sentence(completed.stderr, "needs the `docker` extra", "pip install")


@pytest.mark.requirement("DECISION-012")
def test_a_set_up_error_inside_a_check_charges_no_check(tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    result = _invoke(
        "check",
        f"{ADAPTERS}:needs_an_extra",
        "--profile",
        "smoke",
        "--check",
        "stream.grammar",
        "--bundle-dir",
        str(bundles),
    )
    assert result.exit_code == 2, result.output
    _one_sentence(result.output, "needs the `example-extra` extra")
    assert not bundles.exists()  # no replay bundle: nothing of the adapter's failed


@pytest.mark.requirement("DECISION-012")
def test_replaying_a_docker_bundle_without_an_engine_is_a_set_up_error(tmp_path: Path) -> None:
    checked = _invoke(
        "check",
        f"{ADAPTERS}:temp_path_error",
        "--profile",
        "smoke",
        "--check",
        "stream.grammar",
        "--bundle-dir",
        str(tmp_path),
    )
    assert checked.exit_code == 1, checked.output
    bundle = next(tmp_path.rglob("*.replay.json"))
    data = json.loads(bundle.read_text(encoding="utf-8"))
    data["sandbox"] = "docker"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    replayed = _invoke(
        "replay",
        str(bundle),
        "--adapter",
        f"{ADAPTERS}:temp_path_error",
        env={"DOCKER_HOST": NO_ENGINE},
    )
    assert replayed.exit_code == 2, replayed.output
    _one_sentence(replayed.output, "Docker engine")


def test_an_unknown_area_of_the_catalogue_is_one_sentence() -> None:
    result = _invoke("spec", "requirements", "--area", "NOPE")
    assert result.exit_code == 2, result.output
    _one_sentence(result.output, "Unknown area 'NOPE'", "STREAM")


# -- baselines ---------------------------------------------------------------------------


def _musts(path: Path, status: str) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {item["requirement"] for item in data["musts"] if item["status"] == status}


@pytest.mark.requirement("DECISION-015")
def test_write_baseline_writes_what_baseline_reads_and_a_failure_names_every_missing_id(
    tmp_path: Path,
) -> None:
    # The minimal target declares no scripting: every scripted MUST stays unverified.
    baseline = tmp_path / "baseline.yaml"
    select = ["--profile", "smoke", "--tier", "scripted", "--area", "STREAM"]
    written = _invoke(
        "check",
        MINIMAL,
        *select,
        "--write-baseline",
        str(baseline),
        "--json",
        str(tmp_path / "a.json"),
    )
    assert written.exit_code == 0, written.output
    listed = yaml.safe_load(baseline.read_text(encoding="utf-8"))["unverified"]
    assert listed == sorted(_musts(tmp_path / "a.json", "unverified"))
    assert len(listed) >= 2
    assert f"wrote the baseline {baseline}: {len(listed)} unverified MUSTs" in written.output

    held = _invoke("check", MINIMAL, *select, "--baseline", str(baseline))
    assert held.exit_code == 0, held.output

    missing = listed[:2]
    baseline.write_text(
        yaml.safe_dump({"unverified": [item for item in listed if item not in missing]}),
        encoding="utf-8",
    )
    broken = _invoke("check", MINIMAL, *select, "--baseline", str(baseline))
    assert broken.exit_code == 1, broken.output
    assert f"2 required MUSTs are unverified and not in the baseline {baseline}:" in broken.output
    # The missing ids are named, grouped by why they went unverified.
    assert (
        f"not verified (capability 'scripting' not declared): {MINIMAL} {', '.join(sorted(missing))}"
        in broken.output
    )


# -- reports that two runs write alike ----------------------------------------------------------


@pytest.mark.requirement("DECISION-013")
def test_two_runs_at_one_seed_write_byte_identical_reports(tmp_path: Path) -> None:
    def run(name: str, *extra: str) -> tuple[bytes, bytes]:
        result = _invoke(
            "check",
            f"{ADAPTERS}:temp_path_error",
            "--profile",
            "smoke",
            "--seed",
            "7",
            "--json",
            str(tmp_path / f"{name}.json"),
            "--report",
            str(tmp_path / f"{name}.md"),
            "--bundle-dir",
            str(tmp_path / "bundles"),
            *extra,
        )
        assert result.exit_code == 1, result.output
        return (tmp_path / f"{name}.json").read_bytes(), (tmp_path / f"{name}.md").read_bytes()

    first, second = run("first"), run("second")
    assert first == second
    # The failure names the adapter's random scratch directory, normalised ...
    assert b"scratch file <tmp>/state.json" in first[0]
    # ... and durations come only on request.
    assert b"duration_seconds" not in first[0]
    timed, _ = run("timed", "--timings")
    assert b"duration_seconds" in timed


def test_workdir_and_random_temp_paths_are_normalised() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        text = (
            f'File "/tmp/harness-testkit-check-4242-x1y2_z3/sandboxes/a.py", line 3\n'
            f"cannot open {scratch}/state.json"
        )
        assert _without_workdirs(text) == (
            'File "<workdir>/sandboxes/a.py", line 3\ncannot open <tmp>/state.json'
        )


def test_minted_session_ids_and_cancel_scope_addresses_are_normalised() -> None:
    text = (
        "path /tmp/harness-testkit-check-42-x1/sandboxes/sessions/cECNFS1mmnL1wwCw/"
        "fake-cECNFS1mmnL1wwCw/w.txt\n"
        "CancelledError: Cancelled via cancel scope 7f5cc8d747c0; reason: deadline exceeded\n"
        "kept: /tmp/harness-testkit-check-42-x1/sandboxes/sessions/named-session/w.txt"
    )
    assert _without_workdirs(text) == (
        "path <workdir>/sandboxes/sessions/<session>/fake-<session>/w.txt\n"
        "CancelledError: Cancelled via cancel scope <id>; reason: deadline exceeded\n"
        "kept: <workdir>/sandboxes/sessions/named-session/w.txt"
    )


# -- compare views -----------------------------------------------------------------------


def test_compared_columns_name_target_version_and_file(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path in (old, new):
        result = _invoke(
            "check",
            MINIMAL,
            "--profile",
            "smoke",
            "--check",
            "session.identity",
            "--json",
            str(path),
        )
        assert result.exit_code == 0, result.output
    page = tmp_path / "cmp.html"
    rendered = _invoke("report", str(old), str(new), "--html", str(page))
    assert rendered.exit_code == 0, rendered.output
    html = page.read_text(encoding="utf-8")
    versions = json.loads(old.read_text(encoding="utf-8"))["reports"][0]["versions"]
    own = ", ".join(
        f"{name} {value}" for name, value in versions.items() if name != "harness-testkit"
    )
    assert own  # the fake harness names its version
    for path in (old, new):
        assert f"<th>{MINIMAL} (smoke, {own}) from {path}</th>" in html
