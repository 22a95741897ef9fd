"""The turn engine: a deterministic generator from a script turn to harness stream parts.

The engine does no I/O. It yields requests (emit a part, execute in the sandbox, await a
host submission, poll for user messages or compaction requests, sleep, log an
observation) and receives their answers; the driver (``_turn_driver.py``) performs them live or
answers them from the turn's journal when re-deriving a continued turn. Given the same
script, seed, settings and answers, it yields the same requests, which is what makes
suspension and continuation exact.

Order inside a step: content actions in script order (text, reasoning, tool calls, raw,
file changes, delays), then the step's tool calls are resolved in call order (execution
or host wait, then ``tool-result``), then ``finish-step``. A call that needs an approval
is not announced with the content: its ``tool-call`` comes right before its
``tool-approval-request``, when the runtime is about to run it (so a request never
refers to a call the agent saw in an earlier slice).
Between steps the engine takes mid-turn user messages and manual compaction requests,
evaluates the next step's condition and compacts automatically when over budget.
"""

from __future__ import annotations

import json
import random
import re
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio
import jsonschema

from harness_testkit.common import pattern_search
from harness_testkit.scripting import (
    ApprovalRequested,
    BuiltinCallAction,
    Chunking,
    CompactionPerformed,
    DelayAction,
    ErrorAction,
    FileMutationAction,
    HostToolCallAction,
    McpCallAction,
    ObservationEntry,
    RawAction,
    ReasoningAction,
    ScriptedResult,
    ScriptStep,
    StepCondition,
    TextAction,
    ToolExecuted,
    WaitForUserMessageAction,
    WorkspaceMutated,
)
from harness_testkit.spec import (
    ErrorPart,
    FileChangePart,
    FinishPart,
    FinishReason,
    FinishStepPart,
    InputTokens,
    JSONValue,
    OutputTokens,
    RawPart,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    StreamStartPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputDeltaPart,
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
    UnifiedFinishReason,
    Usage,
    is_builtin_tool_included,
    is_execution_denied,
    parse_stream_part,
    requires_approval,
)

from ._content import chunk_text, instance_of, mcp_tool_name, output_text
from ._requests import (
    AwaitRequest,
    EmitRequest,
    ExecuteRequest,
    NoteRequest,
    PollRequest,
    Request,
    SleepRequest,
    TurnContext,
    TurnEnd,
)
from ._state import Message, compact_conversation, estimate_tokens
from ._workspace import EXECUTABLE_BUILTINS, Outcome

__all__ = ["TurnEngine"]


_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)(?::([^}]*))?\s*\}\}")


Gate: TypeAlias = Literal["permission-mode", "filtering"]


@dataclass
class _Call:
    action: BuiltinCallAction | HostToolCallAction | McpCallAction
    call_id: str
    tool_name: str
    input: dict[str, JSONValue]
    #: Why the call needs an approval (``None``: it does not).
    gate: Gate | None = None
    #: ``stepToolCallCount`` to put on the ``tool-call`` part.
    count: int | None = None
    #: The ``tool-call`` part was emitted (gated calls are announced at their approval).
    announced: bool = False


@dataclass
class _TurnProgress:
    #: Call id -> (output, failed): ``failed`` is true for errors and denials.
    outputs: dict[str, tuple[JSONValue, bool]] = field(default_factory=dict)
    #: Ids of the calls that were denied (see ``StepCondition``).
    denied: set[str] = field(default_factory=set)
    user_messages: list[str] = field(default_factory=list)
    input_total: int = 0
    output_total: int = 0
    last_reason: UnifiedFinishReason | None = None
    steps_run: int = 0


Gen: TypeAlias = Generator[Request, Any, Any]


class TurnEngine:
    """Runs one script turn; iterate :meth:`run` and answer its requests."""

    def __init__(self, ctx: TurnContext) -> None:
        self.ctx = ctx
        self.rng = random.Random(f"fake-harness/{ctx.seed}/{ctx.turn_index}")
        self.progress = _TurnProgress()
        self.profile = ctx.profile

    # -- helpers ---------------------------------------------------------------------

    def _render(self, text: str) -> str:
        settings = self.ctx.settings

        def replace(match: re.Match[str]) -> str:
            name, argument = match.group(1), match.group(2)
            values: dict[str, str | None] = {
                "prompt": settings.prompt_text,
                "instructions": settings.instructions or "",
                "skills": ", ".join(settings.skills),
                "model": self._model_id(),
                "workdir": self.ctx.workspace.work_dir,
                "user_message": self.progress.user_messages[-1]
                if self.progress.user_messages
                else "",
            }
            if name == "result" and argument is not None:
                output = self.progress.outputs.get(argument.strip())
                return output_text(output[0]) if output is not None else match.group(0)
            value = values.get(name)
            return value if value is not None else match.group(0)

        return _PLACEHOLDER.sub(replace, text)

    def _render_input(self, value: JSONValue) -> JSONValue:
        if isinstance(value, str):
            return self._render(value)
        if isinstance(value, list):
            return [self._render_input(item) for item in value]
        if isinstance(value, dict):
            return {key: self._render_input(item) for key, item in value.items()}
        return value

    def _model_id(self) -> str:
        return (
            self.ctx.settings.model
            or self.ctx.script_turn.model_id
            or self.ctx.script.model_id
            or self.profile.default_model
        )

    def _reason(self, unified: UnifiedFinishReason) -> FinishReason:
        return FinishReason(unified=unified, raw=self.profile.raw_finish_reasons.get(unified))

    def _context_tokens(self) -> int:
        return self.ctx.conversation.tokens(self.ctx.settings.instructions or "")

    def _note(self, entry: ObservationEntry) -> NoteRequest:
        return NoteRequest(entry)

    def _holds(self, condition: StepCondition) -> bool:
        result = True
        if condition.tool_call_id is not None:
            output = self.progress.outputs.get(condition.tool_call_id)
            if output is None:
                result = False
            else:
                value, is_error = output
                if condition.is_error is not None and is_error != condition.is_error:
                    result = False
                denied = condition.tool_call_id in self.progress.denied
                if condition.denied is not None and denied != condition.denied:
                    result = False
                if condition.output_matches is not None and not pattern_search(
                    condition.output_matches, output_text(value)
                ):
                    result = False
        if condition.user_message_matches is not None and not any(
            pattern_search(condition.user_message_matches, message)
            for message in self.progress.user_messages
        ):
            result = False
        return result != condition.negate

    # -- the turn --------------------------------------------------------------------

    def run(self) -> Gen:
        """The turn, as a generator of requests; returns a :class:`TurnEnd`."""
        ctx = self.ctx
        ctx.conversation.messages.append(Message(role="user", text=ctx.settings.prompt_text))
        if self.profile.emits_stream_start:
            yield EmitRequest(StreamStartPart(model_id=self._model_id()))
        queue: deque[ScriptStep] = deque(ctx.script_turn.steps)
        reactions = ctx.script_turn.on_user_message
        steering = self.profile.supports_user_messages
        while True:
            if not queue:
                if not (steering and reactions):
                    break
                # A message that arrived during the last step reopens the turn.
                arrived = yield PollRequest("user-messages")
                self._take_messages(arrived)
                if not arrived:
                    break
                queue.extend(step for _ in arrived for step in reactions)
                continue
            step = queue.popleft()
            if steering:
                arrived = yield PollRequest("user-messages")
                self._take_messages(arrived)
                if arrived and reactions:
                    queue.appendleft(step)
                    queue.extendleft(reversed([s for _ in arrived for s in reactions]))
                    continue
            if step.when is not None and not self._holds(step.when):
                continue
            end = yield from self._step(step, final=not queue)
            if end is not None:
                return end
        reason = ctx.script_turn.finish_reason or self.progress.last_reason or "stop"
        yield EmitRequest(
            FinishPart(
                finish_reason=self._reason(reason),
                total_usage=Usage(
                    input_tokens=InputTokens(total=self.progress.input_total),
                    output_tokens=OutputTokens(total=self.progress.output_total),
                ),
            )
        )
        return TurnEnd("finish")

    def _take_messages(self, arrived: list[str]) -> None:
        for text in arrived:
            self.progress.user_messages.append(text)
            self.ctx.conversation.messages.append(Message(role="user", text=text))

    def _compactions(self) -> Gen:
        ctx = self.ctx
        conversation = ctx.conversation
        # Compactions done between turns surface at the start of the next turn's first step.
        for wire in conversation.pending_compactions:
            yield EmitRequest(parse_stream_part(wire))
        conversation.pending_compactions = []
        requests: list[str | None] = []
        if self.profile.supports_manual_compaction:
            requests = yield PollRequest("compaction")
        plans: list[tuple[Literal["manual", "auto"], str | None]] = [
            ("manual", text) for text in requests
        ]
        budget = ctx.script.context_budget or self.profile.context_budget
        if not plans and budget is not None and self._context_tokens() > budget:
            plans.append(("auto", None))
        for trigger, instructions in plans:
            part = compact_conversation(
                conversation,
                trigger=trigger,
                custom_instructions=instructions,
                extra=ctx.settings.instructions or "",
            )
            yield self._note(
                CompactionPerformed(
                    session_id=ctx.session_id,
                    turn=ctx.turn_index,
                    trigger=trigger,
                    summary=part.summary,
                    tokens_before=part.tokens_before or 0,
                    tokens_after=part.tokens_after or 0,
                    custom_instructions=instructions,
                    emitted=self.profile.emits_compaction,
                )
            )
            if self.profile.emits_compaction:
                yield EmitRequest(part)

    def _step(self, step: ScriptStep, *, final: bool) -> Generator[Request, Any, TurnEnd | None]:
        ctx = self.ctx
        number = self.progress.steps_run
        self.progress.steps_run += 1
        yield from self._compactions()
        input_tokens = self._context_tokens()
        output_tokens = 0
        calls: list[_Call] = []
        actions = list(step.actions)
        if (
            final
            and ctx.settings.response_format
            and ctx.settings.response_format.get("type") == "json"
        ):
            actions = self._json_actions(actions)
        call_count = sum(
            isinstance(a, BuiltinCallAction | HostToolCallAction | McpCallAction) for a in actions
        )
        for position, action in enumerate(actions):
            if isinstance(action, TextAction | ReasoningAction):
                output_tokens += yield from self._block(action, number, position)
            elif isinstance(action, BuiltinCallAction | HostToolCallAction | McpCallAction):
                call = self._call(action, number, position)
                call.count = call_count if step.announce_tool_call_count else None
                call.gate = self._gate(call)
                calls.append(call)
                output_tokens += estimate_tokens(output_text(call.input))
                if call.gate is None:
                    # A call that needs approval is announced when the runtime is about
                    # to run it, right before its approval request (as canUseTool does),
                    # so the request never refers to a call of an earlier slice.
                    yield from self._emit_call(call)
            elif isinstance(action, FileMutationAction):
                yield from self._mutate(action, number, position)
            elif isinstance(action, RawAction):
                yield EmitRequest(RawPart(raw_value=action.value))
            elif isinstance(action, ErrorAction):
                yield EmitRequest(ErrorPart(error=action.error))
                if action.end_turn:
                    return TurnEnd("errored")
            elif isinstance(action, DelayAction):
                yield SleepRequest(action.seconds)
            elif isinstance(action, WaitForUserMessageAction):
                answer = yield AwaitRequest("user-message", timeout=action.timeout)
                if isinstance(answer, dict) and isinstance(answer.get("text"), str):
                    self._take_messages([answer["text"]])
        for call in calls:
            result, is_error = yield from self._resolve(call)
            self.progress.outputs[call.call_id] = (result, is_error)
            ctx.conversation.messages.append(Message(role="tool", text=output_text(result)))
        reason: UnifiedFinishReason = step.finish_reason or ("tool-calls" if calls else "stop")
        if step.usage is not None:
            input_tokens, output_tokens = step.usage.input_tokens, step.usage.output_tokens
        self.progress.input_total += input_tokens
        self.progress.output_total += output_tokens
        self.progress.last_reason = reason
        yield EmitRequest(
            FinishStepPart(
                finish_reason=self._reason(reason),
                usage=Usage(
                    input_tokens=InputTokens(total=input_tokens, no_cache=input_tokens),
                    output_tokens=OutputTokens(total=output_tokens),
                ),
            )
        )
        return None

    def _json_actions(self, actions: list[Any]) -> list[Any]:
        # The final step's text becomes one JSON document (json_output wins).
        texts = [a for a in actions if isinstance(a, TextAction)]
        text = "".join(self._render(a.text) for a in texts)
        response_format = self.ctx.settings.response_format or {}
        schema = response_format.get("schema")
        document: JSONValue
        if self.ctx.script_turn.json_output is not None:
            document = self.ctx.script_turn.json_output
        else:
            try:
                document = json.loads(text)
                if isinstance(schema, dict):
                    jsonschema.validate(document, schema)
            except (ValueError, jsonschema.ValidationError, jsonschema.SchemaError):
                document = (
                    instance_of(schema, text, seed=f"{self.ctx.seed}/{self.ctx.turn_index}")
                    if isinstance(schema, dict)
                    else {"text": text}
                )
        replacement = TextAction(
            text=json.dumps(document, separators=(",", ":"), ensure_ascii=False)
        )
        kept = [a for a in actions if not isinstance(a, TextAction)]
        if not texts:
            return [*kept, replacement]
        first = actions.index(texts[0])
        kept_before = [a for a in actions[:first] if not isinstance(a, TextAction)]
        kept_after = [a for a in actions[first:] if not isinstance(a, TextAction)]
        return [*kept_before, replacement, *kept_after]

    def _block(
        self, action: TextAction | ReasoningAction, number: int, position: int
    ) -> Generator[Request, Any, int]:
        text = self._render(action.text)
        is_text = isinstance(action, TextAction)
        block_id = (
            action.id
            or f"{'text' if is_text else 'reasoning'}-{self.ctx.turn_index}-{number}-{position}"
        )
        yield EmitRequest(
            TextStartPart(id=block_id) if is_text else ReasoningStartPart(id=block_id)
        )
        for delta in chunk_text(text, self.ctx.script.chunking, self.rng):
            yield EmitRequest(
                TextDeltaPart(id=block_id, delta=delta)
                if is_text
                else ReasoningDeltaPart(id=block_id, delta=delta)
            )
        yield EmitRequest(TextEndPart(id=block_id) if is_text else ReasoningEndPart(id=block_id))
        if is_text:
            self.ctx.conversation.messages.append(Message(role="assistant", text=text))
        return estimate_tokens(text)

    def _call(
        self,
        action: BuiltinCallAction | HostToolCallAction | McpCallAction,
        number: int,
        position: int,
    ) -> _Call:
        call_id = action.id or f"call-{self.ctx.turn_index}-{number}-{position}"
        rendered = self._render_input(dict(action.input))
        assert isinstance(rendered, dict)
        if isinstance(action, McpCallAction):
            name = mcp_tool_name(action.server, action.tool)
        else:
            name = action.tool
        return _Call(action=action, call_id=call_id, tool_name=name, input=rendered)

    def _gate(self, call: _Call) -> Gate | None:
        profile, settings = self.profile, self.ctx.settings
        if not profile.supports_builtin_tool_approvals:
            return None
        action = call.action
        if isinstance(action, McpCallAction):
            server = self.ctx.mcp_servers.get(action.server)
            tool = server.tools.get(action.tool) if server is not None else None
            if tool is not None and requires_approval(settings.permission_mode, tool.tool_use_kind):
                return "permission-mode"
            return None
        if not isinstance(action, BuiltinCallAction):
            return None
        builtin = profile.builtin_tools.get(call.tool_name)
        if builtin is None:
            return None
        if not is_builtin_tool_included(settings.builtin_tool_filtering, call.tool_name):
            # Native filtering hides the tool instead (an error result, no approval).
            return None if profile.supports_builtin_tool_filtering else "filtering"
        if requires_approval(settings.permission_mode, builtin.tool_use_kind):
            return "permission-mode"
        return None

    def _emit_call(self, call: _Call) -> Gen:
        call.announced = True
        count = call.count
        action = call.action
        provider_executed = None if isinstance(action, HostToolCallAction) else True
        dynamic = True if isinstance(action, McpCallAction) else None
        text = output_text(call.input)
        if action.stream_input:
            yield EmitRequest(
                ToolInputStartPart(
                    id=call.call_id,
                    tool_name=call.tool_name,
                    provider_executed=provider_executed,
                    dynamic=dynamic,
                )
            )
            for delta in chunk_text(text, Chunking(mode="chars", size=12), self.rng):
                yield EmitRequest(ToolInputDeltaPart(id=call.call_id, delta=delta))
            yield EmitRequest(ToolInputEndPart(id=call.call_id))
        native = (
            self.profile.native_name(call.tool_name)
            if isinstance(action, BuiltinCallAction)
            else None
        )
        yield EmitRequest(
            ToolCallPart(
                tool_call_id=call.call_id,
                tool_name=call.tool_name,
                input=text,
                provider_executed=provider_executed,
                dynamic=dynamic,
                native_name=native,
                step_tool_call_count=count or None,
            )
        )

    def _result(self, call: _Call, result: JSONValue, is_error: bool) -> EmitRequest:
        return EmitRequest(
            ToolResultPart(
                tool_call_id=call.call_id,
                tool_name=call.tool_name,
                result=result,
                is_error=is_error or None,
                dynamic=True if isinstance(call.action, McpCallAction) else None,
            )
        )

    def _executed(
        self,
        call: _Call,
        surface: Literal["builtin", "mcp"],
        result: JSONValue,
        is_error: bool,
        *,
        executed: bool = True,
        reason: Literal["filtered", "denied", "unavailable"] | None = None,
    ) -> ToolExecuted:
        return ToolExecuted(
            session_id=self.ctx.session_id,
            turn=self.ctx.turn_index,
            tool_call_id=call.call_id,
            tool_name=call.tool_name,
            surface=surface,
            input=call.input,
            executed=executed,
            result=result,
            is_error=is_error,
            reason=reason,
        )

    def _resolve(self, call: _Call) -> Generator[Request, Any, tuple[JSONValue, bool]]:
        action = call.action
        if isinstance(action, HostToolCallAction):
            answer = yield AwaitRequest("tool-result", call.call_id)
            result, is_error = answer.get("output"), bool(answer.get("isError"))
            # The echo carries what the host submitted; the script sees a denial as one.
            yield EmitRequest(
                ToolResultPart(
                    tool_call_id=call.call_id,
                    tool_name=call.tool_name,
                    result=result,
                    is_error=is_error,
                )
            )
            if is_execution_denied(result):
                self.progress.denied.add(call.call_id)
                return result, True
            return result, is_error
        if isinstance(action, McpCallAction):
            return (yield from self._resolve_mcp(call, action))
        assert isinstance(action, BuiltinCallAction)
        return (yield from self._resolve_builtin(call, action))

    def _approval(
        self, call: _Call, because: Gate
    ) -> Generator[Request, Any, tuple[bool, str | None]]:
        if not call.announced:
            yield from self._emit_call(call)
        approval_id = f"approval-{call.call_id}"
        yield self._note(
            ApprovalRequested(
                session_id=self.ctx.session_id,
                turn=self.ctx.turn_index,
                approval_id=approval_id,
                tool_call_id=call.call_id,
                tool_name=call.tool_name,
                because=because,
            )
        )
        yield EmitRequest(
            ToolApprovalRequestPart(approval_id=approval_id, tool_call_id=call.call_id)
        )
        decision = yield AwaitRequest("approval", approval_id)
        reason = decision.get("reason")
        return bool(decision.get("approved")), reason if isinstance(reason, str) else None

    def _refuse(
        self,
        call: _Call,
        surface: Literal["builtin", "mcp"],
        message: str,
        reason: Literal["filtered", "denied", "unavailable"],
    ) -> Generator[Request, Any, tuple[JSONValue, bool]]:
        if reason == "denied":
            self.progress.denied.add(call.call_id)
        yield self._note(
            self._executed(call, surface, message, True, executed=False, reason=reason)
        )
        yield self._result(call, message, True)
        return message, True

    def _resolve_builtin(
        self, call: _Call, action: BuiltinCallAction
    ) -> Generator[Request, Any, tuple[JSONValue, bool]]:
        ctx, profile = self.ctx, self.profile
        key = call.tool_name
        tool = profile.builtin_tools.get(key)
        if tool is None:
            return (
                yield from self._refuse(
                    call,
                    "builtin",
                    f"Tool '{key}' is not available in this runtime.",
                    "unavailable",
                )
            )
        if call.gate is None and not is_builtin_tool_included(
            ctx.settings.builtin_tool_filtering, key
        ):
            message = f"Tool '{key}' is not available: it is disabled by the built-in tool filter."
            return (yield from self._refuse(call, "builtin", message, "filtered"))
        if call.gate is not None:
            approved, reason = yield from self._approval(call, call.gate)
            if not approved:
                message = reason or f"The user denied the call to '{key}'."
                return (yield from self._refuse(call, "builtin", message, "denied"))
        common = tool.common_name
        if common in EXECUTABLE_BUILTINS:
            assert common is not None
            workspace = ctx.workspace

            async def run(abort: anyio.Event | None, tool_name: str = common) -> Outcome:
                return await workspace.execute(tool_name, call.input, abort)

            outcome = yield ExecuteRequest(
                key=f"builtin:{call.call_id}",
                run=run,
                describe=lambda out: [
                    self._executed(call, "builtin", out.get("result"), bool(out.get("isError")))
                ],
            )
            result, is_error = outcome.get("result"), bool(outcome.get("isError"))
            changes = outcome.get("fileChanges") or []
            if (
                profile.emits_file_change
                and profile.file_change_for_tool_writes
                and isinstance(changes, list)
            ):
                for change in changes:
                    assert isinstance(change, dict)
                    yield EmitRequest(self._file_change(str(change["event"]), str(change["path"])))
        else:
            scripted = action.result or self._scripted_answer(common, call.input)
            result, is_error = scripted.value, scripted.is_error
            yield self._note(self._executed(call, "builtin", result, is_error))
        yield self._result(call, result, is_error)
        return result, is_error

    def _scripted_answer(
        self, common: str | None, tool_input: dict[str, JSONValue]
    ) -> ScriptedResult:
        if common == "webSearch":
            query = tool_input.get("query")
            for answer in self.ctx.script.web_search:
                if isinstance(query, str) and pattern_search(answer.query_matches, query):
                    return ScriptedResult(value=answer.results)
            return ScriptedResult(value=[])
        return ScriptedResult(value="ok")

    def _resolve_mcp(
        self, call: _Call, action: McpCallAction
    ) -> Generator[Request, Any, tuple[JSONValue, bool]]:
        server = self.ctx.mcp_servers.get(action.server)
        tool = server.tools.get(action.tool) if server is not None else None
        if tool is None:
            what = (
                f"MCP server '{action.server}'"
                if server is None
                else f"MCP tool '{action.tool}' on server '{action.server}'"
            )
            return (
                yield from self._refuse(call, "mcp", f"{what} is not available.", "unavailable")
            )
        if call.gate is not None:
            approved, reason = yield from self._approval(call, call.gate)
            if not approved:
                message = reason or f"The user denied the call to '{call.tool_name}'."
                return (yield from self._refuse(call, "mcp", message, "denied"))
        scripted = action.result or ScriptedResult(value=tool.result, is_error=tool.is_error)
        yield self._note(self._executed(call, "mcp", scripted.value, scripted.is_error))
        yield self._result(call, scripted.value, scripted.is_error)
        return scripted.value, scripted.is_error

    def _file_change(self, event: str, path: str) -> FileChangePart:
        if self.profile.file_change_events == "modify-only":
            event = "modify"
        assert event in ("create", "modify", "delete")
        return FileChangePart(event=event, path=path)  # type: ignore[arg-type]

    def _mutate(self, action: FileMutationAction, number: int, position: int) -> Gen:
        ctx = self.ctx
        workspace = ctx.workspace
        emitted = self.profile.emits_file_change

        async def run(abort: anyio.Event | None) -> Outcome:
            return await workspace.mutate(action.changes)

        def describe(outcome: Outcome) -> list[ObservationEntry]:
            changes = outcome.get("fileChanges") or []
            assert isinstance(changes, list)
            return [
                WorkspaceMutated.model_validate(
                    {
                        "session_id": ctx.session_id,
                        "turn": ctx.turn_index,
                        "event": change["event"],
                        "path": change["path"],
                        "emitted": emitted,
                    }
                )
                for change in changes
                if isinstance(change, dict)
            ]

        outcome = yield ExecuteRequest(
            key=f"mutation:{ctx.turn_index}:{number}:{position}", run=run, describe=describe
        )
        if emitted:
            for change in outcome.get("fileChanges") or []:
                yield EmitRequest(self._file_change(str(change["event"]), str(change["path"])))
