"""Protocol, not class: built-in tools that are the adapter's own objects (satisfying the
built-in tool protocol, not instances of ``spec.BuiltinTool``) pass like the originals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness_testkit.conformance import AdapterTarget, RunOptions, run_suite
from harness_testkit.conformance._zoo._machinery import Defect, MutantAdapter
from harness_testkit.fake_harness import FakeHarness
from harness_testkit.spec import BuiltinTool

from .support import reference_target

#: The checks that read built-in declarations or run built-ins through the agent.
BUILTIN_CHECKS = (
    "adapter.surface",
    "adapter.capability-flags",
    "scripted.tool-merging",
    "scripted.filtering",
    "scripted.permission-modes",
    "scripted.emission-equals-script",
)


def _statuses(target: AdapterTarget) -> dict[str, tuple[str, str | None]]:
    report = run_suite(target, RunOptions(profile="smoke"), check_ids=BUILTIN_CHECKS)
    return {r.check_id: (r.status, r.failed_requirement) for r in report.results}


@dataclass(frozen=True)
class LocalBuiltinTool:
    """An adapter's own built-in class: the protocol's attributes, no pydantic model."""

    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    native_name: str | None = None
    common_name: str | None = None
    tool_use_kind: str | None = None


def _own_classes(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return {
        key: LocalBuiltinTool(**tool.model_dump())  # type: ignore[misc]  # deliberately not BuiltinTool
        for key, tool in adapter.fake.builtin_tools.items()
    }


def test_builtins_of_the_adapters_own_class_change_no_verdict() -> None:
    defect = Defect(
        name="own-builtin-classes",
        requirement="ADAPTER-005",
        area="tool merging",
        description="Built-ins are LocalBuiltinTool objects (no defect).",
        tools=_own_classes,
    )

    def factory() -> MutantAdapter:
        return MutantAdapter(FakeHarness(profile="claude-code"), defect)

    reference = reference_target("claude-code")
    target = AdapterTarget(
        factory=factory,  # type: ignore[arg-type]  # mutants type specification_version as str
        capabilities=reference.capabilities,
        name="own-builtin-classes",
        expectations=reference.expectations,
    )
    statuses = _statuses(target)
    assert statuses == _statuses(reference)
    assert {status for status, _ in statuses.values()} == {"pass"}
