"""Checks: plain async functions, each naming the requirements it verifies.

A check receives a :class:`~harness_testkit.conformance.CheckContext` and raises
:class:`CheckFailed` (naming one requirement id, expected vs observed) when the adapter
departs from harness-v1. Property checks also name a hypothesis strategy of JSON
scenarios; the runner draws, shrinks and records the minimal failing scenario so that
``harness-testkit replay`` can rerun it offline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ._capabilities import CAPABILITY_NAMES

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ._context import CheckContext

__all__ = [
    "Check",
    "CheckFailed",
    "CheckSkipped",
    "check",
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

    Attributes:
        scenario: The generated scenario the check failed on, set by the runner when the
            failure leaves it (``None`` when raised outside a run).
        unshrunk_scenario: When shrinking was cut short by its time budget, the first
            failing scenario before shrinking (``scenario`` is then the smallest found);
            ``None`` otherwise.
    """

    scenario: Any = None
    unshrunk_scenario: Any = None

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
    #: The property's equivalence classes: name -> whether a scenario belongs to it.
    #: Every run, at every profile and seed, exercises each class at least once (the
    #: explicit examples cover them all; ``tests/conformance/test_class_coverage.py``).
    classes: Mapping[str, Callable[[Any], bool]] = field(default_factory=dict)
    #: The check must run alone (it changes process-wide state, or measures what other
    #: checks running beside it would disturb): with ``check --jobs N`` it starts when no
    #: other check runs, and none starts until it ends.
    exclusive: bool = False

    def __post_init__(self) -> None:
        known = self.capability_names()
        unknown = [name for name in self.needs if name not in known]
        if unknown:
            raise ValueError(
                f"check {self.id!r} needs unknown capabilities {unknown}; "
                f"known: {', '.join(sorted(known))}"
            )
        if not self.requirements:
            raise ValueError(f"check {self.id!r} must name the requirement ids it verifies")

    @classmethod
    def capability_names(cls) -> frozenset[str]:
        """The capabilities a check of this kind may name in ``needs`` (the adapter's)."""
        return CAPABILITY_NAMES

    @property
    def is_property(self) -> bool:
        """Whether the check is driven by generated scenarios."""
        return self.run_scenario is not None


def check(
    check_id: str,
    *,
    title: str,
    requirements: Iterable[str],
    tier: Tier = "black-box",
    needs: Iterable[str] = (),
    depends_on: Iterable[str] = (),
    exclusive: bool = False,
) -> Callable[[Callable[[CheckContext], Awaitable[None]]], Check]:
    """Turn an async check function into a :class:`Check` (a registry module lists it);
    ``exclusive``: the check runs alone (:attr:`Check.exclusive`)."""

    def decorate(function: Callable[[CheckContext], Awaitable[None]]) -> Check:
        return Check(
            id=check_id,
            title=title,
            requirements=tuple(requirements),
            tier=tier,
            needs=tuple(needs),
            depends_on=tuple(depends_on),
            run=function,
            exclusive=exclusive,
        )

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
    classes: Mapping[str, Callable[[Any], bool]] | None = None,
    exclusive: bool = False,
) -> Callable[[Callable[[CheckContext, Any], Awaitable[None]]], Check]:
    """Turn an async function run once per generated JSON scenario into a :class:`Check`.

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
        classes: The property's equivalence classes (name -> membership test of a
            scenario); the examples must cover every class, so no verdict depends on
            the seed's luck.
        exclusive: The check runs alone (:attr:`Check.exclusive`).

    Returns:
        A decorator returning the :class:`Check` (a registry module lists it).
    """

    def decorate(function: Callable[[CheckContext, Any], Awaitable[None]]) -> Check:
        return Check(
            id=check_id,
            title=title,
            requirements=tuple(requirements),
            tier=tier,
            needs=tuple(needs),
            depends_on=tuple(depends_on),
            run_scenario=function,
            scenarios=scenarios,
            examples=tuple(examples),
            classes=dict(classes or {}),
            exclusive=exclusive,
        )

    return decorate
