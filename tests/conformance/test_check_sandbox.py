"""``harness-testkit check-sandbox``: the provider suite for any provider, same reports and gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import (
    SANDBOX_CHECKS,
    Check,
    CheckFailed,
    CheckSkipped,
    Report,
    SandboxCapabilities,
    SandboxCheckFailed,
    SandboxCheckSkipped,
    SandboxTarget,
    load_sandbox_target,
    run_sandbox_suite,
)
from harness_testkit.sandbox import LocalSandboxProvider
from tests.conformance.sandbox_providers import ROOT_VARIABLE

_FAST = ("session_shape", "fifo_refused", "hard_link_refused", "system_files_protected")


@pytest.fixture
def sandbox_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "sandboxes"
    monkeypatch.setenv(ROOT_VARIABLE, str(root))
    return root


def test_sandbox_checks_are_core_checks() -> None:
    """One check framework: sandbox checks, failures and skips are the core's types."""
    assert all(isinstance(check, Check) for check in SANDBOX_CHECKS)
    assert issubclass(SandboxCheckFailed, CheckFailed)
    assert issubclass(SandboxCheckSkipped, CheckSkipped)
    assert len({check.id for check in SANDBOX_CHECKS}) == len(SANDBOX_CHECKS)


@pytest.mark.requirement("SANDBOX-036")
def test_runner_reports_passes_and_skips(tmp_path: Path) -> None:
    target = SandboxTarget(
        provider=LocalSandboxProvider(tmp_path),
        capabilities=SandboxCapabilities(path_confinement=True),
    )
    report = run_sandbox_suite(target, check_ids=_FAST)
    assert isinstance(report, Report)
    statuses = {result.check_id: result.status for result in report.results}
    assert statuses == {
        "session_shape": "pass",
        "fifo_refused": "pass",
        "hard_link_refused": "pass",
        "system_files_protected": "skip",
    }
    assert report.ok


def test_unknown_check_ids_are_refused(tmp_path: Path) -> None:
    target = SandboxTarget(provider=LocalSandboxProvider(tmp_path))
    with pytest.raises(KeyError, match="no-such-check"):
        run_sandbox_suite(target, check_ids=["no-such-check"])


def test_check_sandbox_passes_an_honest_provider(sandbox_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    arguments = ["check-sandbox", "tests.conformance.sandbox_providers:honest_local"]
    for check_id in _FAST:
        arguments += ["--check", check_id]
    result = CliRunner().invoke(cli, [*arguments, "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["summary"]["ok"] is True
    assert data["summary"]["counts"] == {"pass": 3, "skip": 1}


@pytest.mark.requirement("SANDBOX-039")
def test_check_sandbox_fails_an_overclaiming_provider(sandbox_root: Path, tmp_path: Path) -> None:
    """A claimed capability the provider lacks fails its check and the gate (exit 1)."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        [
            "check-sandbox",
            "tests.conformance.sandbox_providers:overclaiming_local",
            "--check",
            "system_files_protected",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["summary"]["mustFailures"] == ["system_files_protected"]


def test_check_sandbox_explains_bad_arguments(sandbox_root: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["check-sandbox"])
    assert missing.exit_code == 2
    assert "PROVIDER" in missing.output
    bad = runner.invoke(cli, ["check-sandbox", "os:sep"])
    assert bad.exit_code == 2
    assert "not a harness-sandbox-v1 provider" in bad.output
    capabilities = tmp_path / "caps.yaml"
    capabilities.write_text("teleportation: true\n", encoding="utf-8")
    unknown = runner.invoke(
        cli,
        [
            "check-sandbox",
            "tests.conformance.sandbox_providers:honest_local",
            "--capabilities",
            str(capabilities),
        ],
    )
    assert unknown.exit_code == 2
    assert "teleportation" in unknown.output
    listed = runner.invoke(cli, ["check-sandbox", "--list"])
    assert listed.exit_code == 0
    assert "symlink_swap_race" in listed.output


def test_load_sandbox_target_takes_a_provider_or_a_factory(sandbox_root: Path) -> None:
    from_factory = load_sandbox_target("tests.conformance.sandbox_providers:honest_local")
    assert from_factory.fresh_provider is not None
    assert from_factory.capabilities.path_confinement
    with pytest.raises(ValueError, match=r"package\.module:provider"):
        load_sandbox_target("no-colon")
