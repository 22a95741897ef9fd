"""Checks: plain async functions, each naming the requirements it verifies.

A check receives a :class:`~harness_testkit.conformance.CheckContext` and raises
:class:`CheckFailed` (naming one requirement id, expected vs observed) when the adapter
departs from harness-v1. Property checks also name a hypothesis strategy of JSON
scenarios; the runner draws, shrinks and records the minimal failing scenario so that
``harness-testkit replay`` can rerun it offline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._capabilities import CAPABILITY_NAMES

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ._context import CheckContext

__all__ = [
    "REGISTRY",
    "Check",
    "CheckFailed",
    "CheckSkipped",
    "check",
    "ordered_checks",
    "property_check",
]

Tier = Literal["black-box", "scripted"]


class CheckFailed(AssertionError):
    """The adapter broke ``requirement``.

    Args:
        requirement: The requirement id that does not hold.
        message: A sentence saying what happened.
        expected: What the specification requires (optional, for the report).
        observed: What the adapter did (optional, for the report).
    """

    def __init__(
        self, requirement: str, message: str, *, expected: Any = None, observed: Any = None
    ) -> None:
        self.requirement = requirement
        self.message = message
        self.expected = expected
        self.observed = observed
        text = f"[{requirement}] {message}"
        if expected is not None or observed is not None:
            text += f"\n  expected: {expected!r}\n  observed: {observed!r}"
        super().__init__(text)


class CheckSkipped(Exception):
    """The check does not apply to this adapter (the reason names the capability)."""


@dataclass(frozen=True)
class Check:
    """A registered check. See the module docstring."""

    id: str
    title: str
    requirements: tuple[str, ...]
    tier: Tier
    needs: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    run: Callable[[CheckContext], Awaitable[None]] | None = None
    run_scenario: Callable[[CheckContext, Any], Awaitable[None]] | None = None
    scenarios: Callable[[CheckContext], SearchStrategy[Any]] | None = field(default=None)
    #: Scenarios run before any generated one, in this order (hypothesis ``@example``).
    examples: tuple[Any, ...] = ()

    @property
    def is_property(self) -> bool:
        """Whether the check is driven by generated scenarios."""
        return self.run_scenario is not None


#: Every check, by id, in registration order.
REGISTRY: dict[str, Check] = {}


def _register(item: Check) -> None:
    if item.id in REGISTRY:
        raise ValueError(f"check id {item.id!r} is registered twice")
    unknown = [name for name in item.needs if name not in CAPABILITY_NAMES]
    if unknown:
        raise ValueError(
            f"check {item.id!r} needs unknown capabilities {unknown}; "
            f"known: {', '.join(sorted(CAPABILITY_NAMES))}"
        )
    if not item.requirements:
        raise ValueError(f"check {item.id!r} must name the requirement ids it verifies")
    REGISTRY[item.id] = item


def check(
    check_id: str,
    *,
    title: str,
    requirements: Iterable[str],
    tier: Tier = "black-box",
    needs: Iterable[str] = (),
    depends_on: Iterable[str] = (),
) -> Callable[
    [Callable[[CheckContext], Awaitable[None]]], Callable[[CheckContext], Awaitable[None]]
]:
    """Register an async check function."""

    def decorate(
        function: Callable[[CheckContext], Awaitable[None]],
    ) -> Callable[[CheckContext], Awaitable[None]]:
        _register(
            Check(
                id=check_id,
                title=title,
                requirements=tuple(requirements),
                tier=tier,
                needs=tuple(needs),
                depends_on=tuple(depends_on),
                run=function,
            )
        )
        return function

    return decorate


def property_check(
    check_id: str,
    *,
    title: str,
    requirements: Iterable[str],
    scenarios: Callable[[CheckContext], SearchStrategy[Any]],
    tier: Tier = "scripted",
    needs: Iterable[str] = (),
    depends_on: Iterable[str] = (),
    examples: Iterable[Any] = (),
) -> Callable[
    [Callable[[CheckContext, Any], Awaitable[None]]], Callable[[CheckContext, Any], Awaitable[None]]
]:
    """Register an async check run once per generated JSON scenario.

    Args:
        check_id: The check's id (``area.name``).
        title: One line saying what the check verifies.
        requirements: The requirement ids it verifies.
        scenarios: Builds the hypothesis strategy of JSON scenarios for a context.
        tier: ``scripted`` (default) or ``black-box``.
        needs: Capabilities without which the check is skipped.
        depends_on: Checks whose failure blocks this one.
        examples: Explicit JSON scenarios that run first, in order, on every run and
            whatever the seed (for corners a few random draws could miss); they count
            as examples but are never shrunk.

    Returns:
        A decorator registering the function and returning it unchanged.
    """

    def decorate(
        function: Callable[[CheckContext, Any], Awaitable[None]],
    ) -> Callable[[CheckContext, Any], Awaitable[None]]:
        _register(
            Check(
                id=check_id,
                title=title,
                requirements=tuple(requirements),
                tier=tier,
                needs=tuple(needs),
                depends_on=tuple(depends_on),
                run_scenario=function,
                scenarios=scenarios,
                examples=tuple(examples),
            )
        )
        return function

    return decorate


def ordered_checks(ids: Iterable[str] | None = None) -> list[Check]:
    """Checks in dependency order (prerequisites first), optionally only ``ids``."""
    _load_builtin_checks()
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


def _load_builtin_checks() -> None:
    # Importing the modules registers their checks (once).
    from . import (  # noqa: F401
        _approval_machine,
        _blackbox_checks,
        _scripted_checks,
        _scripted_turn_checks,
        _workflow_checks,
    )
