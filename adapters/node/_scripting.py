"""The scripting extension for a Node adapter: the kit's script, served as its model.

Each session gets a :class:`~harness_testkit.model_endpoint.ModelEndpoint` on
``127.0.0.1`` serving the kit's script, converted with ``from_kit_script``: built-ins
by the native names the adapter declared, host tools by their own names. A runtime's
agent loop asks its model again after every reply that calls tools and ends the turn at a
reply that calls none, so the served script is the script as such a runtime can live it
(:func:`runtime_script`). Events of the fake runtime that no model reply can cause (raw
parts, opaque file changes, faults) are left out; checks that need them fail, and the
target declares them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit.scripting import (
    BuiltinCallAction,
    ErrorAction,
    HostToolCallAction,
    McpCallAction,
    Script,
    ScriptStep,
)
from harness_testkit.spec import BuiltinTool

if TYPE_CHECKING:
    from harness_testkit.model_endpoint import ModelEndpoint

__all__ = ["ScriptedEndpoint", "runtime_script"]

_CALLS = (BuiltinCallAction, HostToolCallAction, McpCallAction)

Protocol = Literal["anthropic", "openai-responses", "openai-chat"]


def _requested(steps: list[ScriptStep]) -> list[ScriptStep]:
    """The steps a model-driven loop asks for: up to the first reply without tool calls.

    Kept whole where that cannot be known from here: a conditional step (it may be
    skipped) or a scripted error (the runtime may retry the request).
    """
    for index, step in enumerate(steps):
        if step.when is not None or any(isinstance(a, ErrorAction) for a in step.actions):
            return steps
        if not any(isinstance(a, _CALLS) for a in step.actions):
            return steps[: index + 1]
    return steps


def runtime_script(script: Script) -> Script:
    """``script`` as a runtime driven by a model endpoint can live it.

    A wait for a mid-turn user message becomes a delay of its timeout (at most 600 s); a
    turn's last step that calls tools gets an empty closing reply (the runtime sends the
    results back and the model has to end the turn); steps after the reply that ends the
    turn are left out (served, they would answer the next turn); raw parts, opaque file
    changes and faults are left out.
    """
    from harness_testkit.model_endpoint import servable_steps

    turns = []
    for turn in script.turns:
        steps = servable_steps(turn)
        steps = _requested(steps)
        if any(isinstance(a, _CALLS) for a in steps[-1].actions):
            steps.append(ScriptStep())
        turns.append(turn.model_copy(update={"steps": steps, "faults": []}))
    return script.model_copy(update={"turns": turns, "faults": []})


class ScriptedEndpoint:
    """A running model endpoint serving a kit script to one session."""

    def __init__(self, endpoint: ModelEndpoint, offset: int) -> None:
        self._endpoint = endpoint
        self._offset = offset

    @classmethod
    async def open(
        cls,
        script: Script,
        *,
        builtin_tools: Mapping[str, BuiltinTool],
        work_dir: str,
        offset: int = 0,
        protocol: Protocol = "anthropic",
        host_tool_name: Callable[[str], str] | None = None,
        port: int = 0,
    ) -> ScriptedEndpoint:
        """Convert ``script`` and serve it on ``127.0.0.1`` from reply ``offset`` on.

        ``port`` asks for that port (a resumed session's runtime, left running, still
        calls the endpoint its session started with); when it is taken, any free one.
        """
        from harness_testkit.model_endpoint import ModelEndpoint, from_kit_script

        del protocol  # one endpoint answers every protocol; the wiring picks the URL
        native = {key: tool.native_name for key, tool in builtin_tools.items() if tool.native_name}
        converted = from_kit_script(
            runtime_script(script),
            tool_names=native,
            host_tool_name=host_tool_name,
            workdir=work_dir,
            # Runtimes resolve relative paths against the session work dir, so the
            # model's inputs stay the script's (ADAPTER-057).
            absolute_paths=False,
        )
        endpoint = ModelEndpoint(converted.from_reply(offset), port=port)
        try:
            await anyio.to_thread.run_sync(endpoint.start)
        except OSError:
            if not port:
                raise
            endpoint = ModelEndpoint(converted.from_reply(offset))
            await anyio.to_thread.run_sync(endpoint.start)
        return cls(endpoint, offset)

    @property
    def port(self) -> int:
        """The loopback port it serves on."""
        return self._endpoint.port

    @property
    def base_url(self) -> str:
        """The endpoint's base URL (Anthropic clients as is; OpenAI clients add ``/v1``)."""
        return self._endpoint.base_url

    def next_reply(self) -> int:
        """Index (in the whole converted script) of the reply the next request gets."""
        served = [r.reply_index for r in self._endpoint.requests if r.reply_index is not None]
        return self._offset + (served[-1] + 1 if served else 0)

    def errors(self) -> list[Any]:
        """Requests the script did not foresee (answered with an endpoint error)."""
        return list(self._endpoint.errors)

    async def close(self) -> None:
        """Stop serving."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._endpoint.stop)
