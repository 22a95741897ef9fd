"""The typed capability declaration of an adapter under test.

Defaults are conservative: an adapter that declares nothing is only held to what every
adapter must do. Declaring a capability is a promise the suite checks (capability
honesty): a declared capability may not fail, and an undeclared one must be refused
with ``HarnessCapabilityUnsupportedError`` from the method that needs it, never
silently succeed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness_testkit.spec import YamlError, load_yaml

__all__ = [
    "CAPABILITY_NAMES",
    "INFERABLE_CAPABILITIES",
    "AdapterCapabilities",
    "CapabilityResolution",
    "capability_lines",
    "is_scriptable",
    "resolve_capabilities",
    "shipped_capabilities_schema",
]


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
        unsupported: What the adapter does not offer, on purpose, and why: a capability
            name (``steering``, ``scripting``, ...) or a check id whose feature the
            adapter lacks (``scripted.questions``: no askUserQuestions built-in) ->
            the reason. The gate accepts MUSTs left unverified only for what is listed
            here (or in a baseline); an undeclared gap fails the run.
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
    unsupported: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unsupported_is_consistent(self) -> AdapterCapabilities:
        for name, reason in self.unsupported.items():
            if name not in CAPABILITY_NAMES and not _CHECK_ID.fullmatch(name):
                raise ValueError(
                    f"unsupported: {name!r} is neither a capability "
                    f"({', '.join(sorted(CAPABILITY_NAMES))}) nor a check id (area.name)"
                )
            if not reason.strip():
                raise ValueError(f"unsupported: {name!r} needs a reason (why it is not offered)")
            if name in CAPABILITY_NAMES and getattr(self, name) not in (False, None):
                raise ValueError(
                    f"unsupported: {name!r} is declared {json.dumps(getattr(self, name))} "
                    "above; a capability is either offered or listed as unsupported"
                )
        return self

    @classmethod
    def json_schema_document(cls) -> dict[str, Any]:
        """The JSON Schema of capability files (shipped as ``schemas/capabilities.schema.json``)."""
        schema = cls.model_json_schema(mode="validation")
        schema["properties"]["$schema"] = {
            "type": "string",
            "description": "Where this schema is (editors use it to validate the file).",
        }
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$comment": "Generated by `harness-testkit schemas`; do not edit.",
            **schema,
            "title": "harness-testkit adapter capabilities",
        }

    @classmethod
    def from_file(cls, path: str | Path) -> AdapterCapabilities:
        """Read a declaration from a YAML 1.2 or JSON file.

        The file is a mapping of the fields above (see ``capabilities.schema.json``);
        fields it leaves out are not declared (inferred from the adapter where it shows
        them, else the conservative defaults).

        Raises:
            ValueError: naming the file, the line (for YAML syntax) or the field, and
                what is wrong.
        """
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as error:
            raise ValueError(f"cannot read capability file {file}: {error.strerror}") from None
        try:
            data = json.loads(text) if file.suffix == ".json" else load_yaml(text, source=str(file))
        except json.JSONDecodeError as error:
            raise ValueError(f"{file}:{error.lineno}: invalid JSON: {error.msg}") from None
        except YamlError as error:
            raise ValueError(str(error)) from None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(
                f"{file}: a capability file is a mapping of capability names to values, "
                f"not {type(data).__name__}"
            )
        data.pop("$schema", None)
        try:
            # Strict, as the JSON Schema is: `resume: "yes"` is a string, not a boolean.
            return cls.model_validate_json(json.dumps(data), strict=True)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or '(top level)'}: {item['msg']}"
                for item in error.errors()
            )
            raise ValueError(
                f"{file}: {problems} (see `harness-testkit schemas` for the JSON Schema)"
            ) from None


#: Capability names a check may require (every name a check lists must be one of these).
CAPABILITY_NAMES: frozenset[str] = frozenset(
    name
    for name, field in AdapterCapabilities.model_fields.items()
    if field.annotation in (bool, "bool")
) | {"continuation"}


#: The shape of a check id (``area.name``) an ``unsupported`` entry may name.
_CHECK_ID = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9][a-z0-9.-]*")


#: Capabilities the kit can read off an adapter object (the rest must be declared).
INFERABLE_CAPABILITIES: tuple[str, ...] = (
    "builtin_tool_approvals",
    "builtin_tool_filtering",
    "scripting",
)


def is_scriptable(adapter: object) -> bool:
    """Whether ``adapter`` implements the kit's scripting extension.

    That is a callable ``set_script`` and an ``observations`` attribute (as
    :class:`~harness_testkit.fake_harness.FakeHarness` has); the scripted tier needs it.
    """
    return callable(getattr(adapter, "set_script", None)) and hasattr(adapter, "observations")


def _inferred(adapter: object) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, attribute in (
        ("builtin_tool_approvals", "supports_builtin_tool_approvals"),
        ("builtin_tool_filtering", "supports_builtin_tool_filtering"),
    ):
        value = getattr(adapter, attribute, None)
        if isinstance(value, bool):
            found[name] = value
    found["scripting"] = is_scriptable(adapter)
    return found


@dataclass(frozen=True)
class CapabilityResolution:
    """The effective capabilities of an adapter and where each value came from.

    Attributes:
        capabilities: The effective declaration (declared values, else inferred ones,
            else the defaults); its ``model_fields_set`` is what the author declared.
        declared: The capability names the author declared.
        inferred: What the adapter object shows (``INFERABLE_CAPABILITIES``).
        builtins: The keys of the adapter's built-in table.
        origin: Where the declaration came from (a file, the factory's ``capabilities``
            attribute, the pytest fixture, or ``none``).
        problem: Why nothing could be inferred (the factory raised), else ``None``.
    """

    capabilities: AdapterCapabilities
    declared: frozenset[str]
    inferred: Mapping[str, Any] = field(default_factory=dict)
    builtins: tuple[str, ...] = ()
    origin: str = "none"
    problem: str | None = None

    def source_of(self, name: str) -> str:
        """``declared``, ``inferred`` or ``default``."""
        if name in self.declared:
            return "declared"
        return "inferred" if name in self.inferred else "default"

    @property
    def mismatches(self) -> list[str]:
        """One sentence per capability whose declared value differs from the inferred one."""
        found = []
        for name in INFERABLE_CAPABILITIES:
            if name not in self.declared or name not in self.inferred:
                continue
            declared, shown = getattr(self.capabilities, name), self.inferred[name]
            # Declaring `scripting: false` for a scriptable adapter only opts out of the
            # scripted tier; claiming it without the extension is a mismatch.
            if declared != shown and not (name == "scripting" and not declared):
                found.append(
                    f"`{name}` is declared {json.dumps(declared)} but the adapter shows "
                    f"{json.dumps(shown)}"
                )
        return found

    @property
    def assumed(self) -> list[str]:
        """Capabilities nobody declared (inferred or default): what the kit assumed."""
        return [name for name in CAPABILITY_NAMES if name not in self.declared]

    def describe(self) -> list[str]:
        """Lines for the top of a report: every capability, its value and its source."""
        lines = [f"capabilities (declaration: {self.origin}):"]
        for name in sorted(CAPABILITY_NAMES):
            value = getattr(self.capabilities, name)
            lines.append(f"  {name} = {json.dumps(value)} ({self.source_of(name)})")
        if self.builtins:
            lines.append(f"  built-in tools: {', '.join(self.builtins)}")
        for mismatch in self.mismatches:
            lines.append(f"  MISMATCH: {mismatch}")
        if self.problem:
            lines.append(f"  not inferred: {self.problem}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The JSON form reports carry (``capabilities`` block)."""
        return {
            "origin": self.origin,
            "effective": self.capabilities.model_dump(mode="json"),
            "sources": {name: self.source_of(name) for name in sorted(CAPABILITY_NAMES)},
            "inferred": dict(self.inferred),
            "builtins": list(self.builtins),
            "mismatches": self.mismatches,
            **({"problem": self.problem} if self.problem else {}),
        }


def resolve_capabilities(
    factory: Callable[[], object],
    declared: AdapterCapabilities | Mapping[str, Any] | None,
    *,
    origin: str,
) -> CapabilityResolution:
    """Combine a declaration with what the adapter shows.

    Declared values win (a declared value that differs from the adapter's is a
    mismatch, reported, and the ``adapter.capability-flags`` check fails on it);
    undeclared inferable ones are read off a fresh adapter; the rest keep their
    conservative defaults.

    Args:
        factory: Returns a fresh adapter (called once; an exception is reported).
        declared: The author's declaration, if any.
        origin: Where it came from, for the report.
    """
    if declared is None:
        base = AdapterCapabilities()
    elif isinstance(declared, AdapterCapabilities):
        base = declared
    else:
        base = AdapterCapabilities.model_validate(dict(declared))
    names = frozenset(base.model_fields_set)
    problem = None
    inferred: dict[str, Any] = {}
    builtins: tuple[str, ...] = ()
    try:
        adapter = factory()
    except Exception as error:  # reported; the checks will meet the same failure
        problem = f"the factory raised {type(error).__name__}: {error}"
    else:
        inferred = _inferred(adapter)
        table = getattr(adapter, "builtin_tools", None)
        if isinstance(table, Mapping):
            builtins = tuple(str(key) for key in table)
    values = {**base.model_dump(), **{k: v for k, v in inferred.items() if k not in names}}
    effective = AdapterCapabilities.model_construct(_fields_set=set(names), **values)
    return CapabilityResolution(
        capabilities=effective,
        declared=names,
        inferred=inferred,
        builtins=builtins,
        origin=origin,
        problem=problem,
    )


def shipped_capabilities_schema() -> Path:
    """Where the wheel keeps ``capabilities.schema.json``."""
    return Path(__file__).with_name("schemas") / "capabilities.schema.json"


def capability_lines(block: Mapping[str, Any] | None, *, bullet: str) -> list[str]:
    """Report lines for a ``capabilities`` block of a JSON report (empty when absent)."""
    if not block:
        return []
    sources = block.get("sources", {})
    effective = block.get("effective", {})
    values = ", ".join(
        f"{name}={json.dumps(effective.get(name))} ({sources[name]})" for name in sorted(sources)
    )
    lines = [f"{bullet}capabilities ({block.get('origin', '?')}): {values}"]
    lines += [f"{bullet}capability MISMATCH: {item}" for item in block.get("mismatches", [])]
    if block.get("problem"):
        lines.append(f"{bullet}capabilities not inferred: {block['problem']}")
    return lines
