"""The zoo's one list: every area module's defects, in the order the kill matrix shows."""

from __future__ import annotations

from . import _approvals, _continuations, _grammar, _lifecycle, _session, _tools
from ._machinery import AREAS, Defect, Mutant

__all__ = ["DEFECTS", "get_mutant", "mutant_names", "mutants"]

_ALL: tuple[Defect, ...] = (
    *_grammar.DEFECTS,
    *_tools.DEFECTS,
    *_approvals.DEFECTS,
    *_continuations.DEFECTS,
    *_lifecycle.DEFECTS,
    *_session.DEFECTS,
)


def _checked(defects: tuple[Defect, ...]) -> tuple[Defect, ...]:
    names = [defect.name for defect in defects]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"mutants listed twice: {', '.join(twice)}")
    return tuple(sorted(defects, key=lambda defect: AREAS.index(defect.area)))


#: Every defect of the zoo, grouped by area in :data:`AREAS` order.
DEFECTS: tuple[Defect, ...] = _checked(_ALL)


def mutants() -> list[Mutant]:
    """Every mutant of the zoo, grouped by area."""
    return [defect.build() for defect in DEFECTS]


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``.

    Raises:
        KeyError: naming the known mutants.
    """
    for defect in DEFECTS:
        if defect.name == name:
            return defect.build()
    raise KeyError(f"no mutant named {name!r}; known: {', '.join(mutant_names())}")


def mutant_names() -> tuple[str, ...]:
    """The names of the zoo's mutants, in order."""
    return tuple(defect.name for defect in DEFECTS)
