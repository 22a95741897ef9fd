"""Serving the kit's script from the scripted model endpoint (one endpoint per session).

The script is converted with the endpoint's ``from_kit_script``: built-ins by their
native names, host tools by the names the in-process MCP server offers them under
(``mcp__harness-tools__<name>``). A session resumed or continued in another adapter
starts its endpoint where the previous one stopped (lifecycle states carry the index of
the next reply), so the script goes on instead of starting over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from harness_testkit.scripting import (
    BuiltinCallAction,
    ErrorAction,
    HostToolCallAction,
    McpCallAction,
    Script,
    ScriptStep,
    TextAction,
)

from ._builtins import BUILTIN_TOOLS, HOST_SERVER

if TYPE_CHECKING:
    from harness_testkit.model_endpoint import EndpointScript, ModelEndpoint

__all__ = ["ScriptedEndpoint"]


_CALLS = (BuiltinCallAction, HostToolCallAction, McpCallAction)
#: Actions whose reply the CLI counts as output (a reply without any is retried).
_VISIBLE = (*_CALLS, TextAction, ErrorAction)


def _answers_retry(steps: list[ScriptStep]) -> bool:
    """Whether the CLI asks once more after the turn's last step.

    The CLI answers a reply with no visible output (no text, no tool call: empty,
    reasoning or delays only) with one retry ("Your previous response had no visible
    output"), and ends the turn when the retry gets no visible output either. A turn
    ending in an odd run of such replies therefore makes one more request.
    """
    run = 0
    for step in reversed(steps):
        if any(isinstance(action, _VISIBLE) for action in step.actions):
            break
        run += 1
    return run % 2 == 1


def _requested(steps: list[ScriptStep]) -> list[ScriptStep]:
    """The steps of a turn the CLI asks for: up to the reply that ends its turn.

    The CLI goes on after a reply that calls tools (it sends the results back) and retries
    a reply without visible output once; a reply with text and no tool call ends the
    turn, so the steps after it are never requested (served, they would answer the next
    turn's requests instead). Unknown from here, so kept: what follows a conditional
    step (it may be skipped) or a scripted error (the CLI may retry the request).
    """
    retried = False
    for index, step in enumerate(steps):
        if step.when is not None or any(isinstance(a, ErrorAction) for a in step.actions):
            return steps
        if any(isinstance(a, _CALLS) for a in step.actions):
            retried = False
        elif any(isinstance(a, TextAction) for a in step.actions) or retried:
            return steps[: index + 1]
        else:
            retried = True
    return steps


def _runtime_script(script: Script) -> Script:
    """``script`` as this runtime can live it.

    A wait for a mid-turn user message is a model that keeps working (Claude Code here
    takes no mid-turn messages), so it becomes a delay of its timeout (at most the
    endpoint's longest pause, 600 s) while the response streams. A turn's last step that
    calls tools gets an empty closing reply, and a retry of a last reply without output
    gets one too (see :func:`_answers_retry`); steps after the reply that ends the turn in
    the CLI are left out (see :func:`_requested`). ``raw`` parts, opaque file changes and
    faults (crashes, hangs, malformed parts at stream positions) are events of the fake
    runtime itself that no model reply can cause in the real CLI, so the scripted model
    leaves them out (checks that need them fail, as declared).
    """
    from harness_testkit.model_endpoint import servable_steps

    turns = []
    for turn in script.turns:
        # Every step left out (or none at all): the CLI still asks the model once, which
        # answers with nothing (and the retry of that empty reply is answered below).
        steps = servable_steps(turn)
        steps = _requested(steps)
        if steps and any(isinstance(a, _CALLS) for a in steps[-1].actions):
            # The fake runtime ends a turn after its last step; the CLI sends the last
            # step's tool results back to the model, which then has to end the turn.
            steps.append(ScriptStep())
        if _answers_retry(steps):
            # The CLI's retry of an empty last reply gets an empty reply too (else it
            # would take the next turn's first reply, or repeat the script).
            steps.append(ScriptStep())
        turns.append(turn.model_copy(update={"steps": steps, "faults": []}))
    return script.model_copy(update={"turns": turns, "faults": []})


def _native_names() -> dict[str, str]:
    return {key: tool.native_name for key, tool in BUILTIN_TOOLS.items() if tool.native_name}


class ScriptedEndpoint:
    """A running model endpoint serving a kit script from reply ``offset`` on."""

    def __init__(self, endpoint: ModelEndpoint, script: EndpointScript, offset: int) -> None:
        self._endpoint = endpoint
        self._script = script
        self._offset = offset
        self._served_before = 0

    @classmethod
    async def open(cls, script: Script, *, work_dir: str, offset: int = 0) -> ScriptedEndpoint:
        """Convert ``script`` and start serving it on ``127.0.0.1``."""
        from harness_testkit.model_endpoint import ModelEndpoint, from_kit_script

        converted = from_kit_script(
            _runtime_script(script),
            tool_names=_native_names(),
            host_tool_name=lambda name: f"mcp__{HOST_SERVER}__{name}",
            workdir=work_dir,
            # The CLI resolves relative paths against its working directory (the session
            # work dir), so the model's inputs stay the script's (ADAPTER-057).
            absolute_paths=False,
        )
        endpoint = ModelEndpoint(converted.from_reply(offset))
        await anyio.to_thread.run_sync(endpoint.start)
        return cls(endpoint, converted, offset)

    @property
    def base_url(self) -> str:
        """``ANTHROPIC_BASE_URL`` for the CLI."""
        return self._endpoint.base_url

    def next_reply(self) -> int:
        """Index (in the whole converted script) of the reply the next request gets."""
        requests = self._endpoint.requests[self._served_before :]
        served = [r.reply_index for r in requests if r.reply_index is not None]
        return self._offset + (served[-1] + 1 if served else 0)

    async def rewind(self, reply: int) -> None:
        """Serve from reply ``reply`` (of the whole converted script) again."""
        self._served_before = len(self._endpoint.requests)
        self._offset = reply
        self._endpoint.set_script(self._script.from_reply(reply))
        await anyio.lowlevel.checkpoint()

    def errors(self) -> list[Any]:
        """Requests the script did not foresee (answered with an endpoint error)."""
        return list(self._endpoint.errors)

    async def close(self) -> None:
        """Stop serving."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._endpoint.stop)
