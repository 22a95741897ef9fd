"""Planted bugs in the `new-adapter` skeleton die by their own requirement (issue 38).

Each test writes the skeleton, plants one bug in its adapter source, imports that
module and runs the black-box tier against it: the gate must fail, and name the
requirement the bug breaks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from harness_testkit.conformance import AdapterCapabilities, AdapterTarget, RunOptions, run_suite
from harness_testkit.conformance._skeleton import write_skeleton
from harness_testkit.conformance._verdict import verdict


def _skeleton_adapter(tmp_path: Path, plant: dict[str, str]) -> tuple[ModuleType, Path]:
    project = tmp_path / "acme-runtime"
    write_skeleton("acme-runtime", project)
    source = project / "src" / "acme_runtime" / "_adapter.py"
    text = source.read_text(encoding="utf-8")
    for old, new in plant.items():
        assert old in text, f"the skeleton no longer contains {old!r}: update the planted bug"
        text = text.replace(old, new)
    source.write_text(text, encoding="utf-8")
    name = f"skeleton_bug_{abs(hash(tuple(plant.items())))}"
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, project


def _run(tmp_path: Path, plant: dict[str, str]) -> tuple[object, object]:
    module, project = _skeleton_adapter(tmp_path, plant)
    target = AdapterTarget(
        factory=module.make_adapter,
        capabilities=AdapterCapabilities.from_file(project / "capabilities.yaml"),
        name="acme-runtime (planted bug)",
    )
    report = run_suite(target, RunOptions(profile="smoke"), tiers=["black-box"])
    return report, verdict([report])


def test_the_unplanted_skeleton_passes_the_gate(tmp_path: Path) -> None:
    _, judged = _run(tmp_path, {})
    assert judged.ok, judged.line  # type: ignore[attr-defined]


DROPPED_TEXT_END = {"        emit(TextEndPart(id=turn.text_id))\n": ""}
IGNORED_ABORT = {
    "            if self._abort is not None and self._abort.is_set():": "            if False:",
    "        if self._abort is None:\n            await anyio.sleep(WORD_DELAY)": (
        "        if True:\n            await anyio.sleep(WORD_DELAY)"
    ),
}


@pytest.mark.parametrize(
    ("plant", "check_id", "requirement", "line"),
    [
        pytest.param(
            DROPPED_TEXT_END,
            "stream.grammar",
            "STREAM-038",
            "blocked by failing checks (stream.grammar [STREAM-038, SHOULD])",
            id="dropped-text-end",
        ),
        pytest.param(
            IGNORED_ABORT,
            "turn.abort",
            "ADAPTER-042",
            "1 MUST fail",
            id="ignored-abort",
        ),
    ],
)
def test_a_planted_bug_dies_by_its_own_requirement(
    tmp_path: Path, plant: dict[str, str], check_id: str, requirement: str, line: str
) -> None:
    report, judged = _run(tmp_path, plant)
    failed = {
        r.check_id: r.failed_requirement
        for r in report.results  # type: ignore[attr-defined]
        if r.status == "fail"
    }
    assert failed == {check_id: requirement}
    assert not judged.ok  # type: ignore[attr-defined]
    assert line in judged.line  # type: ignore[attr-defined]


def test_an_ignored_denial_cannot_hide_behind_undeclared_scripting(tmp_path: Path) -> None:
    # The skeleton claims built-in approvals whose submit_tool_approval does nothing;
    # only the scripted tier can show it, and the skeleton declares scripting
    # unsupported. A claimed capability is a promise: its MUSTs may not stay unverified.
    module, project = _skeleton_adapter(
        tmp_path,
        {
            "    supports_builtin_tool_approvals = False": (
                "    supports_builtin_tool_approvals = True"
            ),
        },
    )
    capabilities = (project / "capabilities.yaml").read_text(encoding="utf-8")
    capabilities = capabilities.replace(
        "builtin_tool_approvals: false\n", "builtin_tool_approvals: true\n", 1
    ).replace("  builtin_tool_approvals: the echo stand-in runs no built-in tools\n", "")
    (project / "capabilities.yaml").write_text(capabilities, encoding="utf-8")
    target = AdapterTarget(
        factory=module.make_adapter,
        capabilities=AdapterCapabilities.from_file(project / "capabilities.yaml"),
        name="acme-runtime (ignored denial)",
    )
    report = run_suite(target, RunOptions(profile="smoke"), check_ids=["scripted.permission-modes"])
    judged = verdict([report])
    assert not judged.ok
    assert (
        "capability 'scripting' not declared, yet declared builtin_tool_approvals needs it"
        in judged.line
    )
    assert any("APPROVAL-00" in detail for detail in judged.details)
