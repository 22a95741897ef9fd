"""Adapters the CI-ergonomics tests import by name (``tests.conformance.ci_adapters:<factory>``)."""

from __future__ import annotations

import tempfile

from harness_testkit.conformance._zoo._machinery import Defect, MutantAdapter, MutantSession
from harness_testkit.fake_harness import FakeHarness
from harness_testkit.spec import MissingExtraError, PromptControl, PromptTurnOptions

from .gate_adapters import minimal


def _sessions(session: type[MutantSession]) -> Defect:
    """A zoo defect whose only change is the session class (not a catalogued mutant)."""
    return Defect(
        name="", requirement="ADAPTER-001", area="robustness", description="", session=session
    )


class _TempPath(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        # A fresh random directory per turn, as a runtime's scratch space would be: the
        # error names it, so two runs differ unless the report normalises it.
        with tempfile.TemporaryDirectory() as scratch:
            raise RuntimeError(f"the runtime lost its scratch file {scratch}/state.json")


def temp_path_error() -> MutantAdapter:
    """Every prompt turn raises an error naming a random temporary directory."""
    return MutantAdapter(FakeHarness(profile="minimal"), _sessions(_TempPath))


temp_path_error.capabilities = minimal.capabilities  # type: ignore[attr-defined]  # capabilities ride on the factory


class _NeedsExtra(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        raise MissingExtraError("The example runtime", "example-extra", missing="example_sdk")


def needs_an_extra() -> MutantAdapter:
    """Builds fine; every prompt turn finds an optional extra missing (a set-up error)."""
    return MutantAdapter(FakeHarness(profile="minimal"), _sessions(_NeedsExtra))


needs_an_extra.capabilities = minimal.capabilities  # type: ignore[attr-defined]  # capabilities ride on the factory
