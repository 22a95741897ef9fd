"""Bad input never crashes the kit: a clear error or a result, never a traceback or a hang."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit._cli import cli
from harness_testkit.common import InputError, parse_structured
from harness_testkit.conformance import (
    REGISTRY,
    AdapterTarget,
    RunOptions,
    ordered_checks,
    run_check,
)
from harness_testkit.spec import (
    InvalidLifecycleStateError,
    parse_consumer_part,
    parse_lifecycle_state,
    parse_stream_part,
)

from . import gate_adapters

ADAPTERS = "tests.conformance.gate_adapters"

# Hostile JSON: ordinary values plus the shapes that used to crash (deep, huge integers).
_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**53, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
hostile_json = st.recursive(
    _leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=12,
) | st.integers(min_value=65, max_value=400).map(gate_adapters.nested)


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


def _target(name: str) -> AdapterTarget:
    ordered_checks()
    factory = getattr(gate_adapters, name)
    return AdapterTarget(
        factory=factory, capabilities=factory.capabilities, name=f"{ADAPTERS}:{name}"
    )


def test_a_part_nested_1000_deep_is_a_stream_004_failure_with_a_bundle(tmp_path: Path) -> None:
    target = _target("deep_part")
    result = run_check(
        REGISTRY["stream.grammar"], target, RunOptions(profile="smoke", bundle_dir=tmp_path)
    )
    assert result.status == "fail", result.message
    assert result.failed_requirement == "STREAM-004"
    assert result.bundle is not None
    assert json.loads(Path(result.bundle).read_text(encoding="utf-8"))["check"] == "stream.grammar"


@pytest.mark.parametrize("depth", [100, 10_000])
def test_parse_lifecycle_state_refuses_deep_and_circular_data(depth: int) -> None:
    state = {
        "type": "resume-session",
        "specificationVersion": "harness-v1",
        "harnessId": "h",
        "data": gate_adapters.nested(depth),
    }
    with pytest.raises(InvalidLifecycleStateError, match="nested deeper"):
        parse_lifecycle_state(state)
    state["data"] = _cyclic()
    with pytest.raises(InvalidLifecycleStateError, match="cycle"):
        parse_lifecycle_state(state)
    state["data"] = {"count": 2**64}
    with pytest.raises(InvalidLifecycleStateError, match=r"state\.data\.count .*JSON-safe"):
        parse_lifecycle_state(state)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(data=hostile_json, kind=st.sampled_from(["resume-session", "continue-turn", 7, None]))
def test_parse_lifecycle_state_returns_or_refuses(data: Any, kind: Any) -> None:
    state = {"type": kind, "specificationVersion": "harness-v1", "harnessId": "h", "data": data}
    try:
        parse_lifecycle_state(state)
    except InvalidLifecycleStateError:
        pass


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=hostile_json,
    kind=st.sampled_from(["raw", "tool-call", "text-delta", "finish", "nope"]),
    key=st.sampled_from(["rawValue", "input", "delta", "id", "toolCallId"]),
)
def test_parse_stream_and_consumer_parts_return_or_refuse(value: Any, kind: str, key: str) -> None:
    for parse in (parse_stream_part, parse_consumer_part):
        try:
            parse({"type": kind, key: value})
        except ValidationError:
            pass
        try:
            parse({"type": "raw", "rawValue": _cyclic()})
        except ValidationError:
            pass


@settings(max_examples=80)
@given(text=st.text(max_size=200) | hostile_json.map(json.dumps))
@pytest.mark.requirement("DECISION-008")
def test_structured_inputs_parse_or_refuse_by_name(text: str) -> None:
    for json_only in (True, False):
        message = "input"
        try:
            parse_structured(text, what="input", json_only=json_only)
        except InputError as error:
            message = str(error)
        assert message.startswith("input")


@pytest.mark.requirement("DECISION-008")
def test_special_files_and_alias_bombs_are_refused(tmp_path: Path) -> None:
    from harness_testkit.common import read_structured

    with pytest.raises(InputError, match="not a regular file"):
        read_structured(Path("/dev/zero"), what="script")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text('a: &a ["x", "x"]\nb: &b [*a, *a]\nc: [*b, *b]\n', encoding="utf-8")
    with pytest.raises(InputError, match="aliases"):
        read_structured(bomb, what="file")


def _bundle(tmp_path: Path) -> dict[str, Any]:
    target = _target("crashing_start")
    result = run_check(
        REGISTRY["adapter.surface"], target, RunOptions(profile="smoke", bundle_dir=tmp_path)
    )
    if result.bundle is None:  # adapter.surface passes: forge the bundle of a failure
        return {
            "bundleVersion": 1,
            "adapter": "self:minimal",
            "capabilities": {"scripting": True},
            "profile": "smoke",
            "seed": 0,
            "sandbox": "local",
            "backend": "asyncio",
            "check": "adapter.surface",
            "failedRequirement": "ADAPTER-001",
            "message": "forged",
            "scenario": None,
            "transcript": [],
        }
    data: dict[str, Any] = json.loads(Path(result.bundle).read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def valid_bundle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _bundle(tmp_path_factory.mktemp("bundle"))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    key=st.sampled_from(
        [
            "bundleVersion",
            "adapter",
            "capabilities",
            "profile",
            "seed",
            "sandbox",
            "backend",
            "check",
            "scenario",
            "failedRequirement",
            "extra",
        ]
    ),
    value=hostile_json | st.sampled_from(["os:getpid", "self:nope", "nope.check", "self:minimal"]),
    drop=st.booleans(),
)
@pytest.mark.requirement("DECISION-008")
def test_replay_of_a_malformed_bundle_is_a_clear_error(
    valid_bundle: dict[str, Any], tmp_path: Path, key: str, value: Any, drop: bool
) -> None:
    data = dict(valid_bundle)
    data["adapter"] = "self:minimal"
    if drop:
        data.pop(key, None)
    else:
        data[key] = value
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert result.output.startswith("Error: ")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=80) | hostile_json.map(json.dumps))
def test_check_with_a_hostile_capability_file_is_a_clear_error(
    tmp_path_factory: Any, text: str
) -> None:
    path = tmp_path_factory.mktemp("caps") / "capabilities.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "check",
            f"{ADAPTERS}:minimal",
            "--capabilities",
            str(path),
            "--check",
            "adapter.surface",
            "--profile",
            "smoke",
        ],
    )
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
