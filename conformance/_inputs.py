"""Bounded reading of the files the conformance commands take (see the shared
``harness_testkit._inputs``, which the fake harness and the model endpoint use too)."""

from harness_testkit._inputs import (
    MAX_DEPTH,
    MAX_INPUT_BYTES,
    MAX_SAFE_INTEGER,
    InputError,
    bounded_copy,
    check_json_value,
    parse_structured,
    read_bounded_text,
    read_structured,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_SAFE_INTEGER",
    "InputError",
    "bounded_copy",
    "check_json_value",
    "parse_structured",
    "read_bounded_text",
    "read_structured",
]
