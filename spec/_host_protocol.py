"""The adapter host protocol: harness-v1 across a process boundary.

An *adapter host* is a process that loads one harness-v1 adapter written in another
language (the kit ships one for Node: ``adapters/node/host/host.mjs``) and serves it to
the kit over JSON-RPC 2.0 on stdio, one JSON object per line (NDJSON). Logs go to stderr.
Calls go both ways::

    kit  -> host  requests       initialize, describe, createHarness, getBootstrap,
                                 doStart, doPromptTurn, doContinueTurn,
                                 submitToolResult, submitToolApproval, submitUserMessage,
                                 done, doCompact, doSuspendTurn, doDetach, doStop,
                                 doDestroy, shutdown
    kit  -> host  notifications  $/cancelRequest {id}   (aborts that request's AbortSignal)
                                 process/output, process/exit (a spawned sandbox process)
                                 checkpoint/pin, checkpoint/release {turn, seq}
    host -> kit   notifications  emit {turn, part, seq}, log {level, message}
    host -> kit   requests       sandbox/run, sandbox/spawn, sandbox/readTextFile,
                                 sandbox/readBinaryFile, sandbox/writeTextFile,
                                 sandbox/writeBinaryFile, process/kill
                  (and $/cancelRequest for them, when the adapter aborts one)

Host tools need no method of their own: the adapter emits their ``tool-call`` part and
the kit answers with ``submitToolResult``, exactly as in process. The cancellation of a
``doStart``, ``doPromptTurn`` or ``doContinueTurn`` request aborts the signal the adapter
was given for the whole session or turn, even after the request was answered (the
harness-v1 ``abortSignal`` outlives the call that handed it over).

Errors carry ``{code, message, data: {name, message, harnessId?, cause?}}``: the kit
raises the spec's own class for a spec error name (``AI_HarnessCapabilityUnsupportedError``
becomes :class:`HarnessCapabilityUnsupportedError`) and :class:`HostAdapterError`, with
the remote name, for anything else. Bytes travel as base64. The models here are the
protocol's single source: ``spec/schemas/host-protocol.schema.json`` is generated from
them, and requirement area ``HOST`` of the catalogue states the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import models_json_schema

from ._errors import HarnessError
from ._json import WIRE_CONFIG, JSONValue

__all__ = [
    "HOST_PROTOCOL_VERSION",
    "HOST_TO_KIT_METHODS",
    "KIT_TO_HOST_METHODS",
    "HostAdapterError",
    "HostDescription",
    "HostErrorData",
    "HostProtocolError",
    "HostSetupError",
    "host_protocol_schema",
    "parse_host_message",
]

#: The protocol version this kit speaks; a host answering another major version is refused.
HOST_PROTOCOL_VERSION: Final = "1.1"

RequestId: TypeAlias = int | str


class HostProtocolError(RuntimeError):
    """The adapter host broke the host protocol.

    You see it when a host writes something that is not a frame of this protocol, answers
    with the wrong shape, speaks another protocol version, or dies. The message names the
    frame (or what was expected) and the rule (a ``HOST-NNN`` requirement id), and ends
    with the last lines the host wrote to stderr when there are any.

    Args:
        requirement: The ``HOST-NNN`` requirement the host broke.
        message: What happened, naming the frame.
    """

    name = "HostProtocolError"

    def __init__(self, requirement: str, message: str) -> None:
        super().__init__(f"[{requirement}] {message}")
        self.requirement = requirement
        self.message = message


class HostSetupError(RuntimeError):
    """An adapter host cannot be set up here: npm, Node or the target is missing.

    You see it before any check runs, when the kit installs the adapter, finds a Node to
    run it on or starts its host. The message is one sentence naming what is missing and
    how to get it; the console script prints it and exits 2 (a set-up error, not a check
    result).
    """

    name = "HostSetupError"


class HostAdapterError(HarnessError):
    """An error the adapter raised inside the host, under a name the kit has no class for.

    The remote ``name`` (``"Error"``, ``"TypeError"``, ``"AI_APICallError"``, ...) is kept
    as :attr:`name`, so reports show what a TypeScript peer would see; :attr:`data` holds
    the error object as the host serialised it. A HarnessError, so the agent treats it as
    a harness failure; its message is masked for end users like any unreviewed error.

    Args:
        name: The remote error's name.
        message: The remote error's message.
        data: The serialised error object (``name``, ``message``, ``cause``, ...).
    """

    def __init__(self, name: str, message: str, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.data = dict(data or {})

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class _Open(BaseModel):
    """A wire model that keeps keys it does not know (a newer peer may add some)."""

    model_config = ConfigDict(**{**WIRE_CONFIG, "extra": "allow"})


# -- frames ---------------------------------------------------------------------------------


class HostErrorData(_Open):
    """The error object a peer serialised: at least ``name`` and ``message``."""

    name: str = "Error"
    message: str = ""
    harness_id: str | None = None
    cause: HostErrorData | None = None


class HostErrorObject(_Wire):
    """The ``error`` member of a JSON-RPC response."""

    code: int
    message: str
    data: HostErrorData | None = None


class HostRequest(_Wire):
    """A call that expects exactly one response with the same ``id``."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    method: str = Field(min_length=1)
    params: dict[str, JSONValue] | None = None


class HostNotification(_Wire):
    """A message without ``id``: nothing answers it."""

    jsonrpc: Literal["2.0"]
    method: str = Field(min_length=1)
    params: dict[str, JSONValue] | None = None


class HostResponse(_Wire):
    """The answer to a request: ``result`` or ``error``, never both."""

    jsonrpc: Literal["2.0"]
    id: RequestId | None
    result: JSONValue = None
    error: HostErrorObject | None = None


HostMessage: TypeAlias = HostRequest | HostNotification | HostResponse


def parse_host_message(obj: object) -> HostMessage:
    """Validate one decoded NDJSON line as a frame of the protocol.

    Args:
        obj: The decoded JSON value.

    Returns:
        The request, notification or response it is.

    Raises:
        HostProtocolError: (HOST-002) naming the frame and what is wrong with it.
    """
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        raise HostProtocolError("HOST-002", f"not a JSON-RPC 2.0 object: {_excerpt(obj)}")
    try:
        if "method" in obj:
            if "id" in obj:
                return HostRequest.model_validate(obj)
            return HostNotification.model_validate(obj)
        response = HostResponse.model_validate(obj)
    except ValidationError as error:
        raise HostProtocolError(
            "HOST-002", f"malformed frame {_excerpt(obj)}: {error.errors()[0]['msg']}"
        ) from error
    if response.error is not None and "result" in obj:
        raise HostProtocolError(
            "HOST-002", f"a response carries both result and error: {_excerpt(obj)}"
        )
    if response.error is None and "result" not in obj:
        raise HostProtocolError(
            "HOST-002", f"a response carries neither result nor error: {_excerpt(obj)}"
        )
    return response


def _excerpt(obj: object, limit: int = 200) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- kit -> host ----------------------------------------------------------------------------


class AdapterLocator(_Wire):
    """Which adapter the host loads: a module, where to resolve it from, and its export.

    ``module`` is an absolute path (a package folder or a ``.js``/``.mjs`` file) or a
    package name resolved under ``resolveFrom/node_modules``. ``export`` names a factory
    (called with ``settings``) or a harness object (default: the module's default export).
    """

    module: str = Field(min_length=1)
    resolve_from: str | None = None
    export: str | None = None
    settings: dict[str, JSONValue] = Field(default_factory=dict)


class InitializeParams(_Wire):
    """``initialize``: the first call; loads the adapter.

    ``faults`` plants the host's self-test defects (``drop-provider-executed``,
    ``approve-denials``): the kit's own tests use them to prove the
    suite catches a host that forwards wrongly. Never set them to check an adapter.
    """

    protocol_version: str
    adapter: AdapterLocator
    faults: list[str] = Field(default_factory=list)


class HostPackage(_Wire):
    """An npm package by name and version."""

    name: str | None = None
    version: str | None = None


class HostInfo(_Wire):
    """The host program and the runtime it runs on."""

    version: str
    node: str | None = None


class LoadedAdapter(_Open):
    """What ``initialize`` loaded."""

    package: HostPackage | None = None
    export: str


class InitializeResult(_Open):
    """The host's answer to ``initialize``."""

    protocol_version: str
    host: HostInfo
    adapter: LoadedAdapter


class DescribedBuiltinTool(_Open):
    """A built-in tool as the adapter declares it, its input schema as JSON Schema."""

    description: str | None = None
    input_schema: dict[str, JSONValue] | None = None
    native_name: str | None = None
    common_name: str | None = None
    tool_use_kind: Literal["readonly", "edit", "bash"] | None = None


class HostDescription(_Open):
    """``describe``: the adapter object's static surface (harness-v1 section 1.1)."""

    specification_version: str
    harness_id: str
    supports_builtin_tool_approvals: bool = False
    supports_builtin_tool_filtering: bool = False
    builtin_tools: dict[str, DescribedBuiltinTool] = Field(default_factory=dict)
    lifecycle_state_schema: dict[str, JSONValue] | None = None
    has_bootstrap: bool = False


class SettingsParams(_Wire):
    """``describe`` / ``createHarness``: settings merged over the initialize settings."""

    settings: dict[str, JSONValue] = Field(default_factory=dict)


class HarnessHandle(_Wire):
    """A harness instance made by ``createHarness``."""

    harness: str


class SandboxInfo(_Wire):
    """The sandbox session the adapter is given (its methods call back into the kit)."""

    description: str = ""
    id: str | None = None
    default_working_directory: str | None = None


class DoStartParams(_Wire):
    """``doStart``: harness-v1 ``StartOptions`` (the sandbox as :class:`SandboxInfo`).

    ``session`` is a new handle the kit chose: the adapter may call the sandbox before
    ``doStart`` returns, and those calls carry it.
    """

    harness: str
    session: str
    session_id: str
    session_work_dir: str
    sandbox: SandboxInfo
    resume_from: dict[str, JSONValue] | None = None
    continue_from: dict[str, JSONValue] | None = None
    permission_mode: str | None = None
    builtin_tool_filtering: dict[str, JSONValue] | None = None


class DoStartResult(_Wire):
    """The started session: its handle plus the harness-v1 session attributes."""

    session: str
    session_id: str
    is_resume: bool
    model_id: str | None = None


class SessionRef(_Wire):
    """Names a session by its handle."""

    session: str


class CompactParams(SessionRef):
    """``doCompact``."""

    custom_instructions: str | None = None


class ContinueTurnParams(_Wire):
    """``doContinueTurn``: the turn settings; ``turn`` is a new id the kit chose."""

    session: str
    turn: str
    tools: list[dict[str, JSONValue]] = Field(default_factory=list)
    skills: list[dict[str, JSONValue]] = Field(default_factory=list)
    instructions: str | None = None
    response_format: dict[str, JSONValue] | None = None
    model: str | None = None


class PromptTurnParams(ContinueTurnParams):
    """``doPromptTurn``: the turn settings plus the prompt."""

    prompt: JSONValue


class TurnControls(_Wire):
    """Which optional prompt-control methods the turn's control has."""

    submit_tool_approval: bool
    submit_user_message: bool


class TurnStartedResult(_Wire):
    """The answer to ``doPromptTurn`` / ``doContinueTurn``."""

    controls: TurnControls


class TurnRef(_Wire):
    """Names a turn by the id the kit gave it (``done``)."""

    turn: str


class SubmitToolResultParams(TurnRef):
    """``submitToolResult``."""

    tool_call_id: str
    output: JSONValue = None
    is_error: bool | None = None
    tool_result: dict[str, JSONValue] | None = None


class SubmitToolApprovalParams(TurnRef):
    """``submitToolApproval``."""

    approval_id: str
    approved: bool
    reason: str | None = None


class SubmitUserMessageParams(TurnRef):
    """``submitUserMessage``."""

    text: str


class CancelRequestParams(_Wire):
    """``$/cancelRequest``: abort the request with this id (either direction)."""

    id: RequestId


class CheckpointParams(TurnRef):
    """``checkpoint/pin`` and ``checkpoint/release``: the checkpoint of part ``seq`` of a
    turn (an ``emit`` that said ``checkpoint: true``)."""

    seq: int = Field(ge=1)


class ProcessOutputParams(_Wire):
    """``process/output``: bytes a spawned sandbox process wrote."""

    process: str
    stream: Literal["stdout", "stderr"]
    base64: str


class ProcessExitParams(_Wire):
    """``process/exit``: a spawned sandbox process ended."""

    process: str
    exit_code: int


# -- host -> kit ----------------------------------------------------------------------------


class EmitParams(_Wire):
    """``emit``: one stream part of a turn (validated as a ``StreamPart`` on receipt)."""

    turn: str
    part: dict[str, JSONValue]
    #: The part's number in its turn, from 1, counted where the adapter emits it (so a
    #: part the host lost on its way to stdout leaves a gap: HOST-013).
    seq: int = Field(ge=1)
    #: The part carried an event checkpoint (a ``finish-step`` from an adapter that reads
    #: its runtime through upstream's sandbox channel): the host keeps it, and the kit
    #: pins it with ``checkpoint/pin`` (HOST-014, STOP-008).
    checkpoint: bool | None = None


class LogParams(_Wire):
    """``log``: something the host wants in the kit's log."""

    level: Literal["debug", "info", "warn", "error"]
    message: str


class SandboxCommandParams(SessionRef):
    """``sandbox/run`` and ``sandbox/spawn``."""

    command: str
    working_directory: str | None = None
    env: dict[str, str] | None = None


class SandboxRunResult(_Wire):
    """The answer to ``sandbox/run``."""

    exit_code: int
    stdout: str
    stderr: str


class SandboxSpawnResult(_Wire):
    """The answer to ``sandbox/spawn``: a process handle for the notifications."""

    process: str
    pid: int | None = None


class SandboxReadTextParams(SessionRef):
    """``sandbox/readTextFile``."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    encoding: str | None = None


class SandboxTextContent(_Wire):
    """The answer to ``sandbox/readTextFile`` (``null``: no such file)."""

    content: str | None


class SandboxPathParams(SessionRef):
    """``sandbox/readBinaryFile``."""

    path: str


class SandboxBinaryContent(_Wire):
    """The answer to ``sandbox/readBinaryFile`` (``null``: no such file)."""

    base64: str | None


class SandboxWriteTextParams(SessionRef):
    """``sandbox/writeTextFile``."""

    path: str
    content: str
    encoding: str | None = None


class SandboxWriteBinaryParams(SessionRef):
    """``sandbox/writeBinaryFile``."""

    path: str
    base64: str


class ProcessRef(_Wire):
    """``process/kill``."""

    process: str


class Empty(_Wire):
    """A request without parameters, or a result without content (``null`` on the wire)."""


#: Method -> (params model, result model) of the requests the kit sends; ``None`` for a
#: result means the host answers ``null``, or a lifecycle state for the session methods.
KIT_TO_HOST_METHODS: Final[Mapping[str, tuple[type[BaseModel], type[BaseModel] | None]]] = {
    "initialize": (InitializeParams, InitializeResult),
    "describe": (SettingsParams, HostDescription),
    "createHarness": (SettingsParams, HarnessHandle),
    "getBootstrap": (HarnessHandle, None),
    "doStart": (DoStartParams, DoStartResult),
    "doPromptTurn": (PromptTurnParams, TurnStartedResult),
    "doContinueTurn": (ContinueTurnParams, TurnStartedResult),
    "submitToolResult": (SubmitToolResultParams, None),
    "submitToolApproval": (SubmitToolApprovalParams, None),
    "submitUserMessage": (SubmitUserMessageParams, None),
    "done": (TurnRef, None),
    "doCompact": (CompactParams, None),
    "doSuspendTurn": (SessionRef, None),
    "doDetach": (SessionRef, None),
    "doStop": (SessionRef, None),
    "doDestroy": (SessionRef, None),
    "shutdown": (Empty, None),
}

#: Method -> (params model, result model) of the requests the host sends.
HOST_TO_KIT_METHODS: Final[Mapping[str, tuple[type[BaseModel], type[BaseModel] | None]]] = {
    "sandbox/run": (SandboxCommandParams, SandboxRunResult),
    "sandbox/spawn": (SandboxCommandParams, SandboxSpawnResult),
    "sandbox/readTextFile": (SandboxReadTextParams, SandboxTextContent),
    "sandbox/readBinaryFile": (SandboxPathParams, SandboxBinaryContent),
    "sandbox/writeTextFile": (SandboxWriteTextParams, None),
    "sandbox/writeBinaryFile": (SandboxWriteBinaryParams, None),
    "process/kill": (ProcessRef, None),
}

#: Notification -> params model, by direction.
NOTIFICATIONS: Final[
    Mapping[str, tuple[Literal["kit->host", "host->kit", "both"], type[BaseModel]]]
] = {
    "$/cancelRequest": ("both", CancelRequestParams),
    "process/output": ("kit->host", ProcessOutputParams),
    "process/exit": ("kit->host", ProcessExitParams),
    "checkpoint/pin": ("kit->host", CheckpointParams),
    "checkpoint/release": ("kit->host", CheckpointParams),
    "emit": ("host->kit", EmitParams),
    "log": ("host->kit", LogParams),
}


def host_protocol_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document.

    ``$defs`` holds every frame, params and result model (wire names); ``x-methods`` maps
    each method to its direction and the ``$ref`` of its params and result, and
    ``x-notifications`` each notification to its direction and params.
    """
    models: list[type[BaseModel]] = [HostRequest, HostNotification, HostResponse]
    for params, result in (*KIT_TO_HOST_METHODS.values(), *HOST_TO_KIT_METHODS.values()):
        models.append(params)
        if result is not None:
            models.append(result)
    models.extend(model for _, model in NOTIFICATIONS.values())
    unique = list(dict.fromkeys(models))
    refs, schema = models_json_schema(
        [(model, "serialization") for model in unique],
        by_alias=True,
        ref_template="#/$defs/{model}",
    )

    def ref(model: type[BaseModel] | None) -> dict[str, str] | None:
        if model is None:
            return None
        found: dict[str, str] = dict(refs[(model, "serialization")])
        return found

    methods: dict[str, Any] = {}
    for direction, table in (
        ("kit->host", KIT_TO_HOST_METHODS),
        ("host->kit", HOST_TO_KIT_METHODS),
    ):
        for method, (params, result) in table.items():
            methods[method] = {"direction": direction, "params": ref(params), "result": ref(result)}
    return {
        "title": "harness-testkit adapter host protocol",
        "description": (
            "harness-v1 across a process boundary: JSON-RPC 2.0 over stdio, one JSON "
            f"object per line. Protocol version {HOST_PROTOCOL_VERSION}."
        ),
        "x-protocolVersion": HOST_PROTOCOL_VERSION,
        "oneOf": [ref(HostRequest), ref(HostNotification), ref(HostResponse)],
        "$defs": schema.get("$defs", {}),
        "x-methods": methods,
        "x-notifications": {
            name: {"direction": direction, "params": ref(model)}
            for name, (direction, model) in NOTIFICATIONS.items()
        },
    }
