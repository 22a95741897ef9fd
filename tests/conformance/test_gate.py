"""The gate: exit codes, verdict lines, attribution, evidence, watchdog, documents, replay."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import (
    REGISTRY,
    AdapterTarget,
    CheckResult,
    Expectations,
    Report,
    RunOptions,
    ordered_checks,
    run_check,
    run_suite,
)
from harness_testkit.conformance._report import Status
from harness_testkit.conformance._verdict import Gate, RunDocuments, verdict
from harness_testkit.conformance._zoo._catalog import get_mutant

from . import gate_adapters

ADAPTERS = "tests.conformance.gate_adapters"
SMOKE = RunOptions(profile="smoke")


def _target(name: str) -> AdapterTarget:
    factory = getattr(gate_adapters, name)
    return AdapterTarget(
        factory=factory, capabilities=factory.capabilities, name=f"{ADAPTERS}:{name}"
    )


def _check(check_id: str) -> Any:
    ordered_checks()
    return REGISTRY[check_id]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["check", *args])


def _one_line_error(result: Any, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    for fragment in fragments:
        assert fragment in lines[0]


# -- exit codes ----------------------------------------------------------------------------


@pytest.mark.requirement("DECISION-003")
def test_an_unknown_check_id_is_a_usage_error_not_a_failure() -> None:
    _one_line_error(_invoke("--self", "--check", "nope.id"), "unknown check ids: nope.id")


def test_comma_lists_select_several_checks() -> None:
    result = _invoke(f"{ADAPTERS}:minimal", "--check", "session.identity,adapter.surface", "--list")
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.output.splitlines()] == [
        "adapter.surface",
        "session.identity",
    ]


@pytest.mark.requirement("DECISION-003")
def test_a_bad_adapter_path_is_a_setup_error() -> None:
    _one_line_error(_invoke("no_such_module_xyz:factory"), "cannot import")


@pytest.mark.requirement("DECISION-003")
def test_a_factory_that_raises_is_a_setup_error_not_adapter_001() -> None:
    _one_line_error(
        _invoke(f"{ADAPTERS}:raising"), "raised RuntimeError: no credentials for the runtime"
    )


@pytest.mark.requirement("DECISION-003", "DECISION-008")
def test_a_bad_capability_file_is_a_setup_error(tmp_path: Path) -> None:
    _one_line_error(
        _invoke(f"{ADAPTERS}:minimal", "--capabilities", "/dev/zero"), "not a regular file"
    )
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    _one_line_error(_invoke(f"{ADAPTERS}:minimal", "--capabilities", str(deep)), "nesting")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("turn_timeout: -1\n", encoding="utf-8")
    _one_line_error(_invoke(f"{ADAPTERS}:minimal", "--capabilities", str(wrong)), "turn_timeout")


@pytest.mark.requirement("DECISION-003")
def test_an_internal_error_of_the_kit_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[Report]:
        raise RuntimeError("a bug in the kit")

    monkeypatch.setattr("harness_testkit.conformance._cli.run_suites", broken)
    result = _invoke(f"{ADAPTERS}:minimal", "--check", "adapter.surface")
    assert result.exit_code == 3, result.output
    assert "internal error of harness-testkit: RuntimeError: a bug in the kit" in result.output


@pytest.mark.requirement("DECISION-003", "DECISION-004")
def test_a_conformant_adapter_exits_0_and_a_failing_one_exits_1(tmp_path: Path) -> None:
    ok = _invoke(f"{ADAPTERS}:minimal", "--profile", "smoke", "--check", "stream.grammar")
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[-1].startswith("PASS: all ")
    bad = _invoke(
        f"{ADAPTERS}:duplicate_finish",
        "--profile",
        "smoke",
        "--check",
        "stream.grammar",
        "--bundle-dir",
        str(tmp_path),
    )
    assert bad.exit_code == 1, bad.output
    assert bad.output.splitlines()[-1].startswith("FAIL: 1 MUST fail")


# -- the verdict ---------------------------------------------------------------------------


def _result(
    check_id: str,
    status: Status,
    requirements: tuple[str, ...],
    *,
    failed: str | None = None,
    tier: str = "black-box",
    **extra: Any,
) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        title=check_id,
        tier=tier,
        requirements=requirements,
        areas=("STREAM",),
        status=status,
        failed_requirement=failed,
        **{"level": "MUST", **extra},
    )


def _report(*results: CheckResult, adapter: str = "a:b", profile: str = "smoke") -> Report:
    return Report(
        suite_version="0",
        adapter=adapter,
        harness_id="h",
        profile=profile,
        max_examples=5,
        seed=0,
        sandbox="local",
        results=results,
    )


@pytest.mark.requirement("DECISION-004", "DECISION-005", "DECISION-006")
def test_blocked_and_skipped_musts_are_unverified_and_the_line_says_so() -> None:
    report = _report(
        _result("g", "xfail", ("STREAM-040", "STREAM-033"), failed="STREAM-040"),
        _result("d", "blocked", ("LIFECYCLE-005",), blocked_by="g"),
        _result("s", "skip", ("STOP-014",), tier="scripted", capability="scripting"),
    )
    judged = verdict([report])
    # An undeclared gap fails the run and the line says how to reach it; what a
    # declared known failure blocks is accepted.
    assert not judged.ok
    assert judged.line.startswith("FAIL: ")
    assert "1 xfail (declared)" in judged.line
    assert "1 unverified (capability 'scripting' not declared)" in judged.line
    assert "2 unverified, accepted (" in judged.line
    assert "blocked by g, a declared known failure" in judged.line
    assert "to reach them: declare the capability in the capability file" in judged.line
    assert judged.details == ("not verified (capability 'scripting' not declared): a:b STOP-014",)
    statuses = {s.requirement: (s.status, s.cause) for s in judged.musts}
    assert statuses == {
        "STREAM-040": ("xfail", ""),
        "STREAM-033": ("unverified", "declared"),
        "LIFECYCLE-005": ("unverified", "declared"),
        "STOP-014": ("unverified", "capability"),
    }
    black_box = verdict([report], Gate(require_tier="black-box"))
    assert not black_box.ok
    assert black_box.line.startswith("FAIL: ")
    assert "required by --require-tier black-box" in black_box.line
    assert not verdict([report], Gate(require_tier="scripted")).ok
    allowed = Gate(baseline=frozenset({"STREAM-033", "LIFECYCLE-005", "STOP-014"}))
    assert verdict([report], allowed).ok
    assert verdict([report], Gate(baseline=frozenset({"STOP-014"}))).ok
    assert not verdict([report], Gate(baseline=frozenset({"LIFECYCLE-005"}))).ok
    old_gate = verdict([report], Gate(allow_unverified=True))
    assert old_gate.ok
    assert old_gate.line.startswith("PASS WITH UNVERIFIED MUSTS: 0 hold")


@pytest.mark.requirement("DECISION-006")
def test_a_capability_declared_unsupported_with_a_reason_is_accepted() -> None:
    skipped = _result("s", "skip", ("STOP-014",), tier="scripted", capability="scripting")
    found_absent = _result("q", "skip", ("HOSTTOOL-027",), tier="scripted", message="no built-in")
    declared = {"effective": {"unsupported": {"scripting": "no model to script", "q": "none"}}}
    report = _report(skipped, found_absent).model_copy(update={"capabilities": declared})
    judged = verdict([report])
    assert judged.ok, judged.line
    assert judged.line == (
        "PASS WITH UNVERIFIED MUSTS: 0 hold, 2 unverified, accepted (declared unsupported: "
        "q: 1; declared unsupported: scripting: 1)"
    )
    undeclared = verdict([_report(found_absent)])
    assert not undeclared.ok
    assert "skipped by q: no built-in" in undeclared.line
    assert "`unsupported: {check-id: why}`" in undeclared.line


@pytest.mark.requirement("DECISION-006")
def test_a_failing_should_that_blocks_a_must_fails_the_run_and_is_named() -> None:
    should = {"level": "SHOULD", "failed_level": "SHOULD", "message": "[STREAM-038] no text-end"}
    report = _report(
        _result("grammar", "fail", ("STREAM-038",), failed="STREAM-038", **should),
        _result("abort", "blocked", ("ADAPTER-042",), blocked_by="grammar"),
        _result("later", "blocked", ("ADAPTER-033",), blocked_by="abort"),
    )
    judged = verdict([report])
    assert not judged.ok
    assert judged.line == (
        "FAIL: 2 MUSTs blocked by failing checks (grammar [STREAM-038, SHOULD]); to reach "
        "them: fix the failing check named (or list them in --baseline; --allow-unverified "
        "only reports them)"
    )
    outcomes = [judged.check_outcome(report, result)[0] for result in report.results]
    assert outcomes == ["failure", "skipped", "skipped"]
    assert judged.check_outcome(report, report.results[2])[1] == (
        "blocked: grammar [STREAM-038, SHOULD] failed (that check fails the run)"
    )
    # Alone, a failing SHOULD gates nothing: reported, exit 0, a JUnit skip that says so.
    alone = _report(report.results[0])
    assert verdict([alone]).ok
    assert verdict([alone]).check_outcome(alone, alone.results[0])[0] == "note"
    xml = ElementTree.fromstring(alone.to_junit_xml(judged=verdict([alone])))
    assert xml.find("testsuite").get("failures") == "0"  # type: ignore[union-attr]  # the document has one
    skipped = xml.find(".//skipped")
    assert skipped is not None
    assert "SHOULD STREAM-038 does not hold (reported; it gates nothing)" in skipped.get(
        "message", ""
    )


@pytest.mark.requirement("DECISION-004")
def test_one_verdict_across_targets_and_profiles() -> None:
    good = _report(_result("g", "pass", ("STREAM-040",)), adapter="x:good", profile="smoke")
    bad = _report(
        _result("g", "fail", ("STREAM-040",), failed="STREAM-040"),
        adapter="x:bad",
        profile="standard",
    )
    judged = verdict([good, bad])
    assert not judged.ok
    assert judged.line == "FAIL: 1 MUST fail across 2 targets x 2 profiles"
    assert verdict([good]).line == "PASS: all 1 MUST verified and hold"


@pytest.mark.requirement("DECISION-004")
def test_an_error_or_a_stale_xfail_fails_the_gate() -> None:
    assert not verdict([_report(_result("e", "error", ("STREAM-040",)))]).ok
    assert "1 check erred" in verdict([_report(_result("e", "error", ("STREAM-040",)))]).line
    stale = verdict([_report(_result("x", "xpass", ("STREAM-040",)))])
    assert not stale.ok
    assert "stale xfail" in stale.line


@pytest.mark.requirement("DECISION-006")
def test_undeclared_capability_skips_fail_unless_declared_or_allowed(tmp_path: Path) -> None:
    args = (f"{ADAPTERS}:minimal", "--profile", "smoke", "--check", "scripted.steering")
    default = _invoke(*args)
    assert default.exit_code == 1, default.output
    last = default.output.splitlines()[-1]
    assert last.startswith("FAIL: 1 unverified (capability 'scripting' not declared)")
    assert "to reach them" in last
    assert (
        "not verified (capability 'scripting' not declared): "
        "tests.conformance.gate_adapters:minimal STOP-014"
    ) in default.output
    allowed = _invoke(*args, "--allow-unverified")
    assert allowed.exit_code == 0, allowed.output
    assert allowed.output.splitlines()[-1].startswith("PASS WITH UNVERIFIED MUSTS: ")
    required = _invoke(*args, "--allow-unverified", "--require-tier", "scripted")
    assert required.exit_code == 1, required.output
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("unverified: [STOP-014]\n", encoding="utf-8")
    assert _invoke(*args, "--baseline", str(baseline)).exit_code == 0
    declared = tmp_path / "capabilities.yaml"
    declared.write_text(
        "scripting: false\nunsupported:\n  scripting: the runtime's model cannot be scripted\n",
        encoding="utf-8",
    )
    accepted = _invoke(*args, "--capabilities", str(declared))
    assert accepted.exit_code == 0, accepted.output
    assert "declared unsupported: scripting" in accepted.output.splitlines()[-1]


# -- attribution and evidence --------------------------------------------------------------


def test_an_unexpected_exception_is_an_error_of_the_check_with_its_traceback() -> None:
    result = run_check(_check("session.identity"), _target("crashing_start"), SMOKE)
    assert result.status == "error"
    assert result.failed_requirement is None
    assert result.message == "KeyError: 'runtime-handle'"
    assert result.traceback is not None
    head = result.traceback.split("Traceback")[0]
    assert head.startswith("adapter frames")
    assert "start_that_crashes" in head
    report = _report(result)
    suite = ElementTree.fromstring(report.to_junit_xml()).find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures")) == ("1", "0")
    assert "start_that_crashes" in report.to_markdown()


def test_a_foreign_harness_id_fails_lifecycle_005() -> None:
    target = get_mutant("state-with-foreign-harness-id").target
    result = run_check(_check("lifecycle.detach-resume"), target, SMOKE)
    assert (result.status, result.failed_requirement) == ("fail", "LIFECYCLE-005")


def test_failures_carry_the_traceback_into_the_bundle_and_replay_prints_it(
    tmp_path: Path,
) -> None:
    options = RunOptions(profile="smoke", bundle_dir=tmp_path)
    result = run_check(_check("session.identity"), _target("crashing_start"), options)
    assert result.bundle is not None
    bundle = json.loads(Path(result.bundle).read_text(encoding="utf-8"))
    assert "start_that_crashes" in bundle["traceback"]
    replayed = CliRunner().invoke(
        cli, ["replay", result.bundle, "--adapter", f"{ADAPTERS}:crashing_start", "-v"]
    )
    assert replayed.exit_code == 1, replayed.output
    assert "recorded traceback:" in replayed.output
    assert "traceback of this run:" in replayed.output
    assert replayed.output.count("start_that_crashes") >= 2


def test_replay_never_imports_what_a_bundle_names_on_its_own(tmp_path: Path) -> None:
    options = RunOptions(profile="smoke", bundle_dir=tmp_path)
    result = run_check(_check("session.identity"), _target("crashing_start"), options)
    assert result.bundle is not None
    data = json.loads(Path(result.bundle).read_text(encoding="utf-8"))
    data["adapter"] = f"{ADAPTERS}:noop"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data), encoding="utf-8")
    refused = CliRunner().invoke(cli, ["replay", str(hostile)])
    _one_line_error(refused, "replay imports it only when you pass --adapter")


# -- the watchdog --------------------------------------------------------------------------


@pytest.mark.requirement("DECISION-007")
def test_a_blocking_adapter_fails_adapter_044_with_where_it_was_stuck_and_the_run_goes_on() -> None:
    options = RunOptions(profile="smoke", stall_timeout=0.5)
    report = run_suite(
        _target("blocking"), options, check_ids=["stream.grammar", "session.identity"]
    )
    by_id = {r.check_id: r for r in report.results}
    stuck = by_id["stream.grammar"]
    assert (stuck.status, stuck.failed_requirement) == ("fail", "ADAPTER-044")
    assert "blocked the event loop" in stuck.message
    assert stuck.traceback is not None
    assert "blocking_sleep_in_the_adapter" in stuck.traceback.split("full stack")[0]
    assert by_id["session.identity"].status == "pass"


@pytest.mark.requirement("DECISION-007")
def test_a_check_over_its_wall_time_cap_fails_adapter_044() -> None:
    options = RunOptions(profile="smoke", check_timeout=0.5, stall_timeout=60)
    result = run_check(_check("stream.grammar"), _target("blocking"), options)
    assert (result.status, result.failed_requirement) == ("fail", "ADAPTER-044")
    assert "wall-time cap of 0.5 s" in result.message


# -- documents -----------------------------------------------------------------------------


def test_one_document_of_each_kind_per_run_with_a_section_per_profile(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _invoke(
        f"{ADAPTERS}:minimal",
        "--profile",
        "all",
        "--check",
        "adapter.surface",
        "--json",
        str(out / "r.json"),
        "--junit-xml",
        str(out / "r.xml"),
        "--report",
        str(out / "r.md"),
    )
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == ["r.json", "r.md", "r.xml"]
    data = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert [report["profile"] for report in data["reports"]] == [
        "exhaustive",
        "smoke",
        "standard",
    ]
    assert data["verdict"]["line"] == result.output.splitlines()[-1]
    markdown = (out / "r.md").read_text(encoding="utf-8")
    assert markdown.count("## harness-v1 conformance:") == 3
    root = ElementTree.fromstring((out / "r.xml").read_text(encoding="utf-8"))
    assert root.get("tests") == "3"
    # one verdict line only
    assert sum(line.startswith(("PASS", "FAIL")) for line in result.output.splitlines()) == 1


# -- selection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # Prerequisites of the selected checks run too (first).
        (["--tier", "black-box", "--area", "bootstrap"], ["adapter.surface", "bootstrap.recipe"]),
        (
            ["--requirement", "ADAPTER-042", "--tier", "black-box"],
            ["adapter.surface", "stream.grammar", "turn.abort"],
        ),
        (
            ["--area", "LIFECYCLE", "--exclude", "stream.grammar,lifecycle.suspend-continue"],
            None,
        ),
        (
            ["--level", "must", "--check", "turn.abort", "--exclude", "adapter.surface"],
            ["stream.grammar", "turn.abort"],
        ),
    ],
)
def test_selection_options(options: list[str], expected: list[str] | None) -> None:
    result = _invoke("--self", *options, "--list")
    assert result.exit_code == 0, result.output
    listed = [line.split()[0] for line in result.output.splitlines()]
    if expected is not None:
        assert listed == expected
    else:
        assert listed
        assert "stream.grammar" not in listed
        assert "lifecycle.suspend-continue" not in listed
        assert "lifecycle.detach-resume" in listed


@pytest.mark.parametrize(
    "options",
    [["--area", "NOPE"], ["--level", "SOMETIMES"], ["--tier", "gold"], ["--requirement", "X-1"]],
)
def test_unknown_selection_names_are_usage_errors(options: list[str]) -> None:
    _one_line_error(_invoke("--self", *options), "unknown")


@pytest.mark.requirement("DECISION-005")
def test_known_failures_still_count_as_declared() -> None:
    expectations = Expectations(xfail={"stream.grammar": "emits finish twice"})
    options = RunOptions(profile="smoke", expectations=expectations)
    target = AdapterTarget(
        factory=gate_adapters.duplicate_finish,
        capabilities=gate_adapters.duplicate_finish.capabilities,
        name="dup",
    )
    report = run_suite(target, options, check_ids=["stream.grammar", "lifecycle.detach-resume"])
    judged = verdict([report])
    assert [r.status for r in report.results] == ["pass", "xfail", "blocked"]
    assert judged.ok, judged.line  # a declared known failure blocks only what it declares
    assert "blocked by stream.grammar, a declared known failure" in judged.line
    assert not verdict([report], Gate(require_tier="black-box")).ok
    documents = RunDocuments(reports=(report,), verdict=judged)
    assert "MUSTs not verified as holding" in documents.to_markdown()


def test_verbose_console_prints_the_traceback_of_an_error(tmp_path: Path) -> None:
    args = (f"{ADAPTERS}:crashing_start", "--profile", "smoke", "--check", "session.identity")
    quiet = _invoke(*args, "--bundle-dir", str(tmp_path))
    verbose = _invoke(*args, "--bundle-dir", str(tmp_path), "-v")
    assert quiet.exit_code == verbose.exit_code == 1, verbose.output
    assert "start_that_crashes" not in quiet.output
    assert "adapter frames (most recent call last):" in verbose.output
    assert "start_that_crashes" in verbose.output
    assert "check erred" in verbose.output.splitlines()[-1]


def test_every_report_says_how_many_checks_ran_in_each_tier() -> None:
    report = _report(
        _result("a", "pass", ("STREAM-040",)),
        _result("b", "blocked", ("LIFECYCLE-005",), blocked_by="a"),
        _result("c", "pass", ("STOP-014",), tier="scripted"),
        _result("d", "xfail", ("STOP-014",), tier="scripted", failed="STOP-014"),
        _result("e", "skip", ("STOP-014",), tier="scripted", capability="scripting"),
    )
    lines = [
        "black-box: 1 ran of 2 (1 pass, 1 blocked)",
        "scripted: 2 ran of 3 (1 pass, 1 xfail, 1 skip)",
    ]
    assert report.tier_lines() == lines
    assert json.loads(report.to_json())["summary"]["byTier"] == {
        "black-box": {"pass": 1, "blocked": 1},
        "scripted": {"pass": 1, "xfail": 1, "skip": 1},
    }
    assert all(f"- {line}" in report.to_markdown() for line in lines)
    from rich.console import Console

    console = Console(record=True, width=200, file=io.StringIO())
    report.print_console(console=console)
    printed = console.export_text()
    assert all(line in printed for line in lines)
