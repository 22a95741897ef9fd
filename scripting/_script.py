"""The script: what the fake runtime's "model" does, turn by turn and step by step.

A script is a validated, JSON-serializable document (YAML or JSON on disk). Keys are
camelCase on the wire (``toolCallId``, ``promptMatches``) and snake_case in Python;
both spellings are accepted when loading. See the ``fake_harness`` section of the
README for the format reference and a worked example (``examples/hello.yaml``).

Structure::

    Script
     +-- turns: [ScriptTurn]          one per prompt turn (selection: promptMatches, then order)
     |    +-- steps: [ScriptStep]      one model step each, ending with ``finish-step``
     |    |    +-- when: StepCondition (skip the step unless it holds)
     |    |    +-- actions: [Action]   text, reasoning, tool calls, file changes, raw, ...
     |    +-- onUserMessage: [ScriptStep]  run after each mid-turn user message
     |    +-- faults: [Fault]
     +-- mcpServers, webSearch, chunking, contextBudget, faults
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import yaml
from pydantic import Field, field_validator, model_validator

from harness_testkit.common import check_pattern, parse_structured, read_bounded_text
from harness_testkit.spec import JSONValue, ToolUseKind, UnifiedFinishReason, WireModel, load_yaml

__all__ = [
    "Action",
    "BuiltinCallAction",
    "Chunking",
    "CloseEarlyFault",
    "CrashFault",
    "DelayAction",
    "DelayPartFault",
    "DropFinishStepFault",
    "ErrorAction",
    "Fault",
    "FileMutation",
    "FileMutationAction",
    "HangFault",
    "HostToolCallAction",
    "MalformedPartFault",
    "McpCallAction",
    "McpServer",
    "McpTool",
    "RawAction",
    "ReasoningAction",
    "Script",
    "ScriptStep",
    "ScriptTurn",
    "ScriptedResult",
    "StepCondition",
    "StepUsage",
    "TextAction",
    "WaitForUserMessageAction",
    "WebSearchAnswer",
]


class ScriptModel(WireModel):
    """Base of every script model: camelCase on the wire, either spelling accepted (the
    configuration and ``to_wire`` of :class:`~harness_testkit.spec.WireModel`)."""


def _check_regex(value: str | None) -> str | None:
    # RE2, not `re`: a scripted pattern runs in linear time, so a hostile one cannot hang
    # the run; what RE2 cannot run is refused here, when the file is loaded.
    return check_pattern(value)


# -- results, usage, conditions ---------------------------------------------------------


class ScriptedResult(ScriptModel):
    """A tool outcome the script dictates (for tools the fake does not execute itself)."""

    value: JSONValue = None
    is_error: bool = False


class StepUsage(ScriptModel):
    """Token usage to report for a step instead of the runtime's estimate."""

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)


class StepCondition(ScriptModel):
    """When a step runs. Every criterion given must hold (``negate`` inverts the result).

    ``is_error``, ``denied`` and ``output_matches`` look at the outcome of call
    ``tool_call_id`` (a built-in, MCP or host tool of the same turn). An outcome is a
    success, an error or a denial: a denied approval, or a host tool answered with an
    ``execution-denied`` result (``{"type": "execution-denied", "reason": ...}``, what
    the agent submits for a denied, auto-denied or inactive host tool). A denial is not
    a success, so ``is_error: true`` holds for it and ``is_error: false`` does not;
    ``denied: true`` holds only for a denial, ``denied: false`` for any other outcome.
    ``output_matches`` is a regular expression searched in the output (a string as is,
    anything else as compact JSON). ``user_message_matches`` searches every user message
    received so far in the turn. A condition on a call that has no outcome (yet) is
    false.
    """

    tool_call_id: str | None = None
    is_error: bool | None = None
    denied: bool | None = None
    output_matches: str | None = None
    user_message_matches: str | None = None
    negate: bool = False

    @field_validator("output_matches", "user_message_matches")
    @classmethod
    def _regexes(cls, value: str | None) -> str | None:
        return _check_regex(value)

    @model_validator(mode="after")
    def _complete(self) -> StepCondition:
        if self.tool_call_id is None and (
            self.is_error is not None or self.denied is not None or self.output_matches
        ):
            raise ValueError("isError, denied and outputMatches need the toolCallId they refer to")
        if self.tool_call_id is None and self.user_message_matches is None:
            raise ValueError("a condition needs toolCallId or userMessageMatches")
        return self


# -- actions ------------------------------------------------------------------------------


class TextAction(ScriptModel):
    """A text block: ``text-start``, deltas (chunked, see :class:`Chunking`), ``text-end``.

    ``{{name}}`` placeholders are filled in: ``prompt``, ``instructions``, ``skills``
    (comma-separated names), ``model``, ``workdir``, ``user_message`` (the latest) and
    ``result:<toolCallId>`` (a call's output of this turn).
    """

    type: Literal["text"] = "text"
    text: str
    id: str | None = None


class ReasoningAction(ScriptModel):
    """A reasoning block, chunked like text (placeholders are filled in too)."""

    type: Literal["reasoning"] = "reasoning"
    text: str
    id: str | None = None


class BuiltinCallAction(ScriptModel):
    """A call to one of the profile's built-ins, executed by the runtime itself.

    ``tool`` is the built-in key (``read``, ``bash``, or a native-keyed name such as
    ``TodoWrite``). ``read``, ``write``, ``edit``, ``bash``, ``grep`` and ``glob`` run for
    real in the sandbox; any other built-in is answered from ``result`` (``webSearch``
    also from the script's ``webSearch`` answers). String inputs get ``{{workdir}}``
    filled in.
    """

    type: Literal["builtin"] = "builtin"
    tool: str = Field(min_length=1)
    input: dict[str, JSONValue] = Field(default_factory=dict)
    id: str | None = None
    result: ScriptedResult | None = None
    stream_input: bool = False


class HostToolCallAction(ScriptModel):
    """A call the host executes: ``tool-call`` without ``providerExecuted``, then a wait.

    The runtime waits for ``submit_tool_result`` and echoes the submitted output as a
    ``tool-result`` before the step's ``finish-step``.
    """

    type: Literal["host-tool"] = "host-tool"
    tool: str = Field(min_length=1)
    input: dict[str, JSONValue] = Field(default_factory=dict)
    id: str | None = None
    stream_input: bool = False


class McpCallAction(ScriptModel):
    """A call to a scripted MCP server's tool, executed by the runtime.

    Emitted as ``mcp__<server>__<tool>`` with ``providerExecuted`` and ``dynamic``; the
    outcome is ``result`` when given, else the server tool's scripted result.
    """

    type: Literal["mcp"] = "mcp"
    server: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    input: dict[str, JSONValue] = Field(default_factory=dict)
    id: str | None = None
    result: ScriptedResult | None = None
    stream_input: bool = False


class FileMutation(ScriptModel):
    """One path of an opaque workspace mutation: write ``content`` or ``delete``.

    Relative paths resolve against the session work dir; the ``file-change`` part carries
    the absolute path, as real runtimes report it.
    """

    path: str = Field(min_length=1)
    content: str | None = None
    delete: bool = False

    @model_validator(mode="after")
    def _one_effect(self) -> FileMutation:
        if self.delete == (self.content is not None):
            raise ValueError("a file mutation either writes content or deletes, exactly one")
        return self


class FileMutationAction(ScriptModel):
    """Workspace mutations with no visible tool call (one ``file-change`` per path)."""

    type: Literal["file-change"] = "file-change"
    changes: list[FileMutation] = Field(min_length=1)


class RawAction(ScriptModel):
    """A ``raw`` part carrying ``value``."""

    type: Literal["raw"] = "raw"
    value: JSONValue = None


class ErrorAction(ScriptModel):
    """An ``error`` part. With ``end_turn`` (default) the turn stops right after it.

    A turn ended this way emits no ``finish-step``/``finish`` and ``done()`` resolves
    cleanly: the ``error`` part is the runtime's report.
    """

    type: Literal["error"] = "error"
    error: JSONValue = "The fake runtime reported an error."
    end_turn: bool = True


class DelayAction(ScriptModel):
    """Wait ``seconds`` on the harness clock (virtual by default)."""

    type: Literal["delay"] = "delay"
    seconds: float = Field(ge=0)


class WaitForUserMessageAction(ScriptModel):
    """Block until a mid-turn user message arrives (or ``timeout`` clock seconds pass).

    Only meaningful on profiles with ``submit_user_message``; elsewhere it waits for the
    timeout (forever without one, until the turn is aborted or suspended).
    """

    type: Literal["wait-user-message"] = "wait-user-message"
    timeout: float | None = Field(default=None, ge=0)


Action: TypeAlias = Annotated[
    TextAction
    | ReasoningAction
    | BuiltinCallAction
    | HostToolCallAction
    | McpCallAction
    | FileMutationAction
    | RawAction
    | ErrorAction
    | DelayAction
    | WaitForUserMessageAction,
    Field(discriminator="type"),
]

_SHORTHANDS: dict[str, tuple[str, str]] = {
    # shorthand key -> (type, field the value goes to)
    "text": ("text", "text"),
    "reasoning": ("reasoning", "text"),
    "builtin": ("builtin", "tool"),
    "hostTool": ("host-tool", "tool"),
    "host_tool": ("host-tool", "tool"),
    "raw": ("raw", "value"),
    "error": ("error", "error"),
    "delay": ("delay", "seconds"),
    "fileChange": ("file-change", "changes"),
    "file_change": ("file-change", "changes"),
    "waitUserMessage": ("wait-user-message", "timeout"),
    "wait_user_message": ("wait-user-message", "timeout"),
}


def _expand_shorthand(item: Any) -> Any:
    # YAML scripts read better as `- text: Hello` than `- {type: text, text: Hello}`.
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if not isinstance(item, Mapping) or "type" in item:
        return item
    if "mcp" in item and isinstance(item["mcp"], str):
        server, _, tool = item["mcp"].partition("/")
        rest = {key: value for key, value in item.items() if key != "mcp"}
        return {"type": "mcp", "server": server, "tool": tool, **rest}
    keys = [key for key in item if key in _SHORTHANDS]
    if len(keys) != 1:
        return item
    kind, field = _SHORTHANDS[keys[0]]
    value = item[keys[0]]
    if kind == "wait-user-message" and value is True:
        value = None
    rest = {key: val for key, val in item.items() if key != keys[0]}
    return {"type": kind, field: value, **rest}


class ScriptStep(ScriptModel):
    """One model step: its actions in order, then ``finish-step``.

    Content (text, reasoning, tool calls, raw, file changes) is emitted in order; then
    the step's tool calls are resolved in order (approval, execution or host wait, and
    the ``tool-result``); then ``finish-step``. ``finish_reason`` defaults to
    ``tool-calls`` when the step called a tool, else ``stop``; ``usage`` defaults to the
    runtime's estimate (context tokens in, generated tokens out).
    """

    when: StepCondition | None = None
    actions: list[Action] = Field(default_factory=list)
    finish_reason: UnifiedFinishReason | None = None
    usage: StepUsage | None = None
    announce_tool_call_count: bool = False

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("actions"), list):
            return {**data, "actions": [_expand_shorthand(item) for item in data["actions"]]}
        return data


def _malformed_default() -> dict[str, JSONValue]:
    return {"type": "text-delta", "ID": "malformed", "text": "oops"}


def _object_schema() -> dict[str, JSONValue]:
    return {"type": "object"}


# -- faults -------------------------------------------------------------------------------


class _PositionedFault(ScriptModel):
    """Where a fault fires: before part number ``at_part`` of the turn (0-based) or
    before the ``occurrence``-th part of type ``before_type``."""

    at_part: int | None = Field(default=None, ge=0)
    before_type: str | None = None
    occurrence: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _positioned(self) -> _PositionedFault:
        if (self.at_part is None) == (self.before_type is None):
            raise ValueError("a fault needs exactly one of atPart or beforeType")
        return self


class DelayPartFault(_PositionedFault):
    """Delay one part by ``seconds`` on the harness clock."""

    kind: Literal["delay-part"] = "delay-part"
    seconds: float = Field(ge=0)


class CrashFault(_PositionedFault):
    """The runtime dies: nothing more is emitted and ``done()`` raises ``FakeHarnessCrashError``."""

    kind: Literal["crash"] = "crash"
    message: str = "The fake runtime crashed mid-turn."


class HangFault(_PositionedFault):
    """The runtime stops responding until the turn is aborted (or suspended)."""

    kind: Literal["hang"] = "hang"


class MalformedPartFault(_PositionedFault):
    """Emit ``part`` (a dict with wrong field names by default) before the positioned part."""

    kind: Literal["malformed-part"] = "malformed-part"
    part: dict[str, JSONValue] = Field(default_factory=lambda: _malformed_default())


class CloseEarlyFault(_PositionedFault):
    """The stream closes: ``done()`` resolves cleanly without ``finish``."""

    kind: Literal["close-early"] = "close-early"


class DropFinishStepFault(ScriptModel):
    """Do not emit the ``finish-step`` of the listed steps (0-based; all when omitted)."""

    kind: Literal["drop-finish-step"] = "drop-finish-step"
    steps: list[int] | None = None


Fault: TypeAlias = Annotated[
    DelayPartFault
    | CrashFault
    | HangFault
    | MalformedPartFault
    | CloseEarlyFault
    | DropFinishStepFault,
    Field(discriminator="kind"),
]


# -- MCP, web search, chunking ---------------------------------------------------------


class McpTool(ScriptModel):
    """A scripted MCP tool: its declared schema and the result every call gets."""

    description: str | None = None
    input_schema: dict[str, JSONValue] = Field(default_factory=lambda: _object_schema())
    result: JSONValue = "ok"
    is_error: bool = False
    #: How the permission mode treats it (``None`` counts as ``edit``, as in the spec).
    tool_use_kind: ToolUseKind | None = None


class McpServer(ScriptModel):
    """A scripted MCP server: tool name -> tool."""

    tools: dict[str, McpTool] = Field(default_factory=dict)


class WebSearchAnswer(ScriptModel):
    """The answer to ``webSearch`` calls whose query matches ``query_matches``."""

    query_matches: str = ".*"
    results: JSONValue = Field(default_factory=list)

    @field_validator("query_matches")
    @classmethod
    def _regex(cls, value: str) -> str:
        _check_regex(value)
        return value


class Chunking(ScriptModel):
    """How text and reasoning are split into deltas (deterministic per seed).

    ``words``: 1..``max_words`` words per delta, drawn from the seeded RNG; ``chars``:
    fixed ``size`` characters; ``whole``: one delta per block.
    """

    mode: Literal["words", "chars", "whole"] = "words"
    max_words: int = Field(default=3, ge=1)
    size: int = Field(default=16, ge=1)


# -- turns and the script ---------------------------------------------------------------


class ScriptTurn(ScriptModel):
    """What one prompt turn does.

    Selection: the first turn whose ``prompt_matches`` regex is found in the prompt text
    wins; otherwise the next turn without ``prompt_matches``, in order (then the script's
    ``when_exhausted`` policy). ``json_output`` is the final text when the turn is asked
    for a JSON response format (else the final step's text, when it is JSON, or
    ``{"text": ...}``).
    """

    prompt_matches: str | None = None
    steps: list[ScriptStep] = Field(default_factory=list)
    on_user_message: list[ScriptStep] = Field(default_factory=list)
    finish_reason: UnifiedFinishReason | None = None
    json_output: JSONValue = None
    faults: list[Fault] = Field(default_factory=list)
    model_id: str | None = None

    @field_validator("prompt_matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)


class Script(ScriptModel):
    """A complete script. Load with :meth:`from_file` or ``Script.model_validate(dict)``.

    Attributes:
        version: Format version (1).
        model_id: The model id reported on ``stream-start`` (after the turn's ``model``).
        chunking: How text is split into deltas.
        context_budget: Token budget above which the runtime compacts automatically
            (overrides the profile's).
        when_exhausted: What prompt turns beyond the script do: ``repeat-last`` the last
            sequential turn, ``cycle`` from the first, or ``error`` (``do_prompt_turn``
            raises ``FakeHarnessError``).
        turns: The turns.
        mcp_servers: Scripted MCP servers (merged under the harness's ``mcp_servers``).
        web_search: Answers to ``webSearch`` calls, first match wins.
        faults: Faults applied to every turn.
    """

    version: Literal[1] = 1
    model_id: str | None = None
    chunking: Chunking = Field(default_factory=Chunking)
    context_budget: int | None = Field(default=None, ge=1)
    when_exhausted: Literal["repeat-last", "cycle", "error"] = "repeat-last"
    turns: list[ScriptTurn] = Field(min_length=1)
    mcp_servers: dict[str, McpServer] = Field(default_factory=dict)
    web_search: list[WebSearchAnswer] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)

    @classmethod
    def from_file(cls, path: str | Path) -> Script:
        """Load a script from a ``.json``, ``.yaml`` or ``.yml`` file.

        Args:
            path: The file.

        Returns:
            The validated script.

        Raises:
            pydantic.ValidationError: naming the field that is wrong.
            ValueError: the file cannot be read, is not a regular file, is larger than
                16 MiB, not UTF-8, nested deeper than 64 levels, uses YAML aliases or
                holds integers outside the JSON-safe range (the message names it).
        """
        text = read_bounded_text(Path(path), what="script")
        document = parse_structured(
            text, what=f"script {path}", json_only=str(path).endswith(".json")
        )
        return cls.model_validate(document)

    @classmethod
    def from_yaml(cls, text: str) -> Script:
        """Validate a script written as YAML 1.2 (JSON is YAML too; ``yes`` stays a string).

        Raises:
            harness_testkit.spec.YamlError: a syntax error, with its line.
            pydantic.ValidationError: naming the field that is wrong.
        """
        return cls.model_validate(load_yaml(text, source="<script>"))

    @classmethod
    def from_json_text(cls, text: str) -> Script:
        """Validate a script written as JSON.

        Raises:
            ValueError: invalid JSON, nested deeper than 64 levels or with integers
                outside the JSON-safe range (the message names the field).
            pydantic.ValidationError: naming the field that is wrong.
        """
        return cls.model_validate(parse_structured(text, what="<script>", json_only=True))

    @classmethod
    def from_texts(cls, *texts: str) -> Script:
        """A script whose turn ``n`` answers with ``texts[n]`` in one step."""
        return cls(
            turns=[ScriptTurn(steps=[ScriptStep(actions=[TextAction(text=t)])]) for t in texts]
        )

    @classmethod
    def default(cls) -> Script:
        """The script a :class:`FakeHarness` uses when given none: echo the prompt."""
        return cls.from_texts("You said: {{prompt}}")

    def to_yaml(self) -> str:
        """The document as YAML."""
        return yaml.safe_dump(self.to_wire(), sort_keys=False, allow_unicode=True)

    def digest(self) -> str:
        """A short content hash; lifecycle states carry it to detect a changed script."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
