"""Zoo entries on the ``new-adapter`` skeleton: one planted bug each (issue 38).

The mutants of the other area modules wrap the fake harness; these change the source
an adapter author starts from, the way the author would break it, and must die by the
requirement each names. :func:`planted_target` writes the skeleton into a directory,
plants the bug (source and capability file), imports the adapter module and returns
the target to check.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._capabilities import AdapterCapabilities
from .._context import AdapterTarget
from .._skeleton import write_skeleton

__all__ = ["SKELETON_BUGS", "SkeletonBug", "planted_baseline", "planted_target"]

#: The skeleton's package and capability file, relative to its project.
_PACKAGE = Path("src") / "acme_runtime"
_CAPABILITIES = Path("capabilities.yaml")


@dataclass(frozen=True)
class SkeletonBug:
    """A bug an author could plant in the skeleton, and how the suite must catch it.

    Attributes:
        name: Kebab-case name.
        requirement: The requirement the verdict must name.
        description: The bug, in one sentence.
        source: Replacements in the package's modules (old text -> new text; each old
            text is in exactly one module).
        capabilities: Replacements in ``capabilities.yaml``.
        check: The check that fails on it; ``None`` when no check of the run can
            exercise it and the gate fails it as unverified instead.
        tiers: The tiers the bug's run selects.
        checks: The checks the bug's run selects (with their prerequisites); ``None``:
            every check of ``tiers``. A bug several checks can see runs the one named.
    """

    name: str
    requirement: str
    description: str
    source: Mapping[str, str]
    capabilities: Mapping[str, str] = field(default_factory=dict)
    check: str | None = None
    tiers: tuple[str, ...] = ("black-box",)
    checks: tuple[str, ...] | None = None


def _alone(check: str) -> dict[str, Any]:
    """A bug several scripted checks see: its run selects ``check`` alone, which names it."""
    return {"check": check, "tiers": ("scripted",), "checks": (check,)}


SKELETON_BUGS: tuple[SkeletonBug, ...] = (
    SkeletonBug(
        "skeleton-builtin-without-tool-kind",
        "APPROVAL-005",
        "A common built-in declared without tool_use_kind.",
        source={
            '"read": common_tool("read", native_name="read", tool_use_kind="readonly"),': (
                '"read": common_tool("read", native_name="read"),'
            )
        },
        check="adapter.surface",
    ),
    SkeletonBug(
        "skeleton-dropped-text-end",
        "STREAM-038",
        "The text block is never closed: no text-end part.",
        source={"        await self._out(end(id=block_id))\n": ""},
        check="stream.grammar",
    ),
    SkeletonBug(
        "skeleton-ignored-abort",
        "ADAPTER-042",
        "The turn's abort event is never looked at: the runtime answers to the end.",
        source={
            "                and not (abort is not None and abort.is_set())\n": "",
            "                if abort is not None:\n                    group.start_soon(": (
                "                if False:  # planted: the abort is ignored\n"
                "                    group.start_soon("
            ),
            "call.input, self.abort": "call.input, None",
        },
        check="turn.abort",
    ),
    SkeletonBug(
        "skeleton-ignored-denial",
        "APPROVAL-035",
        "A denied built-in runs anyway: the answer to an approval request changes nothing.",
        source={
            '            if not decision.get("approved"):': (
                "            if False:  # planted: a denial changes nothing"
            ),
        },
        **_alone("scripted.permission-modes"),
    ),
    SkeletonBug(
        "skeleton-approval-answer-dropped",
        "APPROVAL-034",
        "submit_tool_approval does nothing: the runtime never learns the answer and the "
        "approved call waits for ever.",
        source={
            "        self.run.state.decisions[approval_id] = ": (
                "        _ = "  # planted: the answer never reaches the runtime
            ),
        },
        **_alone("scripted.permission-modes"),
    ),
    SkeletonBug(
        "skeleton-host-result-not-echoed",
        "HOSTTOOL-007",
        "A host tool's submitted result reaches the runtime but is never echoed as a "
        "tool-result part.",
        source={
            "        if isinstance(call.action, HostToolCallAction):\n"
            "            # The echo carries": (
                "        if isinstance(call.action, HostToolCallAction):\n"
                "            return  # planted: the host's result is not echoed\n"
                "            # The echo carries"
            ),
        },
        **_alone("scripted.emission-equals-script"),
    ),
    SkeletonBug(
        "skeleton-builtin-not-provider-executed",
        "MERGE-009",
        "Built-in and MCP calls are announced without providerExecuted: the agent would "
        "dispatch them to the host.",
        source={
            "                provider_executed=None if host else True,": (
                "                provider_executed=None,  # planted: never runtime-executed"
            ),
        },
        **_alone("scripted.tool-merging"),
    ),
)


def _replace(directory: Path, replacements: Mapping[str, str], bug: SkeletonBug) -> None:
    paths = sorted(directory.glob("*.py")) if directory.is_dir() else [directory]
    texts = {path: path.read_text(encoding="utf-8") for path in paths}
    for old, new in replacements.items():
        holders = [path for path, text in texts.items() if old in text]
        if len(holders) != 1:
            where = "no module" if not holders else ", ".join(p.name for p in holders)
            raise ValueError(
                f"{bug.name}: {old!r} must be in exactly one skeleton module; found in {where}"
            )
        texts[holders[0]] = texts[holders[0]].replace(old, new)
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")


def planted_baseline(directory: Path) -> Path:
    """The baseline file the skeleton written into ``directory`` ships."""
    return directory / "conformance-baseline.yaml"


def planted_target(bug: SkeletonBug | None, directory: Path) -> AdapterTarget:
    """Write the skeleton into ``directory``, plant ``bug`` (``None``: none) and return the
    target of its adapter (the package imported from there, under a name of its own).

    Raises:
        ValueError: the skeleton changed so that the bug no longer applies.
    """
    write_skeleton("acme-runtime", directory)
    if bug is not None:
        _replace(directory / _PACKAGE, bug.source, bug)
        _replace(directory / _CAPABILITIES, bug.capabilities, bug)
    name = f"harness_testkit_skeleton_{(bug.name if bug else 'clean').replace('-', '_')}"
    package = directory / _PACKAGE
    # The package under a name of its own (its modules import each other relatively).
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import the skeleton's adapter from {package}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return AdapterTarget(
        factory=module.make_adapter,
        capabilities=AdapterCapabilities.from_file(directory / _CAPABILITIES),
        name=f"skeleton:{bug.name if bug else 'clean'}",
    )
