"""Kit-level catalogue rules on session state, checked on the contract models and helpers.

Lifecycle state shapes and their validation order (LIFECYCLE), skill file paths (PROMPT),
bootstrap recipe and snapshot identities and the marker path (BOOTSTRAP), and the shape
of kit error messages (ERROR). Parts and tools are in ``test_rules_kit.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from harness_testkit.spec import (
    Bootstrap,
    BootstrapCommand,
    BootstrapFile,
    ContinueTurnState,
    HarnessError,
    InvalidLifecycleStateError,
    PendingToolApproval,
    PendingToolResult,
    ResumeSessionState,
    Skill,
    SkillFile,
    TurnSettings,
    bootstrap_marker_path,
    common_tool,
    parse_lifecycle_state,
    sandbox_bootstrap_identity,
)

requirement = pytest.mark.requirement


# -- LIFECYCLE: state shapes and validation ----------------------------------------------------------

APPROVAL_RECORD = {
    "approvalId": "a1",
    "toolCallId": "c1",
    "toolName": "deploy",
    "input": '{"env": "prod"}',
    "kind": "custom",
    "providerExecuted": False,
    "nativeName": "Deploy",
}
RESULT_RECORD = {
    "toolCallId": "c2",
    "toolName": "pick",
    "input": "{}",
    "providerOptions": {"ui": {"k": 1}},
    "completedResult": {
        "output": {"picked": 2},
        "isError": True,
        "toolResult": {"type": "tool-result", "toolCallId": "c2"},
    },
}
SETTINGS = {
    "model": "m",
    "skills": [{"name": "review", "description": "Review", "content": "Look."}],
    "instructions": "be brief",
    "tools": [{"name": "pick", "description": "Pick", "inputSchema": {"type": "object"}}],
}
CONTINUE = {
    "type": "continue-turn",
    "harnessId": "mock",
    "specificationVersion": "harness-v1",
    "data": {"cursor": 3},
    "pendingToolApprovals": [APPROVAL_RECORD],
    "pendingToolResults": [RESULT_RECORD],
    "turnSettings": SETTINGS,
}
RESUME = {
    "type": "resume-session",
    "harnessId": "mock",
    "specificationVersion": "harness-v1",
    "data": ["any", "json"],
    "continueFrom": CONTINUE,
}


@requirement("LIFECYCLE-001", "LIFECYCLE-002", "LIFECYCLE-003", "LIFECYCLE-004")
@pytest.mark.parametrize("wire", [CONTINUE, RESUME], ids=["continue-turn", "resume-session"])
def test_lifecycle_state_wire_shapes_round_trip(wire: dict[str, Any]) -> None:
    state = parse_lifecycle_state(wire, harness_id="mock")
    assert state.to_wire() == wire
    again = parse_lifecycle_state(json.loads(json.dumps(state.to_wire())), harness_id="mock")
    assert again == state


@requirement("LIFECYCLE-002", "LIFECYCLE-003", "LIFECYCLE-004")
def test_lifecycle_records_and_settings_are_camel_case_models() -> None:
    approval = PendingToolApproval.model_validate(APPROVAL_RECORD)
    result = PendingToolResult.model_validate(RESULT_RECORD)
    settings = TurnSettings.model_validate(SETTINGS)
    assert approval.to_wire() == APPROVAL_RECORD
    assert result.to_wire() == RESULT_RECORD
    assert settings.to_wire() == SETTINGS
    assert TurnSettings().to_wire() == {"skills": [], "tools": []}
    minimal = {
        "type": "continue-turn",
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": None,
    }
    assert ContinueTurnState(harness_id="mock").to_wire() == {
        k: v for k, v in minimal.items() if v is not None
    }
    assert ResumeSessionState(harness_id="mock", data={}).to_wire()["type"] == "resume-session"
    for kind in ("builtin", "custom"):
        PendingToolApproval.model_validate({**APPROVAL_RECORD, "kind": kind})
    with pytest.raises(ValidationError):
        PendingToolApproval.model_validate({**APPROVAL_RECORD, "kind": "host"})
    with pytest.raises(ValidationError):
        PendingToolResult.model_validate({**RESULT_RECORD, "input": {"parsed": True}})


def _base(kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": {"cursor": 1},
        **extra,
    }


def _reject_schema(data: Any) -> Any:
    raise ValueError("schema says no")


@requirement("LIFECYCLE-014")
@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            {
                **_base("nope"),
                "specificationVersion": "v0",
                "harnessId": "other",
                "pendingToolResults": [],
            },
            "unexpected type 'nope'",
        ),
        (
            {**_base("resume-session"), "specificationVersion": "v0", "harnessId": "other"},
            "unexpected specificationVersion 'v0'",
        ),
        (
            {**_base("resume-session"), "harnessId": "other", "pendingToolApprovals": []},
            "produced by harness 'other'",
        ),
        (
            {**_base("resume-session"), "pendingToolResults": [], "data": {"bad": 1}},
            "cannot contain pending tool results",
        ),
        (_base("resume-session"), "failed schema validation"),
        (
            {**_base("resume-session", continueFrom=_base("resume-session"))},
            "failed schema validation",
        ),
    ],
    ids=[
        "type-first",
        "version-second",
        "harness-third",
        "pending-fourth",
        "schema-fifth",
        "nested-last",
    ],
)
def test_lifecycle_validation_order(state: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state(state, harness_id="mock", data_validator=_reject_schema)
    assert message in str(caught.value)
    assert isinstance(caught.value, HarnessError)
    assert caught.value.name == "AI_HarnessError"


@requirement("LIFECYCLE-014")
def test_nested_continue_from_is_validated_as_continue_turn() -> None:
    nested = _base("resume-session", continueFrom={**_base("continue-turn"), "harnessId": "x"})
    with pytest.raises(InvalidLifecycleStateError, match="produced by harness 'x'"):
        parse_lifecycle_state(nested, harness_id="mock")
    parsed = parse_lifecycle_state(
        _base("resume-session", continueFrom=_base("continue-turn")), harness_id="mock"
    )
    assert isinstance(parsed, ResumeSessionState)
    assert isinstance(parsed.continue_from, ContinueTurnState)


def _validated(data: Any) -> Any:
    if data in ({"no": "cursor"}, []):
        raise ValueError("no cursor")
    return {"was": data}


@requirement("LIFECYCLE-014")
@pytest.mark.parametrize("wire", [CONTINUE, RESUME], ids=["continue-turn", "resume-session"])
def test_a_parsed_model_is_rechecked_without_walking_its_shape_again(wire: dict[str, Any]) -> None:
    # What the agent hands an adapter (StartOptions) is its own parse of the state; an
    # adapter passing shape_checked gets the same result as a whole parse of the wire.
    model = parse_lifecycle_state(wire, harness_id="mock")
    rechecked = parse_lifecycle_state(
        model, harness_id="mock", data_validator=_validated, shape_checked=True
    )
    whole = parse_lifecycle_state(wire, harness_id="mock", data_validator=_validated)
    assert rechecked == whole
    if isinstance(rechecked, ResumeSessionState):
        assert rechecked.continue_from is not None
        assert rechecked.continue_from.data == {"was": {"cursor": 3}}


@requirement("LIFECYCLE-014")
@pytest.mark.parametrize(
    ("state", "expected_type", "message"),
    [
        (_base("continue-turn"), "resume-session", "unexpected type 'continue-turn'"),
        ({**_base("continue-turn"), "harnessId": "other"}, None, "produced by harness 'other'"),
        ({**_base("continue-turn"), "data": {"no": "cursor"}}, None, "no cursor"),
        (
            _base("resume-session", continueFrom={**_base("continue-turn"), "data": []}),
            None,
            "no cursor",
        ),
    ],
    ids=["type", "harness", "data", "nested-data"],
)
def test_a_shape_checked_model_still_gets_the_callers_checks(
    state: dict[str, Any], expected_type: Any, message: str
) -> None:
    model = parse_lifecycle_state(state)
    with pytest.raises(InvalidLifecycleStateError, match=message):
        parse_lifecycle_state(
            model,
            expected_type=expected_type,
            harness_id="mock",
            data_validator=_validated,
            shape_checked=True,
        )


@requirement("LIFECYCLE-016")
def test_shape_checked_does_not_spare_a_wire_dict_or_a_model_built_directly() -> None:
    deep: Any = 1
    for _ in range(80):
        deep = [deep]
    with pytest.raises(InvalidLifecycleStateError, match="nested deeper than 64"):
        parse_lifecycle_state(_base("continue-turn", data=deep), shape_checked=True)
    # The per-field JSON check that a whole-state parse makes redundant still guards
    # models built directly, whatever validation context the caller passes.
    for context in (None, {"json_checked": True}, ["not", "a", "dict"]):
        with pytest.raises(ValidationError, match="lifecycle states must be plain JSON"):
            ContinueTurnState.model_validate(
                {"harnessId": "mock", "data": {"s": (1, 2)}}, context=context
            )
    with pytest.raises(InvalidLifecycleStateError, match=r"state.data.s is a tuple"):
        parse_lifecycle_state({**_base("continue-turn"), "data": {"s": (1, 2)}})


@requirement("LIFECYCLE-016")
@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (
            {"pendingToolApprovals": [{**APPROVAL_RECORD, "kind": "host"}]},
            "pendingToolApprovals.0.kind",
        ),
        ({"pendingToolApprovals": [{"approvalId": "a"}]}, "pendingToolApprovals.0.toolCallId"),
        ({"pendingToolResults": [{**RESULT_RECORD, "input": 5}]}, "pendingToolResults.0.input"),
        (
            {"pendingToolResults": [{**RESULT_RECORD, "completedResult": {"isError": [1]}}]},
            "pendingToolResults.0.completedResult.isError",
        ),
        ({"turnSettings": {"tools": [{"description": "no name"}]}}, "turnSettings.tools.0.name"),
        ({"turnSettings": {"skills": "review"}}, "turnSettings.skills"),
    ],
    ids=[
        "approval-kind",
        "approval-missing",
        "result-input",
        "completed-result",
        "spec-name",
        "skills",
    ],
)
def test_framework_owned_parts_are_shape_checked(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state(_base("continue-turn", **extra), harness_id="mock")
    assert field in str(caught.value)


# -- PROMPT: skill file paths ---------------------------------------------------------------------------


@requirement("PROMPT-010", "PROMPT-011", "DECISION-001")
@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "a\\b",
        "a\0b",
        "..",
        "../x",
        "a/..",
        "a/../..",
        "a/../../b",
        "./..",
        "a/./../..",
    ],
)
def test_skill_file_rejects_unsafe_paths(path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SkillFile(path=path, content="x")
    assert "Invalid skill file path" in str(caught.value)
    with pytest.raises(ValidationError, match="Invalid skill file path"):
        Skill(name="s", description="d", content="c", files=[{"path": path, "content": "x"}])  # type: ignore[list-item]  # the wire shape, validated by Skill


@requirement("PROMPT-010")
@pytest.mark.parametrize("path", ["a.md", "docs/guide.md", "a/b/c.txt", "..hidden", "a..b/c"])
def test_skill_file_accepts_relative_posix_paths(path: str) -> None:
    assert SkillFile(path=path, content="x").path == path


# -- BOOTSTRAP: recipe identity, snapshot identity, marker -------------------------------------------


def _recipe(**overrides: Any) -> Bootstrap:
    fields: dict[str, Any] = {
        "harness_id": "claude-code",
        "bootstrap_dir": ".harness/claude-code",
        "files": [
            BootstrapFile(path="b/run.sh", content="echo run\n"),
            BootstrapFile(path="a.json", content="{}"),
        ],
        "commands": [BootstrapCommand(command="npm install"), BootstrapCommand(command="true")],
    }
    fields.update(overrides)
    return Bootstrap(**fields)


def _expected_identity(recipe: Bootstrap) -> str:
    digest = hashlib.sha256()
    fields = [recipe.harness_id, recipe.bootstrap_dir]
    for file in sorted(recipe.files, key=lambda f: f.path):
        fields += [file.path, file.content]
    fields.append(json.dumps([c.to_wire() for c in recipe.commands], separators=(",", ":")))
    fields.append("1")
    for field in fields:
        digest.update(field.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


@requirement("BOOTSTRAP-009")
def test_recipe_identity_algorithm() -> None:
    recipe = _recipe()
    identity = recipe.identity()
    assert identity == _expected_identity(recipe)
    assert len(identity) == 16
    assert identity == identity.lower()
    int(identity, 16)


@requirement("BOOTSTRAP-010")
@pytest.mark.parametrize(
    "change",
    [
        {"harness_id": "codex"},
        {"bootstrap_dir": ".harness/other"},
        {
            "files": [
                BootstrapFile(path="a.json", content="{ }"),
                BootstrapFile(path="b/run.sh", content="echo run\n"),
            ]
        },
        {"commands": [BootstrapCommand(command="npm ci"), BootstrapCommand(command="true")]},
    ],
    ids=["harness-id", "bootstrap-dir", "file-content", "command"],
)
def test_recipe_identity_changes_with_any_field(change: dict[str, Any]) -> None:
    assert _recipe(**change).identity() != _recipe().identity()


@requirement("BOOTSTRAP-010")
def test_recipe_identity_ignores_file_order() -> None:
    reordered = _recipe(files=list(reversed(_recipe().files)))
    assert reordered.identity() == _recipe().identity()


def _hash(*fields: str) -> str:
    return hashlib.sha256(b"".join(f.encode() + b"\0" for f in fields)).hexdigest()[:16]


@requirement("BOOTSTRAP-012")
@pytest.mark.parametrize(
    ("recipe", "kwargs", "expected"),
    [
        ("r" * 16, {}, "r" * 16),
        (None, {}, None),
        ("r" * 16, {"bootstrap_hash": "h"}, "r" * 16),
        (None, {"work_dir": "repo"}, None),
        ("r" * 16, {"work_dir": "repo"}, _hash("1", "r" * 16, "", "repo")),
        (None, {"has_on_bootstrap": True, "bootstrap_hash": "h"}, _hash("1", "", "h", "")),
        (
            "r" * 16,
            {"has_on_bootstrap": True, "bootstrap_hash": "h", "work_dir": "repo"},
            _hash("1", "r" * 16, "h", "repo"),
        ),
    ],
    ids=[
        "recipe-only",
        "nothing",
        "hash-without-hook",
        "work-dir-only",
        "recipe-and-work-dir",
        "hook",
        "all",
    ],
)
def test_snapshot_identity(
    recipe: str | None, kwargs: dict[str, Any], expected: str | None
) -> None:
    assert sandbox_bootstrap_identity(recipe, **kwargs) == expected


@requirement("BOOTSTRAP-013")
@pytest.mark.parametrize(
    ("bootstrap_dir", "expected"),
    [
        (".harness/x", "/home/u/.harness/x/.bootstrap-0123456789abcdef.ok"),
        ("/opt/harness/", "/opt/harness/.bootstrap-0123456789abcdef.ok"),
        ("./tools/../cache", "/home/u/cache/.bootstrap-0123456789abcdef.ok"),
    ],
)
def test_marker_path(bootstrap_dir: str, expected: str) -> None:
    assert bootstrap_marker_path(bootstrap_dir, "0123456789abcdef", "/home/u") == expected


# -- ERROR-013: kit errors are full sentences naming the culprit -----------------------------------


def _raise_skill() -> None:
    Skill(name="a/b", description="d", content="c")


def _raise_builtin() -> None:
    common_tool("shell", native_name="Shell")


def _raise_state() -> None:
    parse_lifecycle_state(
        {
            "type": "continue-turn",
            "specificationVersion": "harness-v1",
            "harnessId": "h",
            "data": {1},
        }
    )


def _raise_bootstrap() -> None:
    from harness_testkit.reference import HarnessAgent, SandboxConfig

    class _Harness:
        specification_version = "harness-v1"
        harness_id = "h"
        builtin_tools: ClassVar[dict[str, Any]] = {}
        supports_builtin_tool_approvals = False
        supports_builtin_tool_filtering = False

    HarnessAgent(harness=_Harness(), sandbox_config=SandboxConfig(work_dir="../x"))  # type: ignore[arg-type]  # a partial adapter: the config fails first


def _raise_skill_file() -> None:
    SkillFile(path="../x", content="")


@requirement("ERROR-013")
@pytest.mark.parametrize(
    ("trigger", "culprit"),
    [
        (_raise_skill, "a/b"),
        (_raise_builtin, "shell"),
        (_raise_state, "data"),
        (_raise_bootstrap, "workDir"),
        (_raise_skill_file, "../x"),
    ],
    ids=["skill-name", "builtin-name", "lifecycle-data", "work-dir", "skill-file"],
)
def test_kit_errors_are_sentences_naming_the_culprit(trigger: Any, culprit: str) -> None:
    with pytest.raises((ValueError, InvalidLifecycleStateError)) as caught:
        trigger()
    error = caught.value
    if isinstance(error, ValidationError):
        message = str(error.errors()[0]["ctx"]["error"])
    else:
        message = str(error)
    assert culprit in message
    assert message.endswith(".")
    assert message[0].isupper() or message[0] in "'`"
