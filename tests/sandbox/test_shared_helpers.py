"""The providers' shared pure helpers: line extraction, names, env, locks, collection."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.sandbox._common import (
    LoopLocalLocks,
    detect_line_ending,
    extract_lines,
    file_lock,
    merge_env,
    sanitize_name,
)
from harness_testkit.spec import SandboxTimeoutError

_line_text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=6)
_numbers = st.none() | st.integers(min_value=-3, max_value=12)


def _model(lines: list[str], ending: str, start: int | None, end: int | None) -> str:
    """The obvious definition: keep lines first..last (1-based, inclusive), clamped."""
    count = len(lines)
    first = max(1, start if start is not None else 1)
    if end is None:
        last = count
    elif end < 0:
        last = count + end  # JavaScript slice counts a negative end from the end
    else:
        last = min(end, count)
    return ending.join(lines[index - 1] for index in range(first, last + 1))


@given(
    lines=st.lists(_line_text, min_size=1, max_size=10),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    start=_numbers,
    end=_numbers,
)
def test_extract_lines_matches_the_model(
    lines: list[str], ending: str, start: int | None, end: int | None
) -> None:
    text = ending.join(lines)
    if start is None and end is None:
        assert extract_lines(text, start, end) == text
    else:
        assert extract_lines(text, start, end) == _model(lines, ending, start, end)


@pytest.mark.parametrize(
    ("text", "start", "end", "expected"),
    [
        ("a\nb\nc", None, None, "a\nb\nc"),
        ("a\nb\nc\nd", 2, 3, "b\nc"),
        ("a\r\nb\r\nc\r\nd", 2, 3, "b\r\nc"),
        ("a\rb\rc\rd", 2, 3, "b\rc"),
        ("a\nb\nc", 2, 99, "b\nc"),
        ("a\nb\nc", None, 2, "a\nb"),
        ("a\nb\nc", 2, None, "b\nc"),
        ("one-liner", 1, 1, "one-liner"),
        ("a\r\nb\nc", 1, 1, "a"),  # \r\n wins even when \n also occurs
        ("a\nb\n", 2, 3, "b\n"),  # the empty last "line" after a final newline
        ("", 1, 5, ""),
    ],
)
def test_extract_lines_upstream_cases(
    text: str, start: int | None, end: int | None, expected: str
) -> None:
    assert extract_lines(text, start, end) == expected


def test_detect_line_ending_priority() -> None:
    assert detect_line_ending("a\rb\nc\r\nd") == "\r\n"
    assert detect_line_ending("a\rb\nc") == "\n"
    assert detect_line_ending("a\rb") == "\r"
    assert detect_line_ending("ab") == "\n"


@given(st.text(max_size=80), st.text(max_size=80))
def test_sanitize_name_is_safe_and_injective(first: str, second: str) -> None:
    for value in (first, second):
        name = sanitize_name(value)
        assert name
        assert all(
            character.isascii() and (character.isalnum() or character in "_.-")
            for character in name
        )
        assert name[0] not in ".-"
        assert len(name) <= 48 + 11
    if first != second:
        assert sanitize_name(first) != sanitize_name(second)


def test_sanitize_name_keeps_safe_ids_readable() -> None:
    assert sanitize_name("session-1_a.b") == "session-1_a.b"
    assert sanitize_name("a/b").startswith("a-b-")
    assert sanitize_name("..").startswith("id-")


def test_merge_env_overrides_win() -> None:
    assert merge_env({"A": "1", "B": "2"}, {"B": "3", "C": "4"}) == {"A": "1", "B": "3", "C": "4"}
    assert merge_env({"A": "1"}, None) == {"A": "1"}


@pytest.mark.anyio
async def test_file_lock_excludes_and_times_out(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "one.lock"
    async with file_lock(lock, wait_limit=1, what="the test"):
        with pytest.raises(SandboxTimeoutError, match="waiting for the lock"):
            async with file_lock(lock, wait_limit=0.2, what="the test"):
                pass
    async with file_lock(lock, wait_limit=1, what="the test"):
        pass


@pytest.mark.anyio
async def test_loop_local_locks_reuse_within_a_loop() -> None:
    locks = LoopLocalLocks()
    assert locks.get("a") is locks.get("a")
    assert locks.get("a") is not locks.get("b")


def test_loop_local_locks_are_per_loop() -> None:
    locks = LoopLocalLocks()

    async def use() -> None:
        async with locks.get("shared"):
            await anyio.lowlevel.checkpoint()

    anyio.run(use, backend="asyncio")
    anyio.run(use, backend="trio")
