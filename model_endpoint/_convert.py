"""From the kit's :class:`~harness_testkit.fake_harness.Script` to an endpoint script.

A real adapter implements the scripting extension (``set_script``) by serving the kit's
script from a :class:`ModelEndpoint`: every step of every turn becomes one reply, in
order; built-ins are called by their native names, host and MCP tools by the names the
runtime offers them under. What the runtime does with the calls (executing built-ins,
asking for approvals, waiting for host results) is the runtime's own behaviour.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from typing import Literal

from harness_testkit.scripting import (
    BuiltinCallAction,
    DelayAction,
    ErrorAction,
    FileMutationAction,
    HostToolCallAction,
    McpCallAction,
    RawAction,
    ReasoningAction,
    Script,
    ScriptStep,
    ScriptTurn,
    StepCondition,
    TextAction,
    WaitForUserMessageAction,
)
from harness_testkit.spec import HarnessUsageError, JSONValue

from ._script import (
    Block,
    EndpointScript,
    ErrorReply,
    MessageReply,
    PauseBlock,
    Reply,
    ReplyMatch,
    ReplyUsage,
    StopReason,
    StreamError,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMatch,
)

__all__ = ["ScriptConversionError", "from_kit_script", "servable_steps"]

#: The longest pause a served script holds (seconds): a wait without a timeout becomes it.
LONGEST_PAUSE = 600.0

#: Built-in input keys holding a path (``read``/``write``/``edit``; ``grep``/``glob``).
_PATH_KEYS = ("file_path", "path")

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end-turn",
    "tool-calls": "tool-use",
    "length": "max-tokens",
    "content-filter": "refusal",
}


class ScriptConversionError(HarnessUsageError):
    """The kit script uses something a model endpoint cannot serve (a file change, a raw
    part, a fault, ...); the message names the turn, step and action."""

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "ScriptConversionError"


def _default_mcp_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def _placeholders(text: str) -> str:
    # The kit writes `{{user_message}}` for the latest user message; the endpoint knows
    # it as the request's last user text.
    return text.replace("{{user_message}}", "{{prompt}}")


class _Converter:
    def __init__(
        self,
        tool_names: Mapping[str, str],
        host_tool_name: Callable[[str], str],
        mcp_tool_name: Callable[[str, str], str],
        workdir: str | None,
        time_scale: float,
        unsupported: Literal["error", "skip"],
        error_status: int,
        absolute_paths: bool = True,
    ) -> None:
        self.tool_names = tool_names
        self.host_tool_name = host_tool_name
        self.mcp_tool_name = mcp_tool_name
        self.workdir = workdir
        self.absolute_paths = absolute_paths
        self.time_scale = time_scale
        self.unsupported = unsupported
        self.error_status = error_status

    def refuse(self, where: str, what: str) -> None:
        if self.unsupported == "error":
            raise ScriptConversionError(
                f"{where}: {what} cannot be served by a model endpoint (a model only "
                "answers requests); remove it or convert with unsupported='skip'"
            )

    def fill(self, value: JSONValue) -> JSONValue:
        if isinstance(value, str):
            text = _placeholders(value)
            return text.replace("{{workdir}}", self.workdir) if self.workdir else text
        if isinstance(value, list):
            return [self.fill(item) for item in value]
        if isinstance(value, dict):
            return {key: self.fill(item) for key, item in value.items()}
        return value

    def text(self, text: str) -> str:
        filled = self.fill(text)
        assert isinstance(filled, str)
        return filled

    def call(
        self, name: str, input_: dict[str, JSONValue], call_id: str | None, builtin: bool = False
    ) -> ToolCallBlock:
        filled = {key: self.fill(value) for key, value in input_.items()}
        if builtin and self.workdir and self.absolute_paths:
            # The kit resolves a built-in's relative paths against the work dir; runtimes
            # whose file tools want absolute paths get them absolute.
            for key in _PATH_KEYS:
                value = filled.get(key)
                if isinstance(value, str) and value and not posixpath.isabs(value):
                    filled[key] = posixpath.join(self.workdir, value)
        return ToolCallBlock(name=name, input=filled, id=call_id)

    def step(
        self,
        step: ScriptStep,
        where: str,
        turn_match: ReplyMatch | None,
        model: str | None,
        chunk_size: int | None,
    ) -> Reply:
        content: list[Block] = []
        error: ErrorAction | None = None
        for position, action in enumerate(step.actions):
            at = f"{where} action {position} ({action.type})"
            if isinstance(action, TextAction):
                content.append(TextBlock(text=self.text(action.text)))
            elif isinstance(action, ReasoningAction):
                content.append(ThinkingBlock(thinking=self.text(action.text)))
            elif isinstance(action, BuiltinCallAction):
                name = self.tool_names.get(action.tool, action.tool)
                content.append(self.call(name, action.input, action.id, builtin=True))
            elif isinstance(action, HostToolCallAction):
                name = self.host_tool_name(action.tool)
                content.append(self.call(name, action.input, action.id))
            elif isinstance(action, McpCallAction):
                name = self.mcp_tool_name(action.server, action.tool)
                content.append(self.call(name, action.input, action.id))
            elif isinstance(action, DelayAction):
                content.append(PauseBlock(seconds=action.seconds * self.time_scale))
            elif isinstance(action, ErrorAction) and action.end_turn:
                error = action
                if position != len(step.actions) - 1:
                    self.refuse(at, "an error action followed by more actions")
                break
            else:
                self.refuse(at, f"a {action.type!r} action")
        if step.when is not None and step.when.denied is not None and self.unsupported == "error":
            # In skip mode the criterion is left out (the rest of the condition stays).
            raise ScriptConversionError(
                f"{where} condition: a `denied` criterion cannot be served by a model "
                "endpoint (a request shows a denial as an error result, like any other "
                "error); use isError, or convert with unsupported='skip' to leave it out"
            )
        match = [m for m in (turn_match, _condition(step.when)) if m is not None]
        usage = (
            None
            if step.usage is None
            else ReplyUsage(
                input_tokens=step.usage.input_tokens, output_tokens=step.usage.output_tokens
            )
        )
        stop = None if step.finish_reason is None else _STOP_REASONS.get(step.finish_reason)
        if error is not None:
            message = error.error if isinstance(error.error, str) else json.dumps(error.error)
            if not content:
                return ErrorReply(
                    match=match, status=self.error_status, message=message, until_new_prompt=True
                )
            failure = StreamError(message=message, status=self.error_status)
            return MessageReply(
                match=match,
                content=content,
                stream_error=failure,
                until_new_prompt=True,
                model=model,
                chunk_size=chunk_size,
            )
        return MessageReply(
            match=match,
            content=content,
            stop_reason=stop,
            usage=usage,
            model=model,
            chunk_size=chunk_size,
        )


def _condition(when: StepCondition | None) -> ReplyMatch | None:
    # A kit step whose condition does not hold is skipped: the next step answers.
    if when is None:
        return None
    tool_result = (
        None
        if when.tool_call_id is None
        else ToolResultMatch(
            tool_call_id=when.tool_call_id,
            is_error=when.is_error,
            content_matches=when.output_matches,
        )
    )
    return ReplyMatch(
        last_user_text=when.user_message_matches,
        tool_result=tool_result,
        negate=when.negate,
        on_mismatch="skip",
    )


def from_kit_script(
    script: Script,
    *,
    tool_names: Mapping[str, str] | None = None,
    host_tool_name: Callable[[str], str] | None = None,
    mcp_tool_name: Callable[[str, str], str] | None = None,
    workdir: str | None = None,
    time_scale: float = 1.0,
    unsupported: Literal["error", "skip"] = "error",
    error_status: int = 400,
    absolute_paths: bool = True,
) -> EndpointScript:
    """The endpoint script serving a kit :class:`~harness_testkit.fake_harness.Script`.

    Every step of every turn becomes one reply, in script order: ``text`` a text block,
    ``reasoning`` a thinking block, ``builtin``/``hostTool``/``mcp`` a tool call (the
    runtime executes it; a built-in's scripted ``result`` is not used), ``delay`` a pause
    (``seconds * time_scale``), an ``error`` action that ends the turn an HTTP error
    (``error_status``; after content: a stream error) that also answers the runtime's
    retries (``untilNewPrompt``). A step's ``when`` becomes a
    match that skips the reply when it does not hold (``userMessageMatches`` is matched
    against the request's last user text); a turn's ``promptMatches`` becomes a match on
    the last user text on each of its replies, so a turn whose prompt does not match is
    skipped. ``finishReason``, ``usage`` and a turn's ``modelId`` carry over, ``chunking``
    approximately (``chars``: its size; ``words``: six characters a word);
    ``whenExhausted`` becomes ``repeatFrom`` (``repeat-last``: the last turn's first reply, ``cycle``: 0, ``error``:
    none). Text and string inputs keep ``{{prompt}}`` and ``{{result:<id>}}`` (the endpoint
    fills them from the request); ``{{user_message}}`` becomes ``{{prompt}}`` and
    ``{{workdir}}`` is replaced when ``workdir`` is given.

    Args:
        script: The kit script.
        tool_names: Built-in key -> native tool name (``{"write": "Write"}``); keys not
            listed are sent as written (native-keyed built-ins such as ``TodoWrite``).
        host_tool_name: Host tool name -> the name the runtime offers it under (default:
            unchanged; an in-process MCP server would use ``mcp__<server>__<name>``).
        mcp_tool_name: (server, tool) -> offered name (default ``mcp__<server>__<tool>``).
        workdir: The session work dir: fills ``{{workdir}}`` and (with
            ``absolute_paths``) makes a built-in's relative ``file_path``/``path`` inputs
            absolute.
        time_scale: Factor applied to ``delay`` seconds.
        unsupported: ``error`` (default): raise :class:`ScriptConversionError` on what an
            endpoint cannot serve (``fileChange``, ``raw``, ``waitUserMessage``, an error
            that does not end the turn, faults, ``jsonOutput``); ``skip``: leave it out.
        error_status: HTTP status of scripted ``error`` actions (400 by default: the
            provider SDKs do not retry it; runtimes may, and get the error again).
        absolute_paths: Resolve built-ins' relative paths against ``workdir`` (default);
            false leaves them as scripted, for runtimes that resolve them against their
            own working directory.

    Returns:
        The endpoint script.

    Raises:
        ScriptConversionError: naming the turn, step and action that cannot be served.
    """
    converter = _Converter(
        tool_names=tool_names or {},
        host_tool_name=host_tool_name or (lambda name: name),
        mcp_tool_name=mcp_tool_name or _default_mcp_name,
        workdir=workdir,
        time_scale=time_scale,
        unsupported=unsupported,
        error_status=error_status,
        absolute_paths=absolute_paths,
    )
    if script.faults:
        converter.refuse("the script", "a fault")
    # Deltas: `chars` chunking keeps its size, `words` about six characters a word.
    chunk_size = {
        "chars": script.chunking.size,
        "words": script.chunking.max_words * 6,
        "whole": None,
    }[script.chunking.mode]
    replies: list[Reply] = []
    last_turn_start = 0
    for turn_index, turn in enumerate(script.turns):
        where = f"turn {turn_index}"
        if turn.faults:
            converter.refuse(where, "a fault")
        if turn.json_output is not None:
            converter.refuse(where, "jsonOutput")
        if turn.on_user_message:
            converter.refuse(where, "onUserMessage steps")
        turn_match = (
            None
            if turn.prompt_matches is None
            else ReplyMatch(last_user_text=turn.prompt_matches, on_mismatch="skip")
        )
        last_turn_start = len(replies)
        for step_index, step in enumerate(turn.steps):
            replies.append(
                converter.step(
                    step, f"{where} step {step_index}", turn_match, turn.model_id, chunk_size
                )
            )
    repeat_from = {
        "repeat-last": last_turn_start,
        "cycle": 0,
        "error": None,
    }[script.when_exhausted]
    if not replies:
        repeat_from = None
    elif repeat_from is not None:
        repeat_from = min(repeat_from, len(replies) - 1)
    return EndpointScript(model=script.model_id, replies=replies, repeat_from=repeat_from)


def servable_steps(turn: ScriptTurn) -> list[ScriptStep]:
    """A turn's steps as a model endpoint can serve them to a real runtime.

    ``raw`` parts and opaque file changes are events of the fake runtime itself, which no
    model reply can cause, so they are left out (a step left empty by that is dropped); a
    wait for a mid-turn user message is a model that keeps working, so it becomes a delay
    of its timeout (at most :data:`LONGEST_PAUSE`). A turn left without steps gets one
    empty step: the runtime still asks its model once. What a runtime then asks for
    depends on its own loop, which the adapter's conversion decides.
    """
    steps = []
    for step in turn.steps:
        actions = [
            DelayAction(
                seconds=LONGEST_PAUSE
                if action.timeout is None
                else min(action.timeout, LONGEST_PAUSE)
            )
            if isinstance(action, WaitForUserMessageAction)
            else action
            for action in step.actions
            if not isinstance(action, RawAction | FileMutationAction)
        ]
        if actions or not step.actions:
            steps.append(step.model_copy(update={"actions": actions}))
    return steps or [ScriptStep()]
