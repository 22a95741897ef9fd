"""Adapters the gate tests import by name (``tests.conformance.gate_adapters:<factory>``)."""

from __future__ import annotations

import time
from typing import Any

from harness_testkit.conformance import AdapterCapabilities, capabilities_of
from harness_testkit.conformance._zoo._machinery import Defect, MutantAdapter, MutantSession
from harness_testkit.fake_harness import FakeHarness, get_profile
from harness_testkit.spec import PromptControl, PromptTurnOptions

_MINIMAL = capabilities_of(get_profile("minimal"))


def minimal() -> FakeHarness:
    """The unmutated fake (a conformant adapter), black-box only."""
    return FakeHarness(profile="minimal")


minimal.capabilities = _MINIMAL.model_copy(update={"scripting": False})  # type: ignore[attr-defined]  # capabilities ride on the factory


def _sessions(session: type[MutantSession]) -> Defect:
    """A zoo defect whose only change is the session class (not a catalogued mutant)."""
    return Defect(
        name="", requirement="ADAPTER-001", area="robustness", description="", session=session
    )


def raising() -> FakeHarness:
    """A factory that cannot build its adapter (a setup error, not a conformance one)."""
    raise RuntimeError("no credentials for the runtime")


class _Crashing(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        raise ZeroDivisionError("the adapter divided by zero while starting a turn")


def crashing() -> MutantAdapter:
    """Every prompt turn raises an exception no requirement covers."""
    return MutantAdapter(FakeHarness(profile="minimal"), _sessions(_Crashing))


crashing.capabilities = minimal.capabilities  # type: ignore[attr-defined]  # capabilities ride on the factory


class _Blocking(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        blocking_sleep_in_the_adapter()
        return await super().do_prompt_turn(options)


def blocking_sleep_in_the_adapter() -> None:
    """A synchronous call inside async code: the event loop cannot run meanwhile."""
    time.sleep(BLOCK_SECONDS)


#: How long the blocking adapter blocks (tests lower the watchdog's stall limit instead).
BLOCK_SECONDS = 4.0


def blocking() -> MutantAdapter:
    """Every prompt turn blocks the event loop."""
    return MutantAdapter(FakeHarness(profile="minimal"), _sessions(_Blocking))


blocking.capabilities = AdapterCapabilities.model_validate(  # type: ignore[attr-defined]  # capabilities ride on the factory
    {**minimal.capabilities.model_dump(), "turn_timeout": 1.0}  # type: ignore[attr-defined]  # capabilities ride on the factory
)


def noop(*args: Any) -> None:
    """Not an adapter factory (replay must never call what a bundle names)."""
    raise AssertionError("replay imported and called a callable named by a bundle")


class _CrashingStart(MutantAdapter):
    async def do_start(self, options: Any) -> Any:
        return start_that_crashes()


def start_that_crashes() -> Any:
    """An adapter bug no requirement names."""
    handles: dict[str, Any] = {}
    return handles["runtime-handle"]


def crashing_start() -> MutantAdapter:
    """``do_start`` raises KeyError (an unexpected exception, an error of the check)."""
    return _CrashingStart(FakeHarness(profile="minimal"))


crashing_start.capabilities = minimal.capabilities  # type: ignore[attr-defined]  # capabilities ride on the factory


def _mutant_factory(name: str) -> Any:
    from harness_testkit.conformance._zoo._catalog import get_mutant

    mutant = get_mutant(name)

    def make() -> Any:
        return mutant.factory()

    make.capabilities = mutant.capabilities.model_copy(update={"scripting": False})  # type: ignore[attr-defined]  # capabilities ride on the factory
    return make


#: Emits ``finish`` twice (STREAM-040): fails ``stream.grammar``.
duplicate_finish = _mutant_factory("duplicate-finish")


def nested(depth: int) -> Any:
    """A JSON list nested ``depth`` levels deep."""
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


class _DeepPart(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        wire = part.to_wire() if hasattr(part, "to_wire") else part
        if isinstance(wire, dict) and wire.get("type") == "text-delta":
            return [part, {"type": "raw", "rawValue": nested(1000)}]
        return [part]


def deep_part() -> MutantAdapter:
    """Emits a raw part nested 1,000 deep next to every text delta."""
    return MutantAdapter(FakeHarness(profile="minimal"), _sessions(_DeepPart))


deep_part.capabilities = minimal.capabilities  # type: ignore[attr-defined]  # capabilities ride on the factory


#: Built-ins without ``tool_use_kind`` (a SHOULD that ``adapter.surface`` checks, and
#: every black-box MUST check depends on it): the issue-38 planted bug.
no_tool_kind = _mutant_factory("builtins-without-tool-kind")
