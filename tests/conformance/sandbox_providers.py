"""Importable sandbox providers for the ``check-sandbox`` tests (``module:attribute``)."""

from __future__ import annotations

import os

from harness_testkit.sandbox import LocalSandboxProvider

__all__ = ["ROOT_VARIABLE", "honest_local", "overclaiming_local"]

#: The environment variable naming the base directory the factories use.
ROOT_VARIABLE = "HARNESS_TESTKIT_TEST_SANDBOX_ROOT"


def honest_local() -> LocalSandboxProvider:
    """A local provider in the test's directory; claims what it enforces."""
    return LocalSandboxProvider(os.environ[ROOT_VARIABLE])


honest_local.capabilities = {  # type: ignore[attr-defined]  # capabilities ride on the factory
    "resume": True,
    "snapshots": True,
    "path_confinement": True,
    "kills_process_tree": True,
    "host_directory": True,
}


def overclaiming_local() -> LocalSandboxProvider:
    """A local provider that claims a system-file protection it does not have."""
    return LocalSandboxProvider(os.environ[ROOT_VARIABLE])


overclaiming_local.capabilities = {"protects_system_files": True}  # type: ignore[attr-defined]  # capabilities ride on the factory
