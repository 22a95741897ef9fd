"""Random valid scripts: :func:`generate_script` (seeded) and the hypothesis strategy's core.

Both go through one builder that asks a :class:`Chooser` for every decision: a seeded
``random.Random`` for :func:`generate_script` (same seed, same script), or hypothesis's
``draw`` for the ``scripts()`` strategy (so failures shrink to small scripts).

Generated scripts only use deterministic sandbox work (files under ``gen/`` in the
session work dir, fixed shell commands), so two runs on fresh sandboxes produce the same
parts up to the work dir path.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from harness_testkit.scripting import Script

from ._profiles import HarnessProfile, get_profile
from ._workspace import EXECUTABLE_BUILTINS

__all__ = ["ACTION_KINDS", "Chooser", "RandomChooser", "build_script", "generate_script"]

T = TypeVar("T")

#: Action kinds the generator can produce (pass a subset as ``kinds``).
ACTION_KINDS: tuple[str, ...] = (
    "text",
    "reasoning",
    "builtin",
    "host-tool",
    "mcp",
    "file-change",
    "raw",
    "delay",
)

_WORDS = ("alpha", "beta", "gamma", "delta", "fake", "harness", "tool", "step", "hello", "world")
_COMMANDS = (
    "echo hello",
    "printf '%s' done",
    "ls gen 2>/dev/null | sort",
    "cat gen/f0.txt",
    "exit 3",
    "echo oops >&2; exit 1",
)


class Chooser(Protocol):
    """Where the builder's decisions come from."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        ...

    def boolean(self) -> bool:
        """True or false."""
        ...


class RandomChooser:
    """A :class:`Chooser` over a seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(f"fake-harness-generate/{seed}")

    def integer(self, low: int, high: int) -> int:
        """Uniform in ``[low, high]``."""
        return self._rng.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        """Uniform among ``options``."""
        return options[self._rng.randrange(len(options))]

    def boolean(self) -> bool:
        """A fair coin."""
        return self._rng.random() < 0.5


class _Builder:
    def __init__(
        self,
        chooser: Chooser,
        profile: HarnessProfile,
        host_tools: Sequence[str],
        kinds: Sequence[str],
    ) -> None:
        self.c = chooser
        self.profile = profile
        self.host_tools = list(host_tools)
        self.kinds = [kind for kind in kinds if self._possible(kind)] or ["text"]
        self.files: list[str] = []
        self.call_ids: list[str] = []

    def _possible(self, kind: str) -> bool:
        if kind == "builtin":
            return bool(self.profile.builtin_tools)
        if kind == "host-tool":
            return bool(self.host_tools)
        return kind in ACTION_KINDS

    def words(self, low: int = 1, high: int = 6) -> str:
        return " ".join(self.c.choice(_WORDS) for _ in range(self.c.integer(low, high)))

    def path(self) -> str:
        if self.files and self.c.boolean():
            return self.c.choice(self.files)
        name = f"gen/f{self.c.integer(0, 3)}.txt"
        return name

    def builtin(self, call_id: str) -> dict[str, Any]:
        key = self.c.choice(sorted(self.profile.builtin_tools))
        common = self.profile.builtin_tools[key].common_name
        action: dict[str, Any] = {"type": "builtin", "tool": key, "id": call_id}
        if common == "read":
            action["input"] = {"file_path": self.path()}
        elif common == "write":
            path = f"gen/f{self.c.integer(0, 3)}.txt"
            self.files.append(path)
            action["input"] = {"file_path": path, "content": self.words(1, 8) + "\n"}
        elif common == "edit":
            action["input"] = {
                "file_path": self.path(),
                "old_string": self.c.choice(_WORDS),
                "new_string": self.c.choice(_WORDS).upper(),
                "replace_all": self.c.boolean(),
            }
        elif common == "bash":
            action["input"] = {"command": self.c.choice(_COMMANDS)}
        elif common == "grep":
            action["input"] = {"pattern": self.c.choice(_WORDS), "path": "gen"}
        elif common == "glob":
            action["input"] = {"pattern": self.c.choice(("gen/*.txt", "**/*.txt", "gen/f?.txt"))}
        elif common == "webSearch":
            action["input"] = {"query": self.words(1, 3)}
        else:
            action["input"] = {"note": self.words(1, 2)}
            if self.c.boolean():
                action["result"] = {"value": self.words(1, 3), "isError": self.c.boolean()}
        assert (
            common is None
            or common in EXECUTABLE_BUILTINS
            or common == "webSearch"
            or "input" in action
        )
        if self.c.integer(0, 4) == 0:
            action["streamInput"] = True
        return action

    def action(self, turn: int, step: int, position: int) -> dict[str, Any]:
        kind = self.c.choice(self.kinds)
        call_id = f"g{turn}_{step}_{position}"
        if kind in ("text", "reasoning"):
            return {"type": kind, "text": self.words()}
        if kind == "builtin":
            self.call_ids.append(call_id)
            return self.builtin(call_id)
        if kind == "host-tool":
            self.call_ids.append(call_id)
            return {
                "type": "host-tool",
                "tool": self.c.choice(self.host_tools),
                "id": call_id,
                "input": {"q": self.words(1, 2)},
                "streamInput": self.c.integer(0, 4) == 0,
            }
        if kind == "mcp":
            self.call_ids.append(call_id)
            return {
                "type": "mcp",
                "server": "docs",
                "tool": self.c.choice(("search", "fetch", "missing")),
                "id": call_id,
                "input": {"q": self.words(1, 2)},
            }
        if kind == "file-change":
            changes: list[dict[str, Any]] = []
            for _ in range(self.c.integer(1, 2)):
                path = f"gen/m{self.c.integer(0, 2)}.txt"
                if self.c.integer(0, 2) == 0:
                    changes.append({"path": path, "delete": True})
                else:
                    changes.append({"path": path, "content": self.words(1, 4)})
            return {"type": "file-change", "changes": changes}
        if kind == "raw":
            return {"type": "raw", "value": {"note": self.words(1, 2), "n": self.c.integer(0, 9)}}
        return {"type": "delay", "seconds": self.c.integer(0, 3) / 2}

    def step(self, turn: int, number: int, max_actions: int) -> dict[str, Any]:
        # A condition names a call of an earlier step of the same turn: the step's own
        # calls have no outcome before it runs, and a condition looks only within its
        # turn, so one on any other call would never hold.
        earlier = [call for call in self.call_ids if call.startswith(f"g{turn}_")]
        step: dict[str, Any] = {
            "actions": [
                self.action(turn, number, position)
                for position in range(self.c.integer(1, max_actions))
            ]
        }
        if earlier and self.c.integer(0, 3) == 0:
            step["when"] = {"toolCallId": self.c.choice(earlier), "isError": self.c.boolean()}
        if self.c.integer(0, 5) == 0:
            step["announceToolCallCount"] = True
        if self.c.integer(0, 5) == 0:
            step["usage"] = {
                "inputTokens": self.c.integer(0, 500),
                "outputTokens": self.c.integer(0, 200),
            }
        return step


def build_script(
    chooser: Chooser,
    *,
    profile: str | HarnessProfile = "claude-code",
    host_tools: Sequence[str] = ("lookup",),
    kinds: Sequence[str] = ACTION_KINDS,
    max_turns: int = 3,
    max_steps: int = 3,
    max_actions: int = 4,
) -> Script:
    """Build a random valid script from ``chooser``'s decisions (see :func:`generate_script`)."""
    resolved = profile if isinstance(profile, HarnessProfile) else get_profile(profile)
    builder = _Builder(chooser, resolved, host_tools, kinds)
    turns = []
    for turn in range(chooser.integer(1, max_turns)):
        steps = [
            builder.step(turn, number, max_actions)
            for number in range(chooser.integer(1, max_steps))
        ]
        turns.append({"steps": steps})
    mode = chooser.choice(("words", "chars", "whole"))
    document: dict[str, Any] = {
        "chunking": {
            "mode": mode,
            "maxWords": chooser.integer(1, 4),
            "size": chooser.integer(3, 20),
        },
        "turns": turns,
        "mcpServers": {
            "docs": {
                "tools": {
                    "search": {
                        "result": {"hits": [builder.words(1, 2)]},
                        "toolUseKind": "readonly",
                    },
                    "fetch": {"result": builder.words(1, 3), "isError": chooser.boolean()},
                }
            }
        },
        "webSearch": [
            {"queryMatches": "alpha", "results": [{"title": "Alpha", "url": "https://a.example"}]}
        ],
    }
    if chooser.integer(0, 3) == 0:
        document["contextBudget"] = chooser.integer(20, 200)
    return Script.model_validate(document)


def generate_script(
    seed: int,
    *,
    profile: str | HarnessProfile = "claude-code",
    host_tools: Sequence[str] = ("lookup",),
    kinds: Sequence[str] = ACTION_KINDS,
    max_turns: int = 3,
    max_steps: int = 3,
    max_actions: int = 4,
) -> Script:
    """A random valid script for ``profile``: same seed (and arguments), same script.

    Args:
        seed: The seed.
        profile: Which built-ins the script may call.
        host_tools: Names of host tools it may call (the turn must offer them).
        kinds: Action kinds to draw from (see :data:`ACTION_KINDS`).
        max_turns: At most this many turns.
        max_steps: At most this many steps per turn.
        max_actions: At most this many actions per step.

    Returns:
        The script (scripted MCP server ``docs`` included).
    """
    return build_script(
        RandomChooser(seed),
        profile=profile,
        host_tools=host_tools,
        kinds=kinds,
        max_turns=max_turns,
        max_steps=max_steps,
        max_actions=max_actions,
    )
