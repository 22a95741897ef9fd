"""User-written regular expressions, run by a linear-time engine (RE2).

Scripts and scenarios carry regexes (``promptMatches``, ``outputMatches``,
``userMessageMatches``, ``queryMatches``, the endpoint's ``lastUserText`` and
``contentMatches``). Python's ``re`` backtracks: ``(a+)+$`` on forty ``a`` and a ``b``
runs for hours. RE2 matches in time linear in the text whatever the pattern, and bounds
the memory a compiled pattern may take, so a hostile file gets a result or a named
error, never a hang. It has no backreferences or lookaround: such a pattern is refused
when the file is loaded (:class:`UnsafePatternError`, a ``ValueError`` naming the
pattern and the construct), not when it would run.

Re-exported by :mod:`harness_testkit.common`: the fake harness and the model endpoint
share it.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol, cast

import re2

from harness_testkit.spec import HarnessUsageError

__all__ = ["MAX_PATTERN_MEMORY", "UnsafePatternError", "check_pattern", "pattern_search"]

#: Memory RE2 may use for one compiled pattern (its default is 8 MiB too); a pattern
#: needing more (``(a{1000}){1000}``) is refused.
MAX_PATTERN_MEMORY = 8 << 20
_CACHE_SIZE = 512


class UnsafePatternError(HarnessUsageError):
    """A pattern the linear-time engine cannot run: invalid, or using backreferences or
    lookaround, or needing more than :data:`MAX_PATTERN_MEMORY` once compiled.

    You see it when a script or scenario is loaded, inside its validation error.
    """

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "UnsafePatternError"


class _Compiled(Protocol):
    def search(self, text: str) -> object | None: ...


def _options() -> Any:
    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False  # the error is raised, not also printed to stderr
    return options


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compile(pattern: str) -> _Compiled:
    try:
        return cast(_Compiled, re2.compile(pattern, _options()))
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise UnsafePatternError(
            f"{pattern!r} is not a valid regular expression for RE2, the linear-time engine "
            f"of scripts and scenarios (no backreferences or lookaround): {reason}"
        ) from None


def check_pattern(value: str | None) -> str | None:
    """Validate ``value`` as a pattern (``None`` passes); for pydantic field validators.

    Raises:
        UnsafePatternError: naming the pattern and what RE2 refused in it.
    """
    if value is not None:
        _compile(value)
    return value


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text`` (linear time in ``text``).

    Raises:
        UnsafePatternError: the pattern cannot be compiled (a pattern that passed
            :func:`check_pattern` never raises).
    """
    return _compile(pattern).search(text) is not None
