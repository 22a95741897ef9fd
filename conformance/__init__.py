"""Conformance suites for harness-v1 adapters and sandbox providers.

Point the kit at an adapter factory and learn, requirement by requirement, where it
departs from harness-v1: ``harness-testkit check package.module:factory`` or, in pytest,
a ``ConformanceSuite`` subclass. Both run the same plain check functions. Sandbox
providers likewise: ``harness-testkit check-sandbox package.module:provider`` or a
``SandboxSuite`` subclass.

The package is a house of rooms:

- the core, at this level: the check model (``_checks``), capabilities, the check
  context, the runner and its guards (watchdog, shrinking, hypothesis settings,
  tracebacks), replay bundles, reports and the verdict (console, JSON, JUnit, Markdown,
  HTML), the pytest face (``_suite``), the adapter skeleton and the CLI;
- ``_adapter/``: the built-in adapter checks (one module per area, listed in
  ``_registry``), the stream grammar, the recording wrapper, the hypothesis strategies,
  canonical transcripts and the language-neutral test vectors;
- ``_sandbox/``: the sandbox provider suite (its model, checks, lifecycle and attack
  checks, runner and pytest face);
- ``_zoo/``: the proof of the suite: the known-good targets that must pass and the
  mutants, each with one defect, that must fail.

One underscore convention: everything below this facade is private, rooms and modules
alike (``_adapter/_grammar.py``). The style guide keeps internals in ``_private``
modules and this facade's ``__all__`` is the whole public surface, so a leading
underscore means "internal" at every depth: no path to code avoids one, a user's
completion shows only the API, and a name without one is never an accident.
One import style: inside the package every import is relative (``from ._checks``,
``from .._adapter._grammar``); other packages are imported through their facades
(``harness_testkit.spec``).
"""

from ._adapter._grammar import Violation as Violation
from ._adapter._grammar import consumer_violations as consumer_violations
from ._adapter._grammar import harness_violations as harness_violations
from ._adapter._recording import RecordingAdapter as RecordingAdapter
from ._adapter._registry import REGISTRY as REGISTRY
from ._adapter._registry import ordered_checks as ordered_checks
from ._adapter._strategies import consumer_parts as consumer_parts
from ._adapter._strategies import continue_turn_states as continue_turn_states
from ._adapter._strategies import corrupted_stream_parts as corrupted_stream_parts
from ._adapter._strategies import json_values as json_values
from ._adapter._strategies import lifecycle_states as lifecycle_states
from ._adapter._strategies import resume_session_states as resume_session_states
from ._adapter._strategies import stream_parts as stream_parts
from ._adapter._strategies import tool_specs as tool_specs
from ._adapter._transcripts import VOLATILE_FIELDS as VOLATILE_FIELDS
from ._adapter._transcripts import normalize_transcript as normalize_transcript
from ._adapter._vectors import TraceHarness as TraceHarness
from ._adapter._vectors import load_vector as load_vector
from ._adapter._vectors import make_vector as make_vector
from ._adapter._vectors import replay_trace as replay_trace
from ._capabilities import AdapterCapabilities as AdapterCapabilities
from ._capabilities import CapabilityResolution as CapabilityResolution
from ._capabilities import is_scriptable as is_scriptable
from ._capabilities import resolve_capabilities as resolve_capabilities
from ._checks import Check as Check
from ._checks import CheckFailed as CheckFailed
from ._checks import CheckSkipped as CheckSkipped
from ._context import PROFILES as PROFILES
from ._context import AdapterTarget as AdapterTarget
from ._context import CheckContext as CheckContext
from ._context import load_target as load_target
from ._report import CheckResult as CheckResult
from ._report import Report as Report
from ._runner import Expectations as Expectations
from ._runner import RunOptions as RunOptions
from ._runner import run_check as run_check
from ._runner import run_suite as run_suite
from ._sandbox._checks import SANDBOX_CHECKS as SANDBOX_CHECKS
from ._sandbox._model import SandboxCapabilities as SandboxCapabilities
from ._sandbox._model import SandboxCheck as SandboxCheck
from ._sandbox._model import SandboxCheckContext as SandboxCheckContext
from ._sandbox._model import SandboxCheckFailed as SandboxCheckFailed
from ._sandbox._model import SandboxCheckSkipped as SandboxCheckSkipped
from ._sandbox._model import SandboxTarget as SandboxTarget
from ._sandbox._model import run_sandbox_check as run_sandbox_check
from ._sandbox._model import sandbox_file_contents as sandbox_file_contents
from ._sandbox._model import sandbox_relative_paths as sandbox_relative_paths
from ._sandbox._run import close_sandbox_provider as close_sandbox_provider
from ._sandbox._run import load_sandbox_capabilities as load_sandbox_capabilities
from ._sandbox._run import load_sandbox_target as load_sandbox_target
from ._sandbox._run import run_sandbox_suite as run_sandbox_suite
from ._sandbox._run import sandbox_target_from as sandbox_target_from
from ._verdict import Gate as Gate
from ._verdict import Verdict as Verdict
from ._verdict import verdict as verdict
from ._zoo._good_targets import capabilities_of as capabilities_of
from ._zoo._good_targets import self_test_targets as self_test_targets

__all__ = [
    "PROFILES",
    "REGISTRY",
    "SANDBOX_CHECKS",
    "VOLATILE_FIELDS",
    "AdapterCapabilities",
    "AdapterTarget",
    "CapabilityResolution",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckResult",
    "CheckSkipped",
    "ConformanceSuite",
    "Expectations",
    "Gate",
    "RecordingAdapter",
    "Report",
    "RunOptions",
    "SandboxCapabilities",
    "SandboxCheck",
    "SandboxCheckContext",
    "SandboxCheckFailed",
    "SandboxCheckSkipped",
    "SandboxSuite",
    "SandboxTarget",
    "TraceHarness",
    "Verdict",
    "Violation",
    "capabilities_of",
    "close_sandbox_provider",
    "consumer_parts",
    "consumer_violations",
    "continue_turn_states",
    "corrupted_stream_parts",
    "harness_violations",
    "is_scriptable",
    "json_values",
    "lifecycle_states",
    "load_sandbox_capabilities",
    "load_sandbox_target",
    "load_target",
    "load_vector",
    "make_vector",
    "normalize_transcript",
    "ordered_checks",
    "replay_trace",
    "resolve_capabilities",
    "resume_session_states",
    "run_check",
    "run_sandbox_check",
    "run_sandbox_suite",
    "run_suite",
    "sandbox_file_contents",
    "sandbox_relative_paths",
    "sandbox_target_from",
    "self_test_targets",
    "stream_parts",
    "tool_specs",
    "verdict",
]


def __getattr__(name: str) -> object:
    # ConformanceSuite needs pytest, which is a test-time dependency only.
    if name == "ConformanceSuite":
        from ._suite import ConformanceSuite

        return ConformanceSuite
    if name == "SandboxSuite":
        from ._sandbox._suite import SandboxSuite

        return SandboxSuite
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
