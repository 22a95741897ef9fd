"""Script files are read within bounds: a named error for hostile files, never a hang.

``FakeHarness(script="path")`` and ``Script.from_file`` used to read any file whole
(``/dev/zero`` until memory ran out) and parse JSON recursively (``RecursionError`` on
deep nesting).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.fake_harness import FakeHarness, Script

requirement = pytest.mark.requirement


@requirement("DECISION-008")
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_special_files_deep_nesting_and_unsafe_integers_are_refused(
    tmp_path: Path, suffix: str
) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        Script.from_file(Path("/dev/zero"))
    with pytest.raises(ValueError, match="not a regular file"):
        FakeHarness(script="/dev/zero")
    deep = tmp_path / f"deep{suffix}"
    deep.write_text('{"turns": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match="nesting deeper than 64"):
        Script.from_file(deep)
    huge = tmp_path / f"huge{suffix}"
    huge.write_text(json.dumps({"turns": [{"steps": []}], "contextBudget": 2**80}))
    with pytest.raises(ValueError, match="JSON-safe range"):
        Script.from_file(huge)
    with pytest.raises(ValueError, match="nesting deeper than 64"):
        Script.from_json_text("[" * 100_000 + "]" * 100_000)


@requirement("DECISION-008")
def test_an_alias_bomb_script_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text('a: &a ["x", "x"]\nb: &b [*a, *a]\nturns: [{steps: []}]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="aliases"):
        Script.from_file(bomb)


def test_a_valid_script_file_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(Script.from_texts("hi").to_wire()), encoding="utf-8")
    assert Script.from_file(path) == Script.from_texts("hi")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["turns", "steps", "actions", "text", "promptMatches", "when", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=30,
)


@requirement("DECISION-008")
@given(
    st.one_of(
        _JSON.map(lambda value: json.dumps(value, allow_nan=True)),
        st.text(alphabet='[]{}":,0123456789abe-\\ ', max_size=200),
        st.integers(1, 3000).map(lambda depth: "[" * depth + "]" * depth),
    )
)
def test_any_script_text_is_a_script_or_a_named_error(text: str) -> None:
    message: str | None = None
    try:
        script = Script.from_json_text(text)
    except (ValueError, ValidationError) as error:  # RecursionError is neither
        message = str(error)
    if message is not None:
        assert message  # a message naming the problem, not a crash
    else:
        assert isinstance(script, Script)
