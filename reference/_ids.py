"""Id and clock sources of the agent (injectable for deterministic transcripts)."""

from __future__ import annotations

import random
import secrets
import string
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeAlias

__all__ = ["Clock", "IdGenerator", "Timestamps", "system_clock"]

_ALPHABET = string.ascii_letters + string.digits

#: A timestamp source returns the current time as an aware ``datetime`` (for the parts'
#: timestamps). It is not a clock to wait on: that is ``harness_testkit.spec.Clock``.
Timestamps: TypeAlias = Callable[[], datetime]
#: The old name of :data:`Timestamps`.
Clock: TypeAlias = Timestamps


def system_clock() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


class IdGenerator:
    """Mints 16-character alphanumeric ids.

    Args:
        seed: When given, ids come from a seeded RNG (same seed, same ids); otherwise
            from the operating system's secure source.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._rng: random.Random | None = None if seed is None else random.Random(seed)

    def __call__(self) -> str:
        """Return a new id."""
        if self._rng is None:
            return "".join(secrets.choice(_ALPHABET) for _ in range(16))
        return "".join(self._rng.choice(_ALPHABET) for _ in range(16))
