"""What the kit knows about the official adapters: how to wire them, what they support.

A profile is the set-up an adapter author would otherwise write by hand: the factory to
call, how to point the adapter at the kit's scripted model endpoint, the capabilities it
declares honestly, and the checks it fails on purpose (strict xfail, each with its
reason; one that starts passing fails the run, so a fix upstream is noticed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness_testkit.conformance import AdapterCapabilities, Expectations

from ._target import EndpointWiring

__all__ = ["OFFICIAL_PROFILES", "OfficialProfile", "profile_for"]


@dataclass(frozen=True)
class OfficialProfile:
    """How the kit runs one official adapter package.

    Attributes:
        package: The npm package name.
        export: Its factory export.
        wiring: How to point it at the scripted endpoint.
        capabilities: What it supports, declared.
        deviations: Known failures, by check id, with the reason (strict xfail).
        minimum_node: The oldest Node it runs on.
    """

    package: str
    export: str
    wiring: EndpointWiring
    capabilities: AdapterCapabilities
    deviations: Mapping[str, str] = field(default_factory=dict)
    minimum_node: tuple[int, int, int] = (22, 19, 0)

    @property
    def expectations(self) -> Expectations:
        """The deviations as the runner's strict xfails."""
        return Expectations(xfail=dict(self.deviations))


PI = OfficialProfile(
    package="@ai-sdk/harness-pi",
    export="createPi",
    # pi takes record-shaped auth and ignores process.env and auth.json for it; the model
    # string's provider prefix picks the protocol (anthropic/...: Anthropic Messages).
    wiring=EndpointWiring(
        template={
            "auth": {
                "ANTHROPIC_API_KEY": "{{endpoint.apiKey}}",
                "ANTHROPIC_BASE_URL": "{{endpoint.baseUrl}}",
            },
            # Every request restores from the persisted state, as a stateless
            # deployment does: a resumed session never borrows a live one.
            "reattachInProcess": False,
        },
        model="anthropic/claude-sonnet-4-5",
        protocol="anthropic",
    ),
    capabilities=AdapterCapabilities(
        builtin_tool_approvals=True,
        builtin_tool_filtering=True,
        # Its prompt control has submitUserMessage (a steering message) and its session
        # doCompact (pi's own compaction).
        steering=True,
        manual_compaction=True,
        resume=True,
        continuation="lossy",
        scripting=True,
        # Scripted turns take well under a second; a hang is found in 20 s, not 60.
        turn_timeout=20.0,
    ),
)

#: The official adapters the kit has a profile for, by npm package name.
OFFICIAL_PROFILES: Mapping[str, OfficialProfile] = {PI.package: PI}


def profile_for(package: str | None) -> OfficialProfile | None:
    """The profile of ``package``, if it is an official adapter the kit knows."""
    return OFFICIAL_PROFILES.get(package or "")
