"""The hypothesis strategy for scripts; hypothesis is imported only when it is used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ._generate import ACTION_KINDS, build_script
from ._profiles import HarnessProfile

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

    from harness_testkit.scripting import Script

__all__ = ["scripts"]

T = TypeVar("T")


class _DrawChooser:
    def __init__(self, draw: DrawFn) -> None:
        import hypothesis.strategies as st

        self._draw = draw
        self._st = st

    def integer(self, low: int, high: int) -> int:
        return self._draw(self._st.integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return self._draw(self._st.sampled_from(list(options)))

    def boolean(self) -> bool:
        return self._draw(self._st.booleans())


def scripts(
    *,
    profile: str | HarnessProfile = "claude-code",
    host_tools: Sequence[str] = ("lookup",),
    kinds: Sequence[str] = ACTION_KINDS,
    max_turns: int = 3,
    max_steps: int = 3,
    max_actions: int = 4,
) -> SearchStrategy[Script]:
    """A hypothesis strategy of valid scripts (shrinks towards short, simple ones).

    Takes the arguments of :func:`generate_script` (minus the seed).
    """
    import hypothesis.strategies as st

    @st.composite
    def build(draw: DrawFn) -> Any:
        return build_script(
            _DrawChooser(draw),
            profile=profile,
            host_tools=host_tools,
            kinds=kinds,
            max_turns=max_turns,
            max_steps=max_steps,
            max_actions=max_actions,
        )

    strategy: SearchStrategy[Script] = build()
    return strategy
