"""A Claude Code adapter session: turns, suspension, lifecycle states, CLI options."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness_testkit.scripting import LifecycleEvent, TurnStarted
from harness_testkit.spec import (
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    HarnessSessionStateError,
    JsonResponseFormat,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
    ToolSpec,
    ToolUseKind,
    is_builtin_tool_included,
    prompt_text,
)

from ._builtins import BUILTIN_TOOLS, HOST_SERVER, mcp_input_schema, native_of_key
from ._cli_turn import ClaudeCodePromptControl, ClaudeCodeTurn
from ._endpoint import ScriptedEndpoint
from ._runner import RuntimeThread
from ._state import SessionData, TurnData

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions

    from ._harness import ClaudeCodeHarness

__all__ = ["ClaudeCodeSession"]

#: Names CLI session ids (UUIDs) after harness session ids, so a state needs no lookup.
_CLI_SESSION_NAMESPACE = uuid.UUID("8f0d5a52-6c1f-4a8e-9a4f-3b1f6c2d7e10")


def cli_session_id(session_id: str) -> str:
    """The Claude Code session id (a UUID) the adapter uses for ``session_id``."""
    return str(uuid.uuid5(_CLI_SESSION_NAMESPACE, session_id))


class ClaudeCodeSession:
    """An adapter session (implements ``HarnessSession``); one CLI process per turn run.

    The conversation lives in the CLI's transcript under ``home`` (a directory beside the
    session's working directory, inside the sandbox), so a later process resumes it.
    """

    def __init__(
        self,
        *,
        harness: ClaudeCodeHarness,
        options: StartOptions,
        data: SessionData,
        mode: Literal["fresh", "resume", "continue"],
        base_url: str,
        endpoint: ScriptedEndpoint | None,
    ) -> None:
        self._harness = harness
        self._options = options
        self._data = data
        self._mode = mode
        self._base_url = base_url
        self._endpoint = endpoint
        self._ended: str | None = None
        self._turn: ClaudeCodeTurn | None = None
        self._turn_tools: list[ToolSpec] = []
        self._instructions: str | None = None
        self._model: str | None = None
        self.stderr_lines: list[str] = []
        self._runtime: RuntimeThread | None = None
        Path(data.home).mkdir(parents=True, exist_ok=True)
        if data.turn is not None:
            turn = ClaudeCodeTurn(
                self,
                index=data.turn.index,
                prompt=data.turn.prompt,
                prompt_text=prompt_text(data.turn.prompt)
                if isinstance(data.turn.prompt, str | dict)
                else "",
                approvals=data.turn.approvals,
                results={
                    key: (value.get("output"), bool(value.get("isError")))
                    for key, value in data.turn.results.items()
                },
                executed={
                    key: (value.get("result"), bool(value.get("isError")))
                    for key, value in data.turn.executed.items()
                },
                reply_start=data.turn.reply_start,
                finished=data.turn.finished,
                echoed=data.turn.echoed,
            )
            if not data.turn.finished:
                turn.status = "suspended"
                turn.rerun = True
            self._turn = turn

    # -- attributes ------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The id given to ``do_start``."""
        return self._options.session_id

    @property
    def is_resume(self) -> bool:
        """Whether the session was started from ``resume_from`` or ``continue_from``."""
        return self._mode != "fresh"

    @property
    def permission_mode(self) -> Any:
        """The start option ``permission_mode``."""
        return self._options.permission_mode

    def builtin_included(self, key: str) -> bool:
        """Whether built-in ``key`` passes the session's built-in filter."""
        return is_builtin_tool_included(self._options.builtin_tool_filtering, key)

    def mcp_tool_kind(self, native: str) -> ToolUseKind | None:
        """How the permission mode treats an MCP tool (unknown: ``None``, counted as edit)."""
        return self._harness.mcp_tool_kind(native)

    async def rewind(self, reply: int) -> None:
        """Serve the scripted model from reply ``reply`` again (a turn rerun)."""
        if self._endpoint is not None:
            await self._endpoint.rewind(reply)

    async def runner(self) -> RuntimeThread:
        """The session's runtime thread (started on first use; never after the session
        ended, which closed it).

        Raises:
            HarnessSessionStateError: the session has ended.
        """
        self.check_live("start the Claude Code CLI")
        if self._runtime is None:
            self._runtime = await RuntimeThread.open()
        return self._runtime

    @property
    def runtime(self) -> RuntimeThread | None:
        """The session's runtime thread, once started."""
        return self._runtime

    def wake_runtime(self) -> None:
        """Tell waits on the runtime thread that host input or a stop request arrived."""
        if self._runtime is not None:
            self._runtime.notify()

    def record(self, entry: Any) -> None:
        """Append an observation to the adapter's log."""
        self._harness.observations.record(entry)

    def check_live(self, what: str) -> None:
        """Raise when the session has ended."""
        if self._ended is not None:
            raise HarnessSessionStateError(
                f"Claude Code session {self.session_id} has ended ({self._ended}) and cannot "
                f"{what}; start a new session (resume it from its state if you kept one)."
            )

    def _unsupported(self, what: str) -> HarnessCapabilityUnsupportedError:
        return HarnessCapabilityUnsupportedError(
            f"Harness '{self._harness.harness_id}' {what}.", harness_id=self._harness.harness_id
        )

    # -- CLI options -----------------------------------------------------------------------

    def _transcript_exists(self) -> bool:
        projects = Path(self._data.home) / ".claude" / "projects"
        return any(projects.glob(f"*/{self._data.cli_session_id}.jsonl"))

    def sdk_options(self, turn: ClaudeCodeTurn) -> ClaudeAgentOptions:
        """The SDK options of one CLI run of ``turn``."""
        from claude_agent_sdk import (
            ClaudeAgentOptions,
            HookMatcher,
            create_sdk_mcp_server,
            tool,
        )

        host_tools = [
            tool(
                spec.name,
                spec.description or f"Host tool {spec.name}",
                mcp_input_schema(spec.input_schema),
            )(turn.host_handler(spec.name))
            for spec in self._turn_tools
        ]
        servers: dict[str, Any] = dict(self._harness.mcp_server_configs())
        servers[HOST_SERVER] = create_sdk_mcp_server(HOST_SERVER, tools=host_tools)
        included = [key for key in BUILTIN_TOOLS if self.builtin_included(key)]
        excluded = [key for key in BUILTIN_TOOLS if not self.builtin_included(key)]
        resume = self._transcript_exists()
        env = {
            "HOME": self._data.home,
            "ANTHROPIC_BASE_URL": self._base_url,
            "ANTHROPIC_API_KEY": self._harness.api_key,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Host tools wait for the host as long as the turn lasts.
            "MCP_TOOL_TIMEOUT": "86400000",
            **self._harness.env,
        }
        hook_timeout = 86400.0
        self.stderr_lines.clear()
        return ClaudeAgentOptions(
            cwd=self._data.session_work_dir,
            cli_path=self._harness.cli_path,
            model=self._model or self._harness.model,
            env=env,
            include_partial_messages=True,
            tools=[native_of_key(key) for key in included],
            disallowed_tools=[native_of_key(key) for key in excluded],
            permission_mode="default",
            can_use_tool=turn.can_use_tool,
            hooks={
                "PreToolUse": [HookMatcher(hooks=[turn.pre_tool_use], timeout=hook_timeout)],
                "PostToolUse": [HookMatcher(hooks=[turn.post_tool_use], timeout=hook_timeout)],
                "PostToolUseFailure": [
                    HookMatcher(hooks=[turn.post_tool_use], timeout=hook_timeout)
                ],
            },
            mcp_servers=servers,
            strict_mcp_config=True,
            setting_sources=[],
            system_prompt=self._instructions,
            resume=self._data.cli_session_id if resume else None,
            session_id=None if resume else self._data.cli_session_id,
            stderr=self.stderr_lines.append,
        )

    def permission_result(
        self,
        *,
        call_key: str,
        approved: bool,
        reason: str | None,
        deny: Callable[[str], Any],
        allow: Callable[[], Any],
    ) -> Any:
        """The answer to the CLI's permission prompt after the host decided."""
        if approved:
            return allow()
        return deny(reason or f"The user denied the call to '{call_key}'.")

    # -- turns -----------------------------------------------------------------------------

    def _settings(self, options: ContinueTurnOptions) -> None:
        if isinstance(options.response_format, JsonResponseFormat):
            raise self._unsupported(
                "does not support JSON response formats (the scripted model endpoint cannot "
                "answer the CLI's structured-output tool)"
            )
        self._turn_tools = list(options.tools)
        self._instructions = options.instructions
        self._model = options.model

    def _observe_turn(
        self, turn: ClaudeCodeTurn, call: Literal["prompt", "continue"], options: Any
    ) -> None:
        self.record(
            TurnStarted(
                session_id=self.session_id,
                turn=turn.index,
                call=call,
                prompt=turn.prompt if call == "prompt" else None,
                tools=list(options.tools),
                skills=[skill.name for skill in options.skills],
                instructions=options.instructions,
                model=options.model,
                response_format=options.response_format.to_wire()
                if options.response_format is not None
                else None,
            )
        )

    async def do_prompt_turn(self, options: PromptTurnOptions) -> ClaudeCodePromptControl:
        """Start a turn: the CLI runs when the control's ``done()`` is awaited.

        Raises:
            HarnessSessionStateError: the session ended, or a turn is unfinished.
            HarnessCapabilityUnsupportedError: a JSON response format.
        """
        self.check_live("start a turn")
        if self._turn is not None and self._turn.unfinished:
            raise HarnessSessionStateError(
                f"Claude Code session {self.session_id} has an unfinished turn; continue it "
                "(do_continue_turn) before starting a new prompt."
            )
        self._settings(options)
        index = self._data.turn_count + 1
        self._data = self._data.model_copy(update={"turn_count": index})
        prompt: Any = options.prompt
        turn = ClaudeCodeTurn(
            self,
            index=index,
            prompt=prompt,
            prompt_text=prompt_text(prompt),
            reply_start=self._next_reply(),
        )
        self._turn = turn
        self._observe_turn(turn, "prompt", options)
        control = ClaudeCodePromptControl(turn)
        turn.attach(control, options.emit, options.abort)
        return control

    async def do_continue_turn(self, options: ContinueTurnOptions) -> ClaudeCodePromptControl:
        """Continue the unfinished turn with a new control.

        A turn waiting for host input in this process keeps running (its submissions
        reach it through either control); a suspended turn reruns: the CLI resumes its
        transcript with the prompt ``Continue.`` (lossy: the interrupted step is
        recomputed by the model).

        Raises:
            HarnessSessionStateError: the session ended or has no unfinished turn.
        """
        self.check_live("continue a turn")
        turn = self._turn
        if turn is None or not (turn.unfinished or turn.captured):
            raise HarnessSessionStateError(
                f"Claude Code session {self.session_id} has no unfinished turn to continue."
            )
        self._settings(options)
        self._observe_turn(turn, "continue", options)
        control = ClaudeCodePromptControl(turn)
        turn.attach(control, options.emit, options.abort)
        return control

    def _next_reply(self) -> int:
        if self._endpoint is None:
            return self._data.next_reply
        return self._endpoint.next_reply()

    def _state_data(self, turn: ClaudeCodeTurn | None) -> dict[str, Any]:
        data = self._data.model_copy(update={"next_reply": self._next_reply()})
        if turn is not None:
            data = data.model_copy(
                update={
                    "turn": TurnData(
                        index=turn.index,
                        prompt=turn.prompt,
                        finished=turn.status == "finished",
                        approvals=turn.approvals,
                        results={
                            key: {"output": output, "isError": is_error}
                            for key, (output, is_error) in turn.results.items()
                        },
                        executed={
                            key: {"result": result, "isError": is_error}
                            for key, (result, is_error) in turn.executed.items()
                        },
                        reply_start=turn.reply_start,
                        echoed=sorted(turn.echoed),
                    )
                }
            )
        else:
            data = data.model_copy(update={"turn": None})
        return data.to_wire()

    def _lifecycle(self, event: Any, detail: str | None = None) -> None:
        self.record(
            LifecycleEvent(
                session_id=self.session_id,
                event=event,
                turn=self._turn.index if self._turn is not None else None,
                detail=detail,
            )
        )

    async def do_suspend_turn(self) -> ContinueTurnState:
        """Stop the CLI process of the turn and return its ``continue-turn`` state.

        Raises:
            HarnessSessionStateError: the session ended or has no turn to suspend.
        """
        self.check_live("suspend a turn")
        turn = self._turn
        if turn is None or turn.status in ("errored", "aborted", "failed"):
            raise HarnessSessionStateError(
                f"Claude Code session {self.session_id} has no unfinished turn to suspend."
            )
        await turn.suspend()
        if turn.status in ("errored", "aborted", "failed"):
            raise HarnessSessionStateError(
                f"The turn of Claude Code session {self.session_id} ended ({turn.status}) "
                "while it was being suspended."
            )
        turn.captured = True
        self._lifecycle("suspend")
        return ContinueTurnState(harness_id=self._harness.harness_id, data=self._state_data(turn))

    async def _end(self, event: Literal["detach", "stop"]) -> ResumeSessionState:
        self.check_live(event)
        turn = self._turn
        if turn is not None and turn.unfinished:
            state = ResumeSessionState.mid_turn(await self.do_suspend_turn())
        else:
            state = ResumeSessionState(
                harness_id=self._harness.harness_id, data=self._state_data(None)
            )
        self._ended = {"detach": "detached", "stop": "stopped"}[event]
        self._lifecycle(event)
        await self._release()
        return state

    async def do_detach(self) -> ResumeSessionState:
        """Return a ``resume-session`` state; the transcript stays in the sandbox."""
        return await self._end("detach")

    async def do_stop(self) -> ResumeSessionState:
        """Stop the runtime (no process runs between turns) and return a resume state."""
        return await self._end("stop")

    async def do_destroy(self) -> None:
        """Stop the runtime; an unfinished turn fails."""
        self.check_live("be destroyed")
        self._ended = "destroyed"
        if self._turn is not None:
            await self._turn.kill(
                HarnessSessionStateError(f"Claude Code session {self.session_id} was destroyed.")
            )
        self._lifecycle("destroy")
        await self._release()

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        """Not offered: see the adapter's declared deviations.

        Raises:
            HarnessCapabilityUnsupportedError: always.
        """
        self.check_live("compact")
        raise self._unsupported(
            "does not support manual compaction (the CLI's /compact asks the model for a "
            "summary, which a scripted model endpoint does not provide)"
        )

    async def _release(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            await runtime.close()
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            await endpoint.close()
