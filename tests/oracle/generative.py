"""Generated scenarios through the official agent and the Python twin.

Three pieces, used by ``test_generative.py``:

* :func:`scenarios`, a hypothesis strategy for whole scenarios in the oracle's scenario
  language (``oracle/scenarios/*.json``): an adapter script of one or more steps (text,
  reasoning, every kind of tool call with results, errors, file changes, compaction,
  streamed tool input with work-dir paths), agent settings (host, client and built-in
  tools, filtering, approvals, ``stopWhen``, ``prepareCall``, ``output``) and operations
  (stream or generate, read or not, abort at a random part, continue with approvals or
  results, suspend and a new session from the round-tripped state, detach, stop).
* :class:`OfficialDriver`, one long-lived ``node oracle/driver.mjs --serve`` process
  that answers scenarios over stdin/stdout (NDJSON).
* :data:`MASKS`, the declared decisions as masks: a divergence whose first differing
  line a mask recognises is that decision, not a bug; every mask names its decision id.

The generator keeps to what both sides make deterministic: a host call is answered
before the adapter emits its next part (the reference submits host outcomes from
background tasks, whose order trio randomises), and no operation waits for a timeout.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from hypothesis import strategies as st

from .twin import ORACLE, SCENARIOS, run_scenario

WORK_DIR = "/sandbox/mock-s1"
#: The budget of one scenario in the official driver (it has several 5 s step timeouts).
SCENARIO_TIMEOUT = 60.0

# ------------------------------------------------------------------------------------
# The strategy
# ------------------------------------------------------------------------------------


def _usage(total_in: int, total_out: int) -> dict[str, Any]:
    return {"inputTokens": {"total": total_in}, "outputTokens": {"total": total_out}}


def _emit(part: dict[str, Any]) -> dict[str, Any]:
    return {"emit": part}


def _finish_step(reason: str) -> dict[str, Any]:
    return _emit(
        {"type": "finish-step", "finishReason": {"unified": reason}, "usage": _usage(3, 2)}
    )


_FINISH = _emit({"type": "finish", "finishReason": {"unified": "stop"}, "totalUsage": _usage(3, 2)})

_WORDS = st.sampled_from(["a", "b", "hi", "x y", " ", "", "\n", "é", "{", '"', "42"])
_TEXTS = st.lists(_WORDS, min_size=1, max_size=4)
_JSON_TEXTS = st.sampled_from(
    [
        ['{"a"', ": [1", ",", " 2]}"],
        ["[1,", " 2", "]"],
        ['{"s": "h', 'i"}'],
        ['{"a": tr', "ue}"],
        ["not json"],
        ['{"n": 1.', "5e", "2}"],
        ["  ", "-", "1"],
    ]
)
_OBJECT_SCHEMA = {"type": "object", "properties": {"a": {"type": "array"}, "s": {"type": "string"}}}
_NEED_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
}
#: Host tools the generator may declare: name -> tool spec (schema, behaviour).
_HOST_TOOLS: dict[str, dict[str, Any]] = {
    "echo": {
        "description": "echo",
        "inputSchema": {"type": "object"},
        "execute": {"returnsInput": True},
    },
    "need": {
        "description": "needs q",
        "inputSchema": _NEED_SCHEMA,
        "execute": {"returns": {"ok": 1}},
    },
    "boom": {
        "description": "throws",
        "inputSchema": {"type": "object"},
        "execute": {"throws": "bad"},
    },
    "text": {
        "description": "returns text",
        "inputSchema": {"type": "object"},
        "execute": {"returns": "done"},
    },
}
_CLIENT_TOOLS: dict[str, dict[str, Any]] = {
    "pick": {"description": "Ask the user", "inputSchema": {"type": "object"}},
}
_BUILTINS: dict[str, dict[str, Any]] = {
    "bash": {
        "description": "Run a command",
        "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}
_INPUTS = st.sampled_from(
    ['{"q":"x"}', "{}", "", " ", '{"q":1}', "not json", "[1]", '{"path":"/sandbox/mock-s1/a"}']
)
_PATHS = st.sampled_from(
    [f"{WORK_DIR}/src/a.ts", WORK_DIR, "/tmp/x", f"x{WORK_DIR}", f"{WORK_DIR}-old/a"]
)


@dataclass
class _Ids:
    """Fresh ids for one scenario (blocks and calls)."""

    blocks: int = 0
    calls: int = 0

    def block(self) -> str:
        self.blocks += 1
        return f"t{self.blocks}"

    def call(self) -> str:
        self.calls += 1
        return f"c{self.calls}"


@dataclass
class _Plan:
    """What a generated adapter turn asks of the operations (pauses to answer)."""

    client_calls: list[tuple[str, str]] = field(default_factory=list)
    approvals: int = 0


def _text_block(
    draw: st.DrawFn, ids: _Ids, kind: str, chunks: list[str] | None = None
) -> list[Any]:
    block = ids.block()
    deltas = chunks if chunks is not None else draw(_TEXTS)
    return [
        _emit({"type": f"{kind}-start", "id": block}),
        *[_emit({"type": f"{kind}-delta", "id": block, "delta": d}) for d in deltas],
        _emit({"type": f"{kind}-end", "id": block}),
    ]


def _streamed_input(draw: st.DrawFn, call_id: str, name: str, text: str) -> list[Any]:
    """``tool-input-*`` parts whose deltas cut ``text`` at drawn points."""
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=3))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [
        _emit(
            {"type": "tool-input-start", "id": call_id, "toolName": name, "providerExecuted": True}
        ),
        *[_emit({"type": "tool-input-delta", "id": call_id, "delta": p}) for p in pieces if p],
        _emit({"type": "tool-input-end", "id": call_id}),
    ]


@st.composite
def _step(
    draw: st.DrawFn,
    ids: _Ids,
    plan: _Plan,
    settings: dict[str, Any],
    first: bool,
) -> list[Any]:
    """One adapter step: content parts, then ``finish-step`` (and a wait when it pauses)."""
    parts: list[Any] = []
    pause: list[Any] = []
    output = settings.get("output")
    if first and output is not None and output["type"] != "text":
        parts += _text_block(draw, ids, "text", draw(_JSON_TEXTS))
    kinds = draw(
        st.lists(
            st.sampled_from(
                ["text", "reasoning", "host", "client", "builtin", "unknown", "file", "compaction"]
            ),
            max_size=3,
        )
    )
    tools = settings.get("tools", {})
    approval = settings.get("toolApproval", {})
    for kind in kinds:
        if kind in ("text", "reasoning"):
            parts += _text_block(draw, ids, kind)
        elif kind == "host" and any(n in _HOST_TOOLS for n in tools):
            name = draw(st.sampled_from(sorted(n for n in tools if n in _HOST_TOOLS)))
            call_id = ids.call()
            parts.append(
                _emit(
                    {
                        "type": "tool-call",
                        "toolCallId": call_id,
                        "toolName": name,
                        "input": draw(_INPUTS),
                    }
                )
            )
            # An inactive tool is denied before approval: no pause to answer.
            inactive = name in settings.get("inactiveTools", [])
            if approval.get(name) == "user-approval" and not inactive and not pause:
                plan.approvals += 1
                pause = [_finish_step("tool-calls"), {"waitResult": call_id}]
                break
            parts.append({"waitResult": call_id})
        elif kind == "client" and "pick" in tools and "pick" not in approval and not pause:
            call_id = ids.call()
            parts.append(
                _emit(
                    {"type": "tool-call", "toolCallId": call_id, "toolName": "pick", "input": "{}"}
                )
            )
            plan.client_calls.append((call_id, "pick"))
            pause = [_finish_step("tool-calls"), {"waitResult": call_id}]
            break
        elif kind == "builtin":
            call_id = ids.call()
            command = draw(_PATHS)
            text = json.dumps({"command": f"cat {command}"})
            if draw(st.booleans()):
                parts += _streamed_input(draw, call_id, "bash", text)
            parts.append(
                _emit(
                    {
                        "type": "tool-call",
                        "toolCallId": call_id,
                        "toolName": "bash",
                        "input": text,
                        "providerExecuted": True,
                    }
                )
            )
            result: dict[str, Any] = {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": "bash",
                "result": draw(st.sampled_from(["ok", command, {"out": command}])),
            }
            if draw(st.booleans()):
                result["isError"] = True
            parts.append(_emit(result))
        elif kind == "unknown":
            call_id = ids.call()
            parts.append(
                _emit(
                    {
                        "type": "tool-call",
                        "toolCallId": call_id,
                        "toolName": "nope",
                        "input": draw(_INPUTS),
                    }
                )
            )
            parts.append({"waitResult": call_id})
        elif kind == "file":
            parts.append(
                _emit(
                    {
                        "type": "file-change",
                        "event": draw(st.sampled_from(["create", "modify", "delete"])),
                        "path": draw(_PATHS),
                    }
                )
            )
        elif kind == "compaction":
            parts.append(
                _emit(
                    {
                        "type": "compaction",
                        "trigger": draw(st.sampled_from(["auto", "manual"])),
                        "summary": "sum",
                        "tokensBefore": 100,
                        "tokensAfter": 10,
                    }
                )
            )
    if pause:
        return parts + pause
    return [*parts, _finish_step(draw(st.sampled_from(["stop", "tool-calls", "length"])))]


@st.composite
def _turn(draw: st.DrawFn, ids: _Ids, plan: _Plan, settings: dict[str, Any]) -> list[Any]:
    steps = draw(st.integers(1, 3))
    parts: list[Any] = []
    for index in range(steps):
        parts += draw(_step(ids, plan, settings, first=index == 0))
    ending = draw(st.sampled_from(["finish", "finish", "finish", "error", "fail", "none"]))
    if ending == "finish":
        parts.append(_FINISH)
    elif ending == "error":
        parts.append(_emit({"type": "error", "error": "boom"}))
    elif ending == "fail":
        parts.append({"fail": "runtime crashed"})
    return parts


@st.composite
def _settings(draw: st.DrawFn) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    names = draw(st.sets(st.sampled_from(sorted(_HOST_TOOLS | _CLIENT_TOOLS)), max_size=3))
    if names:
        settings["tools"] = {n: (_HOST_TOOLS | _CLIENT_TOOLS)[n] for n in sorted(names)}
        if draw(st.booleans()):
            choices = {n: draw(st.sampled_from(["auto", "user-approval", "denied"])) for n in names}
            settings["toolApproval"] = {n: v for n, v in choices.items() if v != "auto"} or None
            if settings["toolApproval"] is None:
                del settings["toolApproval"]
        if draw(st.integers(0, 5)) == 0:
            settings["inactiveTools"] = [draw(st.sampled_from(sorted(names)))]
    if draw(st.integers(0, 3)) == 0:
        settings["stopWhen"] = {"stepCountIs": draw(st.integers(1, 2))}
    if draw(st.integers(0, 3)) == 0:
        settings["output"] = draw(
            st.sampled_from(
                [{"type": "text"}, {"type": "json"}, {"type": "object", "schema": _OBJECT_SCHEMA}]
            )
        )
    if draw(st.integers(0, 4)) == 0:
        # keepTools needs a tool set: the driver filters options.tools, undefined without.
        overrides = [{"model": "m2"}, {"instructions": "be brief"}]
        settings["prepareCall"] = draw(
            st.sampled_from([*overrides, {"keepTools": []}] if names else overrides)
        )
    if draw(st.integers(0, 3)) == 0:
        settings["model"] = "m1"
        settings["instructions"] = "be kind"
    return settings


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A whole scenario: agent settings, adapter turns and operations."""
    settings = draw(_settings())
    ids = _Ids()
    plan = _Plan()
    # Only the first turn's pauses are answered: a later turn runs after the first
    # ended, and an answer sent before its pause exists meets no unfinished turn.
    turns = [draw(_turn(ids, plan, settings))]
    turns += [draw(_turn(ids, _Plan(), settings)) for _ in range(draw(st.integers(0, 1)))]
    steps: list[dict[str, Any]] = [{"op": "construct"}, {"op": "createSession", "sessionId": "s1"}]
    # An approval is answered with the id of the request the consumer saw; generate()
    # shows the consumer no parts, so a turn that asks for approval is streamed.
    first: dict[str, Any] = {
        "op": "stream"
        if plan.approvals
        else draw(st.sampled_from(["stream", "stream", "generate"])),
        "prompt": "hi",
    }
    if first["op"] == "stream":
        # Not reading (read: false) is left out: the official agent makes an unread
        # slice's submissions a few ticks later than the driver's log flush, so the same
        # calls land in another op's log line (fixed scenarios pin that with waitLog).
        reading = draw(st.sampled_from(["read", "read", "read", "abort"]))
        if reading == "abort":
            first["abortAfter"] = draw(st.integers(1, 6))
        if "output" in settings and draw(st.booleans()):
            first["partialOutput"] = True
    steps.append(first)
    if first.get("read") is False:
        steps.append({"op": "readPending"})
    for _ in range(draw(st.integers(0, 3))):
        op = draw(
            st.sampled_from(["continue", "continue", "suspend-resume", "detach", "stop", "prompt"])
        )
        if op == "continue":
            cont: dict[str, Any] = {
                "op": "continue",
                "mode": draw(st.sampled_from(["stream", "generate"])),
            }
            # A pause is always answered: upstream waits for the answer (the driver's
            # step timeout), where the reference returns at once.
            if plan.client_calls:
                call_id, name = plan.client_calls.pop(0)
                cont["toolResultContinuations"] = [
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "toolName": name,
                        "output": {"type": "json", "value": {"choice": "a"}},
                    }
                ]
            elif plan.approvals:
                plan.approvals -= 1
                answer: dict[str, Any] = {
                    "type": "tool-approval-response",
                    "approvalId": "<from-request>",
                    "approved": draw(st.booleans()),
                }
                cont["toolApprovalContinuations"] = [answer]
            steps.append(cont)
        elif op == "suspend-resume":
            steps += [
                {"op": "suspend"},
                {"op": "roundTripState"},
                {"op": "createSession", "sessionId": "s1", "continueFrom": "last"},
            ]
        elif op == "prompt":
            steps.append({"op": draw(st.sampled_from(["stream", "generate"])), "prompt": "again"})
        else:
            steps.append({"op": op})
            break
    harness: dict[str, Any] = {"builtinTools": _BUILTINS}
    return {
        "description": "Generated.",
        "area": "generated",
        "agent": settings,
        "harness": harness,
        "turns": turns,
        "steps": steps,
    }


# ------------------------------------------------------------------------------------
# The official driver, long-lived
# ------------------------------------------------------------------------------------


def node_ready() -> str | None:
    """Why the official driver cannot run here, or ``None`` when it can."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not (ORACLE / "node_modules" / "@ai-sdk" / "harness").is_dir():
        return "oracle dependencies are not installed (cd oracle && npm ci)"
    return None


class OfficialDriver:
    """``node oracle/driver.mjs --serve``: scenarios in, official lines out."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            ["node", "driver.mjs", "--serve"],
            cwd=ORACLE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the official agent logs adapter failures there
            text=True,
            encoding="utf-8",
        )
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._answers.put(line)
        self._answers.put(None)

    def run(self, scenario: dict[str, Any]) -> tuple[list[str], float]:
        """The official lines of ``scenario`` and the milliseconds the driver spent."""
        assert self._process.stdin is not None
        self._next_id += 1
        request = {"id": self._next_id, "scenario": scenario}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        try:
            line = self._answers.get(timeout=SCENARIO_TIMEOUT)
        except queue.Empty:
            raise TimeoutError(
                f"the official driver did not answer within {SCENARIO_TIMEOUT} seconds"
            ) from None
        if line is None:
            raise RuntimeError("the official driver exited; run it by hand to see why")
        answer = json.loads(line)
        if answer.get("id") != self._next_id or "error" in answer:
            raise RuntimeError(f"the official driver failed: {answer.get('error', answer)}")
        return list(answer["lines"]), float(answer["ms"])

    def close(self) -> None:
        """End the process (closing stdin ends it; kill it if it does not)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        if self._process.stdout is not None:
            self._process.stdout.close()


def twin_run(scenario: dict[str, Any], backend: str = "asyncio") -> tuple[list[str], float]:
    """The Python twin's lines of ``scenario`` and the milliseconds it spent."""
    started = time.perf_counter()

    async def main() -> list[str]:
        return await run_scenario(scenario)

    lines = anyio.run(main, backend=backend)
    return lines, (time.perf_counter() - started) * 1000


# ------------------------------------------------------------------------------------
# Masks: declared decisions
# ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mask:
    """A declared decision: recognises the first differing line pair it explains."""

    decision: str
    why: str
    #: ``(scenario, python line, official line) -> bool``.
    matches: Callable[[dict[str, Any], str, str], bool]


def _has(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda line: compiled.search(line) is not None


_VALIDATION_SUBMIT = _has(r'"isError":true,"output":\{"error":"InvalidToolInputError')
_ERROR_AFTER_STEP = _has(
    r'"type":"finish-step","usage":\{[^\]]*?\}\},\{"error":[^\]]*"type":"error"\}\]'
)
_ABORT_PART = _has(r'"type":"abort"')


def _agent(scenario: dict[str, Any]) -> dict[str, Any]:
    agent: dict[str, Any] = scenario.get("agent", {})
    return agent


MASKS: tuple[Mask, ...] = (
    Mask(
        "HOSTTOOL-004",
        "an invalid host call: Python submits the validation error, upstream executes it "
        "(after an approval, for a user-approval tool)",
        lambda scenario, python, official: (
            _VALIDATION_SUBMIT(python)
            or ('"invalid":true' in python and "tool-approval-request" in official)
            # No pause for the invalid call here: the turn went on past upstream's pause.
            or (
                '"invalid":true' in official
                and "tool-approval-request" in official
                and "tool-approval-request" not in python
            )
        ),
    ),
    Mask(
        "RESULT-013",
        "a caller abort settles as abort; upstream finishes the turn",
        lambda scenario, python, official: _ABORT_PART(python) and not _ABORT_PART(official),
    ),
    Mask(
        "STOP-004",
        "an error (a harness error part or a failing done()) is never hidden by a stop "
        "condition; upstream suspends and reports the turn, or its output error",
        lambda scenario, python, official: (
            "stopWhen" in _agent(scenario)
            and (
                (_ERROR_AFTER_STEP(python) and '"type":"error"' not in official)
                or (python.startswith('{"error"') and python != official)
            )
        ),
    ),
    Mask(
        "RESULT-016",
        "a step-less generate result has 'other' and empty usage; upstream throws reading "
        "the last step",
        lambda scenario, python, official: (
            '"mode":"generate"' in python
            and '"steps":[]' in python
            and "Cannot read properties of undefined (reading 'finishReason')" in official
        ),
    ),
    Mask(
        "APPROVAL-038",
        "a continuation that leaves a pending approval unanswered re-pauses at once; "
        "upstream reads on and waits for the adapter, which waits for the answer",
        lambda scenario, python, official: (
            '"op":"continue"' in python
            and '"finishReason":"tool-calls"' in python
            and '"op":"continue"' in official
            and "oracle: step timed out" in official
        ),
    ),
    Mask(
        "APPROVAL-041",
        "the finish-step a runtime emits while the turn is paused is kept (bufferedParts) "
        "and is the continuation's swallowed one, so the runtime's next finish-step closes "
        "a step (upstream swallows that one)",
        lambda scenario, python, official: (
            ('"bufferedParts"' in python and '"bufferedParts"' not in official)
            or (
                '"op":"continue"' in python
                and (
                    python.count('"type":"finish-step"') > official.count('"type":"finish-step"')
                    # Upstream swallows a later finish-step: the content before it stays
                    # visible and the next part opens one more step.
                    or python.count('"type":"start-step"') < official.count('"type":"start-step"')
                    or python.count('{"content":') > official.count('{"content":')
                    or (
                        '"steps":[{' in python
                        and "Cannot read properties of undefined (reading 'finishReason')"
                        in official
                    )
                )
            )
            # The step counted for the kept finish-step makes a stop condition hold one
            # step earlier in the continued slice: the turn is suspended there.
            or (
                "stopWhen" in _agent(scenario)
                and '"call":"doContinueTurn"' in python
                and python.count('"call":"doSuspendTurn"')
                > official.count('"call":"doSuspendTurn"')
            )
        ),
    ),
)


def first_difference(python: list[str], official: list[str]) -> tuple[int, str, str] | None:
    """``(index, python line, official line)`` of the first difference, or ``None``."""
    for index in range(max(len(python), len(official))):
        a = python[index] if index < len(python) else "<missing>"
        b = official[index] if index < len(official) else "<missing>"
        if a != b:
            return index, a, b
    return None


def mask_of(scenario: dict[str, Any], difference: tuple[int, str, str]) -> Mask | None:
    """The declared decision that explains ``difference`` of ``scenario``, if any."""
    _, python, official = difference
    return next((mask for mask in MASKS if mask.matches(scenario, python, official)), None)


def save_scenario(scenario: dict[str, Any], difference: tuple[int, str, str]) -> Path:
    """Write a (shrunk) divergent scenario to ``oracle/scenarios/generated-<hash>.json``."""
    text = json.dumps(scenario, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    digest = f"{abs(hash(text)) % 10**8:08d}"
    index, python, official = difference
    saved = dict(scenario)
    saved["description"] = (
        f"Found by the generative oracle: line {index + 1} differs. Python: {python[:200]}"
        f" Official: {official[:200]}"
    )
    path = SCENARIOS / f"generated-{digest}.json"
    target = Path(os.environ.get("ORACLE_GENERATED_DIR", str(SCENARIOS))) / path.name
    target.write_text(json.dumps(saved, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target
