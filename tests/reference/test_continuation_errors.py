"""Continuation input errors are sentences naming the culprit (the kit's error style)."""

from __future__ import annotations

import pytest

from harness_testkit.reference._continuations import normalize_result_continuations
from harness_testkit.spec import HarnessUsageError


@pytest.mark.requirement("ERROR-013")
def test_a_result_continuation_without_a_call_id_names_the_missing_key() -> None:
    with pytest.raises(HarnessUsageError) as caught:
        normalize_result_continuations([{"output": 1}])
    message = str(caught.value)
    assert "toolCallId" in message
    assert message.endswith(".")
    assert message[0].isupper()
