"""Canonical transcripts: consumer streams with their volatile fields normalised.

Ids the agent mints (approval ids, synthetic ``fileChange``/``compaction`` call ids, the
slice's call id in step response ids) and timestamps differ from run to run. The
normaliser replaces each distinct value with a stable placeholder numbered in order of
first appearance, so two runs of the same scenario compare equal and a snapshot diff
shows only real changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from harness_testkit.spec import ConsumerPart

__all__ = ["VOLATILE_FIELDS", "normalize_transcript"]

#: What the normaliser rewrites, and why.
VOLATILE_FIELDS: dict[str, str] = {
    "response.timestamp": "wall-clock time of the step",
    "response.id": "'<callId>-<stepNumber>'; the call id is minted per slice",
    "approvalId": "minted by the agent for host-tool approvals",
    "toolCallId (harness-file-change-*, harness-compaction-*)": "minted for synthetic parts",
}

_SYNTHETIC = re.compile(r"^(harness-file-change-|harness-compaction-)(.+)$")


class _Names:
    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], str] = {}

    def name(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._seen:
            count = sum(1 for existing in self._seen if existing[0] == kind) + 1
            self._seen[key] = f"<{kind}-{count}>"
        return self._seen[key]


def _walk(value: Any, names: _Names, minted_approvals: set[str]) -> Any:
    if isinstance(value, list):
        return [_walk(item, names, minted_approvals) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "timestamp" and isinstance(item, str):
            out[key] = "<timestamp>"
        elif key == "approvalId" and isinstance(item, str) and item in minted_approvals:
            out[key] = names.name("approval", item)
        elif key == "toolCallId" and isinstance(item, str) and (match := _SYNTHETIC.match(item)):
            out[key] = match.group(1) + names.name("synthetic", match.group(2))
        elif key == "response" and isinstance(item, dict) and isinstance(item.get("id"), str):
            call_id, _, step = item["id"].rpartition("-")
            walked = _walk(item, names, minted_approvals)
            walked["id"] = f"{names.name('call', call_id)}-{step}"
            out[key] = walked
        else:
            out[key] = _walk(item, names, minted_approvals)
    return out


def normalize_transcript(
    parts: Iterable[ConsumerPart], *, minted_approval_ids: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Consumer parts as wire dicts with :data:`VOLATILE_FIELDS` replaced by placeholders.

    Args:
        parts: Consumer parts (one or several results, in order).
        minted_approval_ids: Approval ids the agent minted. By default every approval id
            that is 16 alphanumeric characters is treated as minted (adapter-supplied ids
            are kept as they are).
    """
    wires = [part.to_wire() for part in parts]
    if minted_approval_ids is None:
        minted = {
            str(wire.get("approvalId"))
            for wire in wires
            if re.fullmatch(r"[A-Za-z0-9]{16}", str(wire.get("approvalId", "")))
        }
    else:
        minted = set(minted_approval_ids)
    names = _Names()
    return [_walk(wire, names, minted) for wire in wires]
