"""Session creation rules of the reference agent (notes 1.2, 7.1, 7.2, 12; sandboxes 1.2-1.5).

``create_session`` arguments and their validation, sandbox selection (provider, caller
session, embedded local default), the work dir, ``on_session`` ordering, cleanup after
failures, what ``do_start`` receives, the turn state machine and its messages, and the
bootstrap recipe on every acquisition.

One idea: everything ``create_session`` does before the first turn, in the order the
notes give it; each step has its own failure and cleanup cases, hence the length.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, SandboxConfig, tool
from harness_testkit.reference._sandbox_setup import apply_bootstrap_recipe
from harness_testkit.spec import (
    Bootstrap,
    HarnessCapabilityUnsupportedError,
    HarnessSessionStateError,
    HarnessUsageError,
    InvalidLifecycleStateError,
    NetworkSandboxSession,
    PendingToolApproval,
    PendingToolResult,
    ResumeSessionState,
    RunResult,
    sandbox_bootstrap_identity,
)
from tests.narrowing import of_type
from tests.reference.scripted import Hang, ScriptedHarness, WaitResult, finish, text_step, tool_call
from tests.reference.test_agent_support import (
    LIMIT,
    OBJECT,
    approval_response,
    client_tool,
    continue_parts,
    drain,
    make_agent,
    only,
    opened,
    stream_parts,
    suspend,
    teardown,
)
from tests.reference.test_rules_support import (
    LoggingHarness,
    MemorySandbox,
    RecordingProvider,
    Tracked,
    recipe,
)

pytestmark = pytest.mark.anyio
requirement = pytest.mark.requirement

BOTH_STATES = "HarnessAgent.createSession: pass either `resumeFrom` or `continueFrom`, not both."
REBIND = (
    "HarnessAgent.createSession: `toolsContext` can only rebind an unfinished turn from "
    "`continueFrom` or `resumeFrom`."
)
OK = RunResult(exit_code=0, stdout="", stderr="")


def _state(kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": {"cursor": 0},
        **extra,
    }


def _provider_agent(harness: ScriptedHarness, tmp_path: Path, **settings: Any) -> Any:
    provider = settings.pop("provider", None) or RecordingProvider(tmp_path / "rec")
    return HarnessAgent(harness=harness, sandbox=provider, **settings), provider


# -- 7.1.1 - 7.1.3, 7.1.11: arguments and validation ---------------------------------------------


@requirement("SESSION-001")
async def test_create_session_arguments_are_all_optional(tmp_path: Path) -> None:
    agent = make_agent(ScriptedHarness(), tmp_path)
    parameters = inspect.signature(agent.create_session).parameters
    expected = {"session_id", "resume_from", "continue_from", "tools_context", "sandbox_session"}
    assert expected <= set(parameters)
    assert all(parameters[name].default is None for name in expected)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session()
    try:
        assert session.status == "active"
    finally:
        await teardown(session)


@requirement("SESSION-001")
def test_create_session_accepts_an_abort_event(tmp_path: Path) -> None:
    agent = make_agent(ScriptedHarness(), tmp_path)
    assert "abort" in inspect.signature(agent.create_session).parameters


@requirement("SESSION-002")
async def test_both_states_are_refused_before_any_work(tmp_path: Path) -> None:
    harness = ScriptedHarness()
    agent, provider = _provider_agent(harness, tmp_path)
    with pytest.raises(HarnessUsageError) as caught:
        await agent.create_session(
            resume_from=_state("resume-session"), continue_from=_state("continue-turn")
        )
    assert str(caught.value) == BOTH_STATES
    assert provider.log == []
    assert harness.recorder.starts == []


@requirement("SESSION-003", "LIFECYCLE-018")
@pytest.mark.parametrize(
    ("argument", "state", "message"),
    [
        (
            "resume_from",
            _state("continue-turn"),
            "Lifecycle state has unexpected type 'continue-turn'; expected 'resume-session'.",
        ),
        (
            "continue_from",
            _state("resume-session"),
            "Lifecycle state has unexpected type 'resume-session'; expected 'continue-turn'.",
        ),
        (
            "continue_from",
            {**_state("continue-turn"), "harnessId": "codex"},
            "Lifecycle state was produced by harness 'codex' but this agent uses 'mock'.",
        ),
        (
            "resume_from",
            _state("resume-session", continueFrom=_state("resume-session")),
            "Lifecycle state has unexpected type 'resume-session'; expected 'continue-turn'.",
        ),
    ],
    ids=["resume-as-continue", "continue-as-resume", "other-harness", "nested"],
)
async def test_states_are_validated_before_any_sandbox_work(
    tmp_path: Path, argument: str, state: dict[str, Any], message: str
) -> None:
    harness = LoggingHarness().with_recipe(recipe())
    agent, provider = _provider_agent(harness, tmp_path)
    with pytest.raises(InvalidLifecycleStateError) as caught:
        await agent.create_session(session_id="s1", tools_context={"x": 1}, **{argument: state})
    assert str(caught.value) == message
    assert provider.log == []
    assert harness.log == []


@requirement("SESSION-014")
@pytest.mark.parametrize(
    "state",
    [{}, {"resume_from": _state("resume-session")}],
    ids=["fresh", "resume-without-continue-from"],
)
async def test_tools_context_needs_an_unfinished_turn(
    tmp_path: Path, state: dict[str, Any]
) -> None:
    harness = LoggingHarness().with_recipe(recipe())
    agent, provider = _provider_agent(harness, tmp_path)
    with pytest.raises(HarnessUsageError) as caught:
        await agent.create_session(session_id="s1", tools_context={"x": 1}, **state)
    assert str(caught.value) == REBIND
    assert provider.log == []
    assert harness.log == []


# -- 7.1.4 - 7.1.7: sandbox selection --------------------------------------------------------------


@requirement("SESSION-004", "SANDBOX-031")
@pytest.mark.parametrize("where", ["call", "agent"])
async def test_caller_sandbox_session_wins_and_is_never_stopped(tmp_path: Path, where: str) -> None:
    caller = await LocalSandboxProvider(tmp_path / "mine").create_session(session_id="mine")
    try:
        provider = RecordingProvider(tmp_path / "rec")
        tracked = Tracked(caller, provider.log)
        harness = ScriptedHarness([[*text_step("hi"), finish()]])
        settings: dict[str, Any] = {"sandbox_session": tracked} if where == "agent" else {}
        agent = HarnessAgent(harness=harness, sandbox=provider, **settings)
        call: dict[str, Any] = {"sandbox_session": tracked} if where == "call" else {}
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1", **call)
            assert session.sandbox_session is tracked
            assert harness.recorder.starts[0].sandbox_session is tracked
            await agent.generate(session=session, prompt="go")
            await session.destroy()
        assert provider.calls("create") == []
        assert provider.calls("stop") == provider.calls("destroy") == []
        assert await caller.read_text_file("probe.txt") is None  # still usable
    finally:
        await caller.destroy()


@requirement("SESSION-005", "SESSION-006", "DECISION-001")
async def test_without_a_sandbox_the_embedded_local_provider_is_used() -> None:
    harness = ScriptedHarness([[*text_step("one"), finish()], [*text_step("two"), finish()]])
    agent = HarnessAgent(harness=harness)
    with anyio.fail_after(LIMIT):
        first = await agent.create_session()
        second = await agent.create_session()
    roots: list[str] = []
    try:
        for session, text in ((first, "one"), (second, "two")):
            sandbox = session.sandbox_session
            assert isinstance(sandbox, NetworkSandboxSession)
            roots.append(sandbox.default_working_directory)
            assert await anyio.Path(sandbox.default_working_directory).is_dir()
            with anyio.fail_after(LIMIT):
                assert (await agent.generate(session=session, prompt="go")).text == text
        assert roots[0] != roots[1]
    finally:
        with anyio.fail_after(LIMIT):
            await first.destroy()
            await second.destroy()
    assert not [root for root in roots if await anyio.Path(root).exists()]


@requirement("SESSION-007", "ERROR-006")
@pytest.mark.parametrize(
    "state",
    [
        {"resume_from": _state("resume-session")},
        {"continue_from": _state("continue-turn")},
        {"resume_from": _state("resume-session", continueFrom=_state("continue-turn"))},
    ],
    ids=["resume", "continue", "nested-continue"],
)
async def test_resuming_through_a_provider_without_resume_is_unsupported(
    tmp_path: Path, state: dict[str, Any]
) -> None:
    provider = RecordingProvider(tmp_path / "rec", resumable=False)
    agent = HarnessAgent(harness=ScriptedHarness(), sandbox=provider)
    with pytest.raises(HarnessCapabilityUnsupportedError) as caught:
        await agent.create_session(session_id="s1", **state)
    assert str(caught.value) == "Sandbox provider 'recording' does not support resume."
    assert provider.log == []


async def _fresh_then_stopped(agent: HarnessAgent) -> ResumeSessionState:
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        return await session.stop()


@requirement("SESSION-008", "BOOTSTRAP-020")
async def test_resume_fetches_the_recipe_then_resumes_and_reapplies_it(tmp_path: Path) -> None:
    bootstraps: list[str] = []

    async def on_bootstrap(session: Any, work_dir: str) -> None:
        bootstraps.append(work_dir)

    harness = LoggingHarness().with_recipe(recipe())
    config = SandboxConfig(on_bootstrap=on_bootstrap, bootstrap_hash="h1")
    agent, provider = _provider_agent(harness, tmp_path, sandbox_config=config)
    try:
        state = await _fresh_then_stopped(agent)
        assert len(bootstraps) == 1
        harness.log.clear()
        provider.log.clear()
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1", resume_from=state)
        await session.destroy()
        assert harness.log[0] == ("get_bootstrap",)
        assert provider.log[0] == ("resume", "s1")
        assert provider.calls("create") == []
        marker_reads = [e for e in provider.log if e[:2] == ("restricted", "read")]
        assert len(marker_reads) == 1
        assert marker_reads[0][2].endswith(
            f".bootstrap-{of_type(Bootstrap, harness.recipe).identity()}.ok"
        )
        assert not [e for e in provider.log if e[1:2] == ("write",)]
        assert bootstraps == [bootstraps[0]], "on_bootstrap never runs on resume"
    finally:
        await provider.cleanup()


@requirement("SESSION-008", "SESSION-012")
async def test_a_failed_resume_stops_the_agent_owned_sandbox(tmp_path: Path) -> None:
    harness = ScriptedHarness()
    agent, provider = _provider_agent(harness, tmp_path)
    try:
        state = await _fresh_then_stopped(agent)
        provider.log.clear()
        harness.start_error = RuntimeError("runtime refused to resume")
        with pytest.raises(RuntimeError, match="runtime refused to resume"):
            await agent.create_session(session_id="s1", resume_from=state)
        assert provider.calls("stop") == [("stop", "s1")]
        assert provider.calls("destroy") == []
    finally:
        await provider.cleanup()


@requirement("SESSION-009", "BOOTSTRAP-019", "BOOTSTRAP-020", "SANDBOX-021")
@pytest.mark.parametrize("work_dir", [None, "repo"])
async def test_fresh_provider_session_is_created_with_identity_and_first_create(
    tmp_path: Path, work_dir: str | None
) -> None:
    bootstraps: list[tuple[Any, str]] = []
    the_recipe = recipe("mock", "echo built > built.txt")
    harness = LoggingHarness().with_recipe(the_recipe)

    async def on_bootstrap(session: Any, target: str) -> None:
        provider.log.append(("on_bootstrap", target))
        bootstraps.append((session, target))

    config = SandboxConfig(on_bootstrap=on_bootstrap, bootstrap_hash="h1", work_dir=work_dir)
    agent, provider = _provider_agent(harness, tmp_path, sandbox_config=config)
    try:
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1")
        await session.destroy()
        identity = the_recipe.identity()
        expected = sandbox_bootstrap_identity(
            identity, bootstrap_hash="h1", work_dir=work_dir, has_on_bootstrap=True
        )
        assert provider.log[0] == ("create", "s1", expected, True)
        first = [e for e in provider.log if e[0] in ("first-create", "on_bootstrap")]
        first_create = [e for e in provider.log if e[0] == "first-create"][1:]
        writes = [e for e in first_create if e[1] == "write"]
        runs = [e for e in first_create if e[1] == "run" and e[2] != "pwd"]
        assert writes[-1][2].endswith(f".bootstrap-{identity}.ok"), "marker written last"
        assert runs[0][2] == 'mkdir -p "$BOOTSTRAP_DIR"'
        ((hook_session, target),) = bootstraps
        assert target.endswith("/repo") if work_dir else not target.endswith("/repo")
        mkdir_target = [r for r in runs if r[3].get("WORK_DIR") == target]
        assert mkdir_target, "the bootstrap work dir is created before on_bootstrap"
        assert runs.index(mkdir_target[0]) > runs.index(
            next(r for r in runs if r[2] == "echo built > built.txt")
        )
        assert first[-1] == ("on_bootstrap", target)
        assert not hasattr(hook_session, "destroy")
        # After acquisition the recipe is applied again to the restricted view: marker hit.
        after = provider.log[provider.log.index(("on_bootstrap", target)) + 1 :]
        assert next(e[:2] for e in after if e[0] == "restricted") == ("restricted", "read")
        assert not [e for e in after if e[:2] == ("restricted", "write")]
    finally:
        await provider.cleanup()


@requirement("SESSION-010", "BOOTSTRAP-020", "SANDBOX-030")
@pytest.mark.parametrize(
    ("printed", "cwd"), [("/home/me\n", "/home/me"), ("/srv/app///\n", "/srv/app"), ("/\n", "/")]
)
async def test_caller_session_cwd_comes_from_pwd_and_gets_the_recipe(
    tmp_path: Path, printed: str, cwd: str
) -> None:
    ran: list[str] = []

    async def on_bootstrap(session: Any, target: str) -> None:
        ran.append(target)

    sandbox = MemorySandbox(pwd=RunResult(exit_code=0, stdout=printed, stderr=""))
    sandbox.cwd = cwd
    harness = LoggingHarness([[*text_step("x"), finish()]]).with_recipe(recipe())
    config = SandboxConfig(on_bootstrap=on_bootstrap, bootstrap_hash="h1")
    agent = HarnessAgent(harness=harness, sandbox_session=sandbox, sandbox_config=config)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        await session.destroy()
    assert session.session_work_dir == ("/mock-s1" if cwd == "/" else f"{cwd}/mock-s1")
    marker = f"{cwd.rstrip('/')}/.harness/mock/.bootstrap-{recipe().identity()}.ok"
    assert sandbox.files[marker] == ""
    assert ran == []


@requirement("SESSION-010")
async def test_caller_session_default_working_directory_is_used_without_pwd(
    tmp_path: Path,
) -> None:
    caller = await LocalSandboxProvider(tmp_path / "mine").create_session(session_id="mine")
    log: list[Any] = []
    tracked = Tracked(caller, log)
    try:
        agent = HarnessAgent(harness=ScriptedHarness(), sandbox_session=tracked)
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1")
            await session.destroy()
        assert session.session_work_dir == f"{caller.default_working_directory}/mock-s1"
        assert all(entry[2] != "pwd" for entry in log if entry[1:2] == ("run",))
    finally:
        await caller.destroy()


@requirement("SANDBOX-030")
@pytest.mark.parametrize(
    "pwd",
    [
        RunResult(exit_code=1, stdout="/x\n", stderr="no"),
        RunResult(exit_code=0, stdout="x\n", stderr=""),
    ],
    ids=["non-zero-exit", "relative-output"],
)
async def test_unusable_pwd_fails_session_creation(tmp_path: Path, pwd: RunResult) -> None:
    harness = ScriptedHarness()
    agent = HarnessAgent(harness=harness, sandbox_session=MemorySandbox(pwd=pwd))
    with pytest.raises(Exception, match="pwd"):
        await agent.create_session(session_id="s1")
    assert harness.recorder.starts == []


# -- 7.1.8 / 12.2 / 12.6: work dir, on_session, do_start ------------------------------------------


@requirement("SESSION-011", "BOOTSTRAP-007", "SANDBOX-021")
@pytest.mark.parametrize("resumed", [False, True])
async def test_work_dir_then_on_session_then_do_start(tmp_path: Path, resumed: bool) -> None:
    harness = LoggingHarness()
    seen: list[Any] = []

    async def on_session(session: Any, work_dir: str) -> None:
        harness.log.append(("on_session", work_dir, await anyio.Path(work_dir).is_dir()))
        seen.append(session)

    provider = RecordingProvider(tmp_path / "rec", log=harness.log)
    agent = HarnessAgent(
        harness=harness, sandbox=provider, sandbox_config=SandboxConfig(on_session=on_session)
    )
    try:
        state = await _fresh_then_stopped(agent) if resumed else None
        harness.log.clear()
        resume: dict[str, Any] = {"resume_from": state} if resumed else {}
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1", **resume)
        work_dir = session.session_work_dir
        await session.destroy()
        cwd = provider.sessions[-1].default_working_directory
        assert work_dir == f"{cwd}/mock-s1"
        mkdir = ("full", "run", 'mkdir -p "$WORK_DIR"', {"WORK_DIR": work_dir})
        tail = [e for e in harness.log if e[0] in ("full", "on_session", "do_start")]
        assert tail == [mkdir, ("on_session", work_dir, True), ("do_start", work_dir)]
        assert not hasattr(seen[-1], "destroy"), "on_session gets the restricted view"
    finally:
        await provider.cleanup()


@requirement("BOOTSTRAP-007")
@pytest.mark.parametrize(
    ("setting", "suffix"), [(None, "mock-s7"), ("repo/../ai-sdk", "ai-sdk"), ("a/b/", "a/b")]
)
async def test_session_work_dir_joins_the_cwd_and_the_normalized_setting(
    tmp_path: Path, setting: str | None, suffix: str
) -> None:
    harness = ScriptedHarness()
    config = SandboxConfig(work_dir=setting) if setting is not None else None
    async with opened(harness, tmp_path, session_id="s7", sandbox_config=config) as (_, session):
        sandbox = session.sandbox_session
        assert isinstance(sandbox, NetworkSandboxSession)
        cwd = sandbox.default_working_directory
        assert session.session_work_dir == f"{cwd}/{suffix}"
        assert await anyio.Path(session.session_work_dir).is_dir()
    assert harness.recorder.starts[0].session_work_dir == f"{cwd}/{suffix}"


@requirement("BOOTSTRAP-018")
async def test_work_dir_creation_failure_names_dir_exit_and_output(tmp_path: Path) -> None:
    failing = RunResult(exit_code=3, stdout="", stderr="read-only file system")
    sandbox = MemorySandbox(exits={"mkdir": failing})
    harness = ScriptedHarness()
    agent = HarnessAgent(harness=harness, sandbox_session=sandbox)
    with pytest.raises(RuntimeError) as caught:
        await agent.create_session(session_id="s1")
    assert str(caught.value) == (
        "Failed to create sandbox work directory /work/mock-s1 (exit 3): read-only file system"
    )
    assert harness.recorder.starts == []


@requirement("SESSION-012")
@pytest.mark.parametrize("failing", ["on_session", "do_start"])
@pytest.mark.parametrize("fail_stop", [False, True], ids=["stop-ok", "stop-raises"])
async def test_failure_after_acquisition_stops_the_owned_sandbox(
    tmp_path: Path, failing: str, fail_stop: bool
) -> None:
    harness = ScriptedHarness()

    async def on_session(session: Any, work_dir: str) -> None:
        if failing == "on_session":
            raise RuntimeError("setup broke")

    if failing == "do_start":
        harness.start_error = RuntimeError("setup broke")
    provider = RecordingProvider(tmp_path / "rec", fail_stop=fail_stop)
    agent = HarnessAgent(
        harness=harness, sandbox=provider, sandbox_config=SandboxConfig(on_session=on_session)
    )
    try:
        with pytest.raises(RuntimeError, match="setup broke"):
            await agent.create_session(session_id="s1")
        assert provider.calls("stop") == [("stop", "s1")]
        assert provider.calls("destroy") == []
    finally:
        await provider.cleanup()


@requirement("SESSION-012", "SANDBOX-031")
async def test_failure_never_stops_a_caller_owned_sandbox(tmp_path: Path) -> None:
    sandbox = MemorySandbox()
    harness = ScriptedHarness()
    harness.start_error = RuntimeError("runtime down")
    agent = HarnessAgent(harness=harness, sandbox_session=sandbox)
    with pytest.raises(RuntimeError, match="runtime down"):
        await agent.create_session(session_id="s1")
    assert not hasattr(sandbox, "stop")
    assert [e for e in sandbox.log if e[0] == "run"][-1][1] == 'mkdir -p "$WORK_DIR"'


# -- 1.2: what do_start receives -------------------------------------------------------------------


@requirement("ADAPTER-012", "ADAPTER-014", "ADAPTER-016", "ADAPTER-013", "PROMPT-009")
async def test_do_start_receives_session_scoped_options_only(tmp_path: Path) -> None:
    from harness_testkit.spec import Skill

    skill = Skill(name="review", description="Review", content="Look for bugs.")
    harness = ScriptedHarness()
    agent = make_agent(harness, tmp_path, skills=[skill], model="m", instructions="i")
    with anyio.fail_after(LIMIT):
        named = await agent.create_session(session_id="given")
        generated = await agent.create_session()
    try:
        first, second = harness.recorder.starts
        assert first.session_id == "given"
        assert second.session_id == generated.session_id
        assert generated.session_id
        assert generated.session_id != "given"
        for start, session in ((first, named), (second, generated)):
            assert start.sandbox_session is session.sandbox_session
            assert isinstance(start.sandbox_session, NetworkSandboxSession)
            assert start.session_work_dir.startswith("/")
            assert await anyio.Path(start.session_work_dir).is_dir()
            assert start.permission_mode == "allow-all"
            assert start.builtin_tool_filtering is None
            assert start.headers is None
            assert list(start.skills) == [skill]
            for turn_scoped in ("model", "instructions", "tools", "response_format", "prompt"):
                assert not hasattr(start, turn_scoped)
    finally:
        await named.destroy()
        await generated.destroy()


@requirement("ADAPTER-019", "ERROR-011")
@pytest.mark.parametrize("name", ["Authorization", "x-api-key", "USER-AGENT", "X-Client-App"])
@pytest.mark.parametrize("value", ["v", None])
def test_managed_headers_are_refused_at_construction(
    tmp_path: Path, name: str, value: str | None
) -> None:
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(ScriptedHarness(), tmp_path, headers={"X-Fine": "1", name: value})
    assert str(caught.value) == (
        f"HarnessAgent: `headers` must not include the managed header `{name.lower()}`."
    )


@requirement("ADAPTER-020", "ADAPTER-013")
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {"X-Trace": "abc", "X-Drop": None, "Accept-Language": "fr"},
            {"x-trace": "abc", "accept-language": "fr"},
        ),
        ({"X-Drop": None}, None),
        ({}, None),
    ],
    ids=["normalized", "only-none", "empty"],
)
async def test_headers_are_normalized_once_and_reach_only_do_start(
    tmp_path: Path, headers: dict[str, str | None], expected: dict[str, str] | None
) -> None:
    harness = ScriptedHarness([[finish()]])
    given = dict(headers)
    async with opened(harness, tmp_path, headers=given) as (agent, session):
        given["X-Late"] = "added after construction"
        await agent.generate(session=session, prompt="go")
    assert harness.recorder.starts[0].headers == expected
    assert not hasattr(harness.recorder.prompts[0], "headers")


@requirement("ADAPTER-025")
@pytest.mark.parametrize("reported", [True, False])
async def test_is_resume_is_copied_from_the_adapter_session(tmp_path: Path, reported: bool) -> None:
    class Reporting(ScriptedHarness):
        async def do_start(self, options: Any) -> Any:
            session = await super().do_start(options)
            session.is_resume = reported  # a fresh session the adapter calls resumed
            return session

    async with opened(Reporting(), tmp_path) as (_, session):
        assert session.is_resume is reported


@requirement("ADAPTER-015", "LIFECYCLE-039")
async def test_resume_and_continue_states_reach_do_start(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), WaitResult("c1")]
    harness = ScriptedHarness([script])
    agent = make_agent(harness, tmp_path, tools={"pick": client_tool()})
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        await agent.generate(session=session, prompt="go")
        wrapped = await session.detach()
    nested = wrapped.continue_from
    assert nested is not None
    recreated = []
    try:
        with anyio.fail_after(LIMIT):
            recreated.append(await agent.create_session(session_id="s1", resume_from=wrapped))
            await recreated[-1].detach()
            recreated.append(await agent.create_session(session_id="s1", continue_from=nested))
        by_resume, by_continue = harness.recorder.starts[1:]
        assert by_resume.resume_from is not None
        assert by_resume.resume_from.continue_from == nested
        assert by_resume.continue_from == nested
        assert by_continue.resume_from is None
        assert by_continue.continue_from == nested
        assert recreated[-1].turn_state == "awaiting-tool-result"
        with pytest.raises(HarnessSessionStateError, match="must be continued"):
            await agent.stream(session=recreated[-1], prompt="new prompt")
    finally:
        await teardown(recreated[-1])


# -- 7.1.10: the turn state of a new session ---------------------------------------------------------

APPROVAL = PendingToolApproval(
    approval_id="a1", tool_call_id="c1", tool_name="pick", input="{}", kind="custom"
).to_wire()
RESULT = PendingToolResult(tool_call_id="c2", tool_name="pick", input="{}").to_wire()


@requirement("SESSION-013")
@pytest.mark.parametrize(
    ("state", "turn_state"),
    [
        ({}, "idle"),
        ({"resume_from": _state("resume-session")}, "idle"),
        ({"continue_from": _state("continue-turn")}, "suspended"),
        (
            {"continue_from": _state("continue-turn", pendingToolResults=[RESULT])},
            "awaiting-tool-result",
        ),
        (
            {
                "continue_from": _state(
                    "continue-turn", pendingToolApprovals=[APPROVAL], pendingToolResults=[RESULT]
                )
            },
            "awaiting-approval",
        ),
        (
            {
                "resume_from": _state(
                    "resume-session",
                    continueFrom=_state("continue-turn", pendingToolResults=[RESULT]),
                )
            },
            "awaiting-tool-result",
        ),
    ],
    ids=["fresh", "resume", "suspended", "results", "approvals", "nested"],
)
async def test_new_session_turn_state_follows_the_continue_state(
    tmp_path: Path, state: dict[str, Any], turn_state: str
) -> None:
    caller = await LocalSandboxProvider(tmp_path / "mine").create_session(session_id="mine")
    try:
        agent = HarnessAgent(harness=ScriptedHarness(), sandbox_session=caller)
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1", **state)
            assert session.turn_state == turn_state
            assert session.has_unfinished_turn() is (turn_state != "idle")
            await session.destroy()
    finally:
        await caller.destroy()


# -- 7.2: the state machine and its messages ------------------------------------------------------------


@requirement("SESSION-015", "SESSION-021", "SESSION-024")
async def test_turn_state_runs_then_returns_to_idle_for_each_sequential_turn(
    tmp_path: Path,
) -> None:
    turns = [[*text_step(f"t{n}"), finish()] for n in range(3)]
    async with opened(ScriptedHarness(turns), tmp_path) as (agent, session):
        assert (session.status, session.turn_state, session.has_unfinished_turn()) == (
            "active",
            "idle",
            False,
        )
        for n in range(3):
            result = await agent.stream(session=session, prompt=f"p{n}")
            assert session.turn_state == "running"
            assert session.has_unfinished_turn()
            await drain(result)
            assert await result.text == f"t{n}"
            assert session.turn_state == "idle"
            assert session.pending_tool_approvals == []
            assert session.pending_tool_results == []
    assert session.status == "destroyed"


@requirement("SESSION-021")
async def test_finishing_a_continued_turn_clears_its_pending_records(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), WaitResult("c1"), *text_step("done"), finish()]
    tools = {"pick": client_tool()}
    async with opened(ScriptedHarness([script]), tmp_path, tools=tools) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        assert [r.tool_call_id for r in session.pending_tool_results] == ["c1"]
        await continue_parts(
            agent, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
        assert session.turn_state == "idle"
        assert session.pending_tool_results == []


@requirement("SESSION-017", "SESSION-019")
async def test_a_running_turn_refuses_prompts_and_continuations(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[Hang()]]), tmp_path, abort_grace=0.1) as (agent, session):
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        busy = "Harness session s1 already has a turn in progress."
        with pytest.raises(HarnessSessionStateError) as prompt_error:
            await agent.stream(session=session, prompt="again")
        with pytest.raises(HarnessSessionStateError) as continue_error:
            await agent.continue_stream(session=session)
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "x",
                        "toolName": "t",
                        "output": {"type": "json", "value": 1},
                    }
                ],
            },
        ]
        with pytest.raises(HarnessSessionStateError) as message_error:
            await agent.stream(session=session, messages=messages)
        assert (
            str(prompt_error.value) == str(continue_error.value) == str(message_error.value) == busy
        )
        abort.set()
        await drain(result)
        assert session.turn_state == "idle"


@requirement("SESSION-022")
async def test_a_stream_closing_without_finish_returns_to_idle(tmp_path: Path) -> None:
    turns = [[*text_step("no finish")], [*text_step("next"), finish()]]
    async with opened(ScriptedHarness(turns), tmp_path) as (agent, session):
        first = await agent.generate(session=session, prompt="go")
        assert session.turn_state == "idle"
        second = await agent.generate(session=session, prompt="again")
    assert (first.text, first.finish_reason, second.text) == ("no finish", "stop", "next")


@requirement("SESSION-025", "SESSION-027", "PROMPT-025")
async def test_prepare_call_runs_before_the_state_checks(tmp_path: Path) -> None:
    runs: list[str] = []

    def prepare(call: dict[str, Any]) -> None:
        runs.append(call["prompt"])

    async with opened(
        ScriptedHarness([[Hang()]]), tmp_path, prepare_call=prepare, abort_grace=0.1
    ) as (agent, session):
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="first", abort=abort)
        with pytest.raises(HarnessSessionStateError, match="already has a turn in progress"):
            await agent.stream(session=session, prompt="busy")
        abort.set()
        await drain(result)
        await session.destroy()
        with pytest.raises(HarnessSessionStateError, match="has ended"):
            await agent.stream(session=session, prompt="ended")
    assert runs == ["first", "busy", "ended"]


@requirement("PROMPT-001", "SESSION-025")
async def test_message_continuations_are_detected_before_prepare_call(tmp_path: Path) -> None:
    runs: list[Any] = []
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "pick", "input": {}}],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "pick",
                    "output": {"type": "json", "value": 1},
                }
            ],
        },
    ]
    async with opened(ScriptedHarness(), tmp_path, prepare_call=runs.append) as (agent, session):
        with pytest.raises(HarnessSessionStateError) as caught:
            await agent.stream(session=session, messages=messages)
    assert str(caught.value) == "Harness session s1 has no unfinished turn to continue."
    assert runs == []


@requirement("SESSION-026", "ERROR-010")
async def test_a_failing_prepare_call_raises_directly_and_changes_nothing(tmp_path: Path) -> None:
    def prepare(call: dict[str, Any]) -> None:
        raise LookupError("no tenant for this call")

    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path, prepare_call=prepare) as (agent, session):
        with pytest.raises(LookupError, match="no tenant"):
            await agent.stream(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert harness.recorder.prompts == []


# -- 8.7 / 8.8: tool context on recreated sessions -----------------------------------------------------------


def _context_tool(seen: list[Any]) -> Any:
    def execute(value: Any, options: Any) -> Any:
        seen.append(options.context)
        return "deployed"

    return tool(
        description="deploy",
        input_schema=OBJECT,
        execute=execute,
        context_schema={"type": "object", "required": ["token"]},
    )


@requirement("CONTEXT-011", "CONTEXT-012", "CONTEXT-010", "LIFECYCLE-019")
@pytest.mark.parametrize(
    ("static", "rebound", "expected"),
    [
        ({"deploy": {"token": "static"}}, {"deploy": {"token": "rebound"}}, {"token": "rebound"}),
        ({"deploy": {"token": "static"}}, None, {"token": "static"}),
        (None, None, None),
    ],
    ids=["rebound", "static-fallback", "empty"],
)
async def test_recreated_session_tool_context(
    tmp_path: Path, static: Any, rebound: Any, expected: Any
) -> None:
    seen: list[Any] = []
    script = [tool_call("c1", "deploy", "{}"), WaitResult("c1")]
    tail = [WaitResult("c1"), *text_step("after"), finish()]
    harness = ScriptedHarness([script, tail])
    settings: dict[str, Any] = {
        "tools": {"deploy": _context_tool(seen)},
        "tool_approval": {"deploy": "user-approval"},
    }
    if static is not None:
        settings["tools_context"] = {**static, "secret": "TOPSECRET-1"}
    agent = make_agent(harness, tmp_path, **settings)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        _, parts = await stream_parts(agent, session=session, prompt="go")
        state = await suspend(session)
    (approval_id,) = [p.approval_id for p in only(parts, "tool-approval-request")]
    assert "TOPSECRET" not in str(state.to_wire())
    extra = {"tools_context": rebound} if rebound is not None else {}
    with anyio.fail_after(LIMIT):
        recreated = await agent.create_session(session_id="s1", continue_from=state, **extra)
    try:
        await continue_parts(
            agent,
            session=recreated,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
    finally:
        await teardown(recreated)
    assert "TOPSECRET" not in repr(harness.recorder)
    if expected is None:
        assert seen == []
        assert harness.recorder.results[-1]["output"] == {
            "error": "Tool context validation failed."
        }
    else:
        assert seen == [expected]


# -- 12.1 / 12.2: constructor checks of sandbox_config -----------------------------------------------------

WORK_DIR = "HarnessAgent: `sandboxConfig.workDir`"


async def _noop(session: Any, work_dir: str) -> None:
    return None


@requirement("BOOTSTRAP-004")
@pytest.mark.parametrize(
    "config",
    [SandboxConfig(on_bootstrap=_noop), SandboxConfig(bootstrap_hash="h")],
    ids=["hook-only", "hash-only"],
)
def test_on_bootstrap_and_bootstrap_hash_go_together(tmp_path: Path, config: SandboxConfig) -> None:
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(ScriptedHarness(), tmp_path, sandbox_config=config)
    assert str(caught.value) == (
        "HarnessAgent: `sandboxConfig.onBootstrap` and `sandboxConfig.bootstrapHash` "
        "must be provided together."
    )


@requirement("BOOTSTRAP-005", "BOOTSTRAP-006")
@pytest.mark.parametrize(
    ("work_dir", "problem"),
    [
        ("", "must not be empty."),
        ("a\0b", "must not contain NUL."),
        ("a\\b", "must use POSIX path separators."),
        ("/repo", "must be relative."),
        (".", "must stay inside the sandbox default working directory."),
        ("..", "must stay inside the sandbox default working directory."),
        ("../repo", "must stay inside the sandbox default working directory."),
        ("repo/../../x", "must stay inside the sandbox default working directory."),
    ],
)
def test_work_dir_validation_messages(tmp_path: Path, work_dir: str, problem: str) -> None:
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(ScriptedHarness(), tmp_path, sandbox_config=SandboxConfig(work_dir=work_dir))
    assert str(caught.value) == f"{WORK_DIR} {problem}"


@requirement("BOOTSTRAP-006")
@pytest.mark.parametrize(
    ("work_dir", "normalized"), [("repo/../ai-sdk", "ai-sdk"), ("./a//b/", "a/b"), ("a/./b", "a/b")]
)
def test_work_dir_is_normalized(tmp_path: Path, work_dir: str, normalized: str) -> None:
    agent = make_agent(ScriptedHarness(), tmp_path, sandbox_config=SandboxConfig(work_dir=work_dir))
    assert agent.work_dir_setting == normalized


@requirement("ERROR-011")
def test_bootstrap_settings_are_checked_before_headers(tmp_path: Path) -> None:
    with pytest.raises(HarnessUsageError, match="sandboxConfig"):
        make_agent(
            ScriptedHarness(),
            tmp_path,
            sandbox_config=SandboxConfig(bootstrap_hash="h"),
            headers={"authorization": "x"},
        )


# -- 12.5: applying a recipe ------------------------------------------------------------------------------------


@requirement("BOOTSTRAP-014")
@pytest.mark.parametrize("content", ["", "ok"])
async def test_existing_marker_means_nothing_is_written_or_run(content: str) -> None:
    sandbox = MemorySandbox()
    the_recipe = recipe("mock", "npm install")
    marker = f"/work/.harness/mock/.bootstrap-{the_recipe.identity()}.ok"
    sandbox.files[marker] = content
    await apply_bootstrap_recipe(sandbox, the_recipe, "/work")
    assert sandbox.log == [("read", marker)]


@requirement("BOOTSTRAP-015")
async def test_bootstrap_directory_failure(tmp_path: Path) -> None:
    failing = RunResult(exit_code=2, stdout="out", stderr="")
    sandbox = MemorySandbox(exits={'mkdir -p "$BOOTSTRAP_DIR"': failing})
    with pytest.raises(RuntimeError) as caught:
        await apply_bootstrap_recipe(sandbox, recipe("mock", "true"), "/work")
    assert str(caught.value) == (
        "Failed to create bootstrap directory for harness 'mock' (exit 2): /work/.harness/mock\nout"
    )
    (mkdir,) = sandbox.entries("run")
    assert mkdir[2] == {"BOOTSTRAP_DIR": "/work/.harness/mock"}
    assert mkdir[3] == "/work"
    assert sandbox.entries("write") == []


@requirement("BOOTSTRAP-016", "BOOTSTRAP-017")
async def test_recipe_commands_run_in_order_and_the_marker_comes_last() -> None:
    sandbox = MemorySandbox()
    the_recipe = recipe("mock", "first", "second")
    await apply_bootstrap_recipe(sandbox, the_recipe, "/work")
    marker = f"/work/.harness/mock/.bootstrap-{the_recipe.identity()}.ok"
    steps = [(e[0], e[1]) for e in sandbox.log if e[0] in ("run", "write")]
    assert steps == [
        ("run", 'mkdir -p "$BOOTSTRAP_DIR"'),
        ("write", "/work/.harness/mock/config.json"),
        ("run", "first"),
        ("run", "second"),
        ("write", marker),
    ]
    assert all(e[3] == "/work/.harness/mock" for e in sandbox.entries("run")[1:])
    assert sandbox.files[marker] == ""


@requirement("BOOTSTRAP-016")
async def test_a_failing_recipe_command_stops_before_the_marker() -> None:
    failing = RunResult(exit_code=7, stdout="ignored", stderr="npm ERR!")
    sandbox = MemorySandbox(exits={"second": failing})
    the_recipe = recipe("mock", "first", "second", "third")
    with pytest.raises(RuntimeError) as caught:
        await apply_bootstrap_recipe(sandbox, the_recipe, "/work")
    assert (
        str(caught.value)
        == "Bootstrap command failed for harness 'mock' (exit 7): second\nnpm ERR!"
    )
    assert [e[1] for e in sandbox.entries("run")][-1] == "second"
    assert not any(path.endswith(".ok") for path in sandbox.files)


@requirement("BOOTSTRAP-020")
async def test_recipe_applies_to_a_provided_session_without_on_bootstrap(tmp_path: Path) -> None:
    calls: list[str] = []

    async def on_bootstrap(session: Any, work_dir: str) -> None:
        calls.append(work_dir)

    sandbox = MemorySandbox()
    harness = LoggingHarness().with_recipe(recipe())
    agent = HarnessAgent(
        harness=harness,
        sandbox_session=sandbox,
        sandbox_config=SandboxConfig(on_bootstrap=on_bootstrap, bootstrap_hash="h"),
    )
    with anyio.fail_after(LIMIT):
        for session_id in ("a", "b"):
            session = await agent.create_session(session_id=session_id)
            await session.destroy()
    marker = f"/work/.harness/mock/.bootstrap-{recipe().identity()}.ok"
    assert [e for e in sandbox.log if e == ("read", marker)] == [("read", marker)] * 2
    assert [e for e in sandbox.log if e == ("write", marker)] == [("write", marker)]
    assert calls == []


@requirement("SESSION-016")
async def test_prompts_on_an_ended_session_are_refused(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        await session.destroy()
        with pytest.raises(HarnessSessionStateError) as caught:
            await agent.generate(session=session, prompt="go")
    assert str(caught.value) == "Harness session s1 has ended and cannot be reused."
