"""The distribution installs only the ``harness_testkit`` namespace, from a wheel too, and a
bare install (the wheel without any extra) runs every command's help and the main job."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from uv import find_uv_bin

from harness_testkit import __version__

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["spec", "reference", "fake_harness", "conformance", "model_endpoint"]

PROBE = """
import importlib, importlib.util, json
out = {"generic": [n for n in ("spec", "reference", "fake_harness", "conformance",
                             "model_endpoint", "tests")
                   if importlib.util.find_spec(n) is not None]}
for name in %r:
    module = importlib.import_module("harness_testkit." + name)
    out[name] = {"all": module.__all__, "file": module.__file__}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Build from a copy: setuptools writes build/ next to the sources, and the
    # repository must stay untouched (xdist workers may run this concurrently).
    source = tmp_path_factory.mktemp("source") / "harness-testkit"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".nox",
            "build",
            "dist",
            "*.egg-info",
            "__pycache__",
            ".venv*",
            "harness-testkit-out",
        ),
    )
    # `build`, not pip: a venv made by uv (the README's test command) has no pip. The
    # dependency check is skipped: setuptools >= 70.1 (the test extra's) builds wheels
    # itself, without the `wheel` package build-system.requires still names for pip.
    built_by = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--skip-dependency-check",
            "--outdir",
            str(out),
        ],
        check=True,
        cwd=source,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (out / "build.log").write_text(built_by.stdout + built_by.stderr, encoding="utf-8")
    (built,) = out.glob("harness_testkit-*.whl")
    return built


#: Folders of data files (no Python) the wheel ships, as (source folder, wheel folder).
DATA_FOLDERS = [
    ("spec/schemas", "harness_testkit/spec/schemas"),
    ("conformance/schemas", "harness_testkit/conformance/schemas"),
    ("conformance/skeleton", "harness_testkit/conformance/skeleton"),
    ("conformance/vectors", "harness_testkit/conformance/vectors"),
    ("fake_harness/examples", "harness_testkit/fake_harness/examples"),
    ("simulate/examples", "harness_testkit/simulate/examples"),
]


def test_every_data_file_ships_and_the_build_does_not_warn_about_it(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for source, target in DATA_FOLDERS:
        files = sorted(path.name for path in (ROOT / source).iterdir() if path.is_file())
        assert files, source
        missing = [name for name in files if f"{target}/{name}" not in names]
        assert not missing, (source, missing)
    # setuptools warns (and announces it will stop shipping them) when a data folder is
    # not declared as a package.
    log = (wheel.parent / "build.log").read_text(encoding="utf-8")
    assert "absent from the `packages` configuration" not in log, log[-3000:]


def test_wheel_holds_only_the_namespace_and_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {
        "harness_testkit",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }
    for package in PACKAGES:
        assert f"harness_testkit/{package}/__init__.py" in names
        assert f"harness_testkit/{package}/py.typed" in names
    assert "harness_testkit/spec/requirements.yaml" in names
    assert "harness_testkit/spec/schemas/stream-part.schema.json" in names
    # The schemas of user-written files ship too (`harness-testkit schemas` writes them).
    assert "harness_testkit/conformance/schemas/capabilities.schema.json" in names
    assert "harness_testkit/simulate/examples/scenario.schema.json" in names


def test_wheel_install_imports_the_same_names_as_this_install(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # Dependencies come from this environment's site-packages (plain path, so its
    # editable-install hook is not loaded and harness_testkit resolves to the wheel).
    deps = sysconfig.get_paths()["purelib"]
    probe = subprocess.run(
        [str(python), "-c", PROBE % (PACKAGES,)],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": deps, "PATH": "/usr/bin:/bin"},
    )
    result = json.loads(probe.stdout)
    assert result["generic"] == [], "generic top-level modules must not be importable"
    for package in PACKAGES:
        assert result[package]["file"].startswith(site)
        here = importlib.import_module(f"harness_testkit.{package}")
        assert result[package]["all"] == here.__all__


# -- a bare install: the wheel without any extra -------------------------------------------

#: Modules only the extras bring; none may be importable in the bare environment.
EXTRA_MODULES = ["starlette", "uvicorn", "docker", "claude_agent_sdk", "pytest"]

#: Lists every command path of the console script's group, walking it as click does for
#: `--help` (so a subcommand added later is covered without editing this test).
WALK = """
import json, click
from harness_testkit._cli import cli

def walk(command, path):
    yield path
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=" ".join(["harness-testkit", *path]))
        for name in command.list_commands(context):
            yield from walk(command.get_command(context, name), [*path, name])

print(json.dumps(list(walk(cli, []))))
"""

#: A command that needs an extra, and the extra its one-sentence error must name.
NEEDS_EXTRA = [
    (["model-endpoint", "--script", "endpoint.yaml"], "model-endpoint"),
    (["simulate", "--builtin", "quickstart", "--sandbox", "docker"], "docker"),
    (["check", "--self", "--profile", "smoke", "--sandbox", "docker"], "docker"),
    (["check", "harness_testkit.adapters.claude_code:make_adapter"], "claude-code"),
    (["sandbox", "prune"], "docker"),
]


@dataclass(frozen=True)
class BareInstall:
    """A fresh venv holding the wheel and its required dependencies, no extra."""

    python: Path
    script: Path
    env: dict[str, str]

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.script), *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture(scope="module")
def bare(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> BareInstall:
    """``pip install harness_testkit-*.whl`` (no extras) into a fresh venv, with uv.

    The wheel's dependencies are pinned to the versions of this environment (the lock in
    CI), so the bare install runs what the other tests ran, minus the extras.
    """
    base = tmp_path_factory.mktemp("bare")
    env_dir = base / "venv"
    uv = find_uv_bin()
    # The machine's environment (its certificates, uv's cache), but not this venv.
    env = {
        **{key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"},
        "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_SYSTEM_CERTS": "1",
    }
    ours = {"harness-testkit", "harness_testkit"}
    pins = sorted(
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions()
        if dist.metadata["Name"] and dist.metadata["Name"] not in ours
    )
    constraints = base / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
    for command in (
        [uv, "venv", "--quiet", "--python", sys.executable, str(env_dir)],
        [uv, "pip", "install", "--quiet", "--python", str(env_dir / "bin" / "python"),
         "--constraint", str(constraints), str(wheel)],
    ):  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    return BareInstall(
        python=env_dir / "bin" / "python", script=env_dir / "bin" / "harness-testkit", env=env
    )


def test_a_bare_install_has_none_of_the_extras(bare: BareInstall, tmp_path: Path) -> None:
    probe = "import importlib.util as u, json; print(json.dumps([m for m in %r if u.find_spec(m)]))"
    done = subprocess.run(
        [str(bare.python), "-c", probe % (EXTRA_MODULES,)],
        env=bare.env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == []


def test_every_command_shows_its_help_on_a_bare_install(bare: BareInstall, tmp_path: Path) -> None:
    walked = subprocess.run(
        [str(bare.python), "-c", WALK],
        env=bare.env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert walked.returncode == 0, walked.stderr
    paths: list[list[str]] = json.loads(walked.stdout)
    # The group, every subcommand, and the subcommands of subcommand groups.
    assert [] in paths
    assert ["simulate"] in paths
    assert ["model-endpoint"] in paths
    assert any(len(path) == 2 for path in paths), paths
    for path in paths:
        done = bare.run(*path, "--help", cwd=tmp_path)
        shown = " ".join(["harness-testkit", *path])
        assert done.returncode == 0, (shown, done.stdout + done.stderr)
        assert "Traceback" not in done.stdout + done.stderr, shown
        assert done.stdout.startswith(f"Usage: {shown}"), (shown, done.stdout[:200])
    version = bare.run("--version", cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout == f"harness-testkit, version {__version__}\n"


def test_the_main_job_runs_on_a_bare_install(bare: BareInstall, tmp_path: Path) -> None:
    done = bare.run("simulate", "--builtin", "quickstart", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(
        (tmp_path / "harness-testkit-out" / "simulate" / "summary.json").read_text("utf-8")
    )
    assert (summary["status"], summary["sessionsRun"], summary["sessionsFailed"]) == (
        "completed",
        1,
        0,
    ), summary


@pytest.mark.parametrize(("args", "extra"), NEEDS_EXTRA)
def test_a_command_needing_an_extra_says_so_in_one_sentence(
    bare: BareInstall, tmp_path: Path, args: list[str], extra: str
) -> None:
    (tmp_path / "endpoint.yaml").write_text("replies: [hello]\n", encoding="utf-8")
    done = bare.run(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: "), line
    assert f"needs the `{extra}` extra" in line, line
    assert line.endswith(f"pip install 'harness-testkit[{extra}]'"), line
