"""``harness-testkit check`` and ``harness-testkit replay``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ._adapter_checks.registry import ordered_checks
from ._capabilities import AdapterCapabilities
from ._context import PROFILES, AdapterTarget, load_target
from ._html import write_html
from ._hypothesis import DEFAULT_EXAMPLE_DATABASE
from ._report import Report
from ._runner import Expectations, RunOptions, load_bundle, run_check, run_suite

__all__ = ["check", "replay"]


def _load_capabilities(path: Path | None) -> AdapterCapabilities | None:
    if path is None:
        return None
    try:
        return AdapterCapabilities.from_file(path)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--capabilities") from error


def self_targets() -> list[AdapterTarget]:
    """The fake harness in every capability profile (the reference run that must pass)."""
    from ._self import self_test_targets

    return self_test_targets()


@click.command("check")
@click.argument("adapter", required=False)
@click.option("--self", "self_test", is_flag=True, help="Check the fake harness in every profile.")
@click.option(
    "--profile", type=click.Choice(sorted(PROFILES)), default="standard", show_default=True
)
@click.option(
    "--sandbox", type=click.Choice(["local", "docker"]), default="local", show_default=True
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed for generated scenarios."
)
@click.option(
    "--backend", type=click.Choice(["asyncio", "trio"]), default="asyncio", show_default=True
)
@click.option(
    "--capabilities",
    "capabilities_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML/JSON capability declaration (else the factory's `capabilities`).",
)
@click.option(
    "--expectations",
    "expectations_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=(
        "YAML of known bugs: `xfail: {check_id: reason}` (strict); with --self, merged "
        "over each profile's own known deviations."
    ),
)
@click.option("--check", "check_ids", multiple=True, help="Run only these check ids.")
@click.option("--list", "list_only", is_flag=True, help="List the checks and exit.")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Markdown report.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Self-contained HTML report (several targets side by side).",
)
@click.option(
    "--bundle-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("harness-testkit-out/bundles"),
    show_default=True,
    help="Where failures write replay bundles.",
)
def check(
    adapter: str | None,
    self_test: bool,
    profile: str,
    sandbox: str,
    seed: int,
    backend: str,
    capabilities_path: Path | None,
    expectations_path: Path | None,
    check_ids: tuple[str, ...],
    list_only: bool,
    junit_xml: Path | None,
    json_path: Path | None,
    report_path: Path | None,
    html_path: Path | None,
    bundle_dir: Path,
) -> None:
    """Check ADAPTER (package.module:factory) against harness-v1.

    Exit status 0 only when every MUST holds.
    """
    if list_only:
        for item in ordered_checks():
            click.echo(f"{item.id:40} {item.tier:9} {', '.join(item.requirements)}")
        return
    if self_test == (adapter is not None):
        raise click.UsageError("give exactly one of ADAPTER (package.module:factory) or --self")
    expectations = Expectations.load(expectations_path) if expectations_path else Expectations()
    if self_test:
        targets = self_targets()
        profiles = sorted(PROFILES) if profile == "all" else [profile]
    else:
        try:
            targets = [load_target(adapter, _load_capabilities(capabilities_path))]  # type: ignore[arg-type]
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="ADAPTER") from error
        profiles = [profile]
    reports: list[Report] = []
    for target in targets:
        for name in profiles:
            options = RunOptions(
                profile=name,
                seed=seed,
                sandbox=sandbox,  # type: ignore[arg-type]
                backend=backend,  # type: ignore[arg-type]
                bundle_dir=bundle_dir / _slug(target.name),
                expectations=expectations,
                example_database=DEFAULT_EXAMPLE_DATABASE,
            )
            report = run_suite(target, options, check_ids=check_ids or None)
            report.print_console()
            reports.append(report)
    single = reports[0] if len(reports) == 1 else None
    if single is not None:
        single.write(json_path=json_path, junit_path=junit_xml, markdown_path=report_path)
    else:
        for report in reports:
            suffix = _slug(report.adapter)
            report.write(
                json_path=_suffixed(json_path, suffix),
                junit_path=_suffixed(junit_xml, suffix),
                markdown_path=_suffixed(report_path, suffix),
            )
    if html_path is not None:
        write_html(html_path, [json.loads(report.to_json()) for report in reports])
    sys.exit(0 if all(report.ok for report in reports) else 1)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


def _suffixed(path: Path | None, suffix: str) -> Path | None:
    if path is None:
        return None
    return path.with_name(f"{path.stem}-{suffix}{path.suffix}")


@click.command("replay")
@click.argument("bundle", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def replay(bundle: Path) -> None:
    """Rerun the failure recorded in BUNDLE, offline."""
    try:
        data = load_bundle(bundle)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="BUNDLE") from error
    capabilities = AdapterCapabilities.model_validate(data["capabilities"])
    adapter_name = data["adapter"]
    if adapter_name.startswith("self:"):
        target = next(t for t in self_targets() if t.name == adapter_name)
    else:
        target = load_target(adapter_name, capabilities)
    (item,) = ordered_checks([data["check"]])[-1:]
    options = RunOptions(
        profile=data["profile"],
        seed=data["seed"],
        sandbox=data["sandbox"],
        backend=data["backend"],
    )
    scenario: Any = data.get("scenario")
    result = run_check(item, target, options, scenario=scenario)
    click.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    if result.status == "fail":
        click.echo(f"reproduced: {result.message}", err=True)
        sys.exit(1)
    click.echo("not reproduced: the check passes now", err=True)
