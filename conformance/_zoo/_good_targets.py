"""The reference run: the fake harness in every capability profile must pass."""

from __future__ import annotations

import functools
from collections.abc import Callable

from harness_testkit.fake_harness import FakeHarness, HarnessProfile, get_profile, profiles

from .._capabilities import AdapterCapabilities
from .._context import AdapterTarget
from .._runner import Expectations

__all__ = ["KNOWN_DEVIATIONS", "capabilities_of", "self_test_target", "self_test_targets"]

#: Profiles that imitate a real adapter's departure from harness-v1 on purpose, so the
#: reference run proves the suite sees it: profile -> strict xfail ``{check_id: reason}``.
#: An entry that starts passing fails the run (the profile or the check changed).
KNOWN_DEVIATIONS: dict[str, Expectations] = {
    "pi": Expectations(
        xfail={
            "scripted.visible-writes": (
                "the pi profile reports its own write/edit calls as file-change too "
                "(file_change_for_tool_writes, as the real Pi adapter does; STREAM-018)"
            )
        }
    ),
}


def _unsupported(profile: HarnessProfile) -> dict[str, str]:
    """What the profile leaves out on purpose, with why (the gate accepts only these)."""
    runtime = f"the {profile.name} profile imitates a runtime"
    gaps = {
        "builtin_tool_approvals": not profile.supports_builtin_tool_approvals,
        "builtin_tool_filtering": not profile.supports_builtin_tool_filtering,
        "manual_compaction": profile.manual_compaction == "none",
        "steering": not profile.supports_user_messages,
        "json_response_format": profile.json_response_format == "none",
    }
    reasons = {name: f"{runtime} without it" for name, missing in gaps.items() if missing}
    if "askUserQuestions" not in profile.builtin_tools:
        reasons["scripted.questions"] = f"{runtime} with no askUserQuestions built-in"
    if not profile.emits_compaction:
        reasons["scripted.compaction-once"] = f"{runtime} that compacts silently or never"
    return reasons


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
        unsupported=_unsupported(profile),
    )


def _factory(name: str) -> Callable[[], FakeHarness]:
    def make() -> FakeHarness:
        return FakeHarness(profile=name)

    make.__name__ = f"fake_{name.replace('-', '_')}"
    return make


def self_test_target(name: str) -> AdapterTarget:
    """The ``self:<name>`` target (see :func:`self_test_targets`).

    Raises:
        ValueError: ``name`` is no fake-harness profile.
    """
    return AdapterTarget(
        factory=_factory(name),
        capabilities=capabilities_of(get_profile(name)),
        name=f"self:{name}",
        expectations=KNOWN_DEVIATIONS.get(name),
        recipe=functools.partial(self_test_target, name),
    )


def self_test_targets() -> list[AdapterTarget]:
    """One target per fake-harness profile, named ``self:<profile>``.

    Each carries its profile's :data:`KNOWN_DEVIATIONS` as expectations, so every run
    of the reference (``check --self``, the selftest's false-positive pass) counts them
    as known failures.
    """
    return [self_test_target(name) for name in profiles()]
