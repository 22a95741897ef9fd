"""The Python side of a Node adapter: ``HarnessAdapter``, its sessions and turns.

Every harness-v1 call becomes a request to the adapter host (``_host``); the host's
calls back (the sandbox session's methods) are served from the kit's own sandbox
session, and its ``emit`` notifications become the turn's ``emit`` calls, in order.
What the runtime did is observed from outside the adapter, for the scripting extension:
the sandbox operations the host asked the kit for are the evidence that a built-in ran
(``_evidence``), and the model requests the scripted endpoint recorded are what the
runtime asked its model.

One idea: one adapter across the process boundary, both ways (the harness-v1 calls out,
the sandbox calls and parts back), so a reader follows a call and its answer in one file.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit.scripting import (
    ApprovalRequested,
    LifecycleEvent,
    ObservationLog,
    Script,
    SessionStarted,
    ToolExecuted,
    TurnStarted,
)
from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessSessionStateError,
    HarnessTurnError,
    HostDescription,
    HostProtocolError,
    JSONValue,
    PromptTurnOptions,
    ResumeSessionState,
    SandboxSession,
    StartOptions,
    parse_lifecycle_state,
)

from ._bootstrap import ready_sandbox
from ._bridge import Port, call, spawn_detached
from ._checkpoints import with_checkpoint
from ._control import NodePromptControl, prompt_control
from ._evidence import SessionTracking
from ._relay import session_ports
from ._scripting import ScriptedEndpoint

if TYPE_CHECKING:
    from ._target import NodeAdapterHost

__all__ = ["NodeHarness", "NodeSession", "Turn"]

#: The longest a lifecycle call (start, suspend, detach, stop, destroy, compact) may take.
CALL_TIMEOUT = 120.0
#: The longest a turn may run before ``done()`` gives up on the host.
TURN_TIMEOUT = 600.0


class NodeHarness:
    """A harness-v1 adapter running in a Node adapter host (implements ``HarnessAdapter``).

    Made by :meth:`NodeAdapterHost.harness` (``check npm:...`` does it for you): the
    attributes are the ones the adapter declared (``describe``), and each session gets a
    harness instance of its own in the host, made by the adapter's factory with the
    target's settings. When the target knows how to point the adapter at a model endpoint,
    the adapter implements the kit's scripting extension: :meth:`set_script` chooses what
    the kit's scripted model answers, and :attr:`observations` is what the runtime did.
    """

    def __init__(self, host: NodeAdapterHost, *, script: Script | None = None) -> None:
        self._host = host
        self._description: HostDescription = host.description
        self._builtins = {
            key: BuiltinTool(
                description=tool.description,
                input_schema=dict(tool.input_schema or {"type": "object"}),
                native_name=tool.native_name,
                common_name=tool.common_name,
                tool_use_kind=tool.tool_use_kind,
            )
            for key, tool in self._description.builtin_tools.items()
        }
        self._script = script if script is not None else Script.default()
        self._observations = ObservationLog()
        #: The first host protocol failure a session of this adapter saw inside a turn
        #: (parts lost on the way: HOST-013); the suite fails the check with it, where
        #: the agent alone would see only the turn's ``error`` part.
        self.boundary_failure: HostProtocolError | None = None
        schema = self._description.lifecycle_state_schema
        if schema is not None:
            self.lifecycle_state_schema = _json_schema_validator(schema)

    # -- HarnessAdapter ------------------------------------------------------------------

    @property
    def specification_version(self) -> Literal["harness-v1"]:
        """What the adapter declared (``harness-v1`` for a conforming one)."""
        return self._description.specification_version  # type: ignore[return-value]

    @property
    def harness_id(self) -> str:
        """The adapter's ``harnessId``."""
        return self._description.harness_id

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """The adapter's built-ins, their input schemas as JSON Schema."""
        return self._builtins

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """The adapter's ``supportsBuiltinToolApprovals``."""
        return self._description.supports_builtin_tool_approvals

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """The adapter's ``supportsBuiltinToolFiltering``."""
        return self._description.supports_builtin_tool_filtering

    @property
    def versions(self) -> Mapping[str, str]:
        """The adapter package, Node, the host and the protocol, with their versions."""
        return self._host.versions

    # -- scripting extension -------------------------------------------------------------

    @property
    def observations(self) -> ObservationLog:
        """What the runtime received and did, across this adapter's sessions."""
        return self._observations

    @property
    def script(self) -> Script:
        """The script the scripted model serves to sessions started from now on."""
        return self._script

    def set_script(self, script: Script) -> None:
        """Serve ``script`` to sessions started from now on."""
        self._script = script

    # -- do_start ------------------------------------------------------------------------

    async def do_start(self, options: StartOptions) -> NodeSession:
        """Start, resume or continue a session in the host.

        Raises:
            HarnessCapabilityUnsupportedError: (and the adapter's other errors) as the
                adapter raised them.
            HostProtocolError: the host broke the protocol, died or did not answer.
        """
        state = options.continue_from or options.resume_from
        mode: Literal["fresh", "resume", "continue"] = (
            "continue" if options.continue_from is not None else "resume" if state else "fresh"
        )
        endpoint: ScriptedEndpoint | None = None
        settings: dict[str, Any] = {}
        wiring = self._host.wiring
        if wiring is not None:
            offset = self._host.script_cursors.get(options.session_id, 0) if state else 0
            endpoint = await ScriptedEndpoint.open(
                self._script,
                builtin_tools=self._builtins,
                work_dir=options.session_work_dir,
                offset=offset,
                protocol=wiring.protocol,
                host_tool_name=wiring.host_tool_name,
                # A bridge the resumed session left running calls its old endpoint.
                port=self._host.endpoint_ports.get(options.session_id, 0) if state else 0,
            )
            self._host.endpoint_ports[options.session_id] = endpoint.port
            settings = wiring.settings(endpoint.base_url)
        try:
            handle = await call(
                self._host.process,
                "createHarness",
                {"settings": settings},
                timeout=CALL_TIMEOUT,
            )
            session = NodeSession(self, options, endpoint, mode)
            await session.start(str(handle["harness"]), state)
        except BaseException:
            if endpoint is not None:
                await endpoint.close()
            raise
        self._observations.record(
            SessionStarted(
                session_id=options.session_id,
                mode=mode,
                profile=self.harness_id,
                permission_mode=options.permission_mode,
                builtin_tool_filtering=options.builtin_tool_filtering,
                skills=[skill.name for skill in options.skills],
                session_work_dir=options.session_work_dir,
            )
        )
        return session

    # -- used by sessions ----------------------------------------------------------------

    @property
    def host(self) -> NodeAdapterHost:
        """The host this adapter runs in."""
        return self._host

    @property
    def default_model(self) -> str | None:
        """The model a turn that names none is run with (the target's wiring decides)."""
        wiring = self._host.wiring
        return wiring.model if wiring is not None else None


def _json_schema_validator(schema: Mapping[str, Any]) -> Any:
    """A ``lifecycle_state_schema`` callable from the JSON Schema the adapter declared."""
    import jsonschema

    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft7Validator
    )
    validator = validator_class(dict(schema))

    def validate(data: Any) -> Any:
        error = jsonschema.exceptions.best_match(validator.iter_errors(data))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "data"
            raise ValueError(f"{where}: {error.message} (the adapter's lifecycleStateSchema)")
        return data

    return validate


def _lost_parts(turn: Turn) -> bool:
    """Whether the host lost parts of ``turn`` (HOST-013)."""
    failure = turn.failure
    return isinstance(failure, HostProtocolError) and failure.requirement == "HOST-013"


@dataclass
class Turn:
    index: int
    turn_id: str
    options: ContinueTurnOptions
    request_id: int | None = None
    #: How many ``emit`` frames of the turn arrived (their ``seq`` must count 1, 2, ...).
    received: int = 0
    ended: anyio.Event = field(default_factory=anyio.Event)
    failure: BaseException | None = None


class NodeSession:
    """A session of a Node adapter (implements ``HarnessSession``)."""

    def __init__(
        self,
        harness: NodeHarness,
        options: StartOptions,
        endpoint: ScriptedEndpoint | None,
        mode: Literal["fresh", "resume", "continue"],
    ) -> None:
        self._harness = harness
        self._host = harness.host
        self._options = options
        self._endpoint = endpoint
        self._handle = ""
        self._is_resume = mode != "fresh"
        self._model_id: str | None = None
        self._ended: str | None = None
        self._turns: dict[str, Turn] = {}
        self._turn_count = 0
        # Calls announced, approvals asked and denied, sandbox operations: per session id
        # for the run, as a turn continued in a new session gets the results of calls an
        # earlier slice announced.
        tracking = self._host.tracking.get(options.session_id)
        if tracking is None or mode == "fresh":
            tracking = self._host.tracking[options.session_id] = SessionTracking(
                options.session_work_dir
            )
        self._calls = tracking.calls
        self._approvals = tracking.approvals
        self.denied = tracking.denied
        self._evidence = tracking.evidence
        self._sandbox: SandboxSession = options.sandbox_session
        self._processes: dict[str, Any] = {}
        self._port = Port(
            self._host.process,
            {
                "sandbox/run": self._run,
                "sandbox/spawn": self._spawn,
                "sandbox/readTextFile": self._read_text,
                "sandbox/readBinaryFile": self._read_binary,
                "sandbox/writeTextFile": self._write_text,
                "sandbox/writeBinaryFile": self._write_binary,
                "process/kill": self._kill,
            },
            self._on_emit,
        )

    # -- attributes ----------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._options.session_id

    @property
    def is_resume(self) -> bool:
        """What the adapter reported (``isResume``)."""
        return self._is_resume

    @property
    def model_id(self) -> str | None:
        """The model id the adapter reported, if it did."""
        return self._model_id

    # -- start ---------------------------------------------------------------------------

    async def start(self, harness_handle: str, state: Any) -> None:
        """Start the session in the host (called once, by :meth:`NodeHarness.do_start`)."""
        sandbox = self._sandbox
        endpoint_url = None if self._endpoint is None else self._endpoint.base_url
        await ready_sandbox(sandbox, self._host, endpoint_url, timeout=CALL_TIMEOUT)
        info: dict[str, Any] = {"description": getattr(sandbox, "description", "")}
        for attribute, key in (
            ("id", "id"),
            ("default_working_directory", "defaultWorkingDirectory"),
        ):
            value = getattr(sandbox, attribute, None)
            if isinstance(value, str):
                info[key] = value
        info.update(session_ports(self._host, self._options.session_id))
        self._handle = self._host.new_handle("s")
        params: dict[str, Any] = {
            "harness": harness_handle,
            "session": self._handle,
            "sessionId": self._options.session_id,
            "sessionWorkDir": self._options.session_work_dir,
            "sandbox": info,
            "permissionMode": self._options.permission_mode,
        }
        if self._options.resume_from is not None:
            params["resumeFrom"] = _wire(self._options.resume_from)
        if self._options.continue_from is not None:
            params["continueFrom"] = _wire(self._options.continue_from)
        if self._options.builtin_tool_filtering is not None:
            params["builtinToolFiltering"] = _wire(self._options.builtin_tool_filtering)
        self._host.process.route(f"session:{self._handle}", self._port.put)
        try:
            result = await call(
                self._host.process, "doStart", params, timeout=CALL_TIMEOUT, port=self._port
            )
        except BaseException:
            self._host.process.unroute(f"session:{self._handle}")
            self._port.close()
            raise
        self._is_resume = bool(result.get("isResume"))
        model_id = result.get("modelId")
        self._model_id = model_id if isinstance(model_id, str) else None
        await anyio.lowlevel.checkpoint()

    # -- turns ---------------------------------------------------------------------------

    async def do_prompt_turn(self, options: PromptTurnOptions) -> NodePromptControl:
        """Start a turn with ``options.prompt`` in the host."""
        return await self._start_turn(options, "doPromptTurn", prompt=options.prompt)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> NodePromptControl:
        """Continue the unfinished turn in the host."""
        return await self._start_turn(options, "doContinueTurn")

    async def _start_turn(
        self, options: ContinueTurnOptions, method: str, *, prompt: Any = None
    ) -> NodePromptControl:
        self._check_live(method)
        self._turn_count += 1
        turn = Turn(
            index=self._turn_count, turn_id=f"{self._handle}-t{self._turn_count}", options=options
        )
        self._turns[turn.turn_id] = turn
        self._host.process.route(f"turn:{turn.turn_id}", self._port.put)
        params: dict[str, Any] = {
            "session": self._handle,
            "turn": turn.turn_id,
            "tools": [_wire(tool) for tool in options.tools],
            "skills": [_wire(skill) for skill in options.skills],
        }
        if method == "doPromptTurn":
            params["prompt"] = prompt if isinstance(prompt, str) else _wire(prompt)
        if options.instructions is not None:
            params["instructions"] = options.instructions
        if options.response_format is not None:
            params["responseFormat"] = _wire(options.response_format)
        model = options.model if options.model is not None else self._harness.default_model
        if model is not None:
            params["model"] = model
        self._harness.observations.record(
            TurnStarted(
                session_id=self.session_id,
                turn=turn.index,
                call="prompt" if method == "doPromptTurn" else "continue",
                prompt=prompt if method == "doPromptTurn" else None,
                tools=list(options.tools),
                skills=[skill.name for skill in options.skills],
                instructions=options.instructions,
                model=options.model,
                response_format=_wire(options.response_format)
                if options.response_format is not None
                else None,
            )
        )

        def sent(request_id: int) -> None:
            turn.request_id = request_id

        result = await call(
            self._host.process, method, params, timeout=CALL_TIMEOUT, port=self._port, on_sent=sent
        )
        controls = result.get("controls", {}) if isinstance(result, dict) else {}
        if options.abort is not None:
            self._watch_abort(turn, options.abort)
        return prompt_control(self, turn, controls)

    def _watch_abort(self, turn: Turn, abort: anyio.Event) -> None:
        async def watch() -> None:
            async with anyio.create_task_group() as group:

                async def on_abort() -> None:
                    await abort.wait()
                    if turn.request_id is not None:
                        self._host.process.notify("$/cancelRequest", {"id": turn.request_id})
                    group.cancel_scope.cancel()

                group.start_soon(on_abort)
                await turn.ended.wait()
                group.cancel_scope.cancel()

        spawn_detached(watch)

    def _on_emit(self, turn_id: str, part: Any, seq: Any, checkpoint: bool) -> None:
        if isinstance(part, dict) and part.get("$broken"):
            for live in self._turns.values():
                if not live.ended.is_set():
                    live.failure = self._host.process.broken
            return
        turn = self._turns.get(turn_id)
        if turn is None:
            return
        turn.received += 1
        if seq != turn.received and turn.failure is None:
            # The host numbers parts where the adapter emits them: a gap is a part lost
            # inside the host (for example emitted before it wired its consumer).
            turn.failure = HostProtocolError(
                "HOST-013",
                f"{self._host.target.label}: emit {turn.received} of turn {turn_id} carries "
                f"seq {seq!r}: the host lost parts the adapter emitted (they count from 1, "
                "with no gap)",
            )
            if self._harness.boundary_failure is None:
                self._harness.boundary_failure = turn.failure
            # The consumer would see a stream with a hole in it; it sees no more, and the
            # turn is aborted, so done() ends it with this failure.
            if turn.request_id is not None:
                self._host.process.notify("$/cancelRequest", {"id": turn.request_id})
        if _lost_parts(turn):
            return
        if isinstance(part, dict):
            self._observe_part(turn, part)
        if checkpoint:
            part = with_checkpoint(part, self._host.process, turn_id, seq)
        try:
            turn.options.emit(part)
        except Exception as error:
            # The agent refused the part (an untrusted boundary): the turn fails with it.
            if turn.failure is None:
                turn.failure = error

    def _observe_part(self, turn: Turn, part: dict[str, Any]) -> None:
        kind = part.get("type")
        if kind == "tool-call" and part.get("providerExecuted") is True:
            name = str(part.get("toolName", ""))
            self._calls[str(part.get("toolCallId"))] = {
                "name": name,
                "input": part.get("input"),
                "mark": self._evidence.mark(),
            }
        elif kind == "tool-approval-request":
            call_id = str(part.get("toolCallId"))
            self._approvals[str(part.get("approvalId"))] = call_id
            name = str(self._calls.get(call_id, {}).get("name", part.get("toolName", "")))
            self._harness.observations.record(
                ApprovalRequested(
                    session_id=self.session_id,
                    turn=turn.index,
                    approval_id=str(part.get("approvalId")),
                    tool_call_id=call_id,
                    tool_name=name,
                    because="permission-mode",
                )
            )
        elif kind == "tool-result" and str(part.get("toolCallId")) in self._calls:
            call_id = str(part.get("toolCallId"))
            seen = self._calls.pop(call_id)
            name = seen["name"]
            surface: Literal["builtin", "mcp"] = (
                "builtin" if name in self._harness.builtin_tools else "mcp"
            )
            tool_input = _as_object(seen["input"])
            ran = self._evidence.ran(
                name, self._harness.builtin_tools.get(name), tool_input, since=seen["mark"]
            )
            reason: Literal["filtered", "denied", "unavailable"] | None = None
            if not ran:
                reason = "denied" if call_id in self.denied else "unavailable"
            self._harness.observations.record(
                ToolExecuted(
                    session_id=self.session_id,
                    turn=turn.index,
                    tool_call_id=call_id,
                    tool_name=name,
                    surface=surface,
                    input=tool_input,
                    executed=ran,
                    result=part.get("result"),
                    is_error=bool(part.get("isError")),
                    reason=reason,
                )
            )

    # -- sandbox calls from the host -------------------------------------------------------

    def _env(self, given: Any) -> dict[str, str] | None:
        """A command's environment: the profile's sandbox defaults under its own."""
        defaults = dict(self._host.sandbox.env)
        if isinstance(given, dict):
            defaults.update({str(key): str(value) for key, value in given.items()})
        return defaults or None

    async def _run(self, params: dict[str, Any]) -> dict[str, Any]:
        command = str(params["command"])
        env = self._env(params.get("env"))
        self._evidence.record("run", command=command, cwd=params.get("workingDirectory"))
        result = await self._sandbox.run(
            command,
            working_directory=params.get("workingDirectory"),
            env=env,
        )
        return {"exitCode": result.exit_code, "stdout": result.stdout, "stderr": result.stderr}

    async def _spawn(self, params: dict[str, Any]) -> dict[str, Any]:
        command = str(params["command"])
        env = self._env(params.get("env"))
        self._evidence.record("run", command=command, cwd=params.get("workingDirectory"))
        process = await self._sandbox.spawn(
            command,
            working_directory=params.get("workingDirectory"),
            env=env,
        )
        handle = f"{self._handle}-p{len(self._processes) + 1}"
        self._processes[handle] = process
        self._host.process.route(f"process:{handle}", self._port.put)
        host = self._host.process

        async def pump() -> None:
            async def forward(stream: Any, name: str) -> None:
                async for chunk in stream:
                    host.notify(
                        "process/output",
                        {
                            "process": handle,
                            "stream": name,
                            "base64": base64.b64encode(chunk).decode(),
                        },
                    )

            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(forward, process.stdout, "stdout")
                    group.start_soon(forward, process.stderr, "stderr")
                code = await process.wait()
            except Exception:
                code = -1
            host.notify("process/exit", {"process": handle, "exitCode": code})
            host.unroute(f"process:{handle}")
            self._processes.pop(handle, None)

        spawn_detached(pump)
        return {"process": handle, "pid": process.pid}

    async def _kill(self, params: dict[str, Any]) -> None:
        process = self._processes.get(str(params.get("process")))
        if process is not None:
            await process.kill()

    async def _read_text(self, params: dict[str, Any]) -> dict[str, Any]:
        path = str(params["path"])
        self._evidence.record("read", path=path)
        content = await self._sandbox.read_text_file(
            path,
            start_line=params.get("startLine"),
            end_line=params.get("endLine"),
            encoding=params.get("encoding") or "utf-8",
        )
        return {"content": content}

    async def _read_binary(self, params: dict[str, Any]) -> dict[str, Any]:
        path = str(params["path"])
        self._evidence.record("read", path=path)
        content = await self._sandbox.read_binary_file(path)
        return {"base64": None if content is None else base64.b64encode(content).decode()}

    async def _write_text(self, params: dict[str, Any]) -> None:
        path = str(params["path"])
        self._evidence.record("write", path=path)
        await self._sandbox.write_text_file(
            path, str(params["content"]), encoding=params.get("encoding") or "utf-8"
        )

    async def _write_binary(self, params: dict[str, Any]) -> None:
        path = str(params["path"])
        self._evidence.record("write", path=path)
        await self._sandbox.write_binary_file(path, base64.b64decode(str(params["base64"])))

    # -- turn control (used by NodePromptControl) -------------------------------------------

    async def submit(self, turn: Turn, method: str, params: dict[str, Any]) -> None:
        """Send a prompt-control call of ``turn``."""
        await call(
            self._host.process,
            method,
            {"turn": turn.turn_id, **params},
            timeout=CALL_TIMEOUT,
            port=self._port,
        )

    async def wait_done(self, turn: Turn) -> None:
        """Wait for the host's ``done`` of ``turn``; raise the turn's error."""
        try:
            await call(
                self._host.process,
                "done",
                {"turn": turn.turn_id},
                timeout=TURN_TIMEOUT,
                port=self._port,
            )
        except BaseException as error:
            if isinstance(error, Exception) and _lost_parts(turn):
                # The kit aborted the turn because the host lost parts: that ended it.
                assert turn.failure is not None
                error = turn.failure
            self._record_end(turn, error)
            raise error
        finally:
            turn.ended.set()
        if turn.failure is not None:
            self._record_end(turn, turn.failure)
            raise turn.failure
        self._record_end(turn, None)

    def _record_end(self, turn: Turn, error: BaseException | None) -> None:
        if error is None:
            event: Literal["finish", "aborted", "failed"] = "finish"
        elif getattr(error, "name", "") == "AbortError":
            event = "aborted"
        else:
            event = "failed"
        self._harness.observations.record(
            LifecycleEvent(
                session_id=self.session_id,
                event=event,
                turn=turn.index,
                detail=str(error) if error is not None else None,
            )
        )

    def deny(self, approval_id: str) -> None:
        """Note that the call behind ``approval_id`` was denied (for the observations)."""
        call_id = self._approvals.get(approval_id)
        if call_id is not None:
            self.denied.add(call_id)

    def record(self, entry: Any) -> None:
        """Append an observation to the adapter's log."""
        self._harness.observations.record(entry)

    # -- lifecycle -----------------------------------------------------------------------

    async def do_suspend_turn(self) -> ContinueTurnState:
        """Suspend the active turn in the host; returns its continue-turn state."""
        self._check_live("suspend a turn")
        state = await self._lifecycle("doSuspendTurn")
        self._remember_cursor()
        self.record(LifecycleEvent(session_id=self.session_id, event="suspend"))
        suspended: ContinueTurnState = _state(state, "continue-turn")
        return suspended

    async def do_detach(self) -> ResumeSessionState:
        """Detach in the host; returns its resume state."""
        return await self._end("doDetach", "detach")  # type: ignore[return-value]

    async def do_stop(self) -> ResumeSessionState:
        """Stop in the host; returns its resume state."""
        return await self._end("doStop", "stop")  # type: ignore[return-value]

    async def do_destroy(self) -> None:
        """Destroy the session in the host."""
        await self._end("doDestroy", "destroy")

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        """Ask the adapter to compact (it may refuse with the capability error)."""
        self._check_live("compact")
        params: dict[str, Any] = {"session": self._handle}
        if custom_instructions is not None:
            params["customInstructions"] = custom_instructions
        await call(self._host.process, "doCompact", params, timeout=CALL_TIMEOUT, port=self._port)

    async def _lifecycle(self, method: str) -> Any:
        return await call(
            self._host.process,
            method,
            {"session": self._handle},
            timeout=CALL_TIMEOUT,
            port=self._port,
        )

    async def _end(
        self, method: str, event: Literal["detach", "stop", "destroy"]
    ) -> ResumeSessionState | dict[str, Any] | None:
        self._check_live(event)
        self._ended = event
        try:
            state = await self._lifecycle(method)
        finally:
            self._remember_cursor()
            await self._close()
        self.record(LifecycleEvent(session_id=self.session_id, event=event))
        if method == "doDestroy":
            return None
        resumable: ResumeSessionState | dict[str, Any] = _state(state, "resume-session")
        return resumable

    def _remember_cursor(self) -> None:
        if self._endpoint is not None:
            self._host.script_cursors[self.session_id] = self._endpoint.next_reply()

    async def _close(self) -> None:
        for turn in self._turns.values():
            turn.ended.set()
            self._host.process.unroute(f"turn:{turn.turn_id}")
        self._host.process.unroute(f"session:{self._handle}")
        self._port.close()
        if self._endpoint is not None:
            await self._endpoint.close()

    def _check_live(self, what: str) -> None:
        if self._ended is not None:
            raise HarnessSessionStateError(
                f"Node adapter session {self.session_id} has ended ({self._ended}); it cannot "
                f"{what}. Start a new session (resume from the state it returned)."
            )
        broken = self._host.process.broken
        if broken is not None:
            raise broken


def _wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


def _as_object(raw: Any) -> dict[str, JSONValue]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        import json

        try:
            decoded = json.loads(raw)
        except ValueError:
            return {}
        return decoded if isinstance(decoded, dict) else {}
    return {}


def _state(raw: Any, expected: Literal["resume-session", "continue-turn"]) -> Any:
    """The state as the spec's model, or as the host sent it when it is not valid (the
    agent then refuses it, and the checks judge what the adapter returned)."""
    try:
        return parse_lifecycle_state(raw, expected_type=expected)
    except Exception:
        if isinstance(raw, dict):
            return raw
        raise HarnessTurnError(
            f"the adapter returned {type(raw).__name__} where a {expected} state belongs"
        ) from None
