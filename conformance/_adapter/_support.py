"""Shared helpers of the checks: scripts, host tool counters, observations, the stream
grammar first, and the validation of lifecycle states an adapter returns."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import anyio
from pydantic import BaseModel, TypeAdapter

from harness_testkit.reference import (
    SandboxConfig,
    Tool,
    ToolExecutionOptions,
    tool,
)
from harness_testkit.spec import (
    HarnessSessionStateError,
    SandboxSession,
    parse_lifecycle_state,
)

from .._checks import CheckFailed
from .._context import CheckContext
from ._grammar import (
    continue_call_violation,
    recorded_violations,
    to_wire,
)
from ._recording import RecordingAdapter

__all__ = [
    "BUILTIN_INPUTS",
    "SEEDED",
    "USER_TOOL_NAMES",
    "HostToolCounter",
    "builtin_call_actions",
    "executable_builtins",
    "executions",
    "grammar_first",
    "judge_recorded_states",
    "make_script",
    "observations",
    "require_continue_controls",
    "returned_state",
    "set_script",
    "settles",
    "turn_already_over",
    "validate_state",
]

#: Fixed, deterministic inputs for the built-ins a scripted runtime executes.
BUILTIN_INPUTS: Mapping[str, dict[str, Any]] = {
    "write": {"file_path": "conformance/w.txt", "content": "written\n"},
    "read": {"file_path": "conformance/r.txt"},
    "edit": {"file_path": "conformance/r.txt", "old_string": "seed", "new_string": "edited"},
    "bash": {"command": "echo conformance"},
    "grep": {"pattern": "seed"},
    "glob": {"pattern": "**/*.txt"},
}
USER_TOOL_NAMES = ("lookup", "weather", "notes")


class HostToolCounter:
    """Host tools whose executions are counted by name and call id."""

    def __init__(self) -> None:
        self.by_call: Counter[str] = Counter()
        self.by_name: Counter[str] = Counter()

    @staticmethod
    def output(name: str) -> dict[str, Any]:
        """What the tool named ``name`` returns from every execution."""
        return {"tool": name, "ok": True}

    def make(self, name: str, *, client_side: bool = False) -> Tool:
        """A host tool named ``name`` that records every execution."""

        def execute(value: Any, options: ToolExecutionOptions) -> Any:
            self.by_call[options.tool_call_id] += 1
            self.by_name[name] += 1
            return self.output(name)

        return tool(
            description=f"Conformance tool {name}",
            input_schema={"type": "object"},
            execute=None if client_side else execute,
        )


def builtin_call_actions(builtins: Sequence[str], prefix: str = "b") -> list[dict[str, Any]]:
    """Script actions calling each executable built-in once (ids ``<prefix><n>``)."""
    return [
        {"builtin": name, "id": f"{prefix}{index}-{name}", "input": BUILTIN_INPUTS[name]}
        for index, name in enumerate(builtins)
        if name in BUILTIN_INPUTS
    ]


def executable_builtins(adapter: RecordingAdapter) -> list[str]:
    return [key for key in adapter.builtin_tools if key in BUILTIN_INPUTS]


def make_script(*steps: list[dict[str, Any]], announce: bool = True) -> dict[str, Any]:
    return {
        "version": 1,
        "turns": [
            {
                "steps": [
                    {"actions": actions, "announceToolCallCount": announce} for actions in steps
                ]
            }
        ],
        "whenExhausted": "repeat-last",
    }


def set_script(adapter: RecordingAdapter, script: Mapping[str, Any]) -> None:
    from harness_testkit.scripting import Script

    setter = getattr(adapter, "set_script", None)
    if setter is None:
        raise CheckFailed("TOOLSPEC-019", "the adapter declares scripting but has no set_script()")
    setter(Script.model_validate(dict(script)))


def observations(adapter: RecordingAdapter) -> Any:
    log = getattr(adapter, "observations", None)
    if log is None:
        raise CheckFailed("TOOLSPEC-019", "the adapter declares scripting but has no observations")
    return log


def executions(*adapters: RecordingAdapter) -> dict[str, list[Any]]:
    """``ToolExecuted`` observations by call id, over every adapter given.

    A turn continued from a JSON state runs in another adapter: what ran before the
    suspension is in the first adapter's log, what ran after in the next one's.
    """
    from harness_testkit.scripting import ToolExecuted

    found: dict[str, list[Any]] = {}
    for adapter in adapters:
        for entry in observations(adapter).of_kind(ToolExecuted):
            found.setdefault(entry.tool_call_id, []).append(entry)
    return found


async def _write_seed_file(session: SandboxSession, work_dir: str) -> None:
    # read/edit/grep built-ins need a file to work on.
    await session.write_text_file(f"{work_dir}/conformance/r.txt", "seed line\n")


#: Sandbox set-up shared by the checks that run built-ins.
SEEDED = SandboxConfig(on_session=_write_seed_file)


def _is_must(requirement: str) -> bool:
    from harness_testkit.spec import load_requirements

    try:
        return load_requirements().get(requirement).level == "MUST"
    except KeyError:
        return True


def _grammar(
    ctx: CheckContext,
    adapters: Sequence[RecordingAdapter] | None = None,
    *,
    must_only: bool = False,
) -> None:
    """Stream grammar over everything the check's adapters (or ``adapters``) emitted.

    A MUST violation is reported before a SHOULD one; with ``must_only`` only MUST
    violations are reported (a SHOULD slip never hides the failure a check found).
    """
    # A do_continue_turn that raised (any adapter of the check) is the cause of whatever
    # the turn's parts look like afterwards: it comes first.
    require_continue_controls(ctx.adapters)
    judged = ctx.adapters if adapters is None else adapters
    if not judged:
        return
    first = judged[0]
    violations = recorded_violations(
        [session for adapter in judged for session in adapter.sessions],
        builtin_tools=first.builtin_tools,
        harness_id=first.harness_id,
    )
    musts = [violation for violation in violations if _is_must(violation.requirement)]
    chosen = musts[0] if musts else (violations[0] if violations and not must_only else None)
    if chosen is not None:
        raise CheckFailed(chosen.requirement, str(chosen))


def require_continue_controls(adapters: Sequence[RecordingAdapter]) -> None:
    """Every ``do_continue_turn`` returned a prompt control instead of raising
    (ADAPTER-028 after a pause; LIFECYCLE-041 in a session restored from a turn state)."""
    for adapter in adapters:
        for session in adapter.sessions:
            for recorded in session.slices:
                if recorded.kind == "continue" and recorded.call_error is not None:
                    violation = continue_call_violation(
                        recorded.call_error, restored=bool(session.start.get("continue"))
                    )
                    raise CheckFailed(violation.requirement, violation.message)


@contextlib.contextmanager
def grammar_first(
    ctx: CheckContext, adapters: Sequence[RecordingAdapter] | None = None
) -> Iterator[None]:
    """Run the stream grammar when the turns inside are over, before any other verdict.

    A check's own assertions (and the agent's reactions) often trip over a stream the
    adapter got wrong: the grammar names that cause. So it runs when the turns end and
    also when driving them fails, and its violation wins over the failure it caused
    (when driving failed, only a MUST violation wins: a SHOULD slip is not its cause).

    Args:
        ctx: The check's context.
        adapters: Judge only these adapters' sessions (default: all of the check's),
            read when the block ends.
    """
    try:
        yield
    except Exception:
        _grammar(ctx, adapters, must_only=True)
        raise
    _grammar(ctx, adapters)


@contextlib.contextmanager
def settles(ctx: CheckContext, what: str = "the turn") -> Iterator[None]:
    """Bound the block by the declared turn timeout; over it is an ADAPTER-044 failure.

    Nothing inside was aborted, so the adapter's turn (or operation) simply did not
    settle: its ``done()`` neither returned nor raised. A bare ``TimeoutError`` would be
    an error of the check, not the adapter failure it is.
    """
    timeout = ctx.capabilities.turn_timeout
    try:
        with anyio.fail_after(timeout):
            yield
    except TimeoutError as error:
        raise CheckFailed(
            "ADAPTER-044",
            f"{what} did not settle within {timeout:g} s {ctx.turn_limit_note}: its "
            "done() neither returned nor raised",
        ) from error


def validate_state(adapter: RecordingAdapter, raw: object, expected: str) -> None:
    wire = to_wire(raw)
    try:
        text = json.dumps(wire)
    except (TypeError, ValueError) as error:
        raise CheckFailed("LIFECYCLE-006", f"the {expected} state is not JSON: {error}") from error
    if isinstance(wire, dict):
        if (
            wire.get("harnessId") != adapter.harness_id
            or wire.get("specificationVersion") != "harness-v1"
        ):
            raise CheckFailed(
                "LIFECYCLE-005",
                f"the {expected} state does not carry the adapter's id and harness-v1",
                expected={"harnessId": adapter.harness_id, "specificationVersion": "harness-v1"},
                observed={k: wire.get(k) for k in ("type", "harnessId", "specificationVersion")},
            )
        if expected == "resume-session" and (
            "pendingToolApprovals" in wire or "pendingToolResults" in wire
        ):
            raise CheckFailed(
                "LIFECYCLE-007", "a resume-session state from the adapter carries pending lists"
            )
    try:
        state = parse_lifecycle_state(
            json.loads(text),
            expected_type="resume-session" if expected == "resume-session" else "continue-turn",
            harness_id=adapter.harness_id,
        )
    except Exception as error:
        raise CheckFailed("LIFECYCLE-005", f"the {expected} state is invalid: {error}") from error
    schema_problem = _off_schema(getattr(adapter, "lifecycle_state_schema", None), state.data)
    if schema_problem is not None:
        raise CheckFailed(
            "ADAPTER-008",
            f"the {expected} state's data does not validate against the adapter's own "
            f"lifecycle_state_schema: {schema_problem}",
        )
    if json.loads(json.dumps(state.to_wire())) != state.to_wire():
        raise CheckFailed(
            "LIFECYCLE-006", f"the {expected} state changes through a JSON round trip"
        )


def _off_schema(schema: Any, data: Any) -> str | None:
    """Why ``data`` fails ``schema`` (a pydantic model, TypeAdapter or parsing callable)."""
    if schema is None:
        return None
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            schema.model_validate(data)
        elif isinstance(schema, TypeAdapter):
            schema.validate_python(data)
        elif callable(schema):
            schema(data)
    except Exception as error:
        return str(error).splitlines()[0]
    return None


async def returned_state(
    adapter: RecordingAdapter, produce: Callable[[], Awaitable[Any]], expected: str
) -> Any:
    """``await produce()`` (the agent's detach/stop), judging the adapter's raw state first.

    The agent validates the state the adapter returned and refuses a bad one; that
    refusal is the lifecycle rule the state broke (LIFECYCLE-005/006/007), so the raw
    state recorded from the adapter is judged before the agent's error counts.
    """
    try:
        state = await produce()
    except Exception:
        judge_recorded_states(adapter, expected)
        raise
    judge_recorded_states(adapter, expected)
    return state


def judge_recorded_states(adapter: RecordingAdapter, expected: str) -> None:
    """:func:`validate_state` over the last state the adapter's last session returned."""
    method = "do_suspend_turn" if expected == "continue-turn" else None
    for session in reversed(adapter.sessions):
        states = [item for item in session.states if method is None or item["from"] == method]
        if states:
            validate_state(adapter, states[-1]["state"], expected)
            return


def turn_already_over(error: BaseException | None) -> bool:
    """Whether suspend_turn failed only because the turn had already finished."""
    # Only the agent's own refusal of an idle session may skip the check: an invalid
    # state or an adapter error means do_suspend_turn itself is broken.
    return isinstance(error, HarnessSessionStateError) and "has no unfinished turn" in str(error)
