"""Conformance suites for harness-v1 adapters and sandbox providers."""

from ._strategies import continue_turn_states as continue_turn_states
from ._strategies import corrupted_stream_parts as corrupted_stream_parts
from ._strategies import json_values as json_values
from ._strategies import lifecycle_states as lifecycle_states
from ._strategies import resume_session_states as resume_session_states
from ._strategies import stream_parts as stream_parts
from ._strategies import tool_specs as tool_specs

__all__ = [
    "continue_turn_states",
    "corrupted_stream_parts",
    "json_values",
    "lifecycle_states",
    "resume_session_states",
    "stream_parts",
    "tool_specs",
]
