"""Capability profiles reproduce the real adapters' matrix."""

from __future__ import annotations

import pytest

from harness_testkit.fake_harness import FakeHarness, HarnessProfile, get_profile, profiles
from harness_testkit.spec import HarnessUsageError, builtin_table_problems


def test_profile_names() -> None:
    assert profiles() == ("claude-code", "codex", "pi", "opencode", "minimal")
    with pytest.raises(HarnessUsageError, match="no fake harness profile named 'cursor'"):
        get_profile("cursor")


@pytest.mark.parametrize("name", profiles())
def test_builtin_tables_are_consistent_and_mirrored_by_the_adapter(name: str) -> None:
    profile = get_profile(name)
    assert builtin_table_problems(profile.builtin_tools) == []
    harness = FakeHarness(profile=name)
    assert dict(harness.builtin_tools) == profile.builtin_tools
    assert harness.supports_builtin_tool_approvals is profile.supports_builtin_tool_approvals
    assert harness.supports_builtin_tool_filtering is profile.supports_builtin_tool_filtering
    assert harness.specification_version == "harness-v1"
    assert harness.harness_id == "fake"


def test_matrix_rows() -> None:
    claude, codex, pi, opencode, minimal = (get_profile(name) for name in profiles())
    assert (claude.supports_builtin_tool_approvals, claude.supports_builtin_tool_filtering) == (
        True,
        True,
    )
    assert (codex.supports_builtin_tool_approvals, codex.supports_builtin_tool_filtering) == (
        False,
        False,
    )
    assert (opencode.supports_builtin_tool_approvals, opencode.supports_builtin_tool_filtering) == (
        True,
        False,
    )
    assert [p.continuation for p in (claude, codex, pi, opencode, minimal)] == [
        "lossless",
        "lossless",
        "lossy",
        "lossless",
        "lossy",
    ]
    assert not pi.supports_json_response_format
    assert claude.json_response_format == "schema-required"
    assert claude.supports_manual_compaction
    assert not codex.supports_manual_compaction
    assert opencode.manual_compaction == "between-turns"
    assert not opencode.compaction_custom_instructions
    # claude-code follows the contract here (the real host drops the part, matrix 3.1).
    assert (claude.emits_compaction, pi.emits_compaction, opencode.emits_compaction) == (
        True,
        True,
        True,
    )
    assert (claude.emits_file_change, codex.emits_file_change, opencode.file_change_events) == (
        False,
        True,
        "modify-only",
    )
    assert minimal.builtin_tools == {}
    assert not minimal.emits_stream_start
    assert not any(
        [
            minimal.supports_user_messages,
            minimal.supports_manual_compaction,
            minimal.supports_json_response_format,
        ]
    )
    assert set(codex.builtin_tools) == {"bash", "webSearch"}
    assert "TodoWrite" in claude.builtin_tools
    assert claude.builtin_tools["TodoWrite"].common_name is None


def test_native_names_only_when_they_differ() -> None:
    assert get_profile("claude-code").native_name("read") == "Read"
    assert get_profile("pi").native_name("glob") == "find"
    assert get_profile("pi").native_name("read") is None
    assert get_profile("opencode").native_name("read") == "view"
    assert get_profile("claude-code").native_name("TodoWrite") is None


def test_custom_profiles_are_accepted() -> None:
    custom = get_profile("codex").model_copy(
        update={"continuation": "lossy", "name": "codex-rerun"}
    )
    assert isinstance(custom, HarnessProfile)
    assert FakeHarness(profile=custom).profile.continuation == "lossy"
