"""The Python twin of ``oracle/driver.mjs``: runs a scenario file on the reference agent.

It reads the same language-neutral scenario JSON, drives ``harness_testkit.reference``
(public names only) with a scripted harness-v1 adapter and an in-memory sandbox that
behave like the driver's JavaScript ones, and prints the same normalised JSON lines, so
the lines can be compared with the official outputs committed in ``oracle/expected``.

One idea: a section-by-section mirror of ``oracle/driver.mjs`` (normalisation, in-memory
sandbox, scripted adapter, agent settings, results, steps), kept in one file as the
driver is, so the two read side by side and a divergence shows as two sections that differ.

Run one scenario by hand: ``python -m tests.oracle.twin text-basic``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel

from harness_testkit.reference import (
    AgentSession,
    HarnessAgent,
    StreamResult,
    Tool,
    ToolExecutionOptions,
    step_count_is,
    tool,
)
from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    PromptTurnOptions,
    ResumeSessionState,
    RunResult,
    StartOptions,
)

ORACLE = Path(__file__).resolve().parents[2] / "oracle"
SCENARIOS = ORACLE / "scenarios"
EXPECTED = ORACLE / "expected"
STEP_TIMEOUT = 5.0
DEBUG = os.environ.get("ORACLE_TWIN_DEBUG") == "1"

# ------------------------------------------------------------------------------------
# Normalisation (the same rules as the driver)
# ------------------------------------------------------------------------------------

_ID_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{16}(?![A-Za-z0-9])")
_TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
_DETAIL_MARK = "Error message: "


def error_view(error: BaseException) -> dict[str, Any]:
    """``{name, message}`` of an error, the validator detail cut off."""
    message = str(error)
    cut = message.find(_DETAIL_MARK)
    if cut >= 0:
        message = message[: cut + len(_DETAIL_MARK)] + "<detail>"
    name = getattr(type(error), "name", None)
    return {"name": name if isinstance(name, str) else "Error", "message": message}


def plain(value: Any) -> Any:
    """JSON-ready value: models by wire alias, errors as ``{error: {name, message}}``."""
    if isinstance(value, BaseException):
        return {"error": error_view(value)}
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        for field, item in vars(value).items():
            # Error objects inside parts print like the driver's: {error: {name, message}}.
            if isinstance(item, BaseException):
                dumped[field] = plain(item)
        return plain(dumped)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in sorted(value):
            item = value[key]
            if item is None and key not in _KEEP_NULL:
                continue
            out[key] = plain(item)
        return out
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: Keys whose ``null`` the official JSON keeps (JSON values the agent passes through).
_KEEP_NULL = frozenset({"output", "result", "value", "input"})


#: Names of exactly 16 alphanumerics that scenario values carry (the driver's ``WORDS``);
#: every other 16-alphanumeric token is a generated id. A pattern such as "camelCase
#: word" also matched about one random id in a thousand, and the sides then disagreed.
_WORDS = frozenset(
    {
        "askUserQuestions",
        "cacheWriteTokens",
        "continueGenerate",
        "providerExecuted",
        "providerMetadata",
        "responseMessages",
        "submitToolResult",
    }
)


class Normaliser:
    """Numbers generated ids in string values by first appearance; replaces timestamps.

    An id is 16 alphanumerics other than the known names in ``_WORDS``; keys are never
    touched.
    """

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def text(self, value: str) -> str:
        def number(match: re.Match[str]) -> str:
            token = match.group(0)
            if token in _WORDS:
                return token
            if token not in self.ids:
                self.ids[token] = f"<id{len(self.ids) + 1}>"
            return self.ids[token]

        return _ID_RE.sub(number, _TS_RE.sub("<ts>", value))

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.walk(item) for item in value]
        if isinstance(value, dict):
            return {key: self.walk(item) for key, item in value.items()}
        return value

    def line(self, obj: Any) -> str:
        return json.dumps(
            self.walk(plain(obj)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )


# ------------------------------------------------------------------------------------
# In-memory sandbox
# ------------------------------------------------------------------------------------


class MemorySandbox:
    """A network sandbox session kept in memory; every command succeeds."""

    def __init__(self, log: list[dict[str, Any]], sandbox_id: str) -> None:
        self._log = log
        self.id = sandbox_id
        self.description = "in-memory oracle sandbox"
        self.default_working_directory = "/sandbox"
        self.ports: list[int] = []
        self._files: dict[str, str] = {}

    async def run(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        abort: Any = None,
    ) -> RunResult:
        self._log.append({"call": "sandbox.run", "command": command})
        return RunResult(exit_code=0, stdout="", stderr="")

    async def spawn(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("spawn is not available in the oracle sandbox")

    async def read_text_file(self, path: str, **_: Any) -> str | None:
        return self._files.get(path)

    async def read_binary_file(self, path: str, **_: Any) -> bytes | None:
        text = self._files.get(path)
        return None if text is None else text.encode()

    async def write_text_file(self, path: str, content: str, **_: Any) -> None:
        self._files[path] = content

    async def write_binary_file(self, path: str, content: bytes, **_: Any) -> None:
        self._files[path] = content.decode()

    async def get_port_endpoint(self, port: int, protocol: str | None = None) -> Any:
        raise RuntimeError("no ports")

    async def stop(self) -> None:
        self._log.append({"call": "sandbox.stop"})

    async def destroy(self) -> None:
        self._log.append({"call": "sandbox.destroy"})

    def restricted(self) -> MemorySandbox:
        return self


class MemoryProvider:
    """Creates and resumes :class:`MemorySandbox` sessions."""

    provider_id = "oracle-memory"

    def __init__(self, log: list[dict[str, Any]]) -> None:
        self._log = log

    async def create_session(
        self,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: Callable[[Any], Awaitable[None]] | None = None,
    ) -> MemorySandbox:
        session = MemorySandbox(self._log, f"sandbox-{session_id}")
        if on_first_create is not None:
            await on_first_create(session)
        return session

    async def resume_session(self, session_id: str) -> MemorySandbox:
        return MemorySandbox(self._log, f"sandbox-{session_id}")


# ------------------------------------------------------------------------------------
# Scripted adapter
# ------------------------------------------------------------------------------------


class Error(Exception):
    """A scripted failure (adapter ``fail``, tool ``throws``), as the driver's ``new Error``.

    The agent renders a failed host tool as ``<ExceptionClassName>: <message>``, so the
    class name matches JavaScript's ``Error``.
    """

    name = "Error"


ScriptError = Error


class SyntaxError_(Exception):
    """JavaScript's ``SyntaxError`` (``JSON.parse(undefined)`` in the driver)."""

    name = "SyntaxError"


class _Turn:
    def __init__(self, steps: list[Any], options: ContinueTurnOptions) -> None:
        self.steps = steps
        self.cursor = 0
        self.finished = False
        self.suspended = False
        self.emit = options.emit
        self.abort = options.abort
        self.submitted: set[str] = set()
        self.changed = anyio.Event()

    def release(self, key: str) -> None:
        self.submitted.add(key)
        self.poke()

    def poke(self) -> None:
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def is_suspended(self) -> bool:
        """Whether ``suspend_turn`` stopped the turn; a call, so each check after a wait re-reads it."""
        return self.suspended


class _Control:
    def __init__(self, harness: ScriptedHarness, turn: _Turn) -> None:
        self._harness = harness
        self._turn = turn
        spec = harness.spec
        if spec.get("approvalResponses", True) is not False:
            self.submit_tool_approval = self._submit_tool_approval
        if spec.get("steering") is True:
            self.submit_user_message = self._submit_user_message

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        # The Python protocol spells an absent isError as False.
        entry: dict[str, Any] = {
            "call": "submitToolResult",
            "toolCallId": tool_call_id,
            "output": output,
            "isError": True if is_error else None,
            "toolResult": tool_result,
        }
        self._harness.log.append(entry)
        self._turn.release(tool_call_id)

    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        self._harness.log.append(
            {
                "call": "submitToolApproval",
                "approvalId": approval_id,
                "approved": approved,
                "reason": reason,
            }
        )
        self._turn.release(approval_id)

    async def _submit_user_message(self, text: str) -> None:
        self._harness.log.append({"call": "submitUserMessage", "text": text})

    async def done(self) -> None:
        turn = self._turn
        await anyio.lowlevel.checkpoint()
        while turn.cursor < len(turn.steps) and not turn.is_suspended():
            step = turn.steps[turn.cursor]
            key = step.get("waitResult", step.get("waitApproval"))
            if key is not None:
                while key not in turn.submitted and not turn.is_suspended():
                    await turn.changed.wait()
                if turn.is_suspended():
                    return
                turn.cursor += 1
                continue
            if step.get("hang"):
                while not turn.is_suspended():
                    if turn.abort is not None and turn.abort.is_set():
                        raise ScriptError("aborted by caller")
                    with anyio.move_on_after(0.01):
                        await turn.changed.wait()
                if turn.is_suspended():
                    return
                turn.cursor += 1
                continue
            turn.cursor += 1
            if "fail" in step:
                raise ScriptError(step["fail"])
            if "failCapability" in step:
                raise HarnessCapabilityUnsupportedError(
                    step["failCapability"], harness_id=self._harness.harness_id
                )
            turn.emit(step["emit"])
            await anyio.lowlevel.checkpoint()
        turn.finished = True


def _turn_options(options: ContinueTurnOptions) -> dict[str, Any]:
    return {
        "model": options.model,
        "skills": list(options.skills),
        "instructions": options.instructions,
        "tools": list(options.tools),
        "responseFormat": options.response_format,
    }


class ScriptedSession:
    """The adapter session of :class:`ScriptedHarness`."""

    def __init__(self, harness: ScriptedHarness, options: StartOptions) -> None:
        self._harness = harness
        self.session_id = options.session_id
        self.is_resume = options.resume_from is not None or options.continue_from is not None
        self._current: _Turn | None = None
        self._ended = False

    def _check(self, name: str) -> None:
        if self._ended:
            raise ScriptError(f"{name} after the session ended")

    async def do_prompt_turn(self, options: PromptTurnOptions) -> _Control:
        self._check("doPromptTurn")
        self._harness.log.append(
            {"call": "doPromptTurn", "prompt": options.prompt, **_turn_options(options)}
        )
        if self._harness.spec.get("promptError") is not None:
            raise ScriptError(self._harness.spec["promptError"])
        steps = self._harness.turns.pop(0) if self._harness.turns else []
        self._current = _Turn(steps, options)
        return _Control(self._harness, self._current)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> _Control:
        self._check("doContinueTurn")
        self._harness.log.append({"call": "doContinueTurn", **_turn_options(options)})
        current = self._current
        if current is None or current.finished or current.suspended:
            steps = self._harness.turns.pop(0) if self._harness.turns else []
            self._current = _Turn(steps, options)
        else:
            resumed = _Turn(current.steps, options)
            resumed.cursor = current.cursor
            self._current = resumed
        return _Control(self._harness, self._current)

    async def do_suspend_turn(self) -> ContinueTurnState:
        self._check("doSuspendTurn")
        self._harness.log.append({"call": "doSuspendTurn"})
        if self._current is not None:
            self._current.suspended = True
            self._current.poke()
        return ContinueTurnState(harness_id=self._harness.harness_id, data=self._harness.data)

    async def do_detach(self) -> ResumeSessionState:
        self._check("doDetach")
        self._harness.log.append({"call": "doDetach"})
        self._ended = True
        return ResumeSessionState(harness_id=self._harness.harness_id, data=self._harness.data)

    async def do_stop(self) -> ResumeSessionState:
        self._check("doStop")
        self._harness.log.append({"call": "doStop"})
        self._ended = True
        return ResumeSessionState(harness_id=self._harness.harness_id, data=self._harness.data)

    async def do_destroy(self) -> None:
        self._check("doDestroy")
        self._harness.log.append({"call": "doDestroy"})
        self._ended = True

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        self._check("doCompact")
        self._harness.log.append({"call": "doCompact", "customInstructions": custom_instructions})
        if self._harness.spec.get("compaction") is False:
            raise HarnessCapabilityUnsupportedError(
                "no manual compaction", harness_id=self._harness.harness_id
            )


class ScriptedHarness:
    """A harness-v1 adapter whose turns are the scenario's ``turns``."""

    specification_version = "harness-v1"

    def __init__(
        self, spec: Mapping[str, Any], turns: Sequence[Sequence[Any]], log: list[dict[str, Any]]
    ) -> None:
        self.spec = dict(spec)
        self.log = log
        self.harness_id: str = self.spec.get("harnessId", "mock")
        self.builtin_tools = {
            name: BuiltinTool(
                description=t.get("description"),
                input_schema=t.get("inputSchema", {"type": "object"}),
            )
            for name, t in self.spec.get("builtinTools", {}).items()
        }
        self.supports_builtin_tool_approvals = self.spec.get("supportsBuiltinToolApprovals")
        self.supports_builtin_tool_filtering = self.spec.get("supportsBuiltinToolFiltering")
        self.data = self.spec.get("stateData", {"cursor": 0})
        self.turns = [list(turn) for turn in turns]

    async def do_start(self, options: StartOptions) -> ScriptedSession:
        self.log.append(
            {
                "call": "doStart",
                "sessionId": options.session_id,
                "sessionWorkDir": options.session_work_dir,
                "permissionMode": options.permission_mode,
                "builtinToolFiltering": options.builtin_tool_filtering,
                "headers": dict(options.headers) if options.headers else None,
                "resumeFrom": options.resume_from,
                "continueFrom": options.continue_from,
            }
        )
        if self.spec.get("startError") is not None:
            raise ScriptError(self.spec["startError"])
        return ScriptedSession(self, options)


# ------------------------------------------------------------------------------------
# Agent settings
# ------------------------------------------------------------------------------------


def _host_tools(specs: Mapping[str, Any], log: list[dict[str, Any]]) -> dict[str, Tool]:
    out: dict[str, Tool] = {}
    for name, spec in specs.items():
        behaviour = spec.get("execute")
        execute = None if behaviour is None else _executor(name, behaviour, log)
        out[name] = tool(
            description=spec.get("description"),
            input_schema=spec.get("inputSchema", {"type": "object"}),
            execute=execute,
            context_schema=spec.get("contextSchema"),
        )
    return out


def _executor(
    name: str, behaviour: Mapping[str, Any], log: list[dict[str, Any]]
) -> Callable[[Any, ToolExecutionOptions], Awaitable[Any]]:
    async def execute(input: Any, options: ToolExecutionOptions) -> Any:
        log.append(
            {
                "call": "execute",
                "tool": name,
                "toolCallId": options.tool_call_id,
                "input": input,
                "context": options.context,
            }
        )
        await anyio.lowlevel.checkpoint()
        if behaviour.get("throws") is not None:
            raise ScriptError(behaviour["throws"])
        if behaviour.get("returnsInput"):
            return input
        if behaviour.get("returnsContext"):
            return options.context
        return behaviour.get("returns")

    return execute


def _stop_when(spec: Any) -> list[Any]:
    conditions: list[Any] = []
    for item in spec if isinstance(spec, list) else [spec]:
        if "stepCountIs" in item:
            conditions.append(step_count_is(item["stepCountIs"]))
        elif "hasToolCall" in item:
            wanted = item["hasToolCall"]

            def called(context: Mapping[str, Any], wanted: str = wanted) -> bool:
                steps = context["steps"]
                return bool(steps) and any(c.tool_name == wanted for c in steps[-1].tool_calls)

            conditions.append(called)
        else:
            raise ValueError(f"unknown stop condition {item!r}")
    return conditions


def _prepare_call(
    overrides: Mapping[str, Any], log: list[dict[str, Any]]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        log.append(
            {
                "call": "prepareCall",
                "model": call.get("model"),
                "instructions": call.get("instructions"),
                "skills": call.get("skills"),
                "tools": sorted(call.get("tools") or {}),
                "toolsContext": call.get("tools_context"),
                "prompt": call.get("prompt"),
                "messages": call.get("messages"),
            }
        )
        out = dict(call)
        for key, value in overrides.items():
            if key == "keepTools":
                out["tools"] = {n: t for n, t in call["tools"].items() if n in value}
            elif key == "toolsContext":
                out["tools_context"] = value
            else:
                out[key] = value
        return out

    return prepare


_SETTINGS = {
    "id": "id",
    "model": "model",
    "instructions": "instructions",
    "skills": "skills",
    "headers": "headers",
    "permissionMode": "permission_mode",
    "toolApproval": "tool_approval",
    "activeTools": "active_tools",
    "inactiveTools": "inactive_tools",
    "toolsContext": "tools_context",
}


def _output(spec: Mapping[str, Any]) -> dict[str, Any]:
    # The scenario names the AI SDK's Output.text/json/object; Python takes the
    # responseFormat each of them sends.
    if spec["type"] == "object":
        fields = {key: spec[key] for key in ("schema", "name", "description") if key in spec}
        return {"type": "json", **fields}
    return {"type": spec["type"]}


def build_agent(
    scenario: Mapping[str, Any], harness: ScriptedHarness, log: list[dict[str, Any]]
) -> HarnessAgent:
    spec = scenario.get("agent", {})
    kwargs: dict[str, Any] = {"harness": harness, "sandbox": MemoryProvider(log)}
    if "tools" in spec:
        kwargs["tools"] = _host_tools(spec["tools"], log)
    for key, name in _SETTINGS.items():
        if key in spec:
            kwargs[name] = spec[key]
    if "stopWhen" in spec:
        kwargs["stop_when"] = _stop_when(spec["stopWhen"])
    if "output" in spec:
        kwargs["output"] = _output(spec["output"])
    if "prepareCall" in spec:
        kwargs["prepare_call"] = _prepare_call(spec["prepareCall"], log)
    kwargs["error_log"] = None
    return HarnessAgent(**kwargs)


# ------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------

_STEP_FIELDS = {
    "content": "content",
    "finishReason": "finish_reason",
    "rawFinishReason": "raw_finish_reason",
    "usage": "usage",
    "providerMetadata": "provider_metadata",
    "warnings": "warnings",
}

_RESULT_FIELDS = {
    "text": "text",
    "content": "content",
    "reasoningText": "reasoning_text",
    "toolCalls": "tool_calls",
    "toolResults": "tool_results",
    "finishReason": "finish_reason",
    "rawFinishReason": "raw_finish_reason",
    "usage": "usage",
    "totalUsage": "total_usage",
    "providerMetadata": "provider_metadata",
    "warnings": "warnings",
    "responseMessages": "response_messages",
    "request": "request",
    "response": "response",
    "steps": "steps",
    "output": "output",
}


def _step_view(step: Any) -> dict[str, Any]:
    out = {key: getattr(step, name, None) for key, name in _STEP_FIELDS.items()}
    response = getattr(step, "response", None)
    response = plain(response) if response is not None else {}
    if isinstance(response, Mapping) and "response" in response:
        response = response["response"]
    out["response"] = {
        "id": response.get("id"),
        "modelId": response.get("modelId"),
        "timestamp": response.get("timestamp"),
    }
    return out


async def _field(result: Any, name: str) -> Any:
    value = getattr(result, name)
    if isinstance(value, Awaitable):
        with anyio.fail_after(STEP_TIMEOUT):
            value = await value
    return value


async def result_view(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, name in _RESULT_FIELDS.items():
        try:
            value = await _field(result, name)
        except Exception as error:  # the field's own error is part of the output
            out[key] = {"error": error_view(error)}
            continue
        if key == "steps":
            value = [_step_view(step) for step in value]
        if value is not None:  # None is how Python spells an undefined field
            out[key] = value
    return out


# ------------------------------------------------------------------------------------
# Steps
# ------------------------------------------------------------------------------------


async def run_scenario(scenario: Mapping[str, Any]) -> list[str]:
    """Run one scenario; return its normalised lines."""
    log: list[dict[str, Any]] = []
    lines: list[str] = []
    norm = Normaliser()

    def emit(obj: Any) -> None:
        lines.append(norm.line(obj))

    harness = ScriptedHarness(scenario.get("harness", {}), scenario.get("turns", []), log)
    agent: HarnessAgent | None = None
    sessions: list[AgentSession] = []
    states: list[Any] = []
    pending: list[StreamResult] = []
    # The last approval id a consumer saw: continuations write "<from-request>" for it.
    seen = _SeenApprovals()

    def session_of(step: Mapping[str, Any]) -> AgentSession:
        index: int = step.get("session", len(sessions) - 1)
        return sessions[index]

    def state_of(ref: Any) -> Any:
        # A missing state is JavaScript's undefined, as in the driver.
        if isinstance(ref, int):
            return states[ref] if -len(states) <= ref < len(states) else None
        if ref == "last":
            return states[-1] if states else None
        return ref

    for step in scenario["steps"]:
        op = step["op"]
        try:
            with anyio.fail_after(STEP_TIMEOUT):
                if op == "construct":
                    agent = build_agent(scenario, harness, log)
                    emit(
                        {
                            "op": op,
                            "ok": True,
                            "id": getattr(agent, "id", None),
                            "tools": sorted(agent.tools),
                        }
                    )
                elif op == "createSession":
                    assert agent is not None
                    kwargs: dict[str, Any] = {}
                    if "sessionId" in step:
                        kwargs["session_id"] = step["sessionId"]
                    if "resumeFrom" in step:
                        kwargs["resume_from"] = _wire_state(state_of(step["resumeFrom"]))
                    if "continueFrom" in step:
                        kwargs["continue_from"] = _wire_state(state_of(step["continueFrom"]))
                    if "toolsContext" in step:
                        kwargs["tools_context"] = step["toolsContext"]
                    session = await agent.create_session(**kwargs)
                    sessions.append(session)
                    emit(
                        {
                            "op": op,
                            "ok": True,
                            "sessionId": session.session_id,
                            "isResume": getattr(session, "is_resume", None),
                            "hasUnfinishedTurn": session.has_unfinished_turn(),
                        }
                    )
                elif op in ("stream", "generate", "continue"):
                    assert agent is not None
                    await _run_call(agent, session_of(step), step, emit, pending, seen)
                elif op == "readPending":
                    result = pending.pop(0)
                    parts = [seen(part) async for part in result.full_stream]
                    emit({"op": op, "parts": parts})
                    emit({"op": "result", "result": await result_view(result)})
                elif op == "suspend":
                    state = await session_of(step).suspend_turn()
                    states.append(state)
                    emit({"op": op, "state": state})
                elif op in ("detach", "stop"):
                    session = session_of(step)
                    resume = await (session.detach() if op == "detach" else session.stop())
                    states.append(resume)
                    emit({"op": op, "state": resume})
                elif op == "destroy":
                    await session_of(step).destroy()
                    emit({"op": op, "ok": True})
                elif op == "compact":
                    await session_of(step).compact(step.get("customInstructions"))
                    emit({"op": op, "ok": True})
                elif op == "roundTripState":
                    state = state_of(step.get("state", "last"))
                    if state is None:
                        raise SyntaxError_('"undefined" is not valid JSON')
                    states.append(json.loads(json.dumps(plain(state))))
                    emit({"op": op, "ok": True})
                else:
                    raise ValueError(f"oracle twin: unknown step op {op}")
        except TimeoutError:
            # The driver's own words when an awaited step does not settle in time.
            emit({"op": op, "error": {"name": "Error", "message": "oracle: step timed out"}})
        except Exception as error:  # the step's error is part of the output
            if DEBUG:
                traceback.print_exc()
            emit({"op": op, "error": error_view(error)})
        if step.get("waitLog") is not None and not await _wait_log(log, step["waitLog"]):
            emit({"op": "waitLog", "error": {"name": "Error", "message": "oracle: step timed out"}})
        await _settle(log)
        if log:
            emit({"op": "adapter", "calls": list(log)})
            log.clear()
    # A caller releases its sessions; ending them is not part of the compared lines.
    for session in sessions:
        with contextlib.suppress(Exception), anyio.fail_after(STEP_TIMEOUT):
            await session.destroy()
    return lines


class _SeenApprovals:
    """Remembers the last approval id a consumer saw, as the driver does."""

    def __init__(self) -> None:
        self.last: str | None = None

    def __call__(self, part: Any) -> Any:
        if getattr(part, "type", None) == "tool-approval-request":
            self.last = part.approval_id
        return part

    def resolve(self, continuations: list[dict[str, Any]] | None) -> Any:
        if continuations is None:
            return None
        return [
            {**c, "approvalId": self.last} if c.get("approvalId") == "<from-request>" else c
            for c in continuations
        ]


async def _settle(log: list[dict[str, Any]]) -> None:
    """Let the calls an op set off reach the log before it is printed.

    The driver waits 10 ms. A machine under load (a parallel test run) can take longer
    for a call made from a worker thread or a detached task, so wait until the log has
    not changed for five 10 ms rounds (bounded by STEP_TIMEOUT): more waiting never adds
    a call the official driver saw later, since every scenario's calls follow its ops.
    """
    quiet = 0
    with anyio.move_on_after(STEP_TIMEOUT):
        while quiet < 5:
            seen = len(log)
            await anyio.sleep(0.01)
            quiet = quiet + 1 if len(log) == seen else 0


async def _wait_log(log: list[dict[str, Any]], call: str) -> bool:
    """Wait until the adapter log holds ``call`` (a step's ``waitLog``); False on timeout.

    Polls like the driver does (the log is a plain list both sides fill).
    """
    with anyio.move_on_after(STEP_TIMEOUT):
        while not any(entry.get("call") == call for entry in log):  # noqa: ASYNC110
            await anyio.sleep(0.005)
    return any(entry.get("call") == call for entry in log)


def _wire_state(state: Any) -> Any:
    return plain(state) if isinstance(state, BaseModel) else state


async def _run_call(
    agent: HarnessAgent,
    session: AgentSession,
    step: Mapping[str, Any],
    emit: Callable[[Any], None],
    pending: list[StreamResult],
    seen: _SeenApprovals,
) -> None:
    op = step["op"]
    mode = step.get("mode", "generate" if op == "generate" else "stream")
    abort = anyio.Event()
    call: dict[str, Any] = {"session": session}
    if step.get("abortBefore"):
        abort.set()
    if step.get("abortBefore") or step.get("abortAfter") is not None:
        call["abort"] = abort
    if op == "continue":
        call["tool_result_continuations"] = step.get("toolResultContinuations")
        call["tool_approval_continuations"] = seen.resolve(step.get("toolApprovalContinuations"))
    else:
        if "prompt" in step:
            call["prompt"] = step["prompt"]
        if "messages" in step:
            call["messages"] = step["messages"]
    if mode == "generate":
        if op == "continue":
            generated = await agent.continue_generate(**call)
        else:
            generated = await agent.generate(**call)
        emit({"op": op, "mode": mode, "result": await result_view(generated)})
        return
    if op == "continue":
        result = await agent.continue_stream(**call)
    else:
        result = await agent.stream(**call)
    if step.get("read") is False:
        pending.append(result)
        emit({"op": op, "mode": mode, "read": False})
        return
    parts: list[Any] = []
    async for part in result.full_stream:
        parts.append(seen(part))
        if step.get("abortAfter") is not None and len(parts) == step["abortAfter"]:
            abort.set()
    emit({"op": op, "mode": mode, "parts": parts})
    if step.get("partialOutput") is True:
        values = [value async for value in result.partial_output_stream]
        emit({"op": "partialOutput", "values": values})
    if step.get("result", True) is not False:
        emit({"op": "result", "result": await result_view(result)})


# ------------------------------------------------------------------------------------


def scenario_names() -> list[str]:
    """Names of the scenario files, sorted."""
    return sorted(path.stem for path in SCENARIOS.glob("*.json"))


def load_scenario(name: str) -> dict[str, Any]:
    """The scenario file ``name`` as a dict."""
    data: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def twin_lines(name: str, backend: str = "asyncio") -> list[str]:
    """Run scenario ``name`` on the reference agent; return its lines."""
    scenario = load_scenario(name)

    async def main() -> list[str]:
        return await run_scenario(scenario)

    return anyio.run(main, backend=backend)


def main(argv: Sequence[str]) -> int:
    names = list(argv) or scenario_names()
    for name in names:
        sys.stdout.write(f"# {name}\n")
        for line in twin_lines(name):
            sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
