"""Runs checks against an adapter target and builds the report.

The CLI and the pytest plugin both call :func:`run_check`; :func:`run_suite` runs a
selection in dependency order, marking dependents of failed checks ``blocked`` instead
of letting them cascade.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import yaml

from harness_testkit import __version__

from ._checks import Check, CheckFailed, CheckSkipped, ordered_checks
from ._context import PROFILES, AdapterTarget, CheckContext, Profile
from ._report import CheckResult, Report, dump_json, strongest_level

__all__ = ["Expectations", "RunOptions", "run_check", "run_suite"]

Backend = Literal["asyncio", "trio"]
BUNDLE_VERSION = 1


@dataclass(frozen=True)
class Expectations:
    """Known bugs of the adapter under test: check id -> reason (strict xfail)."""

    xfail: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Expectations:
        """Read ``{"xfail": {check_id: reason}}`` from YAML or JSON.

        Raises:
            ValueError: naming the file and what is wrong in it.
        """
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as error:
            raise ValueError(f"cannot read expectations file {path}: {error}") from error
        xfail = data.get("xfail", {}) if isinstance(data, dict) else None
        if not isinstance(xfail, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in xfail.items()
        ):
            raise ValueError(f"{path}: expected a mapping `xfail: {{check_id: reason}}` of strings")
        return cls(xfail=dict(xfail))

    def merged(self, other: Expectations | None) -> Expectations:
        """These entries over ``other``'s (a run's own reasons win over a target's)."""
        if other is None or not other.xfail:
            return self
        return Expectations(xfail={**other.xfail, **self.xfail})


@dataclass(frozen=True)
class RunOptions:
    """How to run: depth, seed, sandbox, backend, and where to put replay bundles."""

    profile: str = "standard"
    seed: int = 0
    sandbox: Literal["local", "docker"] = "local"
    backend: Backend = "asyncio"
    bundle_dir: Path | None = None
    expectations: Expectations = field(default_factory=Expectations)

    @property
    def profile_settings(self) -> Profile:
        """The profile object."""
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; use one of {', '.join(PROFILES)}")
        return PROFILES[self.profile]


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="harness-testkit-check-") as directory:
        yield Path(directory)


def _skip_reason(check: Check, target: AdapterTarget) -> str | None:
    capabilities = target.capabilities
    if check.tier == "scripted" and not capabilities.scripting:
        return "needs capability `scripting` (the kit's scripting extension)"
    for name in check.needs:
        value = getattr(capabilities, name)
        if not value:
            return f"needs capability `{name}`"
    return None


def _replay_command(bundle: Path | None) -> str | None:
    return f"harness-testkit replay {bundle}" if bundle is not None else None


def run_check(
    check: Check,
    target: AdapterTarget,
    options: RunOptions,
    *,
    scenario: Any = None,
) -> CheckResult:
    """Run one check (or replay one scenario of a property check) and return its result."""
    level, areas = strongest_level(check.requirements)
    base: dict[str, Any] = {
        "check_id": check.id,
        "title": check.title,
        "tier": check.tier,
        "requirements": check.requirements,
        "level": level,
        "areas": areas,
    }
    reason = _skip_reason(check, target)
    if reason is not None:
        return CheckResult(**base, status="skip", message=reason)
    # The target's known deviations count too, so every caller (CLI, selftest reference
    # run, pytest plugin) judges a target the same way.
    expected = options.expectations.merged(target.expectations).xfail.get(check.id)
    started = time.perf_counter()
    examples: int | None = None
    failing_scenario: Any = None
    with _workdir() as workdir:
        context_holder: list[CheckContext] = []

        def new_context() -> CheckContext:
            context = CheckContext(
                target,
                profile=options.profile_settings,
                seed=options.seed,
                sandbox=options.sandbox,
                workdir=workdir,
            )
            context_holder.append(context)
            return context

        try:
            if check.is_property and scenario is None:
                # A declared failure needs no minimal example: no shrinking for it.
                examples = _run_property(check, new_context, options, shrink=expected is None)
            else:
                anyio.run(_run_once, check, new_context(), scenario, backend=options.backend)
            status, message, failed = "pass", "", None
        except CheckSkipped as skipped:
            status, message, failed = "skip", str(skipped), None
        except CheckFailed as failure:
            status, message, failed = "fail", str(failure), failure.requirement
            failing_scenario = getattr(
                failure, "scenario", failing_scenario if scenario is None else scenario
            )
        except Exception as error:  # an adapter crash is a failure of the check's MUST
            status = "fail"
            message = f"{type(error).__name__}: {error}"
            failed = check.requirements[0]
            failing_scenario = getattr(error, "scenario", scenario)
        transcript = context_holder[-1].transcript() if context_holder else []
    duration = time.perf_counter() - started
    if expected is not None:
        if status == "fail":
            status, message = "xfail", f"known bug: {expected} ({message.splitlines()[0]})"
        elif status == "pass":
            status, message = (
                "xpass",
                f"expected to fail ({expected}) but passed: remove the xfail entry",
            )
    bundle = None
    if status == "fail" and options.bundle_dir is not None:
        bundle = _write_bundle(
            options, target, check, message, failed, failing_scenario, transcript
        )
    failed_level = None
    if failed is not None:
        failed_level, _ = strongest_level([failed]) if _known(failed) else (level, ())
    return CheckResult(
        **base,
        status=status,  # type: ignore[arg-type]
        message=message,
        failed_requirement=failed,
        failed_level=failed_level,
        duration_seconds=duration,
        examples=examples,
        replay_command=_replay_command(bundle),
        bundle=str(bundle) if bundle else None,
    )


def _known(requirement: str) -> bool:
    from harness_testkit.spec import load_requirements

    try:
        load_requirements().get(requirement)
    except KeyError:
        return False
    return True


async def _run_once(check: Check, context: CheckContext, scenario: Any) -> None:
    try:
        if check.run_scenario is not None:
            await check.run_scenario(context, scenario)
        else:
            assert check.run is not None
            await check.run(context)
    finally:
        await context.aclose()


def _run_property(
    check: Check, new_context: Any, options: RunOptions, *, shrink: bool = True
) -> int:
    from hypothesis import HealthCheck, Phase, example, given, settings
    from hypothesis import seed as hypothesis_seed

    assert check.scenarios is not None
    assert check.run_scenario is not None
    probe = new_context()
    strategy = check.scenarios(probe)
    count = [0]
    last_failure: list[Any] = [None]

    @given(strategy)
    def run(scenario: Any) -> None:
        count[0] += 1
        try:
            anyio.run(_run_once, check, new_context(), scenario, backend=options.backend)
        except Exception:
            last_failure[0] = scenario
            raise

    # Hypothesis runs explicit examples last-decorated first: decorate in reverse so
    # they run in the order the check lists them.
    for scenario in reversed(check.examples):
        run = example(scenario)(run)
    run = settings(
        max_examples=options.profile_settings.max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink)
        if shrink
        else (Phase.explicit, Phase.generate),
        report_multiple_bugs=False,
    )(run)
    run = hypothesis_seed(options.seed)(run)

    try:
        run()
    except CheckFailed as failure:
        failure.scenario = last_failure[0]  # type: ignore[attr-defined]
        raise
    except Exception as error:
        error.scenario = last_failure[0]  # type: ignore[attr-defined]
        raise
    return count[0]


def _write_bundle(
    options: RunOptions,
    target: AdapterTarget,
    check: Check,
    message: str,
    requirement: str | None,
    scenario: Any,
    transcript: list[dict[str, Any]],
) -> Path:
    assert options.bundle_dir is not None
    options.bundle_dir.mkdir(parents=True, exist_ok=True)
    path = options.bundle_dir / f"{check.id}.replay.json"
    bundle = {
        "bundleVersion": BUNDLE_VERSION,
        "suiteVersion": __version__,
        "specificationVersion": "harness-v1",
        "adapter": target.name,
        "capabilities": target.capabilities.model_dump(mode="json"),
        "profile": options.profile,
        "seed": options.seed,
        "sandbox": options.sandbox,
        "backend": options.backend,
        "check": check.id,
        "requirements": list(check.requirements),
        "failedRequirement": requirement,
        "message": message,
        "scenario": scenario,
        "transcript": transcript,
    }
    path.write_text(dump_json(bundle), encoding="utf-8")
    return path


def run_suite(
    target: AdapterTarget,
    options: RunOptions,
    *,
    check_ids: Iterable[str] | None = None,
    tiers: Iterable[str] | None = None,
) -> Report:
    """Run checks in dependency order; dependents of failures are ``blocked``."""
    if options.bundle_dir is not None and options.bundle_dir.is_dir():
        # Bundles of an earlier run would be mistaken for this run's failures.
        for stale in options.bundle_dir.glob("*.replay.json"):
            stale.unlink()
    checks = ordered_checks(check_ids)
    if tiers is not None:
        wanted = set(tiers)
        checks = [item for item in checks if item.tier in wanted]
    results: list[CheckResult] = []
    broken: dict[str, str] = {}
    for check in checks:
        blockers = [dep for dep in check.depends_on if dep in broken]
        if blockers:
            level, areas = strongest_level(check.requirements)
            results.append(
                CheckResult(
                    check_id=check.id,
                    title=check.title,
                    tier=check.tier,
                    requirements=check.requirements,
                    level=level,
                    areas=areas,
                    status="blocked",
                    message=f"blocked: prerequisite {blockers[0]} {broken[blockers[0]]}",
                )
            )
            broken[check.id] = "is blocked"
            continue
        result = run_check(check, target, options)
        if result.status in ("fail", "xfail"):
            broken[check.id] = "failed"
        results.append(result)
    warnings = [
        f"expectations entry {name!r} names no check of this suite (stale?)"
        for name in options.expectations.merged(target.expectations).xfail
        if name not in {item.id for item in ordered_checks()}
    ]
    try:
        harness_id = target.factory().harness_id
    except Exception as error:  # the report still names the failure
        harness_id = f"<factory failed: {error}>"
    return Report(
        suite_version=__version__,
        adapter=target.name,
        harness_id=harness_id,
        profile=options.profile,
        max_examples=options.profile_settings.max_examples,
        seed=options.seed,
        sandbox=options.sandbox,
        results=tuple(results),
        warnings=tuple(warnings),
    )


def load_bundle(path: Path) -> dict[str, Any]:
    """Read a replay bundle, with a clear error when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path} is not a readable replay bundle: {error}") from error
    if not isinstance(data, dict) or data.get("bundleVersion") != BUNDLE_VERSION:
        raise ValueError(
            f"{path} is not a harness-testkit replay bundle (bundleVersion {BUNDLE_VERSION})"
        )
    return data
