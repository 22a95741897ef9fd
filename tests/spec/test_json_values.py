"""find_non_json: the quick verdict and the walk that names the problem agree."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.spec import MAX_SAFE_INTEGER, find_non_json
from harness_testkit.spec._json import _first_problem, _is_plain

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    # not JSON
    st.binary(max_size=2),
    st.tuples(st.integers()),
    st.frozensets(st.integers(), max_size=1),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.dictionaries(st.integers(), children, min_size=1, max_size=2),  # non-str keys
    ),
    max_leaves=30,
)


def _with_shared_and_cyclic(value: Any, cycle: bool) -> Any:
    """``value`` next to itself twice (shared, not a cycle), and optionally inside a
    list that contains itself."""
    shared: list[Any] = [value, value]
    if cycle:
        loop: list[Any] = [shared]
        loop.append(loop)
        return loop
    return shared


@given(
    _VALUES,
    st.booleans(),
    st.none() | st.integers(min_value=0, max_value=5),
    st.booleans(),
)
def test_the_quick_verdict_is_the_walks(
    value: Any, cycle: bool, max_depth: int | None, safe_integers: bool
) -> None:
    for candidate in (value, _with_shared_and_cyclic(value, cycle)):
        named = _first_problem(candidate, "$", max_depth, safe_integers)
        assert _is_plain(candidate, max_depth, safe_integers) == (named is None), named
        assert find_non_json(candidate, max_depth=max_depth, safe_integers=safe_integers) == named


def test_problems_are_named_where_they_are() -> None:
    assert find_non_json({"a": [1, {"b": math.nan}]}) == "$.a[1].b is a non-finite float (nan)"
    assert find_non_json([1, (2,)], "data") == "data[1] is a tuple, not a JSON value"
    loop: list[Any] = []
    loop.append(loop)
    assert find_non_json(loop) == "$[0] contains itself (a cycle), not a JSON value"
    assert find_non_json([[[]]], max_depth=2) == "$[0][0] is nested deeper than 2 levels"
    assert find_non_json({"n": MAX_SAFE_INTEGER + 1}, safe_integers=True) == (
        f"$.n is an integer outside the JSON-safe range (±{MAX_SAFE_INTEGER})"
    )
    assert find_non_json({"n": MAX_SAFE_INTEGER + 1}) is None
    assert find_non_json({1: "x"}) == "$ has a non-string key 1"
    shared = {"k": 1}
    assert find_non_json([shared, shared]) is None  # shared is not a cycle
