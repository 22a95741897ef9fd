"""`harness-testkit new-adapter`: the skeleton installs, passes `check` and runs under pytest."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import AdapterCapabilities
from harness_testkit.conformance._skeleton import write_skeleton


def _throwaway_python(tmp_path: Path) -> Path:
    """A fresh venv that sees this environment's packages but installs into its own."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # addsitedir (not a bare path) so this environment's editable install of the kit
    # (a .pth hook) works there too.
    ours = sysconfig.get_paths()["purelib"]
    (Path(site) / "parent-env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python


def _run(
    python: Path, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.slow
def test_the_skeleton_installs_and_passes_check_and_pytest(tmp_path: Path) -> None:
    # The README's three commands, in a throwaway venv: new-adapter --install, check, pytest.
    python = _throwaway_python(tmp_path)
    offline = {
        **os.environ,
        "PIP_NO_BUILD_ISOLATION": "0",  # build with this environment's setuptools
        "PIP_NO_INDEX": "1",  # its dependencies are there already
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    created = _run(
        python, "-m", "harness_testkit", "new-adapter", "acme-runtime", "--install",
        cwd=tmp_path, env=offline,
    )  # fmt: skip
    assert created.returncode == 0, created.stdout + created.stderr
    project = tmp_path / "acme-runtime"
    # Installed: importable from elsewhere although the package lives under src/.
    where = _run(python, "-c", "import acme_runtime; print(acme_runtime.__file__)", cwd=tmp_path)
    assert str(project / "src") in where.stdout, where.stderr
    # The printed next steps run as printed: the kit and pytest through the Python the
    # project was installed into (not whatever `pytest` is first on PATH).
    steps = created.stdout.split("\nNext:\n", 1)[1].strip().splitlines()
    assert steps[0].strip().startswith(f"{python} -m harness_testkit check acme_runtime:"), steps
    assert steps[-1].strip() == f"cd {project.name} && {python} -m pytest", steps
    checked = _run(
        python, "-m", "harness_testkit", "check", "acme_runtime:make_adapter",
        "--capabilities", "acme-runtime/capabilities.yaml",
        "--baseline", "acme-runtime/conformance-baseline.yaml", "--profile", "smoke",
        "--html", "report.html",
        cwd=tmp_path,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The whole surface, scripting included: every MUST of both tiers is verified.
    verdict = checked.stdout.strip().splitlines()[-1]
    assert verdict.startswith("PASS: all "), verdict
    html = (tmp_path / "report.html").read_text()
    assert 'data-verdict="PASS"' in html
    tested = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    output = tested.stdout + tested.stderr
    assert tested.returncode == 0, output
    assert " passed" in output
    assert "failed" not in output
    assert verdict in output.splitlines(), output  # the plugin's verdict is the CLI's
    assert (
        "capabilities (declaration: harness_capabilities (--harness-capabilities FILE))" in output
    )


def test_the_skeleton_files(tmp_path: Path) -> None:
    written = write_skeleton("acme-runtime", tmp_path / "p")
    names = {path.relative_to(tmp_path / "p").as_posix() for path in written}
    assert names == {
        "pyproject.toml",
        "README.md",
        "capabilities.yaml",
        "conformance-baseline.yaml",
        "capabilities.schema.json",
        "src/acme_runtime/__init__.py",
        "src/acme_runtime/_adapter.py",
        "src/acme_runtime/_runtime.py",
        "src/acme_runtime/_tools.py",
        "tests/conftest.py",
        "tests/test_conformance.py",
        ".github/workflows/conformance.yml",
    }
    caps = AdapterCapabilities.from_file(tmp_path / "p" / "capabilities.yaml")
    assert caps.resume is True
    assert caps.continuation == "lossless"
    adapter = (tmp_path / "p" / "src" / "acme_runtime" / "_adapter.py").read_text()
    assert 'HARNESS_ID = "acme-runtime"' in adapter
    assert "{{" not in adapter
    workflow = (tmp_path / "p" / ".github" / "workflows" / "conformance.yml").read_text()
    assert "harness-testkit check acme_runtime:make_adapter" in workflow


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Acme", "must be kebab-case"),
        ("acme_runtime", "must be kebab-case"),
        ("9lives", "must be kebab-case"),
    ],
)
def test_bad_names_and_occupied_directories_are_refused(
    tmp_path: Path, name: str, problem: str
) -> None:
    result = CliRunner().invoke(cli, ["new-adapter", name, "--dir", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert problem in result.output
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("")
    with pytest.raises(ValueError, match="exists and is not empty"):
        write_skeleton("acme", tmp_path / "busy")


def test_the_skeleton_is_lint_clean_and_formatted(tmp_path: Path) -> None:
    # With the project's own ruff settings (written into its pyproject.toml).
    project = tmp_path / "p"
    write_skeleton("acme-runtime", project)
    for command in (("check", "--no-cache", "."), ("format", "--check", "--no-cache", ".")):
        completed = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr


def _workflow_check(project: Path) -> list[str]:
    """The generated workflow's `harness-testkit check` step, as arguments."""
    from harness_testkit.spec import load_yaml

    workflow = load_yaml(
        (project / ".github" / "workflows" / "conformance.yml").read_text(encoding="utf-8"),
        source="conformance.yml",
    )
    runs = [str(step["run"]) for step in workflow["jobs"]["conformance"]["steps"] if "run" in step]
    commands = [run.split() for run in runs if run.startswith("harness-testkit check")]
    assert len(commands) == 1, runs
    assert "--allow-unverified" not in commands[0]
    return commands[0][1:]


@pytest.mark.requirement("DECISION-006")
def test_the_generated_workflow_gates_like_the_cli_and_fails_a_broken_skeleton(
    tmp_path: Path,
) -> None:
    from harness_testkit.conformance._zoo._skeleton_bugs import SKELETON_BUGS, planted_target

    broken = next(bug for bug in SKELETON_BUGS if bug.name == "skeleton-dropped-text-end")
    for bug, expected in ((None, 0), (broken, 1)):
        project = tmp_path / (bug.name if bug else "clean")
        planted_target(bug, project)
        args = _workflow_check(project)
        # The job's own command, on the project (the adapter imported from its src/).
        completed = subprocess.run(
            [sys.executable, "-m", "harness_testkit", *args, "--profile", "smoke"],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(project / "src")},
            capture_output=True,
            text=True,
            timeout=900,
        )
        output = completed.stdout + completed.stderr
        assert completed.returncode == expected, output
        if bug is not None:
            # The verdict is stdout's last line (progress lines go to stderr).
            assert "stream.grammar [STREAM-038, SHOULD]" in completed.stdout.splitlines()[-1]
