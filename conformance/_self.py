"""The reference run: the fake harness in every capability profile must pass."""

from __future__ import annotations

from collections.abc import Callable

from harness_testkit.fake_harness import FakeHarness, HarnessProfile, get_profile, profiles

from ._capabilities import AdapterCapabilities
from ._context import AdapterTarget

__all__ = ["capabilities_of", "self_test_targets"]


def capabilities_of(profile: HarnessProfile) -> AdapterCapabilities:
    """The capability declaration that matches a fake-harness profile exactly."""
    return AdapterCapabilities(
        builtin_tool_approvals=profile.supports_builtin_tool_approvals,
        builtin_tool_filtering=profile.supports_builtin_tool_filtering,
        manual_compaction=profile.manual_compaction != "none",
        steering=profile.supports_user_messages,
        json_response_format=profile.json_response_format != "none",
        resume=True,
        continuation=profile.continuation,
        scripting=True,
        prompts=("Say hello to the conformance suite.", "Tell me a second thing."),
        turn_timeout=30.0,
    )


def _factory(name: str) -> Callable[[], FakeHarness]:
    def make() -> FakeHarness:
        return FakeHarness(profile=name)

    make.__name__ = f"fake_{name.replace('-', '_')}"
    return make


def self_test_targets() -> list[AdapterTarget]:
    """One target per fake-harness profile, named ``self:<profile>``."""
    return [
        AdapterTarget(
            factory=_factory(name),
            capabilities=capabilities_of(get_profile(name)),
            name=f"self:{name}",
        )
        for name in profiles()
    ]
