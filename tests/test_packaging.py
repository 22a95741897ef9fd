"""The distribution installs only the ``harness_testkit`` namespace, from a wheel too."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

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
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".venv*", "harness-testkit-out"
        ),
    )
    built_by = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "--verbose",  # the build backend's warnings show only in verbose output
            "-w",
            str(out),
        ],
        check=True,
        cwd=out,
        capture_output=True,
        text=True,
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
