"""Built-ins run for real through the sandbox; outcomes and errors per tool."""

from __future__ import annotations

import re

import anyio
import pytest

from harness_testkit.fake_harness import FileMutation, glob_to_regex
from harness_testkit.fake_harness._workspace import Workspace
from harness_testkit.spec import SandboxAbortedError
from tests.fake_harness.support import SandboxEnv
from tests.narrowing import json_array, json_object, of_type

pytestmark = pytest.mark.anyio


def _workspace(sandbox: SandboxEnv) -> Workspace:
    return Workspace(sandbox.session, sandbox.work_dir)


async def test_write_then_read_resolves_relative_paths(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    created = await ws.execute(
        "write", {"file_path": "a/b.txt", "content": "one\ntwo\nthree\n"}, None
    )
    assert created["isError"] is False
    assert created["fileChanges"] == [{"event": "create", "path": f"{sandbox.work_dir}/a/b.txt"}]
    modified = await ws.execute(
        "write", {"file_path": "a/b.txt", "content": "one\ntwo\nthree\n"}, None
    )
    assert modified["fileChanges"] == [{"event": "modify", "path": f"{sandbox.work_dir}/a/b.txt"}]
    read = await ws.execute("read", {"file_path": f"{sandbox.work_dir}/a/b.txt"}, None)
    assert read == {"result": "one\ntwo\nthree\n", "isError": False, "fileChanges": []}
    window = await ws.execute("read", {"file_path": "a/b.txt", "offset": 2, "limit": 1}, None)
    assert of_type(str, window["result"]).strip() == "two"


async def test_read_errors(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    missing = await ws.execute("read", {"file_path": "nope.txt"}, None)
    assert missing["isError"]
    assert "does not exist" in of_type(str, missing["result"])
    invalid = await ws.execute("read", {}, None)
    assert invalid["isError"]
    assert "file_path must be a string" in of_type(str, invalid["result"])
    outside = await ws.execute("read", {"file_path": "/etc/passwd"}, None)
    assert outside["isError"]


async def test_edit_outcomes(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    await ws.execute("write", {"file_path": "e.txt", "content": "a b a"}, None)
    not_found = await ws.execute(
        "edit", {"file_path": "e.txt", "old_string": "z", "new_string": "y"}, None
    )
    assert "not found" in of_type(str, not_found["result"])
    ambiguous = await ws.execute(
        "edit", {"file_path": "e.txt", "old_string": "a", "new_string": "y"}, None
    )
    assert ambiguous["isError"]
    assert "appears 2 times" in of_type(str, ambiguous["result"])
    missing = await ws.execute(
        "edit", {"file_path": "x.txt", "old_string": "a", "new_string": "y"}, None
    )
    assert missing["isError"]
    empty = await ws.execute(
        "edit", {"file_path": "e.txt", "old_string": "", "new_string": "y"}, None
    )
    assert empty["isError"]
    one = await ws.execute(
        "edit", {"file_path": "e.txt", "old_string": "b", "new_string": "c"}, None
    )
    assert not one["isError"]
    assert "1 replacement)" in of_type(str, one["result"])
    every = await ws.execute(
        "edit",
        {"file_path": "e.txt", "old_string": "a", "new_string": "y", "replace_all": True},
        None,
    )
    assert "2 replacements" in of_type(str, every["result"])
    assert await sandbox.read("e.txt") == "y c y"


async def test_bash_outcomes(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    ok = await ws.execute("bash", {"command": "pwd; echo err >&2"}, None)
    assert ok["isError"] is False
    assert ok["result"] == {"exitCode": 0, "stdout": f"{sandbox.work_dir}\n", "stderr": "err\n"}
    failed = await ws.execute("bash", {"command": "exit 7"}, None)
    assert failed["isError"] is True
    assert json_object(failed["result"])["exitCode"] == 7
    timed_out = await ws.execute("bash", {"command": "sleep 5", "timeout": 0.2}, None)
    assert timed_out["isError"]
    assert "timed out" in of_type(str, timed_out["result"])


async def test_bash_abort_kills_the_command(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    abort = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:

            async def fire() -> None:
                await anyio.sleep(0.1)
                abort.set()

            group.start_soon(fire)
            with pytest.raises(SandboxAbortedError):
                await ws.execute("bash", {"command": "sleep 30"}, abort)


async def test_grep_and_glob(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    for path, content in {
        "src/a.py": "alpha\nbeta\n",
        "src/b.py": "beta\n",
        "docs/c.md": "alpha\n",
    }.items():
        await ws.execute("write", {"file_path": path, "content": content}, None)
    grep = await ws.execute("grep", {"pattern": "alp"}, None)
    assert of_type(str, grep["result"]).splitlines() == [
        f"{sandbox.work_dir}/docs/c.md:1:alpha",
        f"{sandbox.work_dir}/src/a.py:1:alpha",
    ]
    assert (await ws.execute("grep", {"pattern": "zzz"}, None))["result"] == "No matches found."
    assert (await ws.execute("grep", {"pattern": "(", "path": "src"}, None))["isError"]
    py = await ws.execute("glob", {"pattern": "**/*.py"}, None)
    assert py["result"] == [f"{sandbox.work_dir}/src/a.py", f"{sandbox.work_dir}/src/b.py"]
    top = await ws.execute("glob", {"pattern": "*.md", "path": "docs"}, None)
    assert top["result"] == [f"{sandbox.work_dir}/docs/c.md"]
    assert (await ws.execute("glob", {"pattern": "*", "path": "missing"}, None))["isError"]


async def test_opaque_mutations_report_what_changed(sandbox: SandboxEnv) -> None:
    ws = _workspace(sandbox)
    first = await ws.mutate(
        [FileMutation(path="m.txt", content="x"), FileMutation(path="gone.txt", delete=True)]
    )
    assert first["fileChanges"] == [{"event": "create", "path": f"{sandbox.work_dir}/m.txt"}]
    second = await ws.mutate(
        [FileMutation(path="m.txt", content="y"), FileMutation(path="m.txt", delete=True)]
    )
    changes = json_array(second["fileChanges"])
    assert [json_object(change)["event"] for change in changes] == ["modify", "delete"]
    assert await sandbox.read("m.txt") is None


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py"], ["src/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "src/a.py", "x/y/z.py"], ["a.txt"]),
        ("src/?.py", ["src/a.py"], ["src/ab.py"]),
        ("[ab].txt", ["a.txt", "b.txt"], ["c.txt"]),
        ("[!ab].txt", ["c.txt"], ["a.txt"]),
        ("*.{md,txt}", ["a.md", "b.txt"], ["c.py"]),
        ("src/**", ["src/a", "src/b/c"], ["lib/a"]),
    ],
)
def test_glob_translation(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = re.compile(glob_to_regex(pattern))
    assert all(regex.match(path) for path in matches)
    assert not any(regex.match(path) for path in misses)


async def test_a_glob_of_many_stars_cannot_hang_and_a_bad_class_is_an_error(
    sandbox: SandboxEnv,
) -> None:
    """Globs run on RE2: Python's backtracking ``re`` takes astronomically long here."""
    ws = _workspace(sandbox)
    await ws.execute("write", {"file_path": "a" * 60, "content": ""}, None)
    with anyio.fail_after(30):
        stars = await ws.execute("glob", {"pattern": "*" * 40 + "x"}, None)
    assert stars["result"] == []
    bad = await ws.execute("glob", {"pattern": "[z-a].txt"}, None)
    assert bad["isError"]
    assert bad["result"] == "Invalid glob pattern: [z-a].txt"


@pytest.mark.requirement("SANDBOX-032")
async def test_grep_and_glob_refuse_paths_outside_the_sandbox(sandbox: SandboxEnv) -> None:
    """The search built-ins confine their path as the file API does (issue 15)."""
    ws = _workspace(sandbox)
    await ws.execute("write", {"file_path": "inside.txt", "content": "root:x\n"}, None)
    linked = await sandbox.session.run("ln -s /etc etc-link", working_directory=sandbox.work_dir)
    assert linked.exit_code == 0
    for tool, path in (
        ("grep", "/etc"),
        ("grep", "/etc/passwd"),
        ("glob", "/etc"),
        ("grep", "../../../../../../etc"),
        ("glob", "etc-link"),
    ):
        tool_input = {"pattern": "root" if tool == "grep" else "*", "path": path}
        outcome = await ws.execute(tool, dict(tool_input), None)
        assert outcome["isError"], (tool, path, outcome)
        assert "outside" in str(outcome["result"]), outcome
    inside = await ws.execute("grep", {"pattern": "root", "path": "."}, None)
    assert inside["isError"] is False
    assert "inside.txt" in str(inside["result"])
