"""An adapter that declares a valid askUserQuestions built-in (the fake plus that tool,
no defect) passes the checks that read it: the name is reserved against host tools, so
tool merging never offers it as one, and the questions check sees the host's answer."""

from __future__ import annotations

import pytest

from harness_testkit.conformance import REGISTRY, RunOptions, run_check
from harness_testkit.conformance._zoo._machinery import Defect
from harness_testkit.conformance._zoo._tools import _questions_tool


@pytest.mark.parametrize(
    "check_id", ["adapter.surface", "scripted.tool-merging", "scripted.questions"]
)
def test_a_valid_questions_tool_passes(check_id: str) -> None:
    target = Defect(
        name="valid-questions-tool",
        requirement="HOSTTOOL-027",
        area="tool merging",
        description="The fake with a valid askUserQuestions built-in (no defect).",
        tools=_questions_tool,
    ).build()
    result = run_check(REGISTRY[check_id], target.target, RunOptions(profile="standard"))
    assert result.status == "pass", result.message
