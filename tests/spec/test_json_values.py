"""find_non_json: the quick verdict and the walk that names the problem agree."""

from __future__ import annotations

import enum
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.spec import MAX_SAFE_INTEGER, find_non_json
from harness_testkit.spec._json import _first_problem, _is_plain


class _Text(str):
    pass


class _Number(enum.IntEnum):
    BIG = MAX_SAFE_INTEGER + 1
    SMALL = 3


class _Items(list[Any]):
    pass


#: Leaves of the exact built-in types and of subclasses (the quick walk tells the exact
#: types apart by identity and sends subclasses through ``isinstance``).
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.builds(_Text, st.text(max_size=2)),
    st.sampled_from(_Number),
    # not JSON
    st.binary(max_size=2),
    st.tuples(st.integers()),
    st.frozensets(st.integers(), max_size=1),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.builds(_Items, st.lists(children, max_size=2)),
        st.dictionaries(
            st.text(max_size=3) | st.builds(_Text, st.text(max_size=2)), children, max_size=4
        ),
        st.builds(OrderedDict, st.dictionaries(st.text(max_size=2), children, max_size=2)),
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


_PLAIN = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=4),
    ),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)


_BAD_LEAVES = {
    "inf": math.inf,
    "-inf": -math.inf,
    "nan": math.nan,
    "bytes": b"x",
    "tuple": (1,),
    "frozenset": frozenset(),
    "object": object(),
    "unsafe-int": MAX_SAFE_INTEGER + 1,
    "unsafe-negative-int": -(MAX_SAFE_INTEGER + 1),
    "unsafe-int-enum": _Number.BIG,
}


@pytest.mark.parametrize("bad", list(_BAD_LEAVES.values()), ids=list(_BAD_LEAVES))
@given(value=_PLAIN, where=st.integers(min_value=0, max_value=3))
def test_one_problem_among_plain_json_is_found(bad: Any, value: Any, where: int) -> None:
    # Mostly plain values hide the one problem (the first property's values are mostly
    # refused for several reasons at once).
    planted = [
        [value, bad],
        {"value": value, "bad": bad},
        [{"a": [value, {"b": bad}]}],
        OrderedDict([("value", value), ("bad", _Items([bad]))]),
    ][where]
    assert not _is_plain(planted, None, True)
    assert find_non_json(planted, safe_integers=True) == _first_problem(planted, "$", None, True)
    assert _is_plain(value, None, True)
