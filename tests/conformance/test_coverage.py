"""Coverage gate on normative requirements: every adapter- or sandbox-facing MUST has a
conformance check (or an explicit, justified entry in ``conformance/unchecked.yaml``)."""

from __future__ import annotations

from pathlib import Path

import yaml

from harness_testkit.conformance import ordered_checks
from harness_testkit.conformance._sandbox._checks import SANDBOX_CHECKS
from harness_testkit.spec import load_requirements

UNCHECKED = Path(__file__).resolve().parents[2] / "conformance" / "unchecked.yaml"


def _unchecked() -> dict[str, str]:
    data = yaml.safe_load(UNCHECKED.read_text(encoding="utf-8")) or {}
    assert isinstance(data, dict)
    return {str(key): str(value) for key, value in data.items()}


def _checked() -> set[str]:
    adapter = {req for check in ordered_checks() for req in check.requirements}
    sandbox = {req for check in SANDBOX_CHECKS for req in check.requirements}
    return adapter | sandbox


def test_every_adapter_and_sandbox_must_has_a_check() -> None:
    catalogue = load_requirements()
    checked = _checked()
    unchecked = _unchecked()
    missing = [
        r.id
        for r in catalogue.requirements
        if r.level == "MUST"
        and r.checkability in ("black-box", "scripted", "sandbox")
        and r.id not in checked
        and r.id not in unchecked
    ]
    assert not missing, f"MUST requirements without a conformance check: {missing}"


def test_unchecked_entries_are_real_unchecked_musts_with_reasons() -> None:
    catalogue = load_requirements()
    checked = _checked()
    for requirement_id, reason in _unchecked().items():
        requirement = catalogue.get(requirement_id)
        assert requirement.level == "MUST", f"{requirement_id} is not a MUST"
        assert requirement_id not in checked, (
            f"{requirement_id} is checked now: drop it from unchecked.yaml"
        )
        assert len(reason.split()) >= 8, f"{requirement_id} needs a real reason"


def test_checks_name_only_catalogue_requirements() -> None:
    catalogue = load_requirements()
    for requirement_id in _checked():
        catalogue.get(requirement_id)  # raises KeyError naming near ids
