"""Scripted check: what the adapter emits equals what its scripted model did.

The script says exactly what the model produced: text and reasoning blocks, tool calls
with their inputs (built-ins that succeed or fail, host tools that succeed or raise, MCP
tools that succeed or report an error, empty inputs) and each step's usage. The check
compares the adapter's harness stream with it, block by block (chunking is free), call
by call, result by result, and step by step. The runtime's observation log says what a
runtime-executed tool really returned. A lossy adapter declares the differences it
cannot avoid in ``AdapterCapabilities.emission_differences``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from harness_testkit.reference import Tool, tool

from .._checks import Check, CheckFailed, property_check
from .._context import CheckContext
from ._grammar import to_wire
from ._recording import RecordingAdapter
from ._support import BUILTIN_INPUTS, SEEDED, executions, grammar_first, set_script

__all__ = ["CHECKS", "EMISSION_CLASSES", "emission_script"]

#: Inputs that make each executable built-in fail (a missing file, a failing command).
_FAILING_INPUTS: Mapping[str, dict[str, Any]] = {
    "read": {"file_path": "conformance/missing.txt"},
    "edit": {"file_path": "conformance/missing.txt", "old_string": "a", "new_string": "b"},
    "bash": {"command": "exit 3"},
}
_MCP_SERVER = "conformance"
_HOST_OK, _HOST_FAILING = "lookup", "failing"
_KINDS = (
    "text",
    "reasoning",
    "builtin",
    "builtin-failing",
    "host",
    "host-failing",
    "mcp",
    "mcp-failing",
)
_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "is", "the", "ok", "?", "!"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)
_INPUT = st.dictionaries(
    st.sampled_from(["q", "n", "flag"]), st.integers(0, 9) | st.booleans(), max_size=2
)


def _action(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    if kind in ("text", "reasoning"):
        return st.fixed_dictionaries({"kind": st.just(kind), "text": _TEXT})
    if kind.startswith("builtin"):
        return st.just({"kind": kind})
    return st.fixed_dictionaries({"kind": st.just(kind), "input": _INPUT})


def _step() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "actions": st.lists(st.sampled_from(_KINDS).flatmap(_action), min_size=1, max_size=4),
            "usage": st.none() | st.tuples(st.integers(0, 500), st.integers(0, 500)).map(list),
        }
    )


def _scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {
            "steps": st.lists(_step(), min_size=1, max_size=3),
            "chunking": st.sampled_from(["words", "chars", "whole"]),
        }
    )


def _kinds(scenario: Mapping[str, Any]) -> list[str]:
    return [action["kind"] for step in scenario["steps"] for action in step["actions"]]


def _has(kind: str) -> Any:
    return lambda scenario: kind in _kinds(scenario)


def _empty_input(scenario: Mapping[str, Any]) -> bool:
    return any(
        action.get("input") == {}
        for step in scenario["steps"]
        for action in step["actions"]
        if action["kind"] in ("host", "host-failing", "mcp", "mcp-failing")
    )


#: The equivalence classes every run exercises (the examples below cover each).
EMISSION_CLASSES = {
    **{kind: _has(kind) for kind in _KINDS},
    "empty input": _empty_input,
    "usage": lambda scenario: any(step["usage"] is not None for step in scenario["steps"]),
    "several steps": lambda scenario: len(scenario["steps"]) > 1,
}

_EXAMPLES = (
    {
        "steps": [
            {
                "actions": [
                    {"kind": "reasoning", "text": "think about it"},
                    {"kind": "text", "text": "first the tools"},
                    {"kind": "builtin"},
                    {"kind": "builtin-failing"},
                    {"kind": "host", "input": {}},
                    {"kind": "host-failing", "input": {"q": 1}},
                    {"kind": "mcp", "input": {}},
                    {"kind": "mcp-failing", "input": {"n": 2}},
                ],
                "usage": [120, 30],
            },
            {"actions": [{"kind": "text", "text": "all done"}], "usage": None},
        ],
        "chunking": "words",
    },
    # A step without tool calls followed by another: every run asks for it (a runtime
    # whose turn ends at such a step fails here, not only when the draw finds it).
    {
        "steps": [
            {"actions": [{"kind": "text", "text": "first answer"}], "usage": None},
            {"actions": [{"kind": "text", "text": "second answer"}], "usage": None},
        ],
        "chunking": "whole",
    },
)


def _builtins(adapter: RecordingAdapter) -> tuple[str | None, str | None]:
    """An executable built-in for succeeding calls and one for failing calls."""
    names = [key for key in adapter.builtin_tools if key in BUILTIN_INPUTS]
    ok = next((name for name in ("read", "grep", "glob", "bash") if name in names), None)
    failing = next((name for name in _FAILING_INPUTS if name in names), None)
    return ok, failing


def emission_script(
    scenario: Mapping[str, Any], builtins: tuple[str | None, str | None]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The fake-harness script of ``scenario`` and the calls it makes, in order.

    Each call is ``{"id", "kind", "tool", "input"}``; built-in kinds the adapter cannot
    run (no executable built-in) are left out of the script.
    """
    steps: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for number, step in enumerate(scenario["steps"]):
        actions: list[dict[str, Any]] = []
        for position, action in enumerate(step["actions"]):
            kind, call_id = action["kind"], f"e{number}-{position}"
            if kind in ("text", "reasoning"):
                actions.append({kind: action["text"]})
                continue
            if kind.startswith("builtin"):
                name = builtins[1] if kind == "builtin-failing" else builtins[0]
                if name is None:
                    continue
                inputs = _FAILING_INPUTS if kind == "builtin-failing" else BUILTIN_INPUTS
                entry = {"builtin": name, "id": call_id, "input": dict(inputs[name])}
            elif kind.startswith("host"):
                name = _HOST_FAILING if kind == "host-failing" else _HOST_OK
                entry = {"hostTool": name, "id": call_id, "input": dict(action["input"])}
            else:
                tool_name = "fail" if kind == "mcp-failing" else "ok"
                name = f"{_MCP_SERVER}/{tool_name}"
                entry = {"mcp": name, "id": call_id, "input": dict(action["input"])}
            actions.append(entry)
            calls.append({"id": call_id, "kind": kind, "input": entry["input"]})
        scripted: dict[str, Any] = {"actions": actions, "announceToolCallCount": True}
        if step["usage"] is not None:
            scripted["usage"] = {"inputTokens": step["usage"][0], "outputTokens": step["usage"][1]}
        steps.append(scripted)
    script = {
        "version": 1,
        "chunking": {"mode": scenario["chunking"]},
        "turns": [{"steps": steps}],
        "whenExhausted": "repeat-last",
        "mcpServers": {
            _MCP_SERVER: {
                "tools": {
                    "ok": {"result": {"hits": 1}},
                    "fail": {"result": "MCP tool failed: index offline", "isError": True},
                }
            }
        },
    }
    return script, calls


def _host_tools() -> dict[str, Tool]:
    def lookup(value: Any, options: Any) -> Any:
        return {"found": True}

    def failing(value: Any, options: Any) -> Any:
        raise RuntimeError("lookup backend unavailable")

    schema = {"type": "object"}
    return {
        _HOST_OK: tool(description="Looks things up", input_schema=schema, execute=lookup),
        _HOST_FAILING: tool(description="Always fails", input_schema=schema, execute=failing),
    }


def _blocks(parts: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, text) of every text and reasoning block, in the order they started."""
    order: list[tuple[str, str]] = []
    texts: dict[tuple[str, str], list[str]] = {}
    for part in parts:
        kind, _, event = str(part.get("type", "")).partition("-")
        if kind not in ("text", "reasoning") or event not in ("start", "delta"):
            continue
        key = (kind, str(part.get("id")))
        if key not in texts:
            texts[key] = []
            order.append(key)
        if event == "delta":
            texts[key].append(str(part.get("delta", "")))
    return [(kind, "".join(texts[(kind, block)])) for kind, block in order]


def _expected_blocks(scenario: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (action["kind"], action["text"])
        for step in scenario["steps"]
        for action in step["actions"]
        if action["kind"] in ("text", "reasoning")
    ]


def _parsed(text: Any) -> Any:
    if text in ("", None):
        return {}
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


@property_check(
    "scripted.emission-equals-script",
    title="the adapter emits what its model did: blocks, calls and inputs, results with isError, usage",
    requirements=("ADAPTER-056", "ADAPTER-057", "TRANSLATE-012", "HOSTTOOL-007", "ADAPTER-058"),
    scenarios=_scenarios,
    examples=_EXAMPLES,
    classes=EMISSION_CLASSES,
)
async def emission_equals_script(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    script, calls = emission_script(scenario, _builtins(adapter))
    set_script(adapter, script)
    agent = ctx.agent(adapter, tools=_host_tools(), sandbox_config=SEEDED)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        consumer = await ctx.run_prompt(agent, session, "emission")
    parts = [to_wire(part) for item in adapter.sessions for s in item.slices for part in s.parts]
    allowed: set[str] = set(ctx.capabilities.emission_differences)
    failure = next((to_wire(part) for part in consumer if part.type == "error"), None)
    _compare_blocks(scenario, parts, allowed, failure)
    _compare_calls(adapter, calls, parts)
    if "usage" not in allowed:
        _compare_usage(scenario, parts)


def _compare_blocks(
    scenario: Mapping[str, Any],
    parts: Sequence[dict[str, Any]],
    allowed: set[str],
    failure: Any = None,
) -> None:
    expected = _expected_blocks(scenario)
    observed = _blocks(parts)
    if "reasoning" in allowed:
        expected = [block for block in expected if block[0] == "text"]
        observed = [block for block in observed if block[0] == "text"]
    if observed != expected:
        ended = f"; the turn failed: {failure}" if failure is not None else ""
        raise CheckFailed(
            "ADAPTER-056",
            "the text and reasoning blocks differ from the model's (compared per block, "
            f"whatever the chunking){ended}",
            expected=expected,
            observed=observed,
        )


def _compare_calls(
    adapter: RecordingAdapter, calls: Sequence[Mapping[str, Any]], parts: Sequence[dict[str, Any]]
) -> None:
    emitted = [part for part in parts if part.get("type") == "tool-call"]
    expected_ids = [call["id"] for call in calls]
    observed_ids = [str(part.get("toolCallId")) for part in emitted]
    if observed_ids != expected_ids:
        raise CheckFailed(
            "ADAPTER-057",
            "the tool calls differ from the model's (ids in order)",
            expected=expected_ids,
            observed=observed_ids,
        )
    ran = executions(adapter)
    results = {
        str(part.get("toolCallId")): part for part in parts if part.get("type") == "tool-result"
    }
    for call, part in zip(calls, emitted, strict=True):
        if _parsed(part.get("input")) != call["input"]:
            raise CheckFailed(
                "ADAPTER-057",
                f"tool call {call['id']} carries another input than the model gave",
                expected=call["input"],
                observed=part.get("input"),
            )
        result = results.get(call["id"])
        if call["kind"].startswith("host"):
            failing = call["kind"] == "host-failing"
            if result is None or bool(result.get("isError")) != failing:
                raise CheckFailed(
                    "HOSTTOOL-007",
                    f"host call {call['id']} ({'failed' if failing else 'succeeded'}) is not "
                    "echoed as a tool-result with the same isError",
                    expected={"toolCallId": call["id"], "isError": failing},
                    observed=result,
                )
            continue
        truth = [entry for entry in ran.get(call["id"], []) if entry.executed]
        if not truth:
            continue  # refused (filtered, denied): other checks own those paths
        outcome = truth[-1]
        if result is None:
            raise CheckFailed(
                "ADAPTER-057", f"runtime-executed call {call['id']} has no tool-result"
            )
        if outcome.is_error and result.get("isError") is not True:
            raise CheckFailed(
                "TRANSLATE-012",
                f"call {call['id']} failed in the runtime but its tool-result lacks isError: true",
                expected={"isError": True, "result": outcome.result},
                observed=result,
            )
        if not outcome.is_error and result.get("isError") is True:
            raise CheckFailed(
                "ADAPTER-057",
                f"call {call['id']} succeeded in the runtime but its tool-result says isError",
                observed=result,
            )
        if result.get("result") != outcome.result:
            raise CheckFailed(
                "TRANSLATE-012" if outcome.is_error else "ADAPTER-057",
                f"the tool-result of {call['id']} does not carry what the runtime returned",
                expected=outcome.result,
                observed=result.get("result"),
            )


def _compare_usage(scenario: Mapping[str, Any], parts: Sequence[dict[str, Any]]) -> None:
    finishes = [part for part in parts if part.get("type") == "finish-step"]
    for number, step in enumerate(scenario["steps"]):
        if step["usage"] is None or number >= len(finishes):
            continue
        usage = finishes[number].get("usage") or {}
        observed = [
            (usage.get("inputTokens") or {}).get("total"),
            (usage.get("outputTokens") or {}).get("total"),
        ]
        if observed != list(step["usage"]):
            raise CheckFailed(
                "ADAPTER-058",
                f"step {number}'s finish-step usage is not what the model reported",
                expected={"inputTokens": step["usage"][0], "outputTokens": step["usage"][1]},
                observed=usage,
            )


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (emission_equals_script,)
