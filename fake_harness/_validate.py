"""Checks a script against the profile it will run on, before anything runs.

Pydantic validates a script's shape; what only the profile can say is checked here:
built-in calls must name a built-in of the profile (``bsh`` is not ``bash``), and a
step's ``when.toolCallId`` must name a call of an earlier step of the same turn.
"""

from __future__ import annotations

import re

from harness_testkit.scripting import BuiltinCallAction, HostToolCallAction, McpCallAction, Script

from ._profiles import HarnessProfile

__all__ = ["ScriptProblem", "script_problems"]

#: ``(path inside the script document, problem)``; the path uses wire (camelCase) keys.
ScriptProblem = tuple[tuple[str | int, ...], str]


def script_problems(script: Script, profile: HarnessProfile) -> list[ScriptProblem]:
    """Every reference in ``script`` that ``profile`` cannot satisfy (empty: none)."""
    known: dict[str, str] = {}
    for key, tool in profile.builtin_tools.items():
        known[key] = key
        if tool.native_name:
            known[tool.native_name] = key
    problems: list[ScriptProblem] = []
    for t, turn in enumerate(script.turns):
        call_ids: list[str] = []
        for s, step in enumerate(turn.steps):
            where = ("turns", t, "steps", s)
            condition = step.when
            if condition is not None and condition.tool_call_id is not None:
                wanted = condition.tool_call_id
                automatic = re.fullmatch(rf"call-{t}-\d+-\d+", wanted) is not None
                if wanted not in call_ids and not automatic:
                    earlier = ", ".join(call_ids) or "none"
                    problems.append(
                        (
                            (*where, "when", "toolCallId"),
                            f"{wanted!r} names no call of an earlier step of turn {t} "
                            f"(calls with an id there: {earlier}); give the call `id: {wanted}`",
                        )
                    )
            for a, action in enumerate(step.actions):
                if isinstance(action, BuiltinCallAction) and action.tool not in known:
                    problems.append(
                        (
                            (*where, "actions", a),
                            f"{action.tool!r} is not a built-in of profile {profile.name!r}; "
                            f"known: {', '.join(sorted(known))}",
                        )
                    )
                if (
                    isinstance(action, BuiltinCallAction | HostToolCallAction | McpCallAction)
                    and action.id is not None
                ):
                    call_ids.append(action.id)
    return problems
