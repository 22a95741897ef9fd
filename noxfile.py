"""The three dependency sessions: the lock, the newest versions allowed, the lowest.

- ``nox -s locked``: the test suite on ``uv.lock`` (what the README's test command and CI
  run); arguments after ``--`` go to pytest (default: the whole suite, ``-n 2``).
- ``nox -s newest``: the resolver takes the newest versions ``pyproject.toml`` allows,
  ignoring the lock; ``nox -s lowest``: the lowest direct versions it allows. Both print
  which installed versions differ from the lock before their tests run (so a failure
  names what moved), then run :data:`RANGE_TESTS` (or the arguments after ``--``).

Every session makes its own virtual environment with uv (``.nox/<session>``) and installs
the ``test`` and ``claude-code`` extras, as CI does.
"""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["locked"]

#: The extras every session installs (those of .ci/run).
EXTRAS = "test,claude-code"
#: The tests that exercise third-party packages the most, bounded for CI: the provider
#: SDKs (anthropic, openai) against the model endpoint on Starlette and uvicorn, the
#: contract models (pydantic, YAML, JSON Schema), the Claude Code SDK and its CLI, the
#: gate's CLI (click, rich, hypothesis), the pytest plugin (pytest, xdist) and sharded
#: simulation (Dask's distributed). The newest and lowest runs check the ranges in
#: pyproject.toml; the locked run checks the rest.
RANGE_TESTS = [
    "tests/model_endpoint",
    "tests/spec",
    "tests/adapters",
    "tests/simulate/test_engine.py",
    "tests/conformance/test_gate.py",
    "tests/conformance/test_plugin_project.py",
    "-m",
    "not slow",
]


def _pytest(session: nox.Session, default: list[str]) -> None:
    session.run("python", "-m", "pytest", "-n", "2", *(session.posargs or default))


def _lock_diff(session: nox.Session) -> None:
    session.run(
        "python", "scripts/lock_diff.py", "uv.lock", "--label", f"nox session {session.name}"
    )


@nox.session(python=False)
def locked(session: nox.Session) -> None:
    """The suite on uv.lock (``uv sync --locked``: fails when the lock is stale)."""
    env = os.path.join(os.getcwd(), ".nox", "locked")
    session.run(
        "uv",
        "sync",
        "--locked",
        "--extra",
        "test",
        "--extra",
        "claude-code",
        external=True,
        env={"UV_PROJECT_ENVIRONMENT": env},
    )
    session.run(
        os.path.join(env, "bin", "python"),
        "-m",
        "pytest",
        "-n",
        "2",
        *session.posargs,
        external=True,
    )


@nox.session
def newest(session: nox.Session) -> None:
    """The newest versions the ranges allow (no lock), then the range tests."""
    session.install("--upgrade", "--resolution", "highest", "-e", f".[{EXTRAS}]")
    _lock_diff(session)
    _pytest(session, RANGE_TESTS)


@nox.session
def lowest(session: nox.Session) -> None:
    """The lowest versions the direct ranges allow (no lock), then the range tests."""
    session.install("--resolution", "lowest-direct", "-e", f".[{EXTRAS}]")
    _lock_diff(session)
    _pytest(session, RANGE_TESTS)
