"""Baseline files: the MUSTs a project accepts as unverified, written from a run.

``check --write-baseline FILE`` writes the file ``check --baseline FILE`` reads
(:meth:`~harness_testkit.conformance.Gate.load_baseline`): a YAML mapping
``unverified: [requirement ids]``, sorted, one id a line with why it was unverified as
a comment, and nothing that changes between two runs of the same adapter (no date, no
duration), so the file can be committed and diffed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ._report import Report
from ._verdict import RequirementStatus, requirement_statuses

__all__ = ["baseline_text", "unverified_musts", "write_baseline"]

_HEADER = (
    "# harness-testkit baseline: the MUSTs the checked adapters may leave unverified.",
    "# Written by `harness-testkit check --write-baseline FILE`; read by `--baseline FILE`.",
    "# A run with --baseline fails when a MUST not listed here is unverified, and warns",
    "# when a listed MUST is verified again (remove its line then).",
)


def unverified_musts(reports: Sequence[Report]) -> dict[str, list[RequirementStatus]]:
    """Requirement id -> its unverified statuses (one per target), ids sorted."""
    found: dict[str, list[RequirementStatus]] = {}
    for status in requirement_statuses(reports):
        if status.level == "MUST" and status.status == "unverified":
            found.setdefault(status.requirement, []).append(status)
    return dict(sorted(found.items()))


def baseline_text(reports: Sequence[Report]) -> str:
    """The baseline file of ``reports``: every MUST they leave unverified."""
    lines = [*_HEADER]
    musts = unverified_musts(reports)
    if not musts:
        return "\n".join([*lines, "unverified: []"]) + "\n"
    lines.append("unverified:")
    for requirement, statuses in musts.items():
        targets_by_reason: dict[str, list[str]] = {}
        for status in statuses:
            reason = status.reasons[0] if status.reasons else "not verified"
            targets_by_reason.setdefault(" ".join(reason.split()), []).append(status.target)
        why = "; ".join(
            f"{', '.join(targets)}: {reason}" for reason, targets in targets_by_reason.items()
        )
        lines.append(f"  - {requirement}  # {why}")
    return "\n".join(lines) + "\n"


def write_baseline(path: Path, reports: Sequence[Report]) -> frozenset[str]:
    """Write the baseline of ``reports`` to ``path``; return the ids it lists.

    Raises:
        OSError: The file cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(baseline_text(reports), encoding="utf-8")
    return frozenset(unverified_musts(reports))
