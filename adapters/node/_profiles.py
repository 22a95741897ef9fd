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
        },
        model="anthropic/claude-sonnet-4-5",
        protocol="anthropic",
    ),
    capabilities=AdapterCapabilities(
        builtin_tool_approvals=True,
        builtin_tool_filtering=True,
        # Its session has doCompact (pi's own compaction). Its prompt control has
        # submitUserMessage too, but steering stays undeclared: see the deviation of
        # capability.steering below.
        manual_compaction=True,
        resume=True,
        continuation="lossy",
        scripting=True,
        # Scripted turns take well under a second; a hang is found in 30 s, not 60, with
        # room left for a loaded CI machine.
        turn_timeout=30.0,
        # What the gate may leave unverified, and why (docs/node-adapters.md).
        unsupported={
            "steering": "undeclared on purpose: a scripted model cannot hold its reply "
            "for the user's message reliably (see the capability.steering finding)",
            "json_response_format": "not declared for pi; capability.json-response-format "
            "checks that it is refused",
            "scripted.questions": "pi's built-in table has no askUserQuestions",
            "scripted.compaction-once": "pi reports no compaction under the check's "
            "scripted context budget (it compacts by its own context window)",
        },
    ),
    # Findings about @ai-sdk/harness-pi 1.0.123 (docs/node-adapters.md has each with its
    # replay command; `python -m scripts.node_findings npm:@ai-sdk/harness-pi@1.0.123`
    # rewrites the bundles). Two are limits of scripting a real runtime, not pi's.
    deviations={
        "capability.manual-compaction": (
            "finding (ADAPTER-039): pi's doCompact on a session with nothing in it throws a "
            "plain Error 'Nothing to compact (session too small)', neither compacting nor "
            "refusing with HarnessCapabilityUnsupportedError"
        ),
        "lifecycle.start-validates-states": (
            "finding (ADAPTER-059): createPi's doStart reads `(continueFrom ?? resumeFrom)"
            ".data` and never checks the state's harnessId or specificationVersion, so it "
            "starts from another harness's state"
        ),
        "scripted.tool-merging": (
            "finding (ADAPTER-044): a host tool that shadows a built-in name (allowed, "
            "MERGE-013) is emitted by pi as `providerExecuted: true` and then waits for a "
            "host result the agent never sends (provider-executed calls are not "
            "dispatched), so the turn never ends"
        ),
        "scripted.emission-equals-script": (
            "finding (HOSTTOOL-007): a host tool result submitted with isError: true comes "
            "back from pi as a tool-result without isError"
        ),
        "scripted.permission-modes": (
            "finding (STREAM-013): pi asks for the approvals of a step's gated built-ins one "
            "at a time; the second request comes only after the first is answered, in the "
            "continued slice, where the call is unknown (notes 5.3.2), so the turn fails and "
            "pi reports the remaining calls 'Pi session stopped'"
        ),
        "scripted.approval-machine": (
            "finding (ADAPTER-044): with several built-in approvals answered across slices "
            "the turn does not settle within the turn timeout; the same one-at-a-time "
            "approval requests as scripted.permission-modes are the likely cause (not "
            "isolated further)"
        ),
        "scripted.host-approvals": (
            "finding (ADAPTER-044): doSuspendTurn with host calls awaiting approval records "
            "them as failed ('Pi session stopped'), emits an error part 'This operation was "
            "aborted', and the turn continued from the state never settles"
        ),
        "capability.steering": (
            "declared on purpose (ADAPTER-010): pi's prompt control offers "
            "submitUserMessage, but the kit cannot judge steering through a scripted "
            "model reliably (the model must hold its reply until the user's message, and "
            "scripted.steering passed or hung depending on the hold and the turn limit), "
            "so steering is left undeclared and scripted.steering is skipped"
        ),
        "scripted.visible-writes": (
            "finding (STREAM-018): pi reports a file-change part for the file its own "
            "visible write/edit call wrote (its write tool calls onFileChange)"
        ),
        "scripted.dynamic-parts": (
            "scripting limit: the check scripts files changing with no tool call; a model "
            "reply cannot cause that in a real runtime, so the served script leaves them out"
        ),
        "scripted.runtime-crash": (
            "scripting limit: the check scripts a runtime crash at a stream position; a "
            "model endpoint cannot crash the runtime, so the served script leaves it out"
        ),
    },
)

#: The official adapters the kit has a profile for, by npm package name.
OFFICIAL_PROFILES: Mapping[str, OfficialProfile] = {PI.package: PI}


def profile_for(package: str | None) -> OfficialProfile | None:
    """The profile of ``package``, if it is an official adapter the kit knows."""
    return OFFICIAL_PROFILES.get(package or "")
