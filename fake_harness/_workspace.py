"""Real execution of the common built-ins, and opaque mutations, through the sandbox.

Outcomes are JSON ``{"result": ..., "isError": bool, "fileChanges": [...]}``; paths in
results are absolute (as real runtimes report them; the agent strips the work dir).
What counts as an error, per tool:

========  ==================================================================  ===============
tool      result                                                              ``isError`` when
========  ==================================================================  ===============
read      the file's text (``offset``/``limit``: 1-based first line, count)   missing file, a directory, invalid input
write     ``"Wrote <n> characters to <path>"``                                write refused (path outside the sandbox, parent is a file)
edit      ``"Edited <path> (<n> replacement(s))"``                            missing file, ``old_string`` empty, not found, or not unique without ``replace_all``
bash      ``{"exitCode", "stdout", "stderr"}``                                non-zero exit, timeout (``timeout`` seconds in the input)
grep      matching ``path:line:text`` lines, sorted; ``"No matches found."``  grep exit status >= 2 (bad pattern, missing path), a path the sandbox refuses
glob      sorted list of absolute file paths matching (``**``, ``*``, ``?``,   the search directory does not exist, or the sandbox refuses it
          ``[...]``, ``{a,b}``)
========  ==================================================================  ===============

Invalid input (a required string missing) is an error result for every tool. Every path
goes through the sandbox's own resolution first (``grep`` and ``glob`` probe theirs with
the file API before searching), so a sandbox that confines paths confines the built-ins.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Any

import anyio

from harness_testkit.common import UnsafePatternError, pattern_search
from harness_testkit.scripting import FileMutation
from harness_testkit.spec import (
    JSONValue,
    SandboxAbortedError,
    SandboxError,
    SandboxPathError,
    SandboxSession,
    SandboxTimeoutError,
)

__all__ = ["EXECUTABLE_BUILTINS", "Workspace", "glob_to_regex"]

#: Common built-ins the fake executes for real (everything else is answered by the script).
EXECUTABLE_BUILTINS: frozenset[str] = frozenset({"read", "write", "edit", "bash", "grep", "glob"})

Outcome = dict[str, JSONValue]


def _outcome(
    result: JSONValue, *, is_error: bool = False, changes: Sequence[Outcome] = ()
) -> Outcome:
    return {"result": result, "isError": is_error, "fileChanges": list(changes)}


def glob_to_regex(pattern: str) -> str:
    """Translate a glob into an anchored regular expression over ``/``-separated paths.

    ``**/`` matches any number of directories, ``**`` anything, ``*`` anything but ``/``,
    ``?`` one character but ``/``, ``[...]`` a class (``[!...]`` negated) and ``{a,b}``
    alternatives (not nested).
    """
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[index + 1 :]:
            end = pattern.index("]", index + 1)
            body = pattern[index + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end
        elif char == "{" and "}" in pattern[index + 1 :]:
            end = pattern.index("}", index + 1)
            options = pattern[index + 1 : end].split(",")
            out.append("(?:" + "|".join(re.escape(option) for option in options) + ")")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "^" + "".join(out) + "$"


class Workspace:
    """The session's sandbox, as the fake runtime's tools see it.

    Args:
        sandbox: The sandbox session given to ``do_start``.
        work_dir: The session work dir; relative paths resolve against it.
    """

    def __init__(self, sandbox: SandboxSession, work_dir: str) -> None:
        self.sandbox = sandbox
        self.work_dir = work_dir

    def resolve(self, path: str) -> str:
        """The absolute, normalized path of ``path`` (relative: against the work dir)."""
        joined = path if posixpath.isabs(path) else posixpath.join(self.work_dir, path)
        return posixpath.normpath(joined)

    async def _run(
        self, command: str, *, timeout: float | None = None, abort: anyio.Event | None = None
    ) -> Any:
        options: dict[str, Any] = {"working_directory": self.work_dir}
        if timeout is not None:
            options["timeout"] = timeout
        if abort is not None:
            options["abort"] = abort
        return await self.sandbox.run(command, **options)

    async def execute(
        self, tool: str, tool_input: dict[str, JSONValue], abort: anyio.Event | None
    ) -> Outcome:
        """Execute common built-in ``tool`` with ``tool_input``.

        Args:
            tool: One of :data:`EXECUTABLE_BUILTINS`.
            tool_input: The call's input object.
            abort: The turn's abort event (kills a running command).

        Returns:
            The outcome (never raises for tool-level failures).

        Raises:
            SandboxAbortedError: when ``abort`` fired during a command.
        """
        required = {
            "read": ("file_path",),
            "write": ("file_path", "content"),
            "edit": ("file_path", "old_string", "new_string"),
            "bash": ("command",),
            "grep": ("pattern",),
            "glob": ("pattern",),
        }[tool]
        missing = [name for name in required if not isinstance(tool_input.get(name), str)]
        if missing:
            return _outcome(
                f"Invalid input for {tool}: {', '.join(missing)} must be a string.", is_error=True
            )
        try:
            if tool == "read":
                return await self._read(tool_input)
            if tool == "write":
                return await self._write(tool_input)
            if tool == "edit":
                return await self._edit(tool_input)
            if tool == "bash":
                return await self._bash(tool_input, abort)
            if tool == "grep":
                return await self._grep(tool_input, abort)
            return await self._glob(tool_input, abort)
        except SandboxAbortedError:
            raise
        except SandboxError as error:
            return _outcome(f"{tool} failed: {error}", is_error=True)

    async def _read(self, tool_input: dict[str, JSONValue]) -> Outcome:
        path = self.resolve(str(tool_input["file_path"]))
        offset = tool_input.get("offset")
        limit = tool_input.get("limit")
        start = offset if isinstance(offset, int) and offset > 0 else None
        end = None
        if isinstance(limit, int) and limit > 0:
            end = (start or 1) + limit - 1
        text = await self.sandbox.read_text_file(path, start_line=start, end_line=end)
        if text is None:
            return _outcome(f"File does not exist: {path}", is_error=True)
        return _outcome(text)

    async def _write(self, tool_input: dict[str, JSONValue]) -> Outcome:
        path = self.resolve(str(tool_input["file_path"]))
        content = str(tool_input["content"])
        existed = await self.sandbox.read_binary_file(path) is not None
        await self.sandbox.write_text_file(path, content)
        change: Outcome = {"event": "modify" if existed else "create", "path": path}
        return _outcome(f"Wrote {len(content)} characters to {path}", changes=[change])

    async def _edit(self, tool_input: dict[str, JSONValue]) -> Outcome:
        path = self.resolve(str(tool_input["file_path"]))
        old, new = str(tool_input["old_string"]), str(tool_input["new_string"])
        content = await self.sandbox.read_text_file(path)
        if content is None:
            return _outcome(f"File does not exist: {path}", is_error=True)
        if not old:
            return _outcome("old_string must not be empty.", is_error=True)
        count = content.count(old)
        if count == 0:
            return _outcome(f"old_string was not found in {path}", is_error=True)
        replace_all = tool_input.get("replace_all") is True
        if count > 1 and not replace_all:
            return _outcome(
                f"old_string appears {count} times in {path}; add context to make it unique "
                "or set replace_all.",
                is_error=True,
            )
        replaced = count if replace_all else 1
        await self.sandbox.write_text_file(
            path, content.replace(old, new, -1 if replace_all else 1)
        )
        return _outcome(
            f"Edited {path} ({replaced} replacement{'s' if replaced != 1 else ''})",
            changes=[{"event": "modify", "path": path}],
        )

    async def _bash(self, tool_input: dict[str, JSONValue], abort: anyio.Event | None) -> Outcome:
        command = str(tool_input["command"])
        raw_timeout = tool_input.get("timeout")
        timeout = (
            float(raw_timeout) if isinstance(raw_timeout, int | float) and raw_timeout > 0 else None
        )
        try:
            run = await self._run(command, timeout=timeout, abort=abort)
        except SandboxTimeoutError:
            return _outcome(f"Command timed out after {timeout} seconds: {command}", is_error=True)
        result: JSONValue = {"exitCode": run.exit_code, "stdout": run.stdout, "stderr": run.stderr}
        return _outcome(result, is_error=run.exit_code != 0)

    async def _confine(self, path: str) -> None:
        """Refuse a search path the sandbox's file API refuses (outside its root).

        The search runs as a command, and commands may not be confined, so the path is
        first resolved by the sandbox itself: a :class:`SandboxPathError` (outside the
        root, through ``..`` or a symlink) refuses the search; a directory, a missing path
        or a readable file lets it go on.
        """
        try:
            await self.sandbox.read_binary_file(path)
        except SandboxPathError:
            raise
        except SandboxError:
            pass  # a directory (or another kind of file): resolved inside, searchable

    async def _grep(self, tool_input: dict[str, JSONValue], abort: anyio.Event | None) -> Outcome:
        pattern = str(tool_input["pattern"])
        raw_path = tool_input.get("path")
        path = self.resolve(raw_path) if isinstance(raw_path, str) and raw_path else self.work_dir
        await self._confine(path)
        include = tool_input.get("glob")
        command = "grep -rnE"
        if isinstance(include, str) and include:
            command += f" --include={shlex.quote(include)}"
        command += f" -e {shlex.quote(pattern)} -- {shlex.quote(path)}"
        run = await self._run(command, abort=abort)
        if run.exit_code == 1:
            return _outcome("No matches found.")
        if run.exit_code != 0:
            return _outcome(
                f"grep failed (exit {run.exit_code}): {run.stderr.strip()}", is_error=True
            )
        # Directory order differs between filesystems; sort for determinism.
        lines = sorted(line for line in run.stdout.splitlines() if line)
        return _outcome("\n".join(lines))

    async def _glob(self, tool_input: dict[str, JSONValue], abort: anyio.Event | None) -> Outcome:
        pattern = str(tool_input["pattern"])
        raw_path = tool_input.get("path")
        base = self.resolve(raw_path) if isinstance(raw_path, str) and raw_path else self.work_dir
        await self._confine(base)
        run = await self._run(f"find {shlex.quote(base)} -type f", abort=abort)
        if run.exit_code != 0:
            return _outcome(f"Cannot search {base}: {run.stderr.strip()}", is_error=True)
        # RE2, not `re`: a glob of many `*` would make a backtracking engine take
        # polynomial time per path; RE2 is linear in the path whatever the glob.
        regex = glob_to_regex(pattern)
        try:
            matches = sorted(
                line
                for line in run.stdout.splitlines()
                if line and pattern_search(regex, posixpath.relpath(line, base))
            )
        except UnsafePatternError:
            return _outcome(f"Invalid glob pattern: {pattern}", is_error=True)
        return _outcome(list(matches))

    async def mutate(self, changes: Sequence[FileMutation]) -> Outcome:
        """Apply opaque mutations; ``fileChanges`` lists what really changed.

        Deleting a missing file changes nothing (and reports nothing).

        Raises:
            SandboxError: when a path cannot be written (the turn fails).
        """
        applied: list[Outcome] = []
        for change in changes:
            path = self.resolve(change.path)
            existed = await self.sandbox.read_binary_file(path) is not None
            if change.delete:
                if existed:
                    run = await self._run(f"rm -f -- {shlex.quote(path)}")
                    if run.exit_code != 0:
                        raise SandboxError(f"Could not delete {path}: {run.stderr.strip()}")
                    applied.append({"event": "delete", "path": path})
                continue
            await self.sandbox.write_text_file(path, change.content or "")
            applied.append({"event": "modify" if existed else "create", "path": path})
        return _outcome(None, changes=applied)
