"""Running the sandbox provider suite: ``harness-testkit check-sandbox`` and its runner.

:func:`run_sandbox_suite` runs :data:`~harness_testkit.conformance.SANDBOX_CHECKS`
against a :class:`SandboxTarget` into the same
:class:`~harness_testkit.conformance.Report` the adapter suite produces, so the console,
JSON, JUnit and Markdown forms and the gate (every MUST holds) are shared.
:func:`load_sandbox_target` imports ``package.module:provider`` (a provider, or a factory
returning one) for the command line.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
import click

from harness_testkit import __version__
from harness_testkit.common import make_console
from harness_testkit.spec import SandboxProvider, load_yaml

from .._report import CheckResult, Report, strongest_level
from .._runner import SETUP_ERRORS
from ._checks import SANDBOX_CHECKS
from ._model import (
    SandboxCapabilities,
    SandboxCheck,
    SandboxCheckSkipped,
    SandboxTarget,
    run_sandbox_check,
)

__all__ = [
    "check_sandbox",
    "close_sandbox_provider",
    "load_sandbox_capabilities",
    "load_sandbox_target",
    "run_sandbox_suite",
    "sandbox_result",
    "sandbox_target_from",
]

Backend = Literal["asyncio", "trio"]


def _capabilities_from(raw: object, where: str) -> SandboxCapabilities:
    if isinstance(raw, SandboxCapabilities):
        return raw
    if isinstance(raw, Mapping):
        known = set(SandboxCapabilities.names())
        unknown = sorted(str(key) for key in raw if key not in known)
        if unknown:
            raise ValueError(
                f"{where}: unknown sandbox capabilities {unknown}; known: {sorted(known)}"
            )
        for key, value in raw.items():
            quota = key == "disk_quota"
            fits = (
                (value is None or (isinstance(value, int) and not isinstance(value, bool)))
                if quota
                else isinstance(value, bool)
            )
            if not fits:
                wanted = "a number of bytes or null" if quota else "true or false"
                raise ValueError(
                    f"{where}: sandbox capability {key} must be {wanted}, not {value!r}"
                )
        return SandboxCapabilities(**{str(key): value for key, value in raw.items()})
    raise ValueError(
        f"{where}: capabilities must be a SandboxCapabilities or a mapping, got "
        f"{type(raw).__name__}"
    )


def load_sandbox_target(
    spec: str, capabilities: SandboxCapabilities | None = None, *, race_rounds: int = 1000
) -> SandboxTarget:
    """Import ``package.module:provider``: a provider object or a factory returning one.

    A factory also serves as the fresh provider the resume check reopens sessions with.
    Capabilities come from ``capabilities``, else a ``capabilities`` attribute of the
    imported object (a :class:`SandboxCapabilities` or a mapping), else none.

    Raises:
        ValueError: Naming what is wrong with ``spec``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"provider {spec!r} must look like 'package.module:provider'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import {module_name!r} for provider {spec!r}: {error}") from error
    if not hasattr(module, attribute):
        raise ValueError(f"{module_name} has no attribute {attribute!r}")
    return sandbox_target_from(
        getattr(module, attribute),
        capabilities,
        where=spec,
        race_rounds=race_rounds,
        replay=f"harness-testkit check-sandbox {spec} --check {{check}}",
    )


def sandbox_target_from(
    found: object,
    capabilities: SandboxCapabilities | None = None,
    *,
    where: str,
    race_rounds: int = 1000,
    replay: str = "pytest -k {check}",
) -> SandboxTarget:
    """The target for ``found``: a :class:`SandboxTarget` (kept), a provider, or a factory.

    Args:
        found: What names the provider under test.
        capabilities: Overrides the declaration (else a ``capabilities`` attribute of
            ``found``, a :class:`SandboxCapabilities` or a mapping, else none).
        where: How messages name ``found``.
        race_rounds: Round trips of the symlink-swap race check.
        replay: The command that reruns one check (``{check}`` is replaced).

    Raises:
        ValueError: ``found`` is no provider, or calling the factory failed.
    """
    if isinstance(found, SandboxTarget):
        if capabilities is None:
            return found
        return dataclasses.replace(found, capabilities=capabilities)
    factory: Callable[[], SandboxProvider] | None = None
    provider: object = found
    if isinstance(found, type) or (not isinstance(found, SandboxProvider) and callable(found)):
        factory = found
        try:
            provider = found()
        except Exception as error:
            raise ValueError(f"calling the provider factory {where} failed: {error}") from error
    if not isinstance(provider, SandboxProvider):
        raise ValueError(
            f"{where} is not a harness-sandbox-v1 provider (nor a factory returning one): "
            f"got {type(provider).__name__}"
        )
    declared = capabilities
    if declared is None:
        raw = getattr(found, "capabilities", None)
        if isinstance(found, type) or raw is None:
            # A provider class's declaration is a property: read it from the instance.
            raw = getattr(provider, "capabilities", None)
        declared = SandboxCapabilities() if raw is None else _capabilities_from(raw, where)
    return SandboxTarget(
        provider=provider,
        capabilities=declared,
        fresh_provider=factory,
        replay=replay,
        race_rounds=race_rounds,
    )


def sandbox_result(check: SandboxCheck, target: SandboxTarget, backend: Backend) -> CheckResult:
    """Run one check on a fresh event loop into its result (pass, fail or skip)."""
    level, areas = strongest_level(check.requirements)
    base: dict[str, Any] = {
        "check_id": check.id,
        "title": check.title,
        "tier": "sandbox",
        "requirements": check.requirements,
        "level": level,
        "areas": areas,
    }
    started = time.perf_counter()
    failed: str | None = None
    try:
        anyio.run(run_sandbox_check, check, target, backend=backend)
        status, message = "pass", ""
    except SandboxCheckSkipped as skipped:
        return CheckResult(**base, status="skip", message=str(skipped))
    except AssertionError as failure:  # CheckFailed, SandboxCheckFailed
        status, message = "fail", str(failure)
        failed = str(getattr(failure, "requirement", check.requirements[0]))
    except SETUP_ERRORS:
        raise  # the machine lacks an engine or an extra: no MUST of the provider fails
    except Exception as error:  # a provider crash fails the check's MUST
        status, message = "fail", f"{type(error).__name__}: {error}"
        failed = check.requirements[0]
    failed_level = strongest_level([failed])[0] if failed is not None else None
    return CheckResult(
        **base,
        status=status,  # type: ignore[arg-type]
        message=message,
        failed_requirement=failed,
        failed_level=failed_level,
        duration_seconds=time.perf_counter() - started,
    )


def run_sandbox_suite(
    target: SandboxTarget,
    *,
    name: str | None = None,
    check_ids: Iterable[str] | None = None,
    backend: Backend = "asyncio",
) -> Report:
    """Run the provider suite (or the checks ``check_ids``) into a conformance report.

    Args:
        target: The provider and its claims.
        name: How the report names the provider (default: its ``provider_id``).
        check_ids: Only these checks, in suite order.
        backend: The event loop each check runs on.

    Returns:
        The report; ``report.ok`` is the gate.

    Raises:
        KeyError: A check id is unknown.
    """
    checks = list(SANDBOX_CHECKS)
    if check_ids is not None:
        wanted = list(check_ids)
        unknown = [item for item in wanted if item not in {check.id for check in checks}]
        if unknown:
            raise KeyError(
                f"unknown sandbox check ids: {', '.join(unknown)}; see "
                "`harness-testkit check-sandbox --list`"
            )
        checks = [check for check in checks if check.id in wanted]
    results = tuple(sandbox_result(check, target, backend) for check in checks)
    provider_id = str(target.provider.provider_id)
    return Report(
        suite_version=__version__,
        specification_version="harness-sandbox-v1",
        adapter=name or provider_id,
        harness_id=f"sandbox:{provider_id}",
        profile="sandbox",
        max_examples=target.max_examples,
        seed=0,
        sandbox=provider_id,
        results=results,
    )


def load_sandbox_capabilities(path: Path) -> SandboxCapabilities:
    """Read a YAML/JSON mapping of :class:`SandboxCapabilities`.

    Raises:
        ValueError: Naming the file and what is wrong with it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{path}: cannot read it: {error.strerror or error}") from error
    # YAML 1.2 (JSON is YAML): `yes` stays a string, so a claim must be spelled true.
    data = load_yaml(text, source=str(path)) or {}
    try:
        return _capabilities_from(data, str(path))
    except TypeError as error:
        raise ValueError(f"{path}: {error}") from error


def _load_capabilities(path: Path | None) -> SandboxCapabilities | None:
    if path is None:
        return None
    try:
        return load_sandbox_capabilities(path)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--capabilities") from error


@click.command("check-sandbox")
@click.argument("provider", required=False)
@click.option(
    "--capabilities",
    "capabilities_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML/JSON of SandboxCapabilities (else the provider's `capabilities`).",
)
@click.option("--check", "check_ids", multiple=True, help="Run only these check ids.")
@click.option("--list", "list_only", is_flag=True, help="List the checks and exit.")
@click.option(
    "--backend", type=click.Choice(["asyncio", "trio"]), default="asyncio", show_default=True
)
@click.option(
    "--race-rounds",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="File API round trips of the symlink-swap race check (it is probabilistic).",
)
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Markdown."
)
def check_sandbox(
    provider: str | None,
    capabilities_path: Path | None,
    check_ids: tuple[str, ...],
    list_only: bool,
    backend: str,
    race_rounds: int,
    junit_xml: Path | None,
    json_path: Path | None,
    report_path: Path | None,
) -> None:
    """Check PROVIDER (package.module:provider) against harness-sandbox-v1.

    PROVIDER is a sandbox provider object or a factory returning one. Checks of
    capabilities it does not claim are skipped. Exit status 0 only when every MUST holds.
    """
    if list_only:
        for item in SANDBOX_CHECKS:
            needs = item.capability or "-"
            click.echo(f"{item.id:36} {needs:22} {', '.join(item.requirements)}")
        return
    if provider is None:
        raise click.UsageError("give PROVIDER (package.module:provider), or --list")
    try:
        target = load_sandbox_target(
            provider, _load_capabilities(capabilities_path), race_rounds=race_rounds
        )
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="PROVIDER") from error
    try:
        report = run_sandbox_suite(
            target,
            name=provider,
            check_ids=check_ids or None,
            backend=backend,  # type: ignore[arg-type]
        )
    except KeyError as error:
        raise click.BadParameter(str(error.args[0]), param_hint="--check") from error
    except SETUP_ERRORS as error:  # a set-up error: one sentence, exit 2
        click.echo(f"Error: {error}", err=True)
        sys.exit(2)
    finally:
        close_sandbox_provider(target.provider, backend)
    report.print_console(console=make_console())
    report.write(json_path=json_path, junit_path=junit_xml, markdown_path=report_path)
    sys.exit(0 if report.ok else 1)


def close_sandbox_provider(provider: object, backend: str = "asyncio") -> None:
    """Close a provider the suite built (``aclose()`` when it has one; blocking)."""
    closer = getattr(provider, "aclose", None)
    if closer is not None:
        anyio.run(closer, backend=backend)
