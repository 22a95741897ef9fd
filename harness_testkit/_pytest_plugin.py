"""The pytest plugin of harness-testkit (entry point ``pytest11``).

Loaded in every pytest run of an environment where the kit is installed, so it imports
nothing but pytest at load time: the conformance package is imported only when a test
uses ``ConformanceSuite`` or one of the fixtures. ``ConformanceSuite`` parametrizes
its test over the checks and marks each (``harness_v1``, the tier, the level).

Every option has an ini twin (command line first, then ``[tool.pytest.ini_options]``,
then the default): ``harness_adapter``, ``harness_capabilities``, ``harness_profile``,
``harness_sandbox``, ``harness_backend``, ``harness_seed``, ``harness_expectations``,
``harness_bundle_dir``, ``harness_example_database``, ``harness_baseline``,
``harness_allow_unverified``, and for the sandbox provider suite
(``SandboxSuite``) ``harness_sandbox_provider``, ``harness_sandbox_capabilities``,
``harness_sandbox_race_rounds``.

The plugin owns the run's state (its stash keys): the suites reach it only through the
``harness_run_state`` fixture (:class:`HarnessRunState`), never by importing this module.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness_testkit.conformance import RunOptions

__all__ = [
    "OPTIONS",
    "RESULTS",
    "SANDBOX_TARGETS",
    "TARGETS",
    "VERDICT",
    "HarnessRunState",
    "harness_adapter",
    "harness_capabilities",
    "harness_run_options",
    "harness_run_state",
    "harness_sandbox_capabilities",
    "harness_sandbox_provider",
    "load_factory",
    "option_value",
    "pytest_addoption",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]

#: name -> (default, choices, help). Command line ``--harness-NAME``, ini ``harness_NAME``.
OPTIONS: dict[str, tuple[str | None, tuple[str, ...] | None, str]] = {
    "adapter": (
        None,
        None,
        "Adapter under test: MODULE:FACTORY returning a harness-v1 adapter, an npm package "
        "(npm:NAME@VERSION[#EXPORT]) or a local Node adapter (PATH#EXPORT).",
    ),
    "settings": (None, None, "JSON settings for a Node adapter's factory (with npm:/PATH#)."),
    "capabilities": (
        None,
        None,
        "YAML/JSON capability declaration (AdapterCapabilities.from_file); overrides the "
        "factory's `capabilities` attribute.",
    ),
    "profile": (
        "smoke",
        ("smoke", "standard", "exhaustive"),
        "Conformance depth (examples per property check).",
    ),
    "sandbox": ("local", ("local", "docker"), "Sandbox provider the checks use."),
    "backend": ("asyncio", ("asyncio", "trio"), "anyio backend the checks run on."),
    "seed": ("0", None, "Seed for generated scenarios."),
    "expectations": (None, None, "YAML of known bugs (`xfail: {check_id: reason}`), strict."),
    "baseline": (
        None,
        None,
        "YAML `unverified: [MUST ids]` that may stay unverified (as `check --baseline`).",
    ),
    "allow_unverified": (
        "false",
        ("true", "false"),
        "Report MUSTs left unverified without failing the run (as `check "
        "--allow-unverified`); by default an undeclared gap fails it.",
    ),
    "bundle_dir": ("harness-testkit-out/bundles", None, "Where failing checks write bundles."),
    "example_database": (
        "harness-testkit-out/hypothesis",
        None,
        "Hypothesis example database: failures found once are replayed first ('none': off).",
    ),
    "sandbox_provider": (
        None,
        None,
        "Sandbox provider under test (SandboxSuite): MODULE:PROVIDER, a provider or a "
        "factory returning one.",
    ),
    "sandbox_capabilities": (
        None,
        None,
        "YAML/JSON of SandboxCapabilities the provider claims; overrides its "
        "`capabilities` attribute.",
    ),
    "sandbox_race_rounds": (
        "1000",
        None,
        "File API round trips of the provider suite's symlink-swap race check.",
    ),
}

#: Markers the plugin puts on every conformance test (select with ``-m``).
MARKERS = (
    "harness_v1: a harness-v1 conformance check (harness-testkit)",
    "harness_black_box: conformance check of the black-box tier",
    "harness_scripted: conformance check of the scripted tier (needs `scripting`)",
    "harness_must: conformance check verifying a MUST requirement",
    "harness_should: conformance check whose strongest requirement is a SHOULD",
    "harness_may: conformance check whose strongest requirement is a MAY",
    "harness_sandbox: a sandbox provider suite check (harness-testkit SandboxSuite)",
)

#: Adapters the run checked: id(factory) -> (AdapterTarget, CapabilityResolution).
TARGETS = pytest.StashKey[dict[int, tuple[Any, Any]]]()

#: Results of the conformance checks run so far: target name -> (AdapterTarget,
#: CapabilityResolution, [CheckResult]); the session's verdict is judged from them.
RESULTS = pytest.StashKey[dict[str, tuple[Any, Any, list[Any]]]]()

#: The run's verdict (``harness_testkit.conformance`` ``Verdict``), once judged.
VERDICT = pytest.StashKey[Any]()

#: Node adapter factories the run made: "spec|settings path" -> factory (one host each).
NODE_FACTORIES = pytest.StashKey[dict[str, Any]]()

#: Sandbox providers the run checked: id(fixture value) -> (SandboxTarget, name, owned);
#: ``owned``: the suite built the provider (from a factory) and closes it at the end.
SANDBOX_TARGETS = pytest.StashKey[dict[int, tuple[Any, str, bool]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``harness-testkit`` option group and its ini twins."""
    group = parser.getgroup("harness-testkit", "harness-v1 conformance (harness-testkit)")
    for name, (default, choices, text) in OPTIONS.items():
        flag = f"--harness-{name.replace('_', '-')}"
        shown = f" (default: {default})" if default is not None else ""
        group.addoption(
            flag,
            action="store",
            default=None,
            choices=choices,
            dest=f"harness_{name}",
            help=f"{text}{shown} [ini: harness_{name}]",
        )
        parser.addini(f"harness_{name}", f"{text}{shown}", default=default)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers (so ``--strict-markers`` projects can select on them)."""
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[TARGETS] = {}
    config.stash[SANDBOX_TARGETS] = {}


def option_value(config: pytest.Config, name: str) -> str | None:
    """An option's value: command line, else ini, else the default.

    Raises:
        pytest.UsageError: an ini value outside the option's choices.
    """
    value = config.getoption(f"harness_{name}")
    if value is None:
        value = config.getini(f"harness_{name}") or None
        choices = OPTIONS[name][1]
        if value is not None and choices is not None and value not in choices:
            raise pytest.UsageError(
                f"ini option harness_{name} = {value!r}: use one of {', '.join(choices)}"
            )
    return None if value is None else str(value)


def load_factory(spec: str, option: str = "--harness-adapter") -> Any:
    """Import ``package.module:factory`` and return it (callable, for ``--harness-adapter``).

    Raises:
        pytest.UsageError: naming what is wrong with ``spec``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise pytest.UsageError(f"{option}={spec!r} must look like 'package.module:factory'.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise pytest.UsageError(f"{option}: cannot import {module_name!r}: {error}") from error
    factory = getattr(module, attribute, None)
    if factory is None:
        raise pytest.UsageError(f"{option}: {module_name} has no attribute {attribute!r}.")
    if option == "--harness-adapter" and not callable(factory):
        raise pytest.UsageError(f"{option}: {module_name}.{attribute} is not callable.")
    return factory


class HarnessRunState:
    """What the plugin keeps for one pytest run, as the suites see it.

    Args:
        config: The run's pytest configuration (the state lives in its stash).
    """

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    @property
    def adapter_targets(self) -> dict[int, tuple[Any, Any]]:
        """Adapters checked so far: ``id(factory)`` -> (target, capability resolution).

        ``ConformanceSuite`` resolves each adapter once and keeps it here; the terminal
        summary prints their capabilities.
        """
        return self._config.stash.setdefault(TARGETS, {})

    @property
    def sandbox_targets(self) -> dict[int, tuple[Any, str, bool]]:
        """Sandbox providers checked so far: ``id(fixture value)`` -> (target, name, owned).

        ``SandboxSuite`` builds each target once and keeps it here; the plugin closes the
        providers it owns when the session finishes.
        """
        return self._config.stash.setdefault(SANDBOX_TARGETS, {})

    def check_results(self, target: Any, resolution: Any) -> list[Any]:
        """The results of the checks run so far against ``target`` (append to it).

        The plugin judges the run from them when the session ends, as ``check`` does.
        """
        table = self._config.stash.setdefault(RESULTS, {})
        return table.setdefault(target.name, (target, resolution, []))[2]

    def option(self, name: str) -> str | None:
        """The value of option ``harness_<name>``: command line, else ini, else the default.

        Raises:
            pytest.UsageError: an ini value outside the option's choices.
        """
        return option_value(self._config, name)


@pytest.fixture
def harness_run_state(request: pytest.FixtureRequest) -> HarnessRunState:
    """The plugin's state for this run (targets checked, option values), for the suites."""
    return HarnessRunState(request.config)


@pytest.fixture
def harness_adapter(request: pytest.FixtureRequest) -> Any:
    """The adapter factory under test; override this fixture or set ``harness_adapter``."""
    spec = option_value(request.config, "adapter")
    if spec is None:
        pytest.skip(
            "no adapter under test: override the `harness_adapter` fixture in conftest.py, "
            "pass --harness-adapter=package.module:factory or set the ini option "
            "harness_adapter"
        )
    if _is_node_target(spec):
        return _node_factory(request.config, spec)
    return load_factory(spec)


def _is_node_target(spec: str) -> bool:
    """Whether ``spec`` names a Node adapter (the CLI's rule, from the Node package)."""
    try:
        from harness_testkit.adapters.node import is_node_target
    except ImportError:
        return spec.startswith("npm:")
    return bool(is_node_target(spec))


def _node_factory(config: pytest.Config, spec: str) -> Any:
    """The factory of a Node adapter (through the adapter host), with its declarations."""
    from harness_testkit.spec import HostProtocolError, HostSetupError

    try:
        from harness_testkit.adapters.node import load_node_target, read_settings
    except ImportError as error:
        raise pytest.UsageError(
            f"--harness-adapter={spec}: Node adapters need the `node` extra ({error.name} is "
            "not installed): pip install 'harness-testkit[node]'"
        ) from None
    path = option_value(config, "settings")
    made = config.stash.setdefault(NODE_FACTORIES, {})
    key = f"{spec}|{path}"
    if key not in made:
        try:
            settings = read_settings(_relative(config, path)) if path is not None else None
            target = load_node_target(spec, settings=settings)
        except (HostSetupError, HostProtocolError) as error:
            raise pytest.UsageError(f"--harness-adapter={spec}: {error}") from None
        made[key] = target.factory
    return made[key]


@pytest.fixture
def harness_capabilities(request: pytest.FixtureRequest) -> Any:
    """The capability declaration from ``--harness-capabilities FILE``, else ``None``.

    ``None`` means: the factory's ``capabilities`` attribute, else what the adapter
    shows (inferred), else the conservative defaults; the terminal summary says which.
    """
    path = option_value(request.config, "capabilities")
    if path is None:
        return None
    from harness_testkit.conformance import AdapterCapabilities

    try:
        return AdapterCapabilities.from_file(_relative(request.config, path))
    except ValueError as error:
        raise pytest.UsageError(f"--harness-capabilities: {error}") from None


@pytest.fixture
def harness_sandbox_provider(request: pytest.FixtureRequest) -> Any:
    """The sandbox provider under test (a provider, a factory or a ``SandboxTarget``).

    Override this fixture in ``conftest.py`` or set ``harness_sandbox_provider``.
    """
    spec = option_value(request.config, "sandbox_provider")
    if spec is None:
        pytest.skip(
            "no sandbox provider under test: override the `harness_sandbox_provider` fixture "
            "in conftest.py, pass --harness-sandbox-provider=package.module:provider or set "
            "the ini option harness_sandbox_provider"
        )
    return load_factory(spec, "--harness-sandbox-provider")


@pytest.fixture
def harness_sandbox_capabilities(request: pytest.FixtureRequest) -> Any:
    """The claims from ``--harness-sandbox-capabilities FILE``, else ``None``.

    ``None`` means: the provider's (or factory's) ``capabilities`` attribute, else none.
    """
    path = option_value(request.config, "sandbox_capabilities")
    if path is None:
        return None
    from harness_testkit.conformance import load_sandbox_capabilities

    try:
        return load_sandbox_capabilities(_relative(request.config, path))
    except ValueError as error:
        raise pytest.UsageError(f"--harness-sandbox-capabilities: {error}") from None


@pytest.fixture
def harness_run_options(request: pytest.FixtureRequest) -> RunOptions:
    """Run options from the options above (profile, sandbox, backend, seed, ...)."""
    from harness_testkit.conformance import Expectations, RunOptions

    config = request.config
    seed_text = option_value(config, "seed") or "0"
    try:
        seed = int(seed_text)
    except ValueError:
        raise pytest.UsageError(f"harness seed {seed_text!r} is not an integer") from None
    expectations = option_value(config, "expectations")
    try:
        loaded = (
            Expectations.load(_relative(config, expectations)) if expectations else Expectations()
        )
    except ValueError as error:
        raise pytest.UsageError(f"--harness-expectations: {error}") from None
    database = option_value(config, "example_database")
    return RunOptions(
        profile=option_value(config, "profile") or "smoke",
        sandbox=option_value(config, "sandbox") or "local",  # type: ignore[arg-type]
        backend=option_value(config, "backend") or "asyncio",  # type: ignore[arg-type]
        seed=seed,
        bundle_dir=_relative(config, option_value(config, "bundle_dir") or "."),
        expectations=loaded,
        example_database=None if database in (None, "none") else _relative(config, database),
    )


def _judge_session(config: pytest.Config) -> Any:
    """The gate's verdict over every conformance check the session ran (``None``: none)."""
    table = config.stash.get(RESULTS, {})
    if not table:
        return None
    from harness_testkit import __version__
    from harness_testkit.conformance import Gate, Report, RunOptions, verdict

    profile = option_value(config, "profile") or "smoke"
    reports = [
        Report(
            suite_version=__version__,
            adapter=target.name,
            harness_id="?",
            profile=profile,
            max_examples=RunOptions(profile=profile).profile_settings.max_examples,
            seed=int(option_value(config, "seed") or "0"),
            sandbox=option_value(config, "sandbox") or "local",
            results=tuple(results),
            capabilities=resolution.to_json(),
        )
        for target, resolution, results in table.values()
    ]
    allow = option_value(config, "allow_unverified") == "true"
    baseline = option_value(config, "baseline")
    if baseline is None:
        return verdict(reports, Gate(allow_unverified=allow))
    try:
        gate = Gate.load_baseline(_relative(config, baseline), allow_unverified=allow)
    except ValueError as error:
        raise pytest.UsageError(f"--harness-baseline: {error}") from None
    return verdict(reports, gate)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the effective capabilities of every adapter and sandbox provider checked,
    then the gate's verdict over the run (the line ``harness-testkit check`` ends with)."""
    for target, resolution in config.stash.get(TARGETS, {}).values():
        terminalreporter.section(f"harness-testkit: {target.name}")
        for line in resolution.describe():
            terminalreporter.write_line(line)
    for sandbox, name, _owned in config.stash.get(SANDBOX_TARGETS, {}).values():
        terminalreporter.section(f"harness-testkit sandbox: {name}")
        claims = sandbox.capabilities
        names = claims.names()
        claimed = [
            name if getattr(claims, name) is True else f"{name}={getattr(claims, name)}"
            for name in names
            if getattr(claims, name) not in (False, None)
        ]
        unclaimed = [name for name in names if getattr(claims, name) in (False, None)]
        terminalreporter.write_line(
            f"provider {sandbox.provider.provider_id!r} claims: "
            f"{', '.join(claimed) or 'nothing'}; not: {', '.join(unclaimed) or '-'}"
        )
    judged = config.stash.get(VERDICT, None)
    if judged is not None:
        terminalreporter.section("harness-testkit verdict")
        for line in judged.details:
            terminalreporter.write_line(line)
        terminalreporter.write_line(judged.line, red=not judged.ok, green=judged.ok, bold=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Judge the run (a verdict that is not a pass makes the exit status 1, as `check`
    exits), then close the sandbox providers the suite built and the Node hosts."""
    judged = _judge_session(session.config)
    if judged is not None:
        session.config.stash[VERDICT] = judged
        if not judged.ok and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if session.config.stash.get(NODE_FACTORIES, {}):
        import sys

        node = sys.modules.get("harness_testkit.adapters.node")
        if node is not None:
            node.close_hosts()
    targets = session.config.stash.get(SANDBOX_TARGETS, {})
    owned = [sandbox.provider for sandbox, _name, mine in targets.values() if mine]
    if owned:
        from harness_testkit.conformance import close_sandbox_provider

        backend = option_value(session.config, "backend") or "asyncio"
        for provider in owned:
            close_sandbox_provider(provider, backend)


def _relative(config: pytest.Config, path: str) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else Path(config.rootpath) / candidate
