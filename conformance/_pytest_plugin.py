"""The pytest plugin of harness-testkit (entry point ``pytest11``).

It imports nothing heavy at load time: the suite is imported only when a test module
uses ``ConformanceSuite`` (which requests ``harness_check``). It adds one option group
and the fixtures ``harness_adapter`` (override it in ``conftest.py``, or pass
``--harness-adapter=package.module:factory``), ``harness_capabilities`` and
``harness_run_options``.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

__all__ = [
    "harness_adapter",
    "harness_capabilities",
    "harness_run_options",
    "load_factory",
    "pytest_addoption",
    "pytest_generate_tests",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``harness-testkit`` option group."""
    group = parser.getgroup("harness-testkit", "harness-v1 conformance (harness-testkit)")
    group.addoption(
        "--harness-adapter",
        action="store",
        default=None,
        metavar="MODULE:FACTORY",
        help="Adapter under test: a factory returning a harness-v1 adapter.",
    )
    group.addoption(
        "--harness-profile",
        action="store",
        default="smoke",
        choices=("smoke", "standard", "exhaustive"),
        help="Conformance depth (examples per property check).",
    )
    group.addoption(
        "--harness-sandbox",
        action="store",
        default="local",
        choices=("local", "docker"),
        help="Sandbox provider the conformance checks use.",
    )
    group.addoption("--harness-seed", action="store", type=int, default=0, help="Scenario seed.")
    group.addoption(
        "--harness-expectations",
        action="store",
        default=None,
        metavar="PATH",
        help="YAML of known bugs (`xfail: {check_id: reason}`), strict.",
    )
    group.addoption(
        "--harness-bundle-dir",
        action="store",
        default="harness-testkit-out/bundles",
        help="Where failing checks write replay bundles.",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``harness_check`` over every registered conformance check."""
    if "harness_check" in metafunc.fixturenames:
        from ._adapter_checks.registry import ordered_checks

        checks = ordered_checks()
        metafunc.parametrize("harness_check", checks, ids=[check.id for check in checks])


def load_factory(spec: str) -> Any:
    """Import ``package.module:factory`` and return the callable.

    Raises:
        pytest.UsageError: naming what is wrong with ``spec``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise pytest.UsageError(
            f"--harness-adapter={spec!r} must look like 'package.module:factory'."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise pytest.UsageError(
            f"--harness-adapter: cannot import {module_name!r}: {error}"
        ) from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise pytest.UsageError(
            f"--harness-adapter: {module_name}.{attribute} is missing or not callable."
        )
    return factory


@pytest.fixture
def harness_adapter(request: pytest.FixtureRequest) -> Any:
    """The adapter factory under test; override this fixture or pass --harness-adapter."""
    spec = request.config.getoption("--harness-adapter")
    if spec is None:
        pytest.skip(
            "no adapter under test: override the `harness_adapter` fixture in conftest.py "
            "or pass --harness-adapter=package.module:factory"
        )
    return load_factory(spec)


@pytest.fixture
def harness_capabilities() -> Any:
    """The capability declaration (``None``: the factory's ``capabilities`` or defaults)."""
    return None


@pytest.fixture
def harness_run_options(request: pytest.FixtureRequest) -> Any:
    """Run options from the command line (profile, sandbox, seed, expectations)."""
    from ._suite import default_run_options

    return default_run_options(request.config)
