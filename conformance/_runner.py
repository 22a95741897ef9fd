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

from harness_testkit import __version__
from harness_testkit.spec import YamlError, load_yaml

from ._adapter_checks.registry import ordered_checks
from ._capabilities import resolve_capabilities
from ._checks import Check, CheckFailed, CheckSkipped
from ._context import PROFILES, AdapterTarget, CheckContext, Profile
from ._hypothesis import database_key, property_settings
from ._report import CheckResult, Report, dump_json, strongest_level
from ._shrinking import ShrinkBudget, ShrinkingCut

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
            data = load_yaml(path.read_text(encoding="utf-8"), source=str(path)) or {}
        except (OSError, YamlError) as error:
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
    #: Hypothesis example database (failures replayed first next time); ``None``: none.
    example_database: Path | None = None
    #: Seconds a failing property check may spend shrinking (then it reports the
    #: smallest scenario found so far and keeps the unshrunk one in the bundle).
    shrink_seconds: float = 30.0

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
    started = time.perf_counter()
    examples: int | None = None
    failing_scenario: Any = None
    unshrunk: Any = None
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
                examples = _run_property(check, new_context, options)
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
            unshrunk = getattr(failure, "unshrunk_scenario", None)
        except Exception as error:  # an adapter crash is a failure of the check's MUST
            status = "fail"
            message = f"{type(error).__name__}: {error}"
            failed = check.requirements[0]
            failing_scenario = getattr(error, "scenario", scenario)
            unshrunk = getattr(error, "unshrunk_scenario", None)
        transcript = context_holder[-1].transcript() if context_holder else []
    duration = time.perf_counter() - started
    # The target's known deviations count too, so every caller (CLI, selftest reference
    # run, pytest plugin) judges a target the same way.
    expected = options.expectations.merged(target.expectations).xfail.get(check.id)
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
            options, target, check, message, failed, failing_scenario, transcript, unshrunk
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


def _run_property(check: Check, new_context: Any, options: RunOptions) -> int:
    from hypothesis import example, given
    from hypothesis import seed as hypothesis_seed

    assert check.scenarios is not None
    assert check.run_scenario is not None
    probe = new_context()
    strategy = check.scenarios(probe)
    count = [0]
    last_failure: list[Any] = [None]
    budget = ShrinkBudget(options.shrink_seconds)

    @given(strategy)
    def run(scenario: Any) -> None:
        budget.check()
        count[0] += 1
        try:
            anyio.run(_run_once, check, new_context(), scenario, backend=options.backend)
        except Exception as error:
            last_failure[0] = scenario
            budget.failed(scenario, error)
            raise

    # Hypothesis runs explicit examples last-decorated first: decorate in reverse so
    # they run in the order the check lists them.
    for scenario in reversed(check.examples):
        run = example(scenario)(run)
    # The seed first (it turns the database off), then the named profile with the
    # database; one key per check and adapter (the hook hypothesis' own `find` uses).
    run = hypothesis_seed(options.seed)(run)
    run = property_settings(options.profile, options.example_database)(run)
    run._hypothesis_internal_database_key = database_key(check.id, probe.target.name)  # type: ignore[attr-defined]

    try:
        run()
    except ShrinkingCut:
        raise budget.cut_error() from None
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
    unshrunk: Any = None,
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
    if unshrunk is not None:
        bundle["unshrunkScenario"] = unshrunk
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
    capabilities = resolve_capabilities(
        target.factory, target.capabilities, origin="declared fields, the rest inferred"
    )
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
        warnings=(*warnings, *(f"capability mismatch: {m}" for m in capabilities.mismatches)),
        capabilities=capabilities.to_json(),
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
