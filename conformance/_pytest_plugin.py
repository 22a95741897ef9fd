"""The pytest plugin of harness-testkit (entry point ``pytest11``).

It imports nothing heavy at load time. It adds one option group and the
``harness_adapter`` fixture, which adapter authors either override in their
``conftest.py`` or fill from ``--harness-adapter=package.module:factory``.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

__all__ = ["harness_adapter", "load_factory", "pytest_addoption"]


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
        help="Conformance depth (hypothesis example counts).",
    )
    group.addoption(
        "--harness-sandbox",
        action="store",
        default="local",
        choices=("local", "docker"),
        help="Sandbox provider the conformance suites use.",
    )


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
