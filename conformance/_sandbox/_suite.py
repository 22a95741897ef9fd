"""``SandboxSuite``: the pytest face of the sandbox provider suite.

Subclass it in a test module of your project::

    from .. import SandboxSuite

    class TestMySandbox(SandboxSuite):
        pass

and either override the ``harness_sandbox_provider`` fixture in ``conftest.py`` (returning
a provider, a factory returning one, or a :class:`SandboxTarget`) or set
``harness_sandbox_provider = package.module:provider`` (ini or
``--harness-sandbox-provider``). Every provider check becomes one test named by its id and
marked ``harness_sandbox`` plus its level (``harness_must``/...); it runs the check as
``harness-testkit check-sandbox`` does (the same result: pass, fail naming the requirement
and the replay command, or skip naming the unclaimed capability). Claims come from
``--harness-sandbox-capabilities FILE``, else the provider's ``capabilities`` attribute.
"""

from __future__ import annotations

from typing import Any

import pytest

from .._report import strongest_level
from .._suite import parametrize_checks
from ._checks import SANDBOX_CHECKS
from ._model import SandboxCapabilities, SandboxCheck, SandboxTarget
from ._run import sandbox_result, sandbox_target_from

__all__ = ["SandboxSuite", "sandbox_check_markers"]


def sandbox_check_markers(check: SandboxCheck) -> list[str]:
    """The marker names a provider check's test carries."""
    level, _ = strongest_level(check.requirements)
    return ["harness_sandbox", f"harness_{level.lower()}"]


class SandboxSuite:
    """Inherit to run every provider check against the ``harness_sandbox_provider`` fixture."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize ``harness_sandbox_check`` over the provider suite, marked."""
        parametrize_checks(metafunc, "harness_sandbox_check", SANDBOX_CHECKS, sandbox_check_markers)

    @pytest.fixture
    def harness_sandbox_target(
        self,
        harness_run_state: Any,
        harness_sandbox_provider: Any,
        harness_sandbox_capabilities: SandboxCapabilities | None,
    ) -> SandboxTarget:
        """The provider under test and its claims (built once per run and provider)."""
        cache = harness_run_state.sandbox_targets
        key = id(harness_sandbox_provider)
        if key not in cache:
            option = harness_run_state.option("sandbox_provider")
            shown = option or "the harness_sandbox_provider fixture"
            rounds_text = harness_run_state.option("sandbox_race_rounds") or "1000"
            if not rounds_text.isdigit() or int(rounds_text) < 1:
                raise pytest.UsageError(
                    f"harness sandbox race rounds {rounds_text!r}: give a positive integer"
                )
            rounds = int(rounds_text)
            try:
                target = sandbox_target_from(
                    harness_sandbox_provider,
                    harness_sandbox_capabilities,
                    where=shown,
                    race_rounds=rounds,
                    replay=(
                        f"pytest --harness-sandbox-provider {option} -k {{check}}"
                        if option
                        else "pytest -k {check}"
                    ),
                )
            except ValueError as error:
                raise pytest.UsageError(f"harness_sandbox_provider: {error}") from None
            # A provider the suite built (from a factory) is the suite's to close.
            owned = target.provider is not harness_sandbox_provider and not isinstance(
                harness_sandbox_provider, SandboxTarget
            )
            cache[key] = (target, shown, owned)
        target, _, _ = cache[key]
        assert isinstance(target, SandboxTarget)
        return target

    def test_harness_sandbox(
        self,
        harness_run_state: Any,
        harness_sandbox_check: SandboxCheck,
        harness_sandbox_target: SandboxTarget,
        record_property: Any,
    ) -> None:
        """One provider check (parametrized over the provider suite)."""
        for requirement in harness_sandbox_check.requirements:
            record_property("requirement", requirement)
        backend = harness_run_state.option("backend") or "asyncio"
        result = sandbox_result(harness_sandbox_check, harness_sandbox_target, backend)  # type: ignore[arg-type]
        record_property("status", result.status)
        if result.status == "skip":
            pytest.skip(result.message)
        if result.status != "pass":
            text = f"{result.failed_level or result.level} {result.message}"
            replay = harness_sandbox_target.replay.format(check=harness_sandbox_check.id)
            if replay not in text:  # a provider crash, not a check's own failure
                text += f"\nreplay: {replay}"
            pytest.fail(text, pytrace=False)
