"""The numbered normative requirement catalogue of harness-v1 and its loader.

The catalogue (``requirements.yaml``, shipped next to this module) turns the behavioural
notes on harness-v1 into stable, individually testable statements such as ``FILTER-007``.
Every conformance check, report line and coverage gate refers to requirements by id, so
the ids never change meaning once published: a requirement that is withdrawn keeps its
id retired rather than reused.

Each requirement says who it binds (the adapter under test, the reference agent, a sandbox
provider or the kit itself), how strongly (MUST / SHOULD / MAY), where it comes from (a
rule number of ``harness-v1-notes.md``, a section of ``adapters-and-sandboxes.md``, or a
project decision) and how it can be checked. Requirements that settle an ambiguity of the
upstream specification carry the decision text.

Typical use::

    from harness_testkit.spec import load_requirements

    catalogue = load_requirements()
    requirement = catalogue.get("FILTER-007")
    adapter_musts = catalogue.filter(subject="adapter", level="MUST")

The loader validates the whole file when it is first read (ids unique and well formed,
id prefixes matching areas, dependencies resolvable, decisions present exactly where the
source is a decision) and raises :class:`RequirementCatalogueError` naming the offending
requirement and the fix.
"""

from __future__ import annotations

import difflib
import functools
import re
from enum import StrEnum
from importlib.resources import files
from pathlib import Path
from typing import Final, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._errors import HarnessUsageError

__all__ = [
    "AREAS",
    "CATALOGUE_FILE_NAME",
    "Checkability",
    "Requirement",
    "RequirementCatalogue",
    "RequirementCatalogueError",
    "RequirementLevel",
    "Subject",
    "load_requirements",
    "parse_requirements",
]

CATALOGUE_FILE_NAME: Final = "requirements.yaml"
"""File name of the catalogue, shipped inside the ``harness_testkit.spec`` package."""

AREAS: Final[tuple[str, ...]] = (
    "ADAPTER",
    "TOOLSPEC",
    "STREAM",
    "TRANSLATE",
    "MERGE",
    "FILTER",
    "APPROVAL",
    "HOSTTOOL",
    "SESSION",
    "LIFECYCLE",
    "STOP",
    "CONTEXT",
    "RESULT",
    "PROMPT",
    "ERROR",
    "SANDBOX",
    "BOOTSTRAP",
    "DECISION",
    "HOST",
)
"""The documented area codes, in catalogue order (the order of the notes' sections)."""

_ID_PATTERN: Final = re.compile(r"^[A-Z]+-\d{3}$")
# One reference inside ``source``: a notes rule ("4.7"), a section of the sandbox notes
# ("sandboxes 1.1"), an ambiguity of the notes' list ("ambiguity 24"), one of the
# project decisions ("decision 1") or the project issue that decided how the kit itself
# behaves ("issue 14": the gate's exit codes, bounded inputs), where no rule applies.
_SOURCE_REFERENCE_PATTERN: Final = re.compile(
    r"^(?:\d+(?:\.\d+)+|sandboxes \d+(?:\.\d+)*|ambiguity \d+|decision \d+|issue \d+)$"
)
_DECISION_PREFIXES: Final = ("ambiguity", "decision", "issue")
_EnumT = TypeVar("_EnumT", bound=StrEnum)


class RequirementCatalogueError(HarnessUsageError):
    """Raised when ``requirements.yaml`` (or data given to the parser) is malformed.

    You see it when the catalogue is loaded: the message names the offending
    requirement id (or its position when it has no usable id) and says how to fix it.
    """

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "RequirementCatalogueError"


class RequirementLevel(StrEnum):
    """How strongly a requirement binds its subject (RFC 2119 keywords)."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Checkability(StrEnum):
    """How a requirement can be checked, and therefore which suite checks it."""

    BLACK_BOX = "black-box"
    """Observable on any adapter driven with plain prompts through the reference agent."""
    SCRIPTED = "scripted"
    """Needs an adapter implementing the kit's scripting extension (the test controls
    exactly what the runtime emits)."""
    AGENT = "agent"
    """Concerns the reference agent or another part of the kit; checked by the kit's own
    tests."""
    SANDBOX = "sandbox"
    """Checked by the sandbox-provider suite."""


class Subject(StrEnum):
    """Who a requirement binds."""

    ADAPTER = "adapter"
    AGENT = "agent"
    SANDBOX = "sandbox"
    KIT = "kit"


class Requirement(BaseModel):
    """One numbered, testable statement of the harness-v1 contract.

    Attributes:
        id: Stable identifier ``AREA-NNN`` (e.g. ``FILTER-007``).
        level: MUST, SHOULD or MAY.
        area: Area code; always equal to the id prefix and one of :data:`AREAS`.
        statement: One present-tense sentence saying who must do what.
        source: Comma-separated references: notes rule numbers (``"4.8, 4.10"``),
            ``"sandboxes 1.1"``, ``"ambiguity 24"``, ``"decision 1"`` or ``"issue 14"``
            (a decision of the project's issue tracker about the kit itself).
        subject: Who the requirement binds.
        checkability: How (and by which suite) it can be checked.
        depends_on: Ids that must hold for this requirement to be meaningful; when one
            of them fails, this one is reported as blocked instead of failed.
        decision: The project's decision, present exactly when ``source`` starts with
            ``ambiguity``, ``decision`` or ``issue``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    id: str
    level: RequirementLevel
    area: str
    statement: str = Field(min_length=1)
    source: str = Field(min_length=1)
    subject: Subject
    checkability: Checkability
    depends_on: tuple[str, ...] = ()
    decision: str | None = None

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID_PATTERN.match(value):
            raise ValueError(
                f"id {value!r} is malformed; use AREA-NNN with an upper-case area code "
                "and exactly three digits, e.g. 'FILTER-007'"
            )
        return value

    @field_validator("area")
    @classmethod
    def _check_area(cls, value: str) -> str:
        if value not in AREAS:
            raise ValueError(
                f"area {value!r} is not a documented area code; use one of {', '.join(AREAS)}"
            )
        return value

    @field_validator("source")
    @classmethod
    def _check_source(cls, value: str) -> str:
        for reference in _split_source(value):
            if not _SOURCE_REFERENCE_PATTERN.match(reference):
                raise ValueError(
                    f"source reference {reference!r} is malformed; write a notes rule "
                    "number ('4.7'), 'sandboxes 1.1', 'ambiguity N' or 'decision N', "
                    "separated by commas"
                )
        return value

    @property
    def source_references(self) -> tuple[str, ...]:
        """The individual references of :attr:`source`, in order."""
        return _split_source(self.source)

    @property
    def is_decision(self) -> bool:
        """Whether the requirement records a project decision (on an ambiguity or not)."""
        return self.source.startswith(_DECISION_PREFIXES)


class RequirementCatalogue(BaseModel):
    """The whole catalogue: versions plus the ordered, validated requirements.

    Attributes:
        catalogue_version: Version of the catalogue's own format and numbering.
        specification_version: The specification described (``"harness-v1"``).
        requirements: Every requirement, in file order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    catalogue_version: int
    specification_version: str
    requirements: tuple[Requirement, ...]

    def get(self, requirement_id: str) -> Requirement:
        """Return the requirement with the given id.

        Args:
            requirement_id: An id such as ``"FILTER-007"``.

        Returns:
            The matching requirement.

        Raises:
            KeyError: No requirement has that id; the message lists the closest ids.
        """
        for requirement in self.requirements:
            if requirement.id == requirement_id:
                return requirement
        raise KeyError(self._unknown_id_message(requirement_id))

    def filter(
        self,
        area: str | None = None,
        level: RequirementLevel | str | None = None,
        subject: Subject | str | None = None,
        checkability: Checkability | str | None = None,
    ) -> list[Requirement]:
        """Return the requirements matching every given criterion, in catalogue order.

        Args:
            area: An area code such as ``"FILTER"``.
            level: ``"MUST"``, ``"SHOULD"`` or ``"MAY"`` (or the enum member).
            subject: ``"adapter"``, ``"agent"``, ``"sandbox"`` or ``"kit"``.
            checkability: ``"black-box"``, ``"scripted"``, ``"agent"`` or ``"sandbox"``.

        Returns:
            The matching requirements (all of them when no criterion is given).

        Raises:
            ValueError: A criterion is not one of the documented values, which would
                otherwise silently match nothing.
        """
        if area is not None and area not in AREAS:
            raise ValueError(f"Unknown area {area!r}; use one of {', '.join(AREAS)}.")
        wanted_level = None if level is None else _coerce(RequirementLevel, level, "level")
        wanted_subject = None if subject is None else _coerce(Subject, subject, "subject")
        wanted_checkability = (
            None if checkability is None else _coerce(Checkability, checkability, "checkability")
        )
        return [
            requirement
            for requirement in self.requirements
            if (area is None or requirement.area == area)
            and (wanted_level is None or requirement.level is wanted_level)
            and (wanted_subject is None or requirement.subject is wanted_subject)
            and (wanted_checkability is None or requirement.checkability is wanted_checkability)
        ]

    def areas(self) -> list[str]:
        """Return the area codes used by the catalogue, in the documented order."""
        used = {requirement.area for requirement in self.requirements}
        return [area for area in AREAS if area in used]

    def _unknown_id_message(self, requirement_id: str) -> str:
        known = [requirement.id for requirement in self.requirements]
        near = difflib.get_close_matches(requirement_id.upper(), known, n=5, cutoff=0.6)
        prefix = requirement_id.split("-", 1)[0].upper()
        if not near and prefix in AREAS:
            near = [known_id for known_id in known if known_id.startswith(f"{prefix}-")][:5]
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        return (
            f"No requirement with id {requirement_id!r} in the harness-v1 catalogue "
            f"({len(known)} requirements).{hint}"
        )


def parse_requirements(data: object) -> RequirementCatalogue:
    """Validate already-parsed catalogue data (the YAML document as Python objects).

    Args:
        data: A mapping with ``catalogue_version``, ``specification_version`` and a
            ``requirements`` list.

    Returns:
        The validated catalogue.

    Raises:
        RequirementCatalogueError: The data is malformed; the message names the
            offending requirement and says how to fix it.
    """
    if not isinstance(data, dict):
        raise RequirementCatalogueError(
            "The requirement catalogue must be a mapping with the keys catalogue_version, "
            f"specification_version and requirements; got {type(data).__name__}."
        )
    entries = data.get("requirements")
    if not isinstance(entries, list) or not entries:
        raise RequirementCatalogueError(
            "The requirement catalogue needs a non-empty 'requirements' list."
        )
    requirements = tuple(_parse_entry(index, entry) for index, entry in enumerate(entries))
    _check_cross_references(requirements)
    header = {key: value for key, value in data.items() if key != "requirements"}
    try:
        return RequirementCatalogue.model_validate({**header, "requirements": requirements})
    except ValidationError as error:
        raise RequirementCatalogueError(
            f"The requirement catalogue header is invalid: {_describe(error)}. It needs an "
            "integer catalogue_version and a string specification_version, and no other "
            "top-level keys."
        ) from error


@functools.cache
def load_requirements() -> RequirementCatalogue:
    """Load and validate the catalogue shipped with the package (cached).

    Returns:
        The validated catalogue; the same object on every call.

    Raises:
        RequirementCatalogueError: The shipped file is malformed.
    """
    text = _read_catalogue_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise RequirementCatalogueError(
            f"{CATALOGUE_FILE_NAME} is not valid YAML: {error}. Quote statements that "
            "contain ':' or backticks, or write them as block scalars."
        ) from error
    return parse_requirements(data)


def _read_catalogue_text() -> str:
    package = __package__ or ""
    if package:
        return files(package).joinpath(CATALOGUE_FILE_NAME).read_text(encoding="utf-8")
    # Imported as a loose module (no package): the file still sits next to it.
    return Path(__file__).with_name(CATALOGUE_FILE_NAME).read_text(encoding="utf-8")


def _parse_entry(index: int, entry: object) -> Requirement:
    label = f"entry #{index + 1}"
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        label = f"requirement {entry['id']}"
    try:
        requirement = Requirement.model_validate(entry)
    except ValidationError as error:
        raise RequirementCatalogueError(
            f"In {CATALOGUE_FILE_NAME}, {label} is invalid: {_describe(error)}."
        ) from error
    prefix = requirement.id.split("-", 1)[0]
    if prefix != requirement.area:
        raise RequirementCatalogueError(
            f"Requirement {requirement.id}: the id prefix {prefix!r} differs from its area "
            f"{requirement.area!r}; renumber it as {requirement.area}-NNN or correct the area."
        )
    if requirement.is_decision and not requirement.decision:
        raise RequirementCatalogueError(
            f"Requirement {requirement.id}: its source {requirement.source!r} is a decision, "
            "so it needs a non-empty 'decision' text stating what the project decided."
        )
    if not requirement.is_decision and requirement.decision is not None:
        raise RequirementCatalogueError(
            f"Requirement {requirement.id}: it has a 'decision' but its source "
            f"{requirement.source!r} does not start with 'ambiguity' or 'decision'; cite the "
            "ambiguity or project decision first in 'source', or remove the decision text."
        )
    return requirement


def _check_cross_references(requirements: tuple[Requirement, ...]) -> None:
    seen: set[str] = set()
    for requirement in requirements:
        if requirement.id in seen:
            raise RequirementCatalogueError(
                f"Requirement {requirement.id} is defined twice; ids must be unique, so "
                f"give the second one the next free {requirement.area}-NNN number."
            )
        seen.add(requirement.id)
    for requirement in requirements:
        for dependency in requirement.depends_on:
            if dependency == requirement.id:
                raise RequirementCatalogueError(
                    f"Requirement {requirement.id} depends on itself; remove it from depends_on."
                )
            if dependency not in seen:
                raise RequirementCatalogueError(
                    f"Requirement {requirement.id} depends on {dependency!r}, which is not in "
                    "the catalogue; fix the id or remove it from depends_on."
                )


def _split_source(source: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in source.split(",") if part.strip())


def _describe(error: ValidationError) -> str:
    problems: list[str] = []
    for detail in error.errors():
        location = ".".join(str(part) for part in detail["loc"]) or "(root)"
        problems.append(f"{location}: {detail['msg']}")
    return "; ".join(problems)


def _coerce(enum_type: type[_EnumT], value: str, what: str) -> _EnumT:
    try:
        return enum_type(value)
    except ValueError:
        valid = ", ".join(member.value for member in enum_type)
        raise ValueError(f"Unknown {what} {value!r}; use one of {valid}.") from None
