"""Id generation: secure ids are uniform over the alphabet; seeded ids are reproducible.
Timestamps: the system clock's text is ``system_clock().isoformat()``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.reference._ids import (
    _ALPHABET,
    _BYTE_TO_CHAR,
    _DROPPED,
    _UNBIASED,
    IdGenerator,
    system_clock,
    system_timestamp,
)
from harness_testkit.reference._turn_state import TurnCore

#: Nanoseconds since the epoch up to the last instant ``datetime`` can hold.
_LAST_NANOSECOND = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()) * 10**9


def test_secure_ids_are_sixteen_alphabet_characters_and_distinct() -> None:
    ids = IdGenerator()
    minted = [ids() for _ in range(200)]
    assert all(len(value) == 16 and set(value) <= set(_ALPHABET) for value in minted)
    assert len(set(minted)) == len(minted)


def test_every_kept_byte_maps_to_a_character_equally_often() -> None:
    kept = bytes(range(256)).translate(_BYTE_TO_CHAR, _DROPPED)
    assert len(kept) == _UNBIASED
    counts = Counter(kept.decode("ascii"))
    assert set(counts) == set(_ALPHABET)
    assert set(counts.values()) == {_UNBIASED // len(_ALPHABET)}  # no character favoured


def test_seeded_ids_repeat_for_the_same_seed() -> None:
    assert [IdGenerator(7)() for _ in range(2)] == [IdGenerator(7)()] * 2
    assert IdGenerator(7)() != IdGenerator(8)()


def _isoformat_at(nanoseconds: int) -> str:
    """What ``datetime.now(UTC).isoformat()`` says at ``nanoseconds`` (it floors to the
    microsecond)."""
    seconds, rest = divmod(nanoseconds, 10**9)
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest // 1000).isoformat()


@given(st.lists(st.integers(min_value=0, max_value=_LAST_NANOSECOND), min_size=1, max_size=4))
def test_system_timestamps_are_the_isoformat_of_the_same_instant(instants: list[int]) -> None:
    # Several instants in a row: the per-second prefix must follow the clock, back and forth.
    for nanoseconds in instants:
        with mock.patch("time.time_ns", return_value=nanoseconds):
            assert system_timestamp() == _isoformat_at(nanoseconds)


def test_a_whole_second_has_no_fraction_as_in_isoformat() -> None:
    second = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
    for nanoseconds, expected in [
        (second, "2026-01-01T00:00:00+00:00"),
        (second + 999, "2026-01-01T00:00:00+00:00"),  # below a microsecond
        (second + 1_000, "2026-01-01T00:00:00.000001+00:00"),
        (second + 10**9 - 1, "2026-01-01T00:00:00.999999+00:00"),
        (second + 10**9, "2026-01-01T00:00:01+00:00"),
    ]:
        with mock.patch("time.time_ns", return_value=nanoseconds):
            assert system_timestamp() == expected


def test_the_system_timestamp_reads_the_system_clock() -> None:
    before = system_clock()
    stamped = datetime.fromisoformat(system_timestamp())
    after = system_clock()
    assert stamped.tzinfo == UTC
    # The two clocks may round the same instant a microsecond apart.
    assert before - timedelta(microseconds=1) <= stamped <= after + timedelta(microseconds=1)


def test_a_turn_stamps_with_its_injected_clock() -> None:
    def core(clock: Callable[[], datetime]) -> TurnCore:
        return TurnCore(
            harness_id="h",
            session_id="s",
            work_dir="/w",
            harness_builtins={},
            ids=IdGenerator(1),
            clock=clock,
        )

    fixed = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)
    assert core(lambda: fixed).timestamp() == "2026-01-01T12:30:00+00:00"
    with mock.patch("time.time_ns", return_value=1_767_225_600 * 10**9 + 5_000):
        assert core(system_clock).timestamp() == "2026-01-01T00:00:00.000005+00:00"
