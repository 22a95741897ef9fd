"""The typed capability declaration of an adapter under test.

Defaults are conservative: an adapter that declares nothing is only held to what every
adapter must do. Declaring a capability is a promise the suite checks (capability
honesty): a declared capability may not fail, and an undeclared one must be refused
with ``HarnessCapabilityUnsupportedError`` from the method that needs it, never
silently succeed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CAPABILITY_NAMES", "AdapterCapabilities"]


class AdapterCapabilities(BaseModel):
    """What the adapter under test claims to support.

    Attributes:
        builtin_tool_approvals: Runtime-native approvals for built-ins (must equal the
            adapter's ``supports_builtin_tool_approvals``).
        builtin_tool_filtering: Native built-in filtering (must equal
            ``supports_builtin_tool_filtering``).
        manual_compaction: ``do_compact`` works and a ``compaction`` part follows.
        steering: Prompt controls offer ``submit_user_message``.
        json_response_format: JSON response formats are honoured.
        resume: Sessions can be resumed from ``do_detach``/``do_stop`` states and turns
            continued from ``do_suspend_turn`` states, in a new adapter session.
        continuation: How a continued turn replays: ``lossless`` (no gap, no duplicate)
            or ``lossy`` (the in-flight step is recomputed); ``None`` when unknown.
        scripting: The adapter implements the kit's scripting extension
            (``set_script`` and ``observations``), enabling the deep property suites.
        emission_differences: What a lossy adapter cannot carry over from its model
            (``scripted.emission-equals-script`` ignores these): ``reasoning`` (its
            runtime hides or merges reasoning blocks), ``usage`` (it reports estimated
            step usage).
        prompts: Prompts the black-box checks may send.
        turn_timeout: Seconds one turn may take before the suite calls it hung.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    builtin_tool_approvals: bool = False
    builtin_tool_filtering: bool = False
    manual_compaction: bool = False
    steering: bool = False
    json_response_format: bool = False
    resume: bool = False
    continuation: Literal["lossless", "lossy"] | None = None
    scripting: bool = False
    emission_differences: tuple[Literal["reasoning", "usage"], ...] = ()
    prompts: tuple[str, ...] = Field(default=("Reply with a short greeting.",), min_length=1)
    turn_timeout: float = Field(default=30.0, gt=0)


#: Capability names a check may require (every name a check lists must be one of these).
CAPABILITY_NAMES: frozenset[str] = frozenset(
    name
    for name, field in AdapterCapabilities.model_fields.items()
    if field.annotation in (bool, "bool")
) | {"continuation"}
