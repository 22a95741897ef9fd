"""What several packages of the kit share, above the contract and below the rest.

- Bounded reading of the JSON and YAML files users give the kit (:func:`read_structured`,
  :func:`read_bounded_text`, :class:`InputError`): the conformance commands, the fake
  harness and the model endpoint read their users' files through it.
- User-written regular expressions on a linear-time engine (:func:`check_pattern`,
  :func:`pattern_search`, :class:`UnsafePatternError`): the fake harness, the model
  endpoint and simulation scenarios.
- Whether a process has exited (:func:`pid_exited`), for the sweeps of the sandbox and
  the conformance runner.
- Console output that suits a terminal, a CI log or a pipe (:func:`make_console`,
  :class:`RunProgress`; ``NO_COLOR`` honoured), for the commands of every package.

Internal to the distribution: these names are not part of the documented API
(``python-api.md``) and may change; they live in a package of their own so that the
packages that need them do not import the root package, which holds only the command
line and the pytest plugin.
"""

from ._console import LOG_WIDTH as LOG_WIDTH
from ._console import RunProgress as RunProgress
from ._console import interactive as interactive
from ._console import make_console as make_console
from ._console import no_escape_codes as no_escape_codes
from ._inputs import MAX_DEPTH as MAX_DEPTH
from ._inputs import MAX_INPUT_BYTES as MAX_INPUT_BYTES
from ._inputs import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
from ._inputs import InputError as InputError
from ._inputs import bounded_copy as bounded_copy
from ._inputs import check_json_value as check_json_value
from ._inputs import parse_structured as parse_structured
from ._inputs import read_bounded_text as read_bounded_text
from ._inputs import read_structured as read_structured
from ._patterns import MAX_PATTERN_MEMORY as MAX_PATTERN_MEMORY
from ._patterns import UnsafePatternError as UnsafePatternError
from ._patterns import check_pattern as check_pattern
from ._patterns import pattern_search as pattern_search
from ._processes import pid_exited as pid_exited

__all__ = [
    "LOG_WIDTH",
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_PATTERN_MEMORY",
    "MAX_SAFE_INTEGER",
    "InputError",
    "RunProgress",
    "UnsafePatternError",
    "bounded_copy",
    "check_json_value",
    "check_pattern",
    "interactive",
    "make_console",
    "no_escape_codes",
    "parse_structured",
    "pattern_search",
    "pid_exited",
    "read_bounded_text",
    "read_structured",
]
