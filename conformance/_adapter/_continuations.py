"""Scripted check: serializable continuations (a turn split at any point and continued
from its JSON state delivers what the whole turn delivers)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.spec import (
    ConsumerPart,
)

from .._checks import Check, CheckFailed, property_check
from .._context import CheckContext
from ._grammar import to_wire
from ._recording import RecordingAdapter
from ._support import (
    grammar_first,
    set_script,
    settles,
)

__all__ = ["CHECKS"]


# -- 5. serializable continuations ----------------------------------------------------------


def _continuation_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    from harness_testkit.fake_harness import scripts

    profile = getattr(ctx.target.factory(), "profile", None)
    kinds = ("text", "reasoning", "builtin", "file-change", "raw")
    return st.fixed_dictionaries(
        {
            "script": scripts(
                profile=profile if profile is not None else "minimal",
                host_tools=(),
                kinds=kinds,
                max_turns=1,
                max_steps=3,
                max_actions=3,
            ).map(lambda script: script.to_wire()),
            "cut": st.integers(min_value=1, max_value=40),
            "at": st.none() | st.sampled_from(_CUT_PLACES),
        }
    )


#: Where an ``at`` cut suspends, relative to the first model step of the whole run.
_CUT_PLACES = ("before-step", "inside-step", "after-step")
_TWO_STEPS = {
    "version": 1,
    "turns": [
        {
            "steps": [
                {"actions": [{"text": "alpha beta gamma delta"}, {"reasoning": "weighing it"}]},
                {"actions": [{"text": "all done"}]},
            ]
        }
    ],
}
#: Equivalence classes of the continuation property (the examples cover each).
CONTINUATION_CLASSES = {
    "cut before a step": lambda scenario: scenario.get("at") == "before-step",
    "cut inside a step": lambda scenario: scenario.get("at") == "inside-step",
    "cut after a step": lambda scenario: scenario.get("at") == "after-step",
}
_CONTINUATION_EXAMPLES = tuple(
    {"script": _TWO_STEPS, "cut": 1, "at": place} for place in _CUT_PLACES
)


def _cut_after(scenario: Mapping[str, Any], whole: Sequence[ConsumerPart]) -> int:
    """How many consumer parts the first slice reads before the suspension."""
    types = [part.type for part in whole]
    place = scenario.get("at")
    if place is not None and "start-step" in types and "finish-step" in types:
        start, finish = types.index("start-step"), types.index("finish-step")
        return {
            "before-step": start,
            "inside-step": (start + finish + 1) // 2,
            "after-step": finish + 1,
        }[place]
    # The drawn cut wraps around the parts before the terminal one, so the suspension
    # is requested while the turn still runs instead of after it mostly finished.
    return 1 + int(scenario["cut"]) % max(1, len(whole) - 1)


_VOLATILE = ("timestamp", "id")


def _normalise(parts: Sequence[ConsumerPart], blocks: dict[str, str] | None = None) -> list[Any]:
    """Content parts only (framing and synthetic ids removed) for stream comparison.

    Text and reasoning block ids are the adapter's own and need not be the same in two
    runs (harness-pi draws them at random), so each is renamed by order of first
    appearance; ``blocks`` carries the names across slices of one run.
    """
    names: dict[str, str] = {} if blocks is None else blocks
    out: list[Any] = []
    for part in parts:
        if part.type in ("start", "start-step", "finish-step", "finish", "abort"):
            continue
        wire = to_wire(part)
        if part.type.startswith(("text-", "reasoning-")) and isinstance(wire.get("id"), str):
            key = f"{part.type.split('-')[0]}:{wire['id']}"
            wire["id"] = names.setdefault(key, f"block-{len(names) + 1}")
        call_id = wire.get("toolCallId", "")
        if isinstance(call_id, str) and call_id.startswith(
            ("harness-file-change-", "harness-compaction-")
        ):
            wire["toolCallId"] = call_id.split("-")[1]
        out.append(json.loads(json.dumps(wire)))
    return out


def _by_block(items: list[Any]) -> list[Any]:
    """Consecutive deltas of one block merged: how a runtime chunks a block's text is its
    own (harness-pi's chunks follow the network reads), its content is not."""
    out: list[Any] = []
    for item in items:
        last = out[-1] if out else None
        if (
            item["type"] in ("text-delta", "reasoning-delta")
            and last is not None
            and last["type"] == item["type"]
            and last.get("id") == item.get("id")
        ):
            out[-1] = {**last, "text": last["text"] + item["text"]}
        else:
            out.append(item)
    return out


def _without_block_ids(items: list[Any]) -> list[Any]:
    """A recomputed step draws new block ids: a lossy comparison goes by content."""
    return [
        {key: value for key, value in item.items() if key != "id"}
        if item["type"].startswith(("text-", "reasoning-"))
        else item
        for item in items
    ]


@property_check(
    "scripted.continuations",
    title="A turn suspended at any point and continued after a JSON round trip equals the uninterrupted run",
    requirements=("ADAPTER-032", "LIFECYCLE-041", "LIFECYCLE-006", "STOP-008"),
    scenarios=_continuation_scenarios,
    needs=("resume",),
    examples=_CONTINUATION_EXAMPLES,
    classes=CONTINUATION_CLASSES,
)
async def continuations(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    # A suspension may cut a text block or a streamed tool input in two, which the
    # per-slice grammar cannot follow: it judges the uninterrupted run, and comparing
    # the slices with that run judges them.
    judged: list[RecordingAdapter] = []
    with grammar_first(ctx, judged):
        await _split_and_continue(ctx, scenario, judged)


async def _split_and_continue(
    ctx: CheckContext, scenario: Mapping[str, Any], judged: list[RecordingAdapter]
) -> None:
    script = scenario["script"]
    whole_adapter = ctx.adapter()
    judged.append(whole_adapter)
    set_script(whole_adapter, script)
    whole_agent = ctx.agent(whole_adapter)
    whole_session = await ctx.create_session(whole_agent, session_id="cont-whole")
    whole_parts = await ctx.run_prompt(whole_agent, whole_session, "go")
    whole = _by_block(_normalise(whole_parts))
    cut_after = _cut_after(scenario, whole_parts)

    first_adapter = ctx.adapter()
    set_script(first_adapter, script)
    first_agent = ctx.agent(first_adapter)
    session = await ctx.create_session(first_agent, session_id="cont-split")
    result = await first_agent.stream(session=session, prompt="go")
    head: list[ConsumerPart] = []
    state: Any = None
    with settles(ctx, "the turn being cut"):
        async with anyio.create_task_group() as group:
            cut = anyio.Event()

            async def consume() -> None:
                async for part in result.full_stream:
                    head.append(part)
                    if len(head) >= cut_after:
                        cut.set()
                cut.set()

            async def suspend() -> None:
                nonlocal state
                await cut.wait()
                try:
                    state = await session.suspend_turn()
                except Exception:
                    state = None  # the turn finished first: nothing to continue

            group.start_soon(consume)
            group.start_soon(suspend)
    if state is None:
        if _by_block(_normalise(head)) != whole:
            raise CheckFailed(
                "ADAPTER-032",
                "two runs of the same script differ",
                expected=whole,
                observed=_by_block(_normalise(head)),
            )
        return
    wire = json.loads(json.dumps(state.to_wire()))
    second_adapter = ctx.adapter()
    set_script(second_adapter, script)
    second_agent = ctx.agent(second_adapter)
    resumed = await ctx.create_session(second_agent, session_id="cont-split", continue_from=wire)
    with settles(ctx, "the continued turn"):
        tail = await ctx.collect(await second_agent.continue_stream(session=resumed))
    blocks: dict[str, str] = {}
    combined = _by_block(_normalise(head, blocks) + _normalise(tail, blocks))
    if ctx.capabilities.continuation == "lossless":
        if combined != whole:
            raise CheckFailed(
                "ADAPTER-032",
                f"suspending after {len(head)} parts and continuing changed the stream (gap or duplicate)",
                expected=whole,
                observed=combined,
            )
        return
    # Lossy: the in-flight step may be recomputed, so parts may repeat, but nothing may be lost.
    whole, combined = _without_block_ids(whole), _without_block_ids(combined)
    remaining = list(combined)
    for item in whole:
        if item in remaining:
            remaining.remove(item)
        else:
            raise CheckFailed(
                "ADAPTER-032",
                f"after a lossy continuation a part is missing: {item!r}",
                expected=whole,
                observed=combined,
            )


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (continuations,)
