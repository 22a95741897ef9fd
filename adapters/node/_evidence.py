"""Whether a built-in really ran: the sandbox operations the adapter asked the kit for.

A Node adapter's runtime executes its built-ins through the sandbox session the kit gave
it, so every command it ran and every file it read or wrote passed through the kit. A
call counts as executed when an operation that call implies (its command run, its file
written or read) happened between its ``tool-call`` part and its ``tool-result``; a
denied call that still ran is caught this way, whatever the adapter's parts claim.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness_testkit.spec import BuiltinTool

__all__ = ["SandboxEvidence", "SessionTracking"]

OperationKind = Literal["run", "read", "write"]


@dataclass(frozen=True)
class Operation:
    """One sandbox call the adapter made."""

    kind: OperationKind
    command: str | None = None
    path: str | None = None
    cwd: str | None = None


class SandboxEvidence:
    """The sandbox operations of one session, in order.

    Args:
        work_dir: The session work dir (relative tool paths resolve against it).
    """

    def __init__(self, work_dir: str) -> None:
        self._work_dir = work_dir
        self._operations: list[Operation] = []

    def mark(self) -> int:
        """A position to look from (the operations recorded so far)."""
        return len(self._operations)

    def record(
        self,
        kind: OperationKind,
        *,
        command: str | None = None,
        path: str | None = None,
        cwd: str | None = None,
    ) -> None:
        """Note one sandbox call."""
        self._operations.append(Operation(kind, command, self._absolute(path, cwd), cwd))

    def _absolute(self, path: str | None, cwd: str | None = None) -> str | None:
        if path is None:
            return None
        return posixpath.normpath(posixpath.join(cwd or self._work_dir, path))

    def ran(
        self,
        name: str,
        builtin: BuiltinTool | None,
        tool_input: Mapping[str, Any],
        *,
        since: int,
    ) -> bool:
        """Whether the call of ``name`` with ``tool_input`` left its trace since ``since``.

        A tool the kit cannot trace (an MCP tool, a built-in of no common kind) counts as
        run when any sandbox operation happened in its window, else as run when its result
        arrived (the caller only asks then): the kit has no better evidence for it.
        """
        operations = self._operations[since:]
        common = (builtin.common_name or name) if builtin is not None else None
        kind = builtin.tool_use_kind if builtin is not None else None
        command = tool_input.get("command")
        raw_path = tool_input.get("file_path", tool_input.get("path"))
        path = self._absolute(raw_path) if isinstance(raw_path, str) else None
        if common == "bash" or kind == "bash":
            if not isinstance(command, str):
                return False
            return any(
                op.kind == "run" and op.command is not None and command in op.command
                for op in operations
            )
        if common in ("write", "edit") or kind == "edit":
            if path is None:
                return any(op.kind == "write" for op in operations)
            return any(op.kind == "write" and op.path == path for op in operations)
        if common == "read":
            if path is None:
                return any(op.kind == "read" for op in operations)
            return any(
                (op.kind == "read" and op.path == path)
                or (op.kind == "run" and op.command is not None and str(raw_path) in op.command)
                for op in operations
            )
        if builtin is not None and kind == "readonly":
            return bool(operations)
        return True


class SessionTracking:
    """What one session id's runtime announced and did, across the adapter sessions that
    carry it (a turn continued in a new session gets results of calls announced before).

    Attributes:
        evidence: The sandbox operations.
        calls: Runtime-executed calls waiting for their result, by call id (name, input
            and the evidence mark at the ``tool-call``).
        approvals: Approval id -> call id.
        denied: Call ids whose approval was denied.
    """

    def __init__(self, work_dir: str) -> None:
        self.evidence = SandboxEvidence(work_dir)
        self.calls: dict[str, dict[str, Any]] = {}
        self.approvals: dict[str, str] = {}
        self.denied: set[str] = set()
