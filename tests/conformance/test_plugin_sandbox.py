"""The pytest plugin runs the sandbox provider suite (``SandboxSuite``) on any provider.

Each test builds a throwaway project with pytester and runs pytest on it in a subprocess:
the honest local provider passes what it claims, a planted defect (absolute paths read
from the host) fails the claimed check with its requirement id, and the options, ini
twins, capability files and fixture override behave like ``check-sandbox``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

PROVIDERS = '''
import os

from harness_testkit.sandbox import LocalSandboxProvider

ROOT = os.environ["SANDBOX_TEST_ROOT"]


def honest():
    return LocalSandboxProvider(ROOT)


honest.capabilities = {
    "resume": True,
    "snapshots": True,
    "path_confinement": True,
    "kills_process_tree": True,
    "host_directory": True,
}


class LeakySession:
    """A local session whose text reads follow absolute paths out of the root."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def read_text_file(self, path, **options):
        if path.startswith("/") and not path.startswith(self._inner.default_working_directory):
            with open(path, encoding="utf-8") as file:  # the planted defect
                return file.read()
        return await self._inner.read_text_file(path, **options)


class LeakyProvider:
    def __init__(self):
        self._inner = LocalSandboxProvider(ROOT)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def create_session(self, **options):
        return LeakySession(await self._inner.create_session(**options))


def leaky():
    return LeakyProvider()


leaky.capabilities = {"path_confinement": True}
'''

SUITE = """
from harness_testkit.conformance import SandboxSuite


class TestProvider(SandboxSuite):
    pass
"""

_FAST = "session_shape or fifo_refused or hard_link_refused or system_files_protected"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("SANDBOX_TEST_ROOT", str(pytester.path / "sandboxes"))
    pytester.makepyfile(sandbox_providers_under_test=PROVIDERS, test_sandbox_suite=SUITE)
    return pytester


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_subprocess("-p", "no:cacheprovider", "-rs", *args, timeout=600)


@pytest.mark.requirement("SANDBOX-036", "SANDBOX-037")
def test_the_option_runs_one_item_per_check_with_the_gate_of_check_sandbox(
    project: pytest.Pytester,
) -> None:
    result = _run(
        project,
        "--harness-sandbox-provider=sandbox_providers_under_test:honest",
        "-v",
        "-k",
        _FAST,
    )
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_harness_sandbox?session_shape? PASSED*",
            "*test_harness_sandbox?hard_link_refused? PASSED*",
            "*harness-testkit sandbox: sandbox_providers_under_test:honest*",
            "provider 'local' claims: resume, snapshots, path_confinement, kills_process_tree, "
            "host_directory; not: network_isolation, resource_limits, protects_system_files, "
            "disk_quota",
            "*needs capability 'protects_system_files', which the provider does not claim*",
        ]
    )
    collected = _run(
        project, "--harness-sandbox-provider=sandbox_providers_under_test:honest", "--co", "-q"
    )
    names = [line for line in collected.outlines if "test_harness_sandbox[" in line]
    from harness_testkit.conformance import SANDBOX_CHECKS

    assert len(names) == len(SANDBOX_CHECKS)


@pytest.mark.requirement("SANDBOX-032")
def test_a_planted_escape_fails_the_claimed_check_naming_its_requirement(
    project: pytest.Pytester,
) -> None:
    result = _run(
        project,
        "--harness-sandbox-provider=sandbox_providers_under_test:leaky",
        "-k",
        "path_confinement or session_shape",
    )
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "MUST ?SANDBOX-032? sandbox check path_confinement failed (verifies SANDBOX-032);"
            " replay: pytest --harness-sandbox-provider sandbox_providers_under_test:leaky"
            " -k path_confinement",
            "*expected: \"SandboxPathError for read of '/etc/hostname'\"",
            "*observed: 'no error'",
        ]
    )
    # The same provider without the claim: the check is skipped, naming the capability.
    (project.path / "none.yaml").write_text("path_confinement: false\n")
    unclaimed = _run(
        project,
        "--harness-sandbox-provider=sandbox_providers_under_test:leaky",
        "--harness-sandbox-capabilities=none.yaml",
        "-k",
        "path_confinement",
    )
    unclaimed.assert_outcomes(skipped=1)


def test_ini_twins_capability_file_markers_and_fixture_override(
    project: pytest.Pytester,
) -> None:
    project.makeini(
        """
        [pytest]
        harness_sandbox_provider = sandbox_providers_under_test:honest
        harness_sandbox_capabilities = overclaim.yaml
        harness_sandbox_race_rounds = 50
        """
    )
    (project.path / "overclaim.yaml").write_text("protects_system_files: true\n")
    result = _run(project, "-m", "harness_sandbox and harness_must", "-k", "system_files")
    result.assert_outcomes(failed=1)
    # The provider raised where the check expected a refusal of its own kind: a failure
    # charged to the check's MUST, with the replay command (as check-sandbox reports it).
    result.stdout.fnmatch_lines(
        [
            "*TestProvider.test_harness_sandbox?system_files_protected?*",
            "MUST SandboxPathError: The path '/etc/passwd' resolves outside the session root*",
            "replay: pytest --harness-sandbox-provider sandbox_providers_under_test:honest"
            " -k system_files_protected",
        ]
    )
    # A conftest fixture wins over the ini option and may return a SandboxTarget.
    project.makeconftest(
        """
        import os
        import pytest
        from harness_testkit.conformance import SandboxCapabilities, SandboxTarget
        from harness_testkit.sandbox import LocalSandboxProvider


        @pytest.fixture
        def harness_sandbox_provider():
            return SandboxTarget(
                provider=LocalSandboxProvider(os.environ["SANDBOX_TEST_ROOT"]),
                capabilities=SandboxCapabilities(path_confinement=True),
            )


        @pytest.fixture
        def harness_sandbox_capabilities():
            return None
        """
    )
    overridden = _run(project, "-k", "hard_link_refused or system_files")
    overridden.assert_outcomes(passed=1, skipped=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--harness-sandbox-provider=nowhere_at_all:provider"],
            "*--harness-sandbox-provider: cannot import 'nowhere_at_all'*",
        ),
        (
            ["--harness-sandbox-provider=sandbox_providers_under_test:nope"],
            "*--harness-sandbox-provider: sandbox_providers_under_test has no attribute 'nope'*",
        ),
        (
            ["--harness-sandbox-provider=sandbox_providers_under_test:ROOT"],
            "*is not a harness-sandbox-v1 provider (nor a factory returning one): got str*",
        ),
        (
            [
                "--harness-sandbox-provider=sandbox_providers_under_test:honest",
                "--harness-sandbox-capabilities=bad.yaml",
            ],
            "*sandbox capability resume must be true or false, not 'yes'*",
        ),
    ],
)
def test_bad_input_is_an_error_naming_what_to_fix(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    (project.path / "bad.yaml").write_text("resume: yes\n")
    result = _run(project, *args, "-k", "session_shape")
    result.assert_outcomes(errors=1)
    # pytest names the class by its module in some releases (pytest.UsageError) and by its
    # definition in others (_pytest.config.exceptions.UsageError): judged is the message.
    result.stdout.fnmatch_lines([f"E *UsageError: {message}"])


def test_without_a_provider_the_suite_skips_saying_how_to_name_one(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    result = _run(project, "-k", "session_shape")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no sandbox provider under test*--harness-sandbox-provider*"])
