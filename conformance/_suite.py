"""``ConformanceSuite``: the pytest face of the conformance checks.

Subclass it in a test module of your project::

    from . import ConformanceSuite

    class TestMyAdapter(ConformanceSuite):
        pass

and either override the ``harness_adapter`` fixture in ``conftest.py`` (returning a
factory, or an :class:`AdapterTarget` with a capability declaration) or set
``harness_adapter = package.module:factory`` (ini or ``--harness-adapter``). Every check
becomes one test, named by its id and marked ``harness_v1`` plus its tier
(``harness_black_box``/``harness_scripted``) and level (``harness_must``/...); skips
name the capability (and say when it was assumed rather than declared), failures name
the requirement, the replay command and, under ``--tb`` other than ``no``/``line``,
the traceback. It runs the same plain check functions as ``harness-testkit check``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from ._adapter._registry import ordered_checks
from ._capabilities import AdapterCapabilities, CapabilityResolution, resolve_capabilities
from ._checks import Check
from ._context import AdapterTarget
from ._report import CheckResult, strongest_level
from ._runner import RunOptions, blocked_result, run_check
from ._verdict import failure_label, must_depends_on

__all__ = [
    "ConformanceSuite",
    "check_markers",
    "collected_checks",
    "parametrize_checks",
    "pytest_target",
]

_C = TypeVar("_C", bound=Check)

#: Where a declaration given to the suite comes from (the plugin's fixture reads the file).
_FIXTURE = "harness_capabilities (--harness-capabilities FILE)"


def check_markers(check: Check) -> list[str]:
    """The marker names a check's test carries."""
    level, _ = strongest_level(check.requirements)
    tier = "harness_black_box" if check.tier == "black-box" else "harness_scripted"
    return ["harness_v1", tier, f"harness_{level.lower()}"]


def parametrize_checks(
    metafunc: pytest.Metafunc,
    argname: str,
    checks: Iterable[_C],
    markers: Callable[[_C], list[str]],
) -> None:
    """Parametrize ``argname`` (when the test asks for it) over ``checks``, by id, marked."""
    if argname not in metafunc.fixturenames:
        return
    params = [
        pytest.param(item, id=item.id, marks=[getattr(pytest.mark, name) for name in markers(item)])
        for item in checks
    ]
    metafunc.parametrize(argname, params)


def pytest_target(
    adapter: Any, capabilities: AdapterCapabilities | None
) -> tuple[AdapterTarget, CapabilityResolution]:
    """The target a ``harness_adapter`` fixture value stands for, with its resolution.

    A bare factory's declaration comes from ``capabilities`` (``--harness-capabilities``),
    else the factory's ``capabilities`` attribute; undeclared capabilities are inferred
    from the adapter where it shows them, else defaulted, and the resolution says so.
    """
    if isinstance(adapter, AdapterTarget):
        declared: Any = capabilities or adapter.capabilities
        origin = _FIXTURE if capabilities else "the AdapterTarget"
        resolution = resolve_capabilities(adapter.factory, declared, origin=origin)
        return adapter, resolution
    if not callable(adapter):
        raise pytest.UsageError(
            "the harness_adapter fixture must return an adapter factory or an AdapterTarget, "
            f"not {type(adapter).__name__}"
        )
    declared = capabilities
    origin = _FIXTURE
    if declared is None:
        declared = getattr(adapter, "capabilities", None)
        origin = "the factory's `capabilities` attribute"
    if not isinstance(declared, AdapterCapabilities | dict):
        declared, origin = None, "none (assumed: inferred from the adapter, else defaults)"
    resolution = resolve_capabilities(adapter, declared, origin=origin)
    name = f"{getattr(adapter, '__module__', '?')}:{getattr(adapter, '__qualname__', '?')}"
    return AdapterTarget(factory=adapter, capabilities=resolution.capabilities, name=name), (
        resolution
    )


def _assumption_note(message: str, resolution: CapabilityResolution) -> str:
    """Say when a skip rests on a capability nobody declared."""
    for name in resolution.assumed:
        if f"`{name}`" in message:
            return (
                f"{message} (not declared: assumed {name} = "
                f"{getattr(resolution.capabilities, name)!r} ({resolution.source_of(name)}); "
                "declare it with --harness-capabilities FILE or the factory's `capabilities`)"
            )
    return message


def _failure_text(result: CheckResult, tbstyle: str) -> str:
    level = result.failed_level or result.level
    message = result.message or result.status
    if result.status == "error":  # the check itself broke: no requirement is charged
        level = f"{level} check error:"
    if tbstyle == "line":
        return f"{level} {message.splitlines()[0]}"
    text = f"{level} {message}"
    if result.replay_command:
        text += f"\nreplay: {result.replay_command}"
    # Newer reports carry the check's traceback; older ones do not.
    traceback = getattr(result, "traceback", None)
    if traceback and tbstyle not in ("no", "short"):
        text += f"\n\n{traceback}"
    elif traceback and tbstyle == "short":
        text += "\n\n" + "\n".join(str(traceback).rstrip().splitlines()[-6:])
    return text


class ConformanceSuite:
    """Inherit to run every harness-v1 check against the ``harness_adapter`` fixture."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize ``harness_check`` over every registered check, marked."""
        parametrize_checks(metafunc, "harness_check", ordered_checks(), check_markers)

    @pytest.fixture
    def harness_target(
        self,
        harness_run_state: Any,
        harness_adapter: Any,
        harness_capabilities: AdapterCapabilities | None,
    ) -> tuple[AdapterTarget, CapabilityResolution]:
        """The adapter under test and its effective capabilities (resolved once per run)."""
        cache = harness_run_state.adapter_targets
        key = id(harness_adapter)
        if key not in cache:
            cache[key] = pytest_target(harness_adapter, harness_capabilities)
        target, resolution = cache[key]
        return target, resolution

    def test_harness_v1(
        self,
        request: pytest.FixtureRequest,
        harness_check: Check,
        harness_target: tuple[AdapterTarget, CapabilityResolution],
        harness_run_options: RunOptions,
        harness_run_state: Any,
        record_property: Any,
    ) -> None:
        """One conformance check (parametrized over every registered check).

        The test ends as the gate judges the check (the CLI's ``verdict``): a check
        whose prerequisite did not pass is skipped as blocked, naming the failing check
        (which fails the run); a failing SHOULD or MAY that no MUST depends on is an
        xfail (reported, not gating). The plugin judges the whole run at the end.
        """
        target, resolution = harness_target
        for requirement in harness_check.requirements:
            record_property("requirement", requirement)
        done: list[CheckResult] = harness_run_state.check_results(target, resolution)
        by_id = {item.check_id: item for item in done}
        blockers = [
            dep
            for dep in harness_check.depends_on
            if dep in by_id and by_id[dep].status in ("fail", "xfail", "error", "blocked")
        ]
        if blockers:
            how = {"error": "erred", "blocked": "is blocked"}.get(
                by_id[blockers[0]].status, "failed"
            )
            result = blocked_result(harness_check, blockers[0], how)
        else:
            result = run_check(harness_check, target, harness_run_options)
        done.append(result)
        record_property("status", result.status)
        _judge(request, result, by_id)


def collected_checks(request: pytest.FixtureRequest) -> list[Check]:
    """The checks this run collected for the requesting suite class (its selection)."""
    found: dict[str, Check] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or getattr(item, "cls", None) is not request.cls:
            continue
        value = callspec.params.get("harness_check")
        if isinstance(value, Check):
            found[value.id] = value
    return list(found.values())


def _judge(
    request: pytest.FixtureRequest, result: CheckResult, earlier: dict[str, CheckResult]
) -> None:
    """End the test the way the gate judges ``result``."""
    if result.status == "pass":
        return
    if result.status == "skip":
        resolution = request.getfixturevalue("harness_target")[1]
        pytest.skip(_assumption_note(result.message, resolution))
    if result.status == "xfail":
        pytest.xfail(result.message)
    if result.status == "blocked":
        root = earlier.get(result.blocked_by or "")
        while root is not None and root.status == "blocked":
            root = earlier.get(root.blocked_by or "")
        named = failure_label(root) if root is not None and root.status != "xfail" else None
        pytest.skip(
            f"blocked: {named} failed (that test fails the run)" if named else result.message
        )
    tbstyle = str(request.config.getoption("tbstyle", "auto"))
    if result.status == "xpass" and result.level != "MUST":
        pytest.xfail(f"{result.message} (a {result.level} check: reported, not gating)")
    allow_unverified = request.getfixturevalue("harness_run_state").option("allow_unverified")
    gates = (result.failed_level or result.level) == "MUST" or (
        allow_unverified != "true"
        and (result.level == "MUST" or must_depends_on(result.check_id, collected_checks(request)))
    )
    if result.status == "fail" and not gates:
        pytest.xfail(
            f"{result.failed_level or result.level} {result.failed_requirement} does not hold "
            f"(reported; no MUST depends on it, so it does not fail the run): "
            + _failure_text(result, "line")
        )
    pytest.fail(_failure_text(result, tbstyle), pytrace=False)
