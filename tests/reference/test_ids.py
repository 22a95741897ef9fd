"""Id generation: secure ids are uniform over the alphabet; seeded ids are reproducible."""

from __future__ import annotations

from collections import Counter

from harness_testkit.reference._ids import (
    _ALPHABET,
    _BYTE_TO_CHAR,
    _DROPPED,
    _UNBIASED,
    IdGenerator,
)


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
