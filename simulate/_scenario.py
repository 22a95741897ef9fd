"""Simulation scenarios: agent settings, the fake runtime and the host's actions, as a file.

A scenario is a YAML or JSON document validated with pydantic (camelCase keys on disk,
snake_case accepted too). It says how to build the reference agent (host tools with
scripted outputs, filtering, approvals, permission mode, instructions, skills, model),
which fake runtime it drives (profile, overrides and script: inline, a file next to the
scenario, or generated from a seed) and what the host does, action by action::

    Scenario
     +-- agent: ScenarioAgent         tools (ScenarioTool by name), approvals, filtering, ...
     +-- harness: ScenarioHarness      profile, profileOverrides, seed, script
     +-- actions: [HostAction]         prompt, approve, deny, toolResult, continue,
                                       suspend, detach, stop, compact

:func:`~._loading.load_scenario` (module ``_loading``) reads and checks a file; every
problem is reported as a :class:`ScenarioError` naming the file, the path inside it
(``actions[2].approve``), the line when known and what is wrong. This module holds the
models; :func:`scenario_json_schema` writes the JSON Schema committed as
``examples/scenario.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeAlias

import anyio
import jsonschema
from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_snake

from harness_testkit.fake_harness import (
    ACTION_KINDS,
    HarnessProfile,
    Script,
    get_profile,
    profiles,
)
from harness_testkit.reference import Tool, ToolExecutionOptions, tool
from harness_testkit.spec import (
    HarnessUsageError,
    JSONValue,
    PermissionMode,
    Skill,
    WireModel,
)

from ._script_schema import add_field_descriptions, script_schema_defs

__all__ = [
    "ApproveAction",
    "CompactAction",
    "ContinueAction",
    "DenyAction",
    "DetachAction",
    "GeneratedScript",
    "HostAction",
    "PromptAction",
    "Scenario",
    "ScenarioAgent",
    "ScenarioError",
    "ScenarioHarness",
    "ScenarioIssue",
    "ScenarioTool",
    "ScriptedToolError",
    "StopAction",
    "SuspendAction",
    "ToolResultAction",
    "action_name",
    "format_location",
    "scenario_json_schema",
    "selected_tools",
]


class ScenarioModel(WireModel):
    """Base of the scenario models: camelCase on disk, either spelling accepted (the
    configuration and ``to_wire`` of :class:`~harness_testkit.spec.WireModel`)."""


# -- errors -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioIssue:
    """One problem of a scenario file.

    Attributes:
        path: Where in the document (``actions[2].approve``; ``(document)`` for the whole).
        problem: What is wrong, as a sentence.
        line: The 1-based line in the file, when known.
    """

    path: str
    problem: str
    line: int | None = None


class ScenarioError(HarnessUsageError):
    """A scenario file cannot be read or is invalid (raised by :func:`load_scenario`).

    The message names the file, then one line per problem: ``file:line: path: problem``.

    Args:
        file: The scenario file (or ``<scenario>`` for an in-memory document).
        issues: The problems found.
    """

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "ScenarioError"

    def __init__(self, file: str, issues: Sequence[ScenarioIssue]) -> None:
        self.file = file
        self.issues = tuple(issues)
        lines = []
        for issue in self.issues:
            where = f"{file}:{issue.line}" if issue.line is not None else file
            lines.append(f"{where}: {issue.path}: {issue.problem}")
        super().__init__("\n".join(lines))


class ScriptedToolError(Exception):
    """The error a scenario's host tool raises when the scenario gives it ``error``."""


# -- agent ------------------------------------------------------------------------------


class ScenarioTool(ScenarioModel):
    """A host tool whose outcome the scenario dictates.

    Attributes:
        description: Shown to the runtime's model.
        input_schema: JSON Schema of the input (calls that fail it are invalid).
        output: What every call returns (any JSON value).
        error: Make every call fail with this message instead (exclusive with ``output``).
        client_side: No ``execute``: the turn pauses until a ``toolResult`` action
            answers (``output``/``error`` are then the default answer).
        delay_seconds: Real time each execution takes (host-side latency).
    """

    description: str | None = None
    input_schema: dict[str, JSONValue] = Field(default_factory=lambda: _object_schema())
    output: JSONValue = None
    error: str | None = None
    client_side: bool = False
    delay_seconds: float = Field(default=0.0, ge=0, le=60)

    @field_validator("input_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, JSONValue]) -> dict[str, JSONValue]:
        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as error:
            raise ValueError(f"not a valid JSON Schema: {error.message}") from None
        return value

    @model_validator(mode="after")
    def _one_outcome(self) -> ScenarioTool:
        if self.error is not None and "output" in self.model_fields_set:
            raise ValueError("give either `output` or `error`, not both")
        return self

    def to_tool(self) -> Tool:
        """The host tool the agent runs (client-side tools have no ``execute``)."""
        if self.client_side:
            return tool(description=self.description, input_schema=self.input_schema)
        spec = self

        async def execute(value: Any, options: ToolExecutionOptions) -> Any:
            if spec.delay_seconds:
                await anyio.sleep(spec.delay_seconds)
            if spec.error is not None:
                raise ScriptedToolError(spec.error)
            return spec.output

        return tool(description=self.description, input_schema=self.input_schema, execute=execute)


def _object_schema() -> dict[str, JSONValue]:
    return {"type": "object"}


ApprovalSetting: TypeAlias = Literal["not-applicable", "approved", "user-approval", "denied"]


class ScenarioAgent(ScenarioModel):
    """The reference agent's settings (see :class:`HarnessAgent`).

    Attributes:
        model: The model id sent with every turn.
        instructions: System instructions.
        permission_mode: Built-in approvals: ``allow-all``, ``allow-edits``, ``allow-reads``.
        tools: Host tools by name.
        active_tools: Allow list of tool names (built-in and host).
        inactive_tools: Deny list of tool names.
        tool_approval: Host tool name -> ``not-applicable | approved | user-approval |
            denied``.
        skills: Skills available to the session.
        stop_after_steps: Stop each slice after this many steps (``stop_when``); the turn
            stays unfinished until a ``continue`` action.
    """

    model: str | None = None
    instructions: str | None = None
    permission_mode: PermissionMode = "allow-all"
    tools: dict[str, ScenarioTool] = Field(default_factory=dict)
    active_tools: list[str] | None = None
    inactive_tools: list[str] | None = None
    tool_approval: dict[str, ApprovalSetting] = Field(default_factory=dict)
    skills: list[Skill] = Field(default_factory=list)
    stop_after_steps: int | None = Field(default=None, ge=1)


# -- the fake runtime -------------------------------------------------------------------


class GenerateOptions(ScenarioModel):
    """Arguments of :func:`harness_testkit.fake_harness.generate_script`.

    Attributes:
        seed: The generator's seed; by default the simulation seed plus the session
            index, so sessions differ and a run is reproducible.
        max_turns: At most this many turns.
        max_steps: At most this many steps per turn.
        max_actions: At most this many actions per step.
        kinds: Action kinds to draw from (default: all).
        host_tools: Host tools the script may call (default: the scenario's tools that
            are not client-side).
    """

    seed: int | None = None
    max_turns: int = Field(default=3, ge=1, le=50)
    max_steps: int = Field(default=3, ge=1, le=50)
    max_actions: int = Field(default=4, ge=1, le=50)
    kinds: list[Literal[ACTION_KINDS]] | None = None  # type: ignore[valid-type]
    host_tools: list[str] | None = None


class GeneratedScript(ScenarioModel):
    """A script generated from a seed: ``script: {generate: {maxTurns: 2}}``.

    Attributes:
        generate: The generator's arguments (all optional: ``generate: {}``).
    """

    generate: GenerateOptions = Field(default_factory=GenerateOptions)


def _script_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "@path"
    if isinstance(value, Script):
        return "@inline"
    if isinstance(value, GeneratedScript):
        return "@generate"
    if isinstance(value, Mapping):
        return "@generate" if set(value) == {"generate"} else "@inline"
    return None


# Pydantic cannot generate a reference to a definition it does not know, so the inline
# script is a marker here, which `scenario_json_schema` replaces with a reference to the
# script definitions it adds.
_INLINE_SCRIPT_MARKER = "harness-testkit:inline-script"
_INLINE_SCRIPT_SCHEMA: dict[str, Any] = {"$comment": _INLINE_SCRIPT_MARKER}
_INLINE_SCRIPT_REF: dict[str, Any] = {
    "$ref": "#/$defs/Script",
    "description": "An inline fake-harness script: turns, steps, actions, with the same "
    "shorthands as script files.",
}

ScriptSource: TypeAlias = Annotated[
    Annotated[Script, Tag("@inline"), WithJsonSchema(_INLINE_SCRIPT_SCHEMA)]
    | Annotated[
        str,
        Tag("@path"),
        WithJsonSchema(
            {
                "type": "string",
                "description": "A script file (YAML or JSON), relative to the scenario file.",
            }
        ),
    ]
    | Annotated[GeneratedScript, Tag("@generate")],
    Discriminator(
        _script_tag,
        custom_error_type="invalid_script_source",
        custom_error_message="a script is an inline script, a file path or {generate: {...}}",
    ),
]


class ScenarioHarness(ScenarioModel):
    """The fake runtime.

    Attributes:
        profile: A fake-harness profile (``claude-code``, ``codex``, ``pi``,
            ``opencode``, ``minimal``).
        profile_overrides: Profile fields to change (``emitsFileChange: true``).
        seed: The fake's seed (text chunking); by default the simulation seed plus the
            session index.
        script: Inline, a path relative to the scenario file, or ``{generate: {...}}``;
            by default a script that echoes the prompt.
    """

    profile: str = Field(default="claude-code", json_schema_extra={"enum": list(profiles())})
    profile_overrides: dict[str, JSONValue] = Field(
        default_factory=dict,
        description="HarnessProfile fields to override (camelCase or snake_case): "
        + ", ".join(to_camel(name) for name in HarnessProfile.model_fields if name != "name"),
    )
    seed: int | None = None
    script: ScriptSource | None = None

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        if value not in profiles():
            raise ValueError(
                f"there is no fake harness profile named {value!r}; use one of "
                + ", ".join(profiles())
            )
        return value

    @field_validator("profile_overrides")
    @classmethod
    def _valid_overrides(
        cls, value: dict[str, JSONValue], info: ValidationInfo
    ) -> dict[str, JSONValue]:
        base = info.data.get("profile")
        if isinstance(base, str):
            _apply_overrides(get_profile(base), value)
        return value

    def resolved_profile(self) -> HarnessProfile:
        """The profile with its overrides applied."""
        return _apply_overrides(get_profile(self.profile), self.profile_overrides)


def _apply_overrides(base: HarnessProfile, overrides: Mapping[str, Any]) -> HarnessProfile:
    snake = {to_snake(key): item for key, item in overrides.items()}
    if "name" in snake:
        raise ValueError("the profile's name cannot be overridden; pick another `profile`")
    unknown = sorted(key for key in snake if key not in HarnessProfile.model_fields)
    if unknown:
        raise ValueError(
            f"unknown profile field(s) {', '.join(unknown)}; overridable fields: "
            + ", ".join(to_camel(name) for name in HarnessProfile.model_fields if name != "name")
        )
    try:
        return HarnessProfile.model_validate({**base.model_dump(), **snake})
    except ValidationError as error:
        raise ValueError(_flat_errors(error)) from None


def format_location(loc: Iterable[int | str]) -> str:
    """``("actions", 2, "@approve", "approve")`` -> ``actions[2].approve``."""
    out = ""
    for item in loc:
        if isinstance(item, int):
            out += f"[{item}]"
        elif item.startswith("@"):
            continue  # a union tag of ours, not a key the user wrote
        else:
            out += f".{item}" if out else item
    return out


def _flat_errors(error: ValidationError) -> str:
    return "; ".join(
        f"{format_location(item['loc']) or '(value)'}: {item['msg']}" for item in error.errors()
    )


# -- host actions -----------------------------------------------------------------------


class PromptAction(ScenarioModel):
    """Start a turn: ``- prompt: Hello``.

    Attributes:
        prompt: The prompt text, or one user message (``{role: user, content: ...}``).
        suspend_after_steps: Stop the turn once this many steps ran (a stop condition:
            the cut lands between two steps, the same in every run), then carry the
            unfinished turn through JSON to a fresh adapter and agent (another process);
            a later ``continue`` (or ``approve``...) resumes it.
    """

    prompt: str | dict[str, JSONValue]
    suspend_after_steps: int | None = Field(default=None, ge=1)


class ApproveAction(ScenarioModel):
    """Approve the pending approvals of these tools (``all`` for every one).

    Attributes:
        approve: A tool name (host tool, built-in key or native name), a list of them,
            or ``all``.
        reason: Sent with the approval.
    """

    approve: str | list[str]
    reason: str | None = None


class DenyAction(ScenarioModel):
    """Deny the pending approvals of these tools (``all`` for every one); the script
    sees each call as denied (``when: {toolCallId: ..., denied: true}``).

    Attributes:
        deny: A tool name (host tool, built-in key or native name), a list of them, or
            ``all``.
        reason: Sent with the denial; it becomes the ``execution-denied`` result's reason.
    """

    deny: str | list[str]
    reason: str | None = None


class ToolResultAction(ScenarioModel):
    """Answer the pending calls of a client-side tool.

    Attributes:
        tool_result: The client-side tool's name.
        output: The result (default: the tool's scripted ``output``).
        is_error: Report the result as an error (default: whether the tool has ``error``).
    """

    tool_result: str
    output: JSONValue = None
    is_error: bool | None = None


class ContinueAction(ScenarioModel):
    """Continue the unfinished turn without input (after ``suspend`` or a stop): ``- continue: true``.

    Attributes:
        continue_: ``true`` (the key is ``continue``).
        suspend_after_steps: As for :class:`PromptAction`.
    """

    continue_: Literal[True] = Field(alias="continue")
    suspend_after_steps: int | None = Field(default=None, ge=1)


class SuspendAction(ScenarioModel):
    """``session.suspend_turn()``, JSON round trip, fresh adapter and agent with ``continue_from``.

    Attributes:
        suspend: ``true``.
    """

    suspend: Literal[True]


class DetachAction(ScenarioModel):
    """``session.detach()``, JSON round trip, fresh adapter and agent with ``resume_from``.

    Attributes:
        detach: ``true``.
    """

    detach: Literal[True]


class StopAction(ScenarioModel):
    """``session.stop()`` (stops the sandbox), then resume like ``detach``.

    Attributes:
        stop: ``true``.
    """

    stop: Literal[True]


class CompactAction(ScenarioModel):
    """``session.compact()``: ``- compact: true`` or ``- compact: custom instructions``.

    Attributes:
        compact: ``true``, or the custom instructions of the compaction.
    """

    compact: Literal[True] | str


_ACTION_KEYS: dict[str, str] = {
    "prompt": "@prompt",
    "approve": "@approve",
    "deny": "@deny",
    "toolResult": "@tool-result",
    "tool_result": "@tool-result",
    "continue": "@continue",
    "suspend": "@suspend",
    "detach": "@detach",
    "stop": "@stop",
    "compact": "@compact",
}
_ACTION_CLASSES: dict[type[BaseModel], str] = {
    PromptAction: "@prompt",
    ApproveAction: "@approve",
    DenyAction: "@deny",
    ToolResultAction: "@tool-result",
    ContinueAction: "@continue",
    SuspendAction: "@suspend",
    DetachAction: "@detach",
    StopAction: "@stop",
    CompactAction: "@compact",
}


def _action_tag(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return _ACTION_CLASSES.get(type(value))
    if not isinstance(value, Mapping):
        return None
    tags = {_ACTION_KEYS[key] for key in value if key in _ACTION_KEYS}
    return tags.pop() if len(tags) == 1 else None


HostAction: TypeAlias = Annotated[
    Annotated[PromptAction, Tag("@prompt")]
    | Annotated[ApproveAction, Tag("@approve")]
    | Annotated[DenyAction, Tag("@deny")]
    | Annotated[ToolResultAction, Tag("@tool-result")]
    | Annotated[ContinueAction, Tag("@continue")]
    | Annotated[SuspendAction, Tag("@suspend")]
    | Annotated[DetachAction, Tag("@detach")]
    | Annotated[StopAction, Tag("@stop")]
    | Annotated[CompactAction, Tag("@compact")],
    Discriminator(
        _action_tag,
        custom_error_type="invalid_action",
        custom_error_message="an action has exactly one of the keys prompt, approve, deny, "
        "toolResult, continue, suspend, detach, stop, compact",
    ),
]


def action_name(action: HostAction) -> str:
    """The action's key as written in scenarios (``prompt``, ``toolResult``, ...)."""
    return to_camel(_ACTION_CLASSES[type(action)].removeprefix("@").replace("-", "_"))


def selected_tools(selector: str | list[str]) -> tuple[str, ...]:
    """The tool names of an ``approve``/``deny`` selector (``("all",)`` matches all)."""
    return (selector,) if isinstance(selector, str) else tuple(selector)


# -- the scenario -----------------------------------------------------------------------


class Scenario(ScenarioModel):
    """A simulation scenario. See the module docstring and ``examples/quickstart.yaml``.

    Attributes:
        version: Format version (1).
        name: Shown in reports (default: the file name without extension).
        description: One paragraph on what the scenario shows.
        sessions: How many sessions to run (``--sessions`` overrides).
        concurrency: How many run at once (``--concurrency`` overrides).
        seed: The simulation seed (``--seed`` overrides): ids, generated scripts, chunking.
        sandbox: ``local`` (default, no Docker needed) or ``docker`` (``--sandbox``).
        agent: The reference agent's settings.
        harness: The fake runtime.
        actions: What the host does, in order, in every session.
    """

    version: Literal[1] = 1
    name: str | None = None
    description: str = ""
    sessions: int = Field(default=1, ge=1, le=100_000)
    concurrency: int = Field(default=4, ge=1, le=1024)
    seed: int = Field(default=0, ge=0)
    sandbox: Literal["local", "docker"] = "local"
    agent: ScenarioAgent = Field(default_factory=ScenarioAgent)
    harness: ScenarioHarness = Field(default_factory=ScenarioHarness)
    actions: list[HostAction] = Field(min_length=1)


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (committed as ``examples/scenario.schema.json``)."""
    schema = Scenario.model_json_schema(by_alias=True, mode="validation")
    defs: dict[str, Any] = schema["$defs"]
    add_field_descriptions(defs, _scenario_models())
    for name, definition in script_schema_defs().items():
        if name in defs and defs[name] != definition:
            raise AssertionError(f"the scenario and script schemas both define {name!r}")
        defs[name] = definition
    schema["$defs"] = dict(sorted(defs.items()))
    schema = _replace_marker(schema)
    add_field_descriptions({"Scenario": schema}, {"Scenario": Scenario})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Generated by harness_testkit.simulate.scenario_json_schema(); do not edit.",
        **schema,
        "title": "harness-testkit simulation scenario",
    }


def _replace_marker(value: Any) -> Any:
    if value == _INLINE_SCRIPT_SCHEMA:
        return dict(_INLINE_SCRIPT_REF)
    if isinstance(value, dict):
        return {key: _replace_marker(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_marker(item) for item in value]
    return value


def _scenario_models() -> dict[str, type[BaseModel]]:
    models: list[type[BaseModel]] = [
        ScenarioAgent,
        ScenarioHarness,
        ScenarioTool,
        GenerateOptions,
        GeneratedScript,
        *_ACTION_CLASSES,
    ]
    return {model.__name__: model for model in models}


def render_json_schema() -> str:
    """:func:`scenario_json_schema` as the committed file's text."""
    return json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"
