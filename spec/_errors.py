"""The error hierarchy of harness-testkit.

Every exception the kit raises on purpose is one of these, or derives from one (the
package that defines a class outside ``spec`` is named after it)::

    Exception
     +-- HarnessError                          (AI_HarnessError)
     |    +-- HarnessCapabilityUnsupportedError (AI_HarnessCapabilityUnsupportedError)
     |    +-- HarnessSandboxAuthenticationError (AI_HarnessSandboxAuthenticationError)
     |    +-- InvalidLifecycleStateError        (serialized as AI_HarnessError)
     |    +-- PartLimitExceededError            (reference: a turn emitted too many parts)
     |    +-- NoObjectGeneratedError            (reference: no valid structured output)
     |    +-- WorkflowFailedError               (reference: a workflow step failed)
     |    +-- HostAdapterError                  (an adapter's own error inside a Node host, by its name)
     |    +-- FakeHarnessError                  (fake_harness: the fake's own failures)
     |         +-- FakeHarnessCrashError        (a scripted crash)
     |         +-- TurnAbortedError             (the turn was aborted)
     |         +-- ScriptMismatchError          (the turn does not match its script)
     +-- NoSuchToolError                       (AI_NoSuchToolError; also a LookupError)
     +-- InvalidToolInputError                 (reference: AI_InvalidToolInputError; a ValueError)
     +-- ToolContextValidationError            (AI_TypeValidationError; also a ValueError)
     +-- HarnessUsageError                     (invalid settings, arguments or user files; a ValueError)
     |    +-- YamlError                        (a user's document is not YAML 1.2)
     |    +-- RequirementCatalogueError        (the requirement catalogue is malformed)
     |    +-- InputError                       (a user's file is unusable: size, depth, numbers)
     |    +-- UnsafePatternError               (a user's regex needs backtracking)
     |    +-- ScenarioError                    (simulate: a scenario file is invalid)
     |    +-- ScriptConversionError            (model_endpoint: a script an endpoint cannot serve)
     |    +-- SelectionError                   (conformance: a selection names nothing known)
     |    +-- BundleError                      (conformance: not a usable replay bundle)
     +-- HarnessSessionStateError              (session or turn in the wrong state; a RuntimeError)
     +-- HarnessTurnError                      (a turn broke the stream contract; a RuntimeError)
     +-- HostProtocolError                     (an adapter host broke the host protocol; a RuntimeError)
     +-- HostSetupError                        (an adapter host cannot be set up: npm, Node; a RuntimeError)
     +-- SandboxError                          (sandbox provider or session failures)
     |    +-- SandboxPathError                 (path escapes the session root; a ValueError)
     |    +-- SandboxTimeoutError              (a command outlived its timeout; a TimeoutError)
     |    +-- SandboxAbortedError              (a command was aborted by its caller)
     |    +-- SandboxUnavailableError          (the provider cannot run here, e.g. no engine)
     +-- MissingExtraError                     (an optional extra is not installed; an ImportError)
     +-- ClusterUnavailableError               (simulate: no Dask cluster to shard on; an OSError)

The user-file errors under ``HarnessUsageError`` keep their own ``name`` (their class
name) in serialized error parts, and stay ``ValueError`` for code that catches that.

Outside the tree, each for the reason on its line::

    AssertionError
     +-- CheckFailed                           (conformance: pytest shows a failed check as a failed assertion)
     |    +-- SandboxCheckFailed
     +-- UnforeseenRequestError                (model_endpoint: pytest shows an unplanned request as a failed assertion)
    Exception
     +-- CheckSkipped                          (conformance: a signal the runner turns into a skip, not an error)
     |    +-- SandboxCheckSkipped
     +-- ScriptedToolError                     (simulate: stands in for a user tool's own exception)
     +-- SliceFailed                           (reference: carries a slice's error to the agent, which raises it)
     +-- InvalidRequestError                   (model_endpoint: answered with HTTP 400, never raised to a caller)
     +-- StreamCutError                        (model_endpoint: cuts a response mid-body; the server drops it)
     +-- _NotPlain                             (reference: control flow, caught in its module)
     +-- _Escape                               (sandbox: control flow, turned into SandboxPathError)
     +-- _ActionFailed                         (simulate: control flow, caught in its module)
     +-- _OwnKill                              (conformance: control flow, caught in its module)
     +-- _SetupError                           (conformance: control flow, the CLI exits 2)
     +-- TurnRefused                           (conformance: a turn not started because the run's turns hang; the check is reported blocked)
    BaseException
     +-- RunInterrupted                        (conformance: passes every `except Exception` of a check or adapter)
     +-- ShrinkingCut                          (conformance: hypothesis must not take it for a failure)
     +-- Terminated                            (conformance: SIGTERM passes every `except Exception`)
     +-- CheckInterrupted                      (conformance: hypothesis must not take it for a failure)

``tests/test_architecture.py`` checks this drawing against the classes the packages
define. The ``name`` attribute of each error is the name a TypeScript peer uses; messages
that the specification quotes are reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "HarnessCapabilityUnsupportedError",
    "HarnessError",
    "HarnessSandboxAuthenticationError",
    "HarnessSessionStateError",
    "HarnessTurnError",
    "HarnessUsageError",
    "InvalidLifecycleStateError",
    "MissingExtraError",
    "NoSuchToolError",
    "SandboxAbortedError",
    "SandboxError",
    "SandboxPathError",
    "SandboxTimeoutError",
    "SandboxUnavailableError",
    "ToolContextValidationError",
    "get_harness_error_message",
]


class HarnessError(Exception):
    """A harness failure the specification names (``AI_HarnessError``).

    Raised for lifecycle-state validation failures and approval-message extraction
    errors; the base of the capability and sandbox-authentication errors.

    Args:
        message: A full sentence naming the culprit.
        cause: The underlying exception, if any (also set as ``__cause__``).
    """

    name: str = "AI_HarnessError"

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    @classmethod
    def is_instance(cls, error: object) -> bool:
        """Return whether ``error`` is an instance of this class (or a subclass)."""
        return isinstance(error, cls)


class HarnessCapabilityUnsupportedError(HarnessError):
    """An adapter, agent or sandbox lacks a capability the caller asked for.

    Raised from the method that needs the capability: for example ``do_compact`` on a
    runtime without manual compaction, ``do_prompt_turn`` with a JSON response format the
    runtime cannot honour, or the agent constructor when built-in filtering cannot be
    enforced.

    Args:
        message: A full sentence naming the capability.
        harness_id: The harness that lacks it, when known.
        cause: The underlying exception, if any.
    """

    name = "AI_HarnessCapabilityUnsupportedError"

    def __init__(
        self,
        message: str,
        *,
        harness_id: str | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.harness_id = harness_id


class HarnessSandboxAuthenticationError(HarnessError):
    """A sandbox provider could not authenticate with its backend.

    Args:
        message: A full sentence naming what failed.
        sandbox_provider_id: The provider that failed.
        cause: The underlying exception, if any.
    """

    name = "AI_HarnessSandboxAuthenticationError"

    def __init__(
        self,
        message: str,
        *,
        sandbox_provider_id: str,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.sandbox_provider_id = sandbox_provider_id


class InvalidLifecycleStateError(HarnessError):
    """A lifecycle state (``resume-session`` / ``continue-turn``) failed validation.

    Raised by ``parse_lifecycle_state`` and by the agent when a state crosses its
    boundary. The message says which field is wrong and why. Serialized as
    ``AI_HarnessError`` because upstream raises a plain ``HarnessError`` here.
    """

    name = "AI_HarnessError"


class NoSuchToolError(LookupError):
    """A tool name is not part of the merged tool set.

    Raised by the agent for unknown ``active_tools``/``inactive_tools`` names and used
    as the ``error`` of invalid tool-call parts for undeclared tools.

    Args:
        tool_name: The unknown name.
        available_tools: The names that would have been accepted.
    """

    name = "AI_NoSuchToolError"

    def __init__(self, tool_name: str, available_tools: Sequence[str] | None = None) -> None:
        self.tool_name = tool_name
        self.available_tools = None if available_tools is None else list(available_tools)
        if self.available_tools is None:
            message = f"Model tried to call unavailable tool '{tool_name}'. No tools are available."
        else:
            message = (
                f"Model tried to call unavailable tool '{tool_name}'. "
                f"Available tools: {', '.join(self.available_tools)}."
            )
        super().__init__(message)
        self.message = message


class ToolContextValidationError(ValueError):
    """A host tool's context entry failed its ``context_schema``.

    Stays on the host: the runtime only ever sees the generic payload
    ``{"error": "Tool context validation failed."}``.
    """

    name = "AI_TypeValidationError"

    def __init__(self, tool_name: str, detail: str) -> None:
        self.tool_name = tool_name
        self.detail = detail
        self.message = f"Type validation failed for tool context of tool '{tool_name}': {detail}"
        super().__init__(self.message)


class HarnessUsageError(ValueError):
    """Settings or call arguments are invalid (upstream raises a plain ``Error``).

    The message is the specification's text, for example
    ``HarnessAgent: pass either `activeTools` or `inactiveTools`, not both.``
    """

    name = "Error"


class HarnessSessionStateError(RuntimeError):
    """A session or its turn is in a state that does not allow the call.

    For example ``Harness session s1 has ended and cannot be reused.``
    """

    name = "Error"


class HarnessTurnError(RuntimeError):
    """A turn failed because the adapter broke the stream contract.

    For example the unclosed-step error, or an approval request for an unknown call.
    """

    name = "Error"


class SandboxError(Exception):
    """A sandbox provider or session operation failed."""

    name = "SandboxError"


class SandboxPathError(SandboxError, ValueError):
    """A path resolves outside the sandbox session's root and was refused."""

    name = "SandboxPathError"


class SandboxTimeoutError(SandboxError, TimeoutError):
    """A sandbox command outlived its timeout and was killed."""

    name = "SandboxTimeoutError"


class SandboxAbortedError(SandboxError):
    """A sandbox command was aborted by its caller and killed."""

    name = "SandboxAbortedError"


class SandboxUnavailableError(SandboxError):
    """The sandbox provider cannot run in this environment (for example no Docker engine)."""

    name = "SandboxUnavailableError"


class MissingExtraError(ImportError):
    """A feature needs an optional extra of the distribution that is not installed.

    The message is one sentence naming the feature, the extra and the command that
    installs it; the console script prints it and exits 2 (a set-up error, never a
    traceback). An ``ImportError``, so code that guards an optional import keeps working.

    Args:
        feature: What needs the extra, for example ``"The scripted model endpoint"``.
        extra: The extra's name in ``pyproject.toml``, for example ``"model-endpoint"``.
        missing: The module that could not be imported, if known.
    """

    name = "MissingExtraError"

    def __init__(self, feature: str, extra: str, *, missing: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        self.missing = missing
        because = f" ({missing} is not installed)" if missing else ""
        self.message = (
            f"{feature} needs the `{extra}` extra{because}: pip install 'harness-testkit[{extra}]'"
        )
        super().__init__(self.message, name=missing)


_REVIEWED_NAMES = frozenset(
    {
        "AI_HarnessError",
        "AI_HarnessCapabilityUnsupportedError",
        "AI_HarnessSandboxAuthenticationError",
    }
)


def get_harness_error_message(error: object) -> str:
    """Return a message safe to show an end user.

    Reviewed harness errors keep their message; anything else (including unreviewed
    ``HarnessError`` subclasses that define their own ``name``) is masked.

    Args:
        error: Any raised value.

    Returns:
        The error's message, or ``"An error occurred."``.
    """
    if isinstance(error, HarnessError) and error.name in _REVIEWED_NAMES:
        return error.message
    return "An error occurred."
