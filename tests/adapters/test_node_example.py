"""A local Node adapter through the real adapter host: the README's example, end to end.

``adapters/node/example`` is a small harness-v1 adapter in JavaScript; the host runs it
on the machine's Node, its model is the kit's scripted endpoint and its sandbox the
kit's. These tests check what crosses the boundary (parts, sandbox calls, errors,
aborts, versions, the environment) and that planted defects in the host's forwarding
are caught by the conformance suite under their own requirement.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness_testkit.adapters.node import NodeHarness, close_hosts, load_node_target
from harness_testkit.conformance import AdapterTarget, RunOptions, run_suite
from harness_testkit.fake_harness import Script, ToolExecuted
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "adapters" / "node" / "example"
SPEC = f"{EXAMPLE}#createExampleHarness"
SETTINGS = json.loads((EXAMPLE / "settings.json").read_text(encoding="utf-8"))

requirement = pytest.mark.requirement
pytest_plugins = ["pytester"]
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and os.environ.get("CI") != "true",
    reason="needs Node (any version >= 20) on PATH",
)


@pytest.fixture(scope="module")
def example() -> Iterator[AdapterTarget]:
    target = load_node_target(SPEC, settings=SETTINGS)
    yield target
    close_hosts()


def _agent(adapter: object, root: Path) -> HarnessAgent:
    assert isinstance(adapter, NodeHarness)
    return HarnessAgent(harness=adapter, sandbox=LocalSandboxProvider(root_dir=root))


def _node(target: AdapterTarget) -> NodeHarness:
    adapter = target.factory()
    assert isinstance(adapter, NodeHarness)
    return adapter


def _script(*steps: list[dict[str, object]]) -> Script:
    return Script.model_validate({"turns": [{"steps": [{"actions": step} for step in steps]}]})


@requirement("HOST-004")
def test_the_report_names_the_adapter_host_and_node(example: AdapterTarget) -> None:
    adapter = _node(example)
    versions = adapter.versions
    assert versions["harness-testkit-example-adapter"] == "1.0.0"
    assert versions["adapter-host"] == "1.1.0"
    assert versions["host-protocol"] == "1.1"
    assert versions["node"].startswith("v")
    assert adapter.harness_id == "example"
    assert set(adapter.builtin_tools) == {"read", "write", "bash"}
    assert adapter.builtin_tools["bash"].tool_use_kind == "bash"


@requirement("HOST-006", "HOST-010", "HOST-012")
def test_a_turn_crosses_the_boundary_with_its_parts_and_sandbox_calls(
    example: AdapterTarget, tmp_path: Path, anyio_backend: str
) -> None:
    async def main() -> list[str]:
        adapter = _node(example)
        adapter.set_script(
            _script(
                [
                    {
                        "type": "builtin",
                        "tool": "write",
                        "id": "w1",
                        "input": {"file_path": "a.txt", "content": "hi"},
                    }
                ],
                [
                    {
                        "type": "builtin",
                        "tool": "bash",
                        "id": "b1",
                        "input": {"command": "cat a.txt"},
                    }
                ],
                [{"type": "text", "text": "all done"}],
            )
        )
        agent = _agent(adapter, tmp_path)
        session = await agent.create_session(session_id="crossing")
        result = await agent.stream(session=session, prompt="go")
        kinds: list[str] = [part.type async for part in result.full_stream]
        assert await result.text == "all done"
        executed = adapter.observations.of_kind(ToolExecuted)
        assert [(entry.tool_call_id, entry.executed) for entry in executed] == [
            ("w1", True),
            ("b1", True),
        ]
        assert "hi" in str(executed[1].result)
        written = [path async for path in anyio.Path(tmp_path).glob("sessions/crossing/*/a.txt")]
        assert [await path.read_text() for path in written] == ["hi"]
        await session.destroy()
        return kinds

    kinds = anyio.run(main, backend=anyio_backend)
    assert kinds[-1] == "finish"
    assert kinds.count("tool-result") == 2


@requirement("HOST-007")
def test_an_abort_reaches_the_adapter_as_its_abort_signal(
    example: AdapterTarget, tmp_path: Path, anyio_backend: str
) -> None:
    async def main() -> list[str]:
        adapter = _node(example)
        adapter.set_script(
            _script([{"type": "delay", "seconds": 60}, {"type": "text", "text": "late"}])
        )
        agent = _agent(adapter, tmp_path)
        session = await agent.create_session()
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="hold", abort=abort)
        kinds: list[str] = []
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:

                async def later() -> None:
                    await anyio.sleep(0.5)
                    abort.set()

                group.start_soon(later)
                kinds = [part.type async for part in result.full_stream]
        await session.destroy()
        return kinds

    kinds = anyio.run(main, backend=anyio_backend)
    assert kinds[-1] == "abort"


@requirement("HOST-005")
def test_the_adapters_capability_error_comes_through_as_itself(
    example: AdapterTarget, tmp_path: Path
) -> None:
    from harness_testkit.spec import HarnessCapabilityUnsupportedError

    async def main() -> None:
        agent = _agent(example.factory(), tmp_path)
        session = await agent.create_session()
        with pytest.raises(HarnessCapabilityUnsupportedError, match="manual compaction"):
            await session.compact()
        await session.destroy()

    anyio.run(main)


@requirement("HOST-011")
def test_the_host_runs_with_a_scrubbed_environment(tmp_path: Path) -> None:
    adapter_file = tmp_path / "env-adapter.mjs"
    adapter_file.write_text(
        "export const harness = {\n"
        "  specificationVersion: 'harness-v1', harnessId: 'env', builtinTools: {},\n"
        "  async doStart(options) {\n"
        "    return { sessionId: options.sessionId, isResume: false,\n"
        "      async doPromptTurn({ emit }) {\n"
        "        emit({ type: 'stream-start' });\n"
        "        emit({ type: 'text-start', id: 't' });\n"
        "        emit({ type: 'text-delta', id: 't', delta: JSON.stringify(Object.keys(process.env).sort()) });\n"
        "        emit({ type: 'text-end', id: 't' });\n"
        "        const usage = { inputTokens: { total: 0 }, outputTokens: { total: 0 } };\n"
        "        emit({ type: 'finish-step', finishReason: { unified: 'stop' }, usage });\n"
        "        emit({ type: 'finish', finishReason: { unified: 'stop' }, totalUsage: usage });\n"
        "        return { submitToolResult: async () => {}, done: Promise.resolve() };\n"
        "      },\n"
        "      async doDestroy() {},\n"
        "    };\n"
        "  },\n"
        "};\n",
        encoding="utf-8",
    )
    leaked = {"AI_GATEWAY_API_KEY": "secret", "ANTHROPIC_API_KEY": "secret", "OPENAI_BASE_URL": "x"}
    previous = {key: os.environ.get(key) for key in leaked}
    os.environ.update(leaked)
    try:
        target = load_node_target(f"{adapter_file}#harness")
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    async def main() -> list[str]:
        agent = _agent(target.factory(), tmp_path / "sandboxes")
        session = await agent.create_session()
        result = await agent.stream(session=session, prompt="env")
        text = await result.text
        await session.destroy()
        names: list[str] = json.loads(text)
        return names

    try:
        names = anyio.run(main)
    finally:
        close_hosts()
    assert set(names) <= {"PATH", "HOME", "TMPDIR", "LANG", "NODE_NO_WARNINGS"}, names
    assert not set(leaked) & set(names)


def test_a_host_leaves_no_process_or_folder_behind(tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "from harness_testkit.adapters.node import load_node_target\n"
        f"target = load_node_target({SPEC!r}, settings={SETTINGS!r})\n"
        "adapter = target.factory()\n"
        "host = adapter.host\n"
        "print(json.dumps([host.process.pid, host._home]))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    pid, home = json.loads(completed.stdout.strip().splitlines()[-1])
    # The interpreter exited without closing anything itself: the kit's exit hook did.
    assert not Path(f"/proc/{pid}").exists() or "\tZ" in Path(f"/proc/{pid}/status").read_text()
    assert not Path(home).exists()
    assert Path(home).parent == tmp_path  # made under the kit's TMPDIR, then removed


# -- planted defects in the host's forwarding ------------------------------------------


#: The scripted checks the planted defects break; the example passes them as it is.
FORWARDING_CHECKS = [
    "scripted.tool-merging",
    "scripted.permission-modes",
    "scripted.visible-writes",
]


def _outcomes(*faults: str) -> dict[str, tuple[str, str | None]]:
    target = load_node_target(SPEC, settings=SETTINGS, faults=faults)
    try:
        report = run_suite(target, RunOptions(profile="smoke"), check_ids=FORWARDING_CHECKS)
    finally:
        close_hosts()
    return {
        result.check_id: (result.status, result.failed_requirement) for result in report.results
    }


@pytest.mark.slow
def test_the_example_passes_the_checks_the_planted_defects_break() -> None:
    assert _outcomes() == dict.fromkeys(FORWARDING_CHECKS, ("pass", None))


@pytest.mark.slow
def test_a_host_that_drops_provider_executed_fails_on_merge_009() -> None:
    outcomes = _outcomes("drop-provider-executed")
    assert outcomes["scripted.tool-merging"] == ("fail", "MERGE-009")
    assert outcomes["scripted.visible-writes"] == ("fail", "MERGE-009")


@pytest.mark.slow
def test_a_host_that_runs_a_denied_builtin_fails_on_approval_035() -> None:
    outcomes = _outcomes("approve-denials")
    assert outcomes["scripted.permission-modes"] == ("fail", "APPROVAL-035"), outcomes


@pytest.mark.slow
@requirement("HOST-013")
def test_a_host_that_wires_its_consumer_late_fails_on_host_013() -> None:
    # The planted defect drops what the adapter emits before doPromptTurn returns (the
    # example emits stream-start there), as upstream's bridges lost events between
    # doPromptTurn returning and the consumer being wired.
    outcomes = _outcomes("drop-early-parts")
    assert outcomes == dict.fromkeys(FORWARDING_CHECKS, ("fail", "HOST-013")), outcomes


def test_the_pytest_plugin_checks_a_node_adapter(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_conformance=(
            "from harness_testkit.conformance import ConformanceSuite\n\n\n"
            "class TestExample(ConformanceSuite):\n"
            "    pass\n"
        )
    )
    result = pytester.runpytest_subprocess(
        f"--harness-adapter={SPEC}",
        f"--harness-settings={EXAMPLE / 'settings.json'}",
        "-k",
        "adapter.surface or stream.grammar or permission-modes",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=3)


@pytest.mark.slow
def test_the_docs_example_command_runs_as_written(tmp_path: Path) -> None:
    # docs/node-adapters.md shows the example's run as one command (its docs block is
    # marked not-run, pointing here): this test runs exactly that command.
    page = (ROOT / "docs" / "node-adapters.md").read_text(encoding="utf-8")
    commands = [
        " ".join(block.replace("\\\n", " ").split())
        for block in re.findall(r"```bash\n(.*?)```", page, re.S)
        if "adapters/node/example#" in block and "--expectations" in block
    ]
    assert len(commands) == 1, commands
    argv = shlex.split(commands[0])
    assert argv[0] == "harness-testkit"
    completed = subprocess.run(
        [
            str(Path(sys.executable).with_name("harness-testkit")),
            *argv[1:],
            "--bundle-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "black-box:" in completed.stdout
    assert "scripted:" in completed.stdout
