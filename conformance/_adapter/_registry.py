"""The one registry of built-in checks: every check module, listed explicitly.

No module registers itself on import: each check module exposes ``CHECKS`` and this
module concatenates them, in the order reports list them.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._checks import Check
from . import (
    _approval_machine,
    _approvals,
    _blackbox,
    _continuations,
    _emission,
    _states,
    _tools,
    _turns,
    _workflow,
)

__all__ = [
    "BUILTIN_CHECKS",
    "GRAMMAR_PASS_CHECKS",
    "GRAMMAR_PASS_REQUIREMENTS",
    "REGISTRY",
    "ordered_checks",
    "reporting_checks",
]

#: The check modules, in report order.
_MODULES = (
    _approval_machine,
    _blackbox,
    _states,
    _tools,
    _emission,
    _continuations,
    _approvals,
    _turns,
    _workflow,
)

#: Every built-in check, in report order.
BUILTIN_CHECKS: tuple[Check, ...] = tuple(item for module in _MODULES for item in module.CHECKS)


def _by_id(checks: Iterable[Check]) -> dict[str, Check]:
    registry: dict[str, Check] = {}
    for item in checks:
        if item.id in registry:
            raise ValueError(f"check id {item.id!r} is listed twice")
        registry[item.id] = item
    return registry


#: Every check, by id, in report order.
REGISTRY: dict[str, Check] = _by_id(BUILTIN_CHECKS)


def ordered_checks(ids: Iterable[str] | None = None) -> list[Check]:
    """Checks in dependency order (prerequisites first), optionally only ``ids``."""
    wanted = list(REGISTRY) if ids is None else list(ids)
    unknown = [item for item in wanted if item not in REGISTRY]
    if unknown:
        raise KeyError(
            f"unknown check ids: {', '.join(unknown)}; see `harness-testkit check --list`"
        )
    ordered: list[Check] = []
    seen: set[str] = set()

    def visit(check_id: str, path: tuple[str, ...]) -> None:
        if check_id in seen:
            return
        if check_id in path:
            raise ValueError(f"check dependency cycle: {' -> '.join((*path, check_id))}")
        for dependency in REGISTRY[check_id].depends_on:
            visit(dependency, (*path, check_id))
        seen.add(check_id)
        ordered.append(REGISTRY[check_id])

    for check_id in wanted:
        visit(check_id, ())
    return ordered


#: The scripted checks that run the stream grammar over their own turns
#: (``support.grammar_first``): besides their own requirements they fail with any
#: requirement of :data:`GRAMMAR_PASS_REQUIREMENTS` their turns break
#: (``tests/conformance/test_grammar_pass.py`` holds this list to what the checks do).
GRAMMAR_PASS_CHECKS: frozenset[str] = frozenset(
    {
        "scripted.tool-merging",
        "scripted.filtering",
        "scripted.dynamic-parts",
        "scripted.emission-equals-script",
        "scripted.continuations",
        "scripted.permission-modes",
        "scripted.host-approvals",
        "scripted.mcp-tools",
        "scripted.compaction-once",
        "scripted.turn-settings",
        "scripted.steering",
        "scripted.sandbox-ownership",
        "scripted.questions",
        "scripted.suspend-running-turn",
        "scripted.resume-next-prompt",
        "scripted.abort-waiting-turn",
        "scripted.runtime-crash",
        "scripted.visible-writes",
    }
)

_UNKNOWN = GRAMMAR_PASS_CHECKS - set(REGISTRY)
if _UNKNOWN:
    raise ValueError(f"GRAMMAR_PASS_CHECKS names unknown checks: {sorted(_UNKNOWN)}")

#: What the grammar pass reports: the requirements ``stream.grammar`` verifies, and a
#: ``do_continue_turn`` that raised (ADAPTER-028, LIFECYCLE-041 in a restored session).
GRAMMAR_PASS_REQUIREMENTS: frozenset[str] = frozenset(
    {*REGISTRY["stream.grammar"].requirements, "ADAPTER-028", "LIFECYCLE-041"}
)


def reporting_checks(requirement: str) -> list[str]:
    """The ids of the checks that can fail with ``requirement``, in report order: those
    that verify it and, for a requirement of the grammar pass, the checks running it."""
    by_pass = requirement in GRAMMAR_PASS_REQUIREMENTS
    return [
        item.id
        for item in BUILTIN_CHECKS
        if requirement in item.requirements or (by_pass and item.id in GRAMMAR_PASS_CHECKS)
    ]
