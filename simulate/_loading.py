"""Loading scenarios: reading a file within bounds, validating it, resolving its script.

:func:`load_scenario` reads and checks a file (a regular file of at most
:data:`MAX_SCENARIO_BYTES`, nested at most :data:`MAX_SCENARIO_DEPTH` deep, YAML 1.2 without
aliases); :func:`parse_scenario` checks a document given as text. Besides the shape
(the models of ``_scenario``), the script is checked against the profile and the host
actions against the tools, and the agent is built once dry, so every problem is reported
as a :class:`~._scenario.ScenarioError` naming the file, the path inside it, the line
when known and what is wrong, before anything runs. :class:`LoadedScenario` then builds
each session's fake runtime and agent.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias

from pydantic import ValidationError
from pydantic.alias_generators import to_camel, to_snake

from harness_testkit.fake_harness import (
    ACTION_KINDS,
    FakeHarness,
    HarnessProfile,
    HostToolCallAction,
    Script,
    generate_script,
    script_problems,
)
from harness_testkit.reference import HarnessAgent, IdGenerator, Tool
from harness_testkit.spec import (
    HarnessError,
    NoSuchToolError,
    SandboxProvider,
    YamlError,
    YamlLocator,
    find_non_json,
    load_yaml,
)

from ._scenario import (
    ApproveAction,
    DenyAction,
    GeneratedScript,
    Scenario,
    ScenarioError,
    ScenarioIssue,
    ToolResultAction,
    format_location,
    selected_tools,
)

__all__ = [
    "MAX_SCENARIO_BYTES",
    "MAX_SCENARIO_DEPTH",
    "SIMULATION_EPOCH",
    "LoadedScenario",
    "StopCondition",
    "builtin_scenario_path",
    "builtin_scenarios",
    "load_scenario",
    "parse_scenario",
]

#: Largest scenario file read (bytes) and deepest nesting accepted in one.
MAX_SCENARIO_BYTES = 8 * 1024 * 1024
MAX_SCENARIO_DEPTH = 64

#: ``stop_when`` predicate of the agent: receives ``{"steps": [...]}``.
StopCondition: TypeAlias = Callable[[Mapping[str, Any]], bool]

#: The agent's clock in simulations: fixed, so step timestamps never differ between runs.
SIMULATION_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

_EXAMPLES_PACKAGE = "harness_testkit.simulate"


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
            f"{format_location(item['loc']) or '(top level)'}: {item['msg']}"
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
    """Built-ins the profile lacks, host tools the agent lacks and dangling
    ``when.toolCallId``, with their lines."""
    problems = [
        *script_problems(script, scenario.harness.resolved_profile()),
        *_undeclared_host_tools(script, scenario),
    ]
    for path, problem in sorted(problems, key=lambda item: _path_order(item[0])):
        dotted = format_location(path)
        if file is None:
            issues.append(ScenarioIssue(f"harness.script.{dotted}", problem, line_of(path)))
        else:
            script_file, line = file
            issues.append(
                ScenarioIssue(
                    "harness.script", f"{script_file}:{line_of(path)}: {dotted}: {problem}", line
                )
            )


def _undeclared_host_tools(
    script: Script, scenario: Scenario
) -> list[tuple[tuple[str | int, ...], str]]:
    """Host tool calls of ``script`` naming no tool under ``agent.tools``.

    The agent would answer each such call ``execution-denied`` (an unknown tool is
    inactive), so a misspelt name would quietly turn every session into a denial.
    """
    declared = scenario.agent.tools
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for t, turn in enumerate(script.turns):
        groups = (("steps", turn.steps), ("onUserMessage", turn.on_user_message))
        for key, steps in groups:
            for s, step in enumerate(steps):
                for a, action in enumerate(step.actions):
                    if isinstance(action, HostToolCallAction) and action.tool not in declared:
                        problems.append(
                            (
                                ("turns", t, key, s, "actions", a),
                                _undeclared(action.tool, declared),
                            )
                        )
    return problems


def _undeclared(name: str, declared: Mapping[str, object]) -> str:
    return (
        f"host tool {name!r} is not declared under agent.tools (declared: "
        f"{', '.join(sorted(declared)) or 'none'}); declare it there, and list it in "
        "agent.inactiveTools to simulate a call to an inactive tool"
    )


def _path_order(path: Sequence[str | int]) -> tuple[tuple[int, int | str], ...]:
    # Problems in document order: indices numerically, keys after indices.
    return tuple((0, part) if isinstance(part, int) else (1, part) for part in path)


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
    source = scenario.harness.script
    if isinstance(source, GeneratedScript) and source.generate.host_tools is not None:
        for position, name in enumerate(source.generate.host_tools):
            if name not in agent.tools:
                where = ("harness", "script", "generate", "hostTools", position)
                issues.append(
                    ScenarioIssue(
                        f"harness.script.generate.hostTools[{position}]",
                        _undeclared(name, agent.tools),
                        locator.line(where),
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


def _issues(error: ValidationError, locator: YamlLocator) -> list[ScenarioIssue]:
    issues = []
    for item in error.errors():
        loc = [part for part in item["loc"] if not (isinstance(part, str) and part.startswith("@"))]
        message = item["msg"]
        if message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        issues.append(
            ScenarioIssue(format_location(item["loc"]) or "(top level)", message, locator.line(loc))
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
