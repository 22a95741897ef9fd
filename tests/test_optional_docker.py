"""``docker`` is an optional extra: the kit imports and runs locally without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# Run in a fresh interpreter where `import docker` fails, as in an install without the
# `docker` extra.
_BLOCK_DOCKER = """
import sys
sys.modules["docker"] = None  # `import docker` raises ImportError
"""


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCK_DOCKER + textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_kit_and_the_local_default_need_no_docker(tmp_path: Path) -> None:
    completed = _run(
        """
        import harness_testkit.conformance, harness_testkit.simulate, harness_testkit.sandbox
        from harness_testkit._cli import main
        sys.argv = ["harness-testkit", "simulate", "--builtin", "quickstart", "--quiet",
                    "--out", "out"]
        main()
        """,
        tmp_path,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert (tmp_path / "out" / "summary.json").is_file()


def test_asking_for_docker_without_the_extra_names_the_extra(tmp_path: Path) -> None:
    completed = _run(
        """
        from harness_testkit.sandbox import DockerSandboxProvider
        try:
            DockerSandboxProvider()
        except Exception as error:
            print(type(error).__name__, error)
        """,
        tmp_path,
    )
    assert "MissingExtraError" in completed.stdout, completed.stderr
    assert "pip install 'harness-testkit[docker]'" in completed.stdout


def test_simulating_on_docker_without_the_extra_names_the_extra(tmp_path: Path) -> None:
    completed = _run(
        """
        from harness_testkit._cli import main
        sys.argv = ["harness-testkit", "simulate", "--builtin", "quickstart", "--quiet",
                    "--sandbox", "docker", "--out", "out"]
        main()
        """,
        tmp_path,
    )
    # A set-up error before any session starts: exit 2 and one sentence, no traceback.
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "Traceback" not in completed.stdout + completed.stderr
    assert completed.stderr.strip().splitlines() == [
        "Error: The Docker sandbox needs the `docker` extra (docker is not installed): "
        "pip install 'harness-testkit[docker]'"
    ]
