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

:func:`load_scenario` reads and checks a file; every problem is reported as a
:class:`ScenarioError` naming the file, the path inside it (``actions[2].approve``), the
line when known and what is wrong. :func:`scenario_json_schema` writes the JSON Schema
committed as ``examples/scenario.schema.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
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
    FakeHarness,
    HarnessProfile,
    Script,
    generate_script,
    get_profile,
    profiles,
    script_problems,
)
from harness_testkit.reference import HarnessAgent, IdGenerator, Tool, ToolExecutionOptions, tool
from harness_testkit.spec import (
    HarnessError,
    JSONValue,
    NoSuchToolError,
    PermissionMode,
    SandboxProvider,
    Skill,
    WireModel,
    YamlError,
    YamlLocator,
    find_non_json,
    load_yaml,
)

#: Largest scenario file read (bytes) and deepest nesting accepted in one.
MAX_SCENARIO_BYTES = 8 * 1024 * 1024
MAX_SCENARIO_DEPTH = 64

#: ``stop_when`` predicate of the agent: receives ``{"steps": [...]}``.
StopCondition: TypeAlias = Callable[[Mapping[str, Any]], bool]

__all__ = [
    "SIMULATION_EPOCH",
    "ApproveAction",
    "CompactAction",
    "ContinueAction",
    "DenyAction",
    "DetachAction",
    "GeneratedScript",
    "HostAction",
    "LoadedScenario",
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
    "builtin_scenario_path",
    "builtin_scenarios",
    "load_scenario",
    "parse_scenario",
    "scenario_json_schema",
]

#: The agent's clock in simulations: fixed, so step timestamps never differ between runs.
SIMULATION_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

_EXAMPLES_PACKAGE = "harness_testkit.simulate"


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


class ScenarioError(ValueError):
    """A scenario file cannot be read or is invalid (raised by :func:`load_scenario`).

    The message names the file, then one line per problem: ``file:line: path: problem``.

    Args:
        file: The scenario file (or ``<scenario>`` for an in-memory document).
        issues: The problems found.
    """

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
    """A script generated from a seed: ``script: {generate: {maxTurns: 2}}``."""

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


_INLINE_SCRIPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["turns"],
    "description": "An inline fake-harness script (harness_testkit.fake_harness.Script: "
    "turns, steps, actions, with the same shorthands as script files).",
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


def _flat_errors(error: ValidationError) -> str:
    return "; ".join(
        f"{_format_loc(item['loc']) or '(value)'}: {item['msg']}" for item in error.errors()
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
    """Approve the pending approvals of these tools (``all`` for every one)."""

    approve: str | list[str]
    reason: str | None = None


class DenyAction(ScenarioModel):
    """Deny the pending approvals of these tools (``all`` for every one)."""

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
    """``session.suspend_turn()``, JSON round trip, fresh adapter and agent with ``continue_from``."""

    suspend: Literal[True]


class DetachAction(ScenarioModel):
    """``session.detach()``, JSON round trip, fresh adapter and agent with ``resume_from``."""

    detach: Literal[True]


class StopAction(ScenarioModel):
    """``session.stop()`` (stops the sandbox), then resume like ``detach``."""

    stop: Literal[True]


class CompactAction(ScenarioModel):
    """``session.compact()``: ``- compact: true`` or ``- compact: custom instructions``."""

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
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Generated by harness_testkit.simulate.scenario_json_schema(); do not edit.",
        **schema,
        "title": "harness-testkit simulation scenario",
    }


def render_json_schema() -> str:
    """:func:`scenario_json_schema` as the committed file's text."""
    return json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"


# -- loading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedScenario:
    """A validated scenario with its script resolved; builds harnesses and agents.

    Attributes:
        scenario: The validated document.
        source: The file it came from (``<scenario>`` when parsed from memory).
        name: The scenario's name.
        profile: The fake profile with overrides applied.
        script: The fixed script (``None`` when it is generated per session).
        digest: A short hash of the document and its script.
    """

    scenario: Scenario
    source: str
    name: str
    profile: HarnessProfile
    script: Script | None
    digest: str
    tools: Mapping[str, Tool] = field(default_factory=dict)

    def script_for(self, seed: int, session_index: int) -> Script:
        """The script session ``session_index`` runs (generated ones depend on both)."""
        if self.script is not None:
            return self.script
        source = self.scenario.harness.script
        assert isinstance(source, GeneratedScript)
        options = source.generate
        scenario_tools = self.scenario.agent.tools
        host_tools = options.host_tools
        if host_tools is None:
            host_tools = [name for name, spec in scenario_tools.items() if not spec.client_side]
        return generate_script(
            options.seed if options.seed is not None else seed + session_index,
            profile=self.profile,
            host_tools=host_tools,
            kinds=options.kinds if options.kinds is not None else ACTION_KINDS,
            max_turns=options.max_turns,
            max_steps=options.max_steps,
            max_actions=options.max_actions,
        )

    def harness_seed(self, seed: int, session_index: int) -> int:
        """The fake's seed for a session."""
        fixed = self.scenario.harness.seed
        return fixed if fixed is not None else seed + session_index

    def make_harness(self, seed: int, session_index: int) -> FakeHarness:
        """A fresh fake runtime for a session (same arguments, same behaviour)."""
        return FakeHarness(
            script=self.script_for(seed, session_index),
            profile=self.profile,
            seed=self.harness_seed(seed, session_index),
        )

    def make_agent(
        self,
        harness: FakeHarness,
        *,
        sandbox: SandboxProvider | None,
        id_generator: IdGenerator,
        stop_when: Sequence[StopCondition] = (),
    ) -> HarnessAgent:
        """The reference agent over ``harness`` with the scenario's settings.

        Args:
            harness: The fake runtime.
            sandbox: The sandbox provider.
            id_generator: Mints the agent's ids.
            stop_when: Stop conditions besides the scenario's ``stopAfterSteps``.

        Raises:
            HarnessError: settings the agent refuses (checked by :func:`load_scenario`).
        """
        agent = self.scenario.agent
        conditions = list(stop_when)
        if agent.stop_after_steps is not None:
            limit = agent.stop_after_steps
            conditions.append(lambda context: len(context["steps"]) >= limit)
        return HarnessAgent(
            harness=harness,
            sandbox=sandbox,
            tools=self.tools,
            active_tools=agent.active_tools,
            inactive_tools=agent.inactive_tools,
            tool_approval=agent.tool_approval,
            permission_mode=agent.permission_mode,
            instructions=agent.instructions,
            skills=agent.skills,
            stop_when=conditions,
            model=agent.model,
            id_generator=id_generator,
            clock=lambda: SIMULATION_EPOCH,
        )


def load_scenario(path: str | Path) -> LoadedScenario:
    """Read, validate and resolve a scenario file (``.yaml``, ``.yml`` or ``.json``).

    Args:
        path: The scenario file; script paths inside it are relative to its folder.

    Returns:
        The loaded scenario.

    Raises:
        ScenarioError: naming the file, the path inside it and the problem.
    """
    file = Path(path)
    try:
        info = os.stat(file)
        if not stat.S_ISREG(info.st_mode):
            raise ScenarioError(str(file), [ScenarioIssue("(document)", "not a regular file")])
        if info.st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(
                str(file),
                [
                    ScenarioIssue(
                        "(document)",
                        f"{info.st_size} bytes; the limit is {MAX_SCENARIO_BYTES}",
                    )
                ],
            )
        with open(file, "rb") as handle:
            text = handle.read(MAX_SCENARIO_BYTES + 1).decode("utf-8")
    except OSError as error:
        raise ScenarioError(
            str(file), [ScenarioIssue("(document)", f"cannot read the file: {error.strerror}")]
        ) from None
    except UnicodeDecodeError as error:
        raise ScenarioError(
            str(file), [ScenarioIssue("(document)", f"not UTF-8 text: {error.reason}")]
        ) from None
    return parse_scenario(
        text, source=str(file), base_dir=file.parent, json_only=file.suffix == ".json"
    )


def parse_scenario(
    text: str,
    *,
    source: str = "<scenario>",
    base_dir: Path | None = None,
    json_only: bool = False,
) -> LoadedScenario:
    """Validate a scenario document given as text (YAML, or JSON with ``json_only``).

    Args:
        text: The document.
        source: How errors name it.
        base_dir: Where relative script paths start (default: the working directory).
        json_only: Parse as strict JSON (error positions from the JSON parser).

    Raises:
        ScenarioError: naming ``source``, the path inside it and the problem.
    """
    data = _parse_text(text, source, json_only)
    locator = _locator(text)
    if not isinstance(data, dict):
        raise ScenarioError(
            source,
            [
                ScenarioIssue(
                    "(document)",
                    f"a scenario is a mapping of settings, not {type(data).__name__}",
                    1,
                )
            ],
        )
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, _issues(error, locator)) from None
    issues: list[ScenarioIssue] = []
    script = _resolve_script(scenario, base_dir or Path.cwd(), issues, locator)
    profile = scenario.harness.resolved_profile()
    tools = {name: spec.to_tool() for name, spec in scenario.agent.tools.items()}
    _check_references(scenario, profile, script, issues, locator)
    name = scenario.name or (Path(source).stem if source != "<scenario>" else "scenario")
    canonical = json.dumps(
        {"scenario": scenario.to_wire(), "script": script.to_wire() if script else None},
        sort_keys=True,
        ensure_ascii=False,
    )
    loaded = LoadedScenario(
        scenario=scenario,
        source=source,
        name=name,
        profile=profile,
        script=script,
        digest=hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16],
        tools=tools,
    )
    if not issues:
        _dry_build(loaded, issues, locator)
    if issues:
        raise ScenarioError(source, issues)
    return loaded


def _parse_text(text: str, source: str, json_only: bool) -> Any:
    value = _parse_bounded(text, source, json_only)
    problem = find_non_json(value, "$", max_depth=MAX_SCENARIO_DEPTH, safe_integers=True)
    if problem is not None:
        raise ScenarioError(source, [ScenarioIssue("(document)", problem)])
    return value


def _parse_bounded(text: str, source: str, json_only: bool) -> Any:
    if json_only:
        try:
            return json.loads(text)
        except RecursionError:
            raise ScenarioError(
                source,
                [ScenarioIssue("(document)", f"nesting deeper than {MAX_SCENARIO_DEPTH} levels")],
            ) from None
        except json.JSONDecodeError as error:
            raise ScenarioError(
                source, [ScenarioIssue("(document)", f"invalid JSON: {error.msg}", error.lineno)]
            ) from None
    try:
        return load_yaml(text, source=source)
    except YamlError as error:
        raise ScenarioError(
            source, [ScenarioIssue("(document)", f"invalid YAML: {error.problem}", error.line)]
        ) from None


def _resolve_script(
    scenario: Scenario, base_dir: Path, issues: list[ScenarioIssue], locator: YamlLocator
) -> Script | None:
    source = scenario.harness.script
    where = ("harness", "script")
    if source is None:
        return Script.default()
    if isinstance(source, Script):
        _check_script(source, scenario, issues, lambda path: locator.line((*where, *path)), None)
        return source
    if isinstance(source, GeneratedScript):
        try:
            # Generate once now so bad generator arguments fail before anything runs.
            LoadedScenario(
                scenario=scenario,
                source="",
                name="",
                profile=scenario.harness.resolved_profile(),
                script=None,
                digest="",
            ).script_for(scenario.seed, 0)
        except (ValueError, HarnessError) as error:
            issues.append(ScenarioIssue("harness.script.generate", str(error), locator.line(where)))
        return None
    path = Path(source)
    if not path.is_absolute():
        path = base_dir / path
    text = ""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCENARIO_BYTES:
            problem = (
                "is not a regular file"
                if not stat.S_ISREG(info.st_mode)
                else f"is {info.st_size} bytes; the limit is {MAX_SCENARIO_BYTES}"
            )
            issues.append(ScenarioIssue("harness.script", f"{path} {problem}", locator.line(where)))
            return None
        text = path.read_text(encoding="utf-8")
        script = Script.model_validate(_parse_text(text, str(path), path.suffix == ".json"))
    except ScenarioError as error:
        issues.extend(
            ScenarioIssue("harness.script", f"in {path}: {issue.problem}", locator.line(where))
            for issue in error.issues
        )
    except OSError as error:
        issues.append(
            ScenarioIssue(
                "harness.script",
                f"cannot read the script file {source!r} (resolved to {path}): {error.strerror}",
                locator.line(where),
            )
        )
    except ValidationError as error:
        in_file = _locator(text)
        inner = "; ".join(
            f"line {in_file.line(_wire_loc(item['loc']))}: "
            f"{_format_loc(item['loc']) or '(top level)'}: {item['msg']}"
            for item in error.errors()
        )
        issues.append(ScenarioIssue("harness.script", f"in {path}: {inner}", locator.line(where)))
    except ValueError as error:
        issues.append(ScenarioIssue("harness.script", f"in {path}: {error}", locator.line(where)))
    else:
        in_file = _locator(text)
        _check_script(script, scenario, issues, in_file.line, (path, locator.line(where)))
        return script
    return None


def _wire_loc(loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """A pydantic error location as a document path (the locator stops at a union tag)."""
    return tuple(loc)


def _check_script(
    script: Script,
    scenario: Scenario,
    issues: list[ScenarioIssue],
    line_of: Callable[[Sequence[int | str]], int | None],
    file: tuple[Path, int | None] | None,
) -> None:
    """Built-ins the profile lacks and dangling ``when.toolCallId``, with their lines."""
    for path, problem in script_problems(script, scenario.harness.resolved_profile()):
        dotted = _format_loc(path)
        if file is None:
            issues.append(ScenarioIssue(f"harness.script.{dotted}", problem, line_of(path)))
        else:
            script_file, line = file
            issues.append(
                ScenarioIssue(
                    "harness.script", f"{script_file}:{line_of(path)}: {dotted}: {problem}", line
                )
            )


def _check_references(
    scenario: Scenario,
    profile: HarnessProfile,
    script: Script | None,
    issues: list[ScenarioIssue],
    locator: YamlLocator,
) -> None:
    """Names that must refer to something: approvals, approve/deny, toolResult."""
    agent = scenario.agent
    for name in agent.tool_approval:
        if name not in agent.tools:
            issues.append(
                ScenarioIssue(
                    f"agent.toolApproval.{name}",
                    f"{name!r} is not a host tool of this scenario (declare it under agent.tools)",
                    locator.line(("agent", "toolApproval", name)),
                )
            )
    known = set(agent.tools)
    for key, builtin in profile.builtin_tools.items():
        known.add(key)
        if builtin.native_name:
            known.add(builtin.native_name)
    for index, action in enumerate(scenario.actions):
        if isinstance(action, ApproveAction | DenyAction):
            key = "approve" if isinstance(action, ApproveAction) else "deny"
            selector = action.approve if isinstance(action, ApproveAction) else action.deny
            for name in selected_tools(selector):
                if name != "all" and name not in known and not name.startswith("mcp__"):
                    issues.append(
                        ScenarioIssue(
                            f"actions[{index}].{key}",
                            f"{name!r} names neither a host tool nor a built-in of profile "
                            f"{profile.name!r} (nor 'all'); known: {', '.join(sorted(known))}",
                            locator.line(("actions", index, key)),
                        )
                    )
        elif isinstance(action, ToolResultAction):
            spec = agent.tools.get(action.tool_result)
            if spec is None or not spec.client_side:
                issues.append(
                    ScenarioIssue(
                        f"actions[{index}].toolResult",
                        f"{action.tool_result!r} is not a client-side tool; declare it under "
                        "agent.tools with `clientSide: true`",
                        locator.line(("actions", index, "toolResult")),
                    )
                )


def _dry_build(loaded: LoadedScenario, issues: list[ScenarioIssue], locator: YamlLocator) -> None:
    """Construct the agent once: it checks filtering and capabilities without any I/O."""
    agent = loaded.scenario.agent
    try:
        loaded.make_agent(loaded.make_harness(0, 0), sandbox=None, id_generator=IdGenerator(0))
    except NoSuchToolError as error:
        key = "activeTools" if agent.active_tools is not None else "inactiveTools"
        issues.append(ScenarioIssue(f"agent.{key}", str(error), locator.line(("agent", key))))
    except HarnessError as error:
        where = ("agent", "permissionMode") if "permissionMode" in str(error) else ("agent",)
        issues.append(ScenarioIssue(".".join(where), str(error), locator.line(where)))


# -- error paths and lines ----------------------------------------------------------------


def _format_loc(loc: Iterable[int | str]) -> str:
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


def _issues(error: ValidationError, locator: YamlLocator) -> list[ScenarioIssue]:
    issues = []
    for item in error.errors():
        loc = [part for part in item["loc"] if not (isinstance(part, str) and part.startswith("@"))]
        message = item["msg"]
        if message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        issues.append(
            ScenarioIssue(_format_loc(item["loc"]) or "(top level)", message, locator.line(loc))
        )
    return issues


def _locator(text: str) -> YamlLocator:
    """Line numbers for document paths; keys match in camelCase or snake_case."""
    return YamlLocator(text, spellings=lambda key: {key, to_snake(key), to_camel(key)})


# -- shipped examples -------------------------------------------------------------------


def builtin_scenarios() -> tuple[str, ...]:
    """Names of the example scenarios shipped with the kit (``examples/*.yaml``)."""
    folder = resources.files(_EXAMPLES_PACKAGE) / "examples"
    return tuple(
        sorted(
            entry.name.removesuffix(".yaml")
            for entry in folder.iterdir()
            if entry.name.endswith(".yaml")
        )
    )


def builtin_scenario_path(name: str) -> Path:
    """The file of shipped example scenario ``name``.

    Raises:
        ScenarioError: when no example has that name (the message lists them).
    """
    path = Path(str(resources.files(_EXAMPLES_PACKAGE) / "examples" / f"{name}.yaml"))
    if not path.is_file():
        raise ScenarioError(
            f"builtin:{name}",
            [
                ScenarioIssue(
                    "(document)",
                    f"there is no shipped scenario named {name!r}; use one of "
                    + ", ".join(builtin_scenarios()),
                )
            ],
        )
    return path
