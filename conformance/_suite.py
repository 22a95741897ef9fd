"""``ConformanceSuite``: the pytest face of the conformance checks.

Subclass it in a test module of your project::

    from harness_testkit.conformance import ConformanceSuite

    class TestMyAdapter(ConformanceSuite):
        pass

and either override the ``harness_adapter`` fixture in ``conftest.py`` (returning a
factory, or an :class:`AdapterTarget` with a capability declaration) or run
``pytest --harness-adapter=package.module:factory``. Every check becomes one test, named
by its id; skips name the capability, failures name the requirement and the replay
command. It runs the same plain check functions as ``harness-testkit check``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ._capabilities import AdapterCapabilities
from ._checks import Check
from ._context import AdapterTarget
from ._runner import Expectations, RunOptions, run_check

__all__ = ["ConformanceSuite"]


def _target(adapter: Any, capabilities: AdapterCapabilities | None) -> AdapterTarget:
    if isinstance(adapter, AdapterTarget):
        return adapter
    if not callable(adapter):
        raise pytest.UsageError(
            "the harness_adapter fixture must return an adapter factory or an AdapterTarget"
        )
    declared = capabilities or getattr(adapter, "capabilities", None)
    if isinstance(declared, dict):
        declared = AdapterCapabilities.model_validate(declared)
    name = f"{getattr(adapter, '__module__', '?')}:{getattr(adapter, '__qualname__', '?')}"
    return AdapterTarget(
        factory=adapter,
        capabilities=declared
        if isinstance(declared, AdapterCapabilities)
        else AdapterCapabilities(),
        name=name,
    )


class ConformanceSuite:
    """Inherit to run every harness-v1 check against the ``harness_adapter`` fixture."""

    def test_harness_v1(
        self,
        harness_check: Check,
        harness_adapter: Any,
        harness_capabilities: AdapterCapabilities | None,
        harness_run_options: RunOptions,
        record_property: Any,
    ) -> None:
        """One conformance check (parametrized over every registered check)."""
        target = _target(harness_adapter, harness_capabilities)
        for requirement in harness_check.requirements:
            record_property("requirement", requirement)
        result = run_check(harness_check, target, harness_run_options)
        record_property("status", result.status)
        if result.status == "skip":
            pytest.skip(result.message)
        if result.status == "xfail":
            pytest.xfail(result.message)
        if result.status in ("fail", "xpass", "error"):
            replay = f"\nreplay: {result.replay_command}" if result.replay_command else ""
            level = result.failed_level or result.level
            kind = "check error: " if result.status == "error" else ""
            trace = f"\n{result.traceback}" if result.traceback else ""
            pytest.fail(f"{level} {kind}{result.message}{replay}{trace}", pytrace=False)


def default_run_options(config: pytest.Config) -> RunOptions:
    """Run options from the plugin's command-line options."""
    expectations_path = config.getoption("--harness-expectations")
    return RunOptions(
        profile=config.getoption("--harness-profile"),
        sandbox=config.getoption("--harness-sandbox"),
        seed=config.getoption("--harness-seed"),
        bundle_dir=Path(config.getoption("--harness-bundle-dir")),
        expectations=Expectations.load(Path(expectations_path))
        if expectations_path
        else Expectations(),
    )
