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

from .._capabilities import AdapterCapabilities
from .._context import AdapterTarget
from .._skeleton import write_skeleton

__all__ = ["SKELETON_BUGS", "SkeletonBug", "planted_baseline", "planted_target"]

#: The skeleton's adapter module and capability file, relative to its project.
_ADAPTER = Path("src") / "acme_runtime" / "_adapter.py"
_CAPABILITIES = Path("capabilities.yaml")


@dataclass(frozen=True)
class SkeletonBug:
    """A bug an author could plant in the skeleton, and how the suite must catch it.

    Attributes:
        name: Kebab-case name.
        requirement: The requirement the verdict must name.
        description: The bug, in one sentence.
        source: Replacements in the adapter module (old text -> new text).
        capabilities: Replacements in ``capabilities.yaml``.
        check: The check that fails on it; ``None`` when no check of the run can
            exercise it and the gate fails it as unverified instead.
        tiers: The tiers the bug's run selects.
    """

    name: str
    requirement: str
    description: str
    source: Mapping[str, str]
    capabilities: Mapping[str, str] = field(default_factory=dict)
    check: str | None = None
    tiers: tuple[str, ...] = ("black-box",)


_UNCLASSIFIED_READ = """    builtin_tools: Mapping[str, BuiltinTool] = {
        "read": BuiltinTool(
            native_name="read",
            common_name="read",
            input_schema={
                "type": "object",
                "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"],
            },
        )
    }"""

SKELETON_BUGS: tuple[SkeletonBug, ...] = (
    SkeletonBug(
        "skeleton-builtin-without-tool-kind",
        "APPROVAL-005",
        "A common built-in declared without tool_use_kind.",
        source={"    builtin_tools: Mapping[str, BuiltinTool] = {}": _UNCLASSIFIED_READ},
        check="adapter.surface",
    ),
    SkeletonBug(
        "skeleton-dropped-text-end",
        "STREAM-038",
        "The text block is never closed: no text-end part.",
        source={"        emit(TextEndPart(id=turn.text_id))\n": ""},
        check="stream.grammar",
    ),
    SkeletonBug(
        "skeleton-ignored-abort",
        "ADAPTER-042",
        "The turn's abort event is never looked at: the runtime answers to the end.",
        source={
            "            if self._abort is not None and self._abort.is_set():": (
                "            if False:  # planted: the abort is ignored"
            ),
            "        if self._abort is None:\n            await anyio.sleep(WORD_DELAY)": (
                "        if True:  # planted: the abort is ignored\n"
                "            await anyio.sleep(WORD_DELAY)"
            ),
        },
        check="turn.abort",
    ),
    SkeletonBug(
        "skeleton-ignored-denial",
        "APPROVAL-002",
        "Claims built-in approvals but never implements the answer to one (a denial "
        "changes nothing), with the scripted tier that would show it declared unsupported.",
        source={
            "    supports_builtin_tool_approvals = False": (
                "    supports_builtin_tool_approvals = True"
            ),
            "    async def done(self) -> None:\n": (
                "    async def submit_tool_approval(\n"
                "        self, approval_id: str, approved: bool, reason: str | None = None\n"
                "    ) -> None:\n"
                "        return None  # planted: the answer never reaches the runtime\n\n"
                "    async def done(self) -> None:\n"
            ),
        },
        capabilities={
            "builtin_tool_approvals: false\n": "builtin_tool_approvals: true\n",
            "  builtin_tool_approvals: the echo stand-in runs no built-in tools\n": "",
        },
        tiers=("black-box", "scripted"),
    ),
)


def _replace(path: Path, replacements: Mapping[str, str], bug: SkeletonBug) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in replacements.items():
        if old not in text:
            raise ValueError(f"{bug.name}: the skeleton's {path.name} no longer has {old!r}")
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def planted_baseline(directory: Path) -> Path:
    """The baseline file the skeleton written into ``directory`` ships."""
    return directory / "conformance-baseline.yaml"


def planted_target(bug: SkeletonBug | None, directory: Path) -> AdapterTarget:
    """Write the skeleton into ``directory``, plant ``bug`` (``None``: none) and return the
    target of its adapter (the module imported from there, under a name of its own).

    Raises:
        ValueError: the skeleton changed so that the bug no longer applies.
    """
    write_skeleton("acme-runtime", directory)
    if bug is not None:
        _replace(directory / _ADAPTER, bug.source, bug)
        _replace(directory / _CAPABILITIES, bug.capabilities, bug)
    name = f"harness_testkit_skeleton_{(bug.name if bug else 'clean').replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, directory / _ADAPTER)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import the skeleton's adapter from {directory / _ADAPTER}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return AdapterTarget(
        factory=module.make_adapter,
        capabilities=AdapterCapabilities.from_file(directory / _CAPABILITIES),
        name=f"skeleton:{bug.name if bug else 'clean'}",
    )
