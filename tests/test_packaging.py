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
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(out),
        ],
        check=True,
        cwd=out,
    )
    (built,) = out.glob("harness_testkit-*.whl")
    return built


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
