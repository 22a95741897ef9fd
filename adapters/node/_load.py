"""``check npm:NAME@VERSION`` and ``check ./folder#export``: a Node adapter as an ``AdapterTarget``."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_testkit.conformance import AdapterCapabilities, AdapterTarget, resolve_capabilities
from harness_testkit.spec import HostSetupError

from ._install import parse_node_target
from ._profiles import profile_for
from ._target import EndpointWiring, NodeAdapterHost, SandboxNeeds, make_factory, register

__all__ = ["load_node_target", "read_settings"]


def read_settings(path: str | Path) -> dict[str, Any]:
    """Read a settings file: the JSON object handed to the adapter's factory.

    Raises:
        HostSetupError: the file cannot be read or is not a JSON object.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise HostSetupError(f"cannot read settings file {file}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise HostSetupError(f"{file}:{error.lineno}: invalid JSON: {error.msg}") from None
    if not isinstance(data, dict):
        raise HostSetupError(
            f"{file}: a settings file is a JSON object (the factory's settings), not "
            f"{type(data).__name__}"
        )
    return data


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_node_target(
    spec: str,
    *,
    settings: Mapping[str, Any] | None = None,
    capabilities: AdapterCapabilities | None = None,
    model: str | None = None,
    faults: Sequence[str] = (),
) -> AdapterTarget:
    """The suite's target for a Node adapter: its host starts on first use.

    For an official adapter the kit has a profile for (``npm:@ai-sdk/harness-pi@...``), the
    profile supplies the factory export, the wiring to the scripted model endpoint, the
    capabilities and the known deviations; ``settings`` are merged over its wiring. For
    any other adapter, ``settings`` go to its factory as they are, and strings holding
    ``{{endpoint.baseUrl}}``, ``{{endpoint.openaiBaseUrl}}`` or ``{{endpoint.apiKey}}``
    point it at the endpoint (which turns the scripting extension on).

    Raises:
        HostSetupError: a malformed target, or npm/Node/the package unavailable.
    """
    target = parse_node_target(spec)
    profile = profile_for(target.name, target.version) if target.kind == "npm" else None
    given = dict(settings or {})
    wiring: EndpointWiring | None = None
    declared: AdapterCapabilities | None
    expectations = None
    minimum_node: tuple[int, int, int] = (20, 0, 0)
    sandbox = SandboxNeeds()
    if profile is not None:
        if target.export is None:
            target = type(target)(**{**target.__dict__, "export": profile.export})
        wiring = dataclasses.replace(
            profile.wiring,
            template=_merge(profile.wiring.template, given),
            model=model or profile.wiring.model,
        )
        given = {}
        declared = capabilities or profile.capabilities
        expectations = profile.expectations
        minimum_node = profile.minimum_node
        sandbox = profile.sandbox
    else:
        if EndpointWiring.uses_endpoint(given):
            wiring = EndpointWiring(template=given, model=model)
            given = {}
        declared = capabilities
    host = register(
        NodeAdapterHost(
            target,
            settings=given,
            wiring=wiring,
            faults=tuple(faults),
            minimum_node=minimum_node,
            sandbox=sandbox,
        )
    )
    factory = make_factory(host)
    origin = (
        "given"
        if capabilities is not None
        else (
            f"the kit's profile of {target.name}"
            if profile is not None
            else "none (inferred from the adapter, else defaults)"
        )
    )
    resolved = resolve_capabilities(factory, declared, origin=origin)
    # Declared on the factory too, as a Python factory declares them, so the pytest plugin
    # (which takes a factory) judges the target as the CLI does.
    factory.capabilities = resolved.capabilities  # type: ignore[attr-defined]
    factory.expectations = expectations  # type: ignore[attr-defined]
    return AdapterTarget(
        factory=factory,
        capabilities=resolved.capabilities,
        name=spec,
        expectations=expectations,
        # A worker process of `check --jobs N` loads the target again (its own host).
        recipe=functools.partial(
            load_node_target,
            spec,
            settings=settings,
            capabilities=capabilities,
            model=model,
            faults=tuple(faults),
        ),
    )
