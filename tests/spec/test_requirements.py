"""Tests for the numbered requirement catalogue (``spec/requirements.yaml``) and its loader."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness_testkit.spec._requirements import (
    AREAS,
    Checkability,
    Requirement,
    RequirementCatalogue,
    RequirementCatalogueError,
    RequirementLevel,
    Subject,
    load_requirements,
    parse_requirements,
)

DOCUMENTED_AREAS = (
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
AMBIGUITY_COUNT = 34
PROJECT_DECISION_COUNT = 4

# The specification notes live next to the repository (../shared/spec) in a full checkout.
_SHARED_SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec"
_NOTES = _SHARED_SPEC / "harness-v1-notes.md"
_SANDBOX_NOTES = _SHARED_SPEC / "adapters-and-sandboxes.md"


@pytest.fixture(scope="module")
def catalogue() -> RequirementCatalogue:
    return load_requirements()


def _entry(**overrides: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "FILTER-001",
        "level": "MUST",
        "area": "FILTER",
        "statement": "The agent does something testable.",
        "source": "4.1",
        "subject": "agent",
        "checkability": "agent",
    }
    entry.update(overrides)
    return entry


def _document(*entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "catalogue_version": 1,
        "specification_version": "harness-v1",
        "requirements": list(entries),
    }


# -- the shipped catalogue ---------------------------------------------------------------


def test_catalogue_has_at_least_170_requirements(catalogue: RequirementCatalogue) -> None:
    assert len(catalogue.requirements) >= 170


def test_catalogue_header(catalogue: RequirementCatalogue) -> None:
    assert catalogue.catalogue_version == 1
    assert catalogue.specification_version == "harness-v1"


def test_ids_are_unique_and_well_formed(catalogue: RequirementCatalogue) -> None:
    ids = [requirement.id for requirement in catalogue.requirements]
    assert len(ids) == len(set(ids))
    for requirement_id in ids:
        assert re.fullmatch(r"[A-Z]+-\d{3}", requirement_id), requirement_id


def test_ids_are_numbered_consecutively_within_each_area(
    catalogue: RequirementCatalogue,
) -> None:
    for area in catalogue.areas():
        numbers = [int(requirement.id[-3:]) for requirement in catalogue.filter(area=area)]
        assert numbers == list(range(1, len(numbers) + 1)), area


def test_every_area_is_documented_and_matches_the_id(catalogue: RequirementCatalogue) -> None:
    assert tuple(AREAS) == DOCUMENTED_AREAS
    for requirement in catalogue.requirements:
        assert requirement.area in DOCUMENTED_AREAS
        assert requirement.id.startswith(f"{requirement.area}-")


def test_every_area_is_used(catalogue: RequirementCatalogue) -> None:
    assert catalogue.areas() == list(DOCUMENTED_AREAS)


def test_subject_and_checkability_are_consistent(catalogue: RequirementCatalogue) -> None:
    allowed = {
        Subject.ADAPTER: {Checkability.BLACK_BOX, Checkability.SCRIPTED},
        Subject.AGENT: {Checkability.AGENT},
        Subject.SANDBOX: {Checkability.SANDBOX},
        Subject.KIT: {Checkability.AGENT, Checkability.SANDBOX},
    }
    for requirement in catalogue.requirements:
        assert requirement.checkability in allowed[requirement.subject], requirement.id


def test_all_levels_subjects_and_checkabilities_occur(catalogue: RequirementCatalogue) -> None:
    assert {requirement.level for requirement in catalogue.requirements} == set(RequirementLevel)
    assert {requirement.subject for requirement in catalogue.requirements} == set(Subject)
    assert {requirement.checkability for requirement in catalogue.requirements} == set(Checkability)


def test_dependencies_exist_and_are_not_circular(catalogue: RequirementCatalogue) -> None:
    graph = {requirement.id: set(requirement.depends_on) for requirement in catalogue.requirements}
    for requirement_id, dependencies in graph.items():
        assert dependencies <= graph.keys(), requirement_id
    # A dependency cycle would make "blocked" reporting loop forever.
    finished: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in trail, f"dependency cycle: {' -> '.join((*trail, node))}"
        if node in finished:
            return
        for dependency in sorted(graph[node]):
            visit(dependency, (*trail, node))
        finished.add(node)

    for requirement_id in graph:
        visit(requirement_id, ())


def test_decisions_are_present_exactly_for_decision_sources(
    catalogue: RequirementCatalogue,
) -> None:
    for requirement in catalogue.requirements:
        is_decision = requirement.source.startswith(("ambiguity", "decision", "issue"))
        assert (requirement.decision is not None) == is_decision, requirement.id
        if requirement.decision is not None:
            assert requirement.decision.strip(), requirement.id


@pytest.mark.parametrize("number", range(1, AMBIGUITY_COUNT + 1))
def test_every_ambiguity_is_decided(catalogue: RequirementCatalogue, number: int) -> None:
    deciding = [
        requirement
        for requirement in catalogue.requirements
        if f"ambiguity {number}" in requirement.source_references and requirement.decision
    ]
    assert deciding, f"ambiguity {number} has no requirement with a decision"


@pytest.mark.parametrize("number", range(1, PROJECT_DECISION_COUNT + 1))
def test_every_project_decision_is_recorded(catalogue: RequirementCatalogue, number: int) -> None:
    recording = [
        requirement
        for requirement in catalogue.requirements
        if f"decision {number}" in requirement.source_references and requirement.decision
    ]
    assert recording, f"project decision {number} has no requirement with a decision"


def test_statements_are_single_present_tense_sentences(catalogue: RequirementCatalogue) -> None:
    for requirement in catalogue.requirements:
        statement = requirement.statement
        assert statement == statement.strip(), requirement.id
        assert "\n" not in statement, requirement.id
        assert statement[0].isupper() or statement[0] in "`'\"", requirement.id


def _notes_rule_numbers(text: str) -> set[str]:
    return set(re.findall(r"^(\d+(?:\.\d+)+) ", text, flags=re.MULTILINE))


def _numbered_items(text: str, heading: str) -> set[int]:
    section = text.split(heading, 1)[1]
    section = re.split(r"^#{1,2} ", section, maxsplit=1, flags=re.MULTILINE)[0]
    return {int(number) for number in re.findall(r"^(\d+)\. ", section, flags=re.MULTILINE)}


def _sandbox_sections(text: str) -> set[str]:
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)*)\.? ", text, flags=re.MULTILINE))


def test_sources_reference_existing_rules(catalogue: RequirementCatalogue) -> None:
    if not _NOTES.is_file():
        pytest.skip(f"the specification notes are not checked out next to the repo ({_NOTES})")
    notes = _NOTES.read_text(encoding="utf-8")
    rules = _notes_rule_numbers(notes)
    ambiguities = _numbered_items(notes, "## Ambiguities")
    decisions = _numbered_items(notes, "## Project decisions")
    assert ambiguities == set(range(1, AMBIGUITY_COUNT + 1))
    assert decisions == set(range(1, PROJECT_DECISION_COUNT + 1))
    sandbox_sections = (
        _sandbox_sections(_SANDBOX_NOTES.read_text(encoding="utf-8"))
        if _SANDBOX_NOTES.is_file()
        else None
    )
    for requirement in catalogue.requirements:
        for reference in requirement.source_references:
            kind, _, number = reference.partition(" ")
            if kind == "ambiguity":
                assert int(number) in ambiguities, (requirement.id, reference)
            elif kind == "decision":
                assert int(number) in decisions, (requirement.id, reference)
            elif kind == "issue":
                assert int(number) > 0, (requirement.id, reference)
            elif kind == "sandboxes":
                if sandbox_sections is not None:
                    assert number in sandbox_sections, (requirement.id, reference)
            else:
                assert reference in rules, (requirement.id, reference)


# -- query API ---------------------------------------------------------------------------


def test_get_returns_the_requirement(catalogue: RequirementCatalogue) -> None:
    requirement = catalogue.get("FILTER-001")
    assert isinstance(requirement, Requirement)
    assert requirement.area == "FILTER"
    assert requirement.level is RequirementLevel.MUST


def test_get_unknown_id_names_near_ids(catalogue: RequirementCatalogue) -> None:
    with pytest.raises(KeyError) as raised:
        catalogue.get("FILTER-999")
    message = str(raised.value)
    assert "FILTER-999" in message
    assert "Did you mean" in message
    assert "FILTER-" in message.split("Did you mean", 1)[1]


def test_get_unknown_area_still_explains(catalogue: RequirementCatalogue) -> None:
    with pytest.raises(KeyError, match="No requirement with id 'NOPE-001'"):
        catalogue.get("NOPE-001")


def test_filter_by_each_criterion(catalogue: RequirementCatalogue) -> None:
    everything = catalogue.filter()
    assert everything == list(catalogue.requirements)
    filters = catalogue.filter(area="FILTER")
    assert filters
    assert all(requirement.area == "FILTER" for requirement in filters)
    shoulds = catalogue.filter(level="SHOULD")
    assert shoulds
    assert all(requirement.level is RequirementLevel.SHOULD for requirement in shoulds)
    assert catalogue.filter(level=RequirementLevel.SHOULD) == shoulds
    adapters = catalogue.filter(subject="adapter")
    assert adapters
    assert all(requirement.subject is Subject.ADAPTER for requirement in adapters)
    scripted = catalogue.filter(checkability=Checkability.SCRIPTED)
    assert scripted
    assert all(requirement.checkability is Checkability.SCRIPTED for requirement in scripted)


def test_filter_combines_criteria(catalogue: RequirementCatalogue) -> None:
    combined = catalogue.filter(area="STREAM", level="MUST", subject="adapter")
    assert combined
    assert combined == [
        requirement
        for requirement in catalogue.filter(area="STREAM")
        if requirement.level is RequirementLevel.MUST and requirement.subject is Subject.ADAPTER
    ]


@pytest.mark.parametrize(
    "criteria",
    [{"area": "FILTERS"}, {"level": "must"}, {"subject": "host"}, {"checkability": "blackbox"}],
)
def test_filter_rejects_unknown_values(
    catalogue: RequirementCatalogue, criteria: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match="Unknown"):
        catalogue.filter(**criteria)


def test_areas_follow_the_documented_order(catalogue: RequirementCatalogue) -> None:
    areas = catalogue.areas()
    assert areas == sorted(areas, key=DOCUMENTED_AREAS.index)


def test_load_is_cached() -> None:
    assert load_requirements() is load_requirements()


def test_requirements_are_frozen(catalogue: RequirementCatalogue) -> None:
    requirement = catalogue.requirements[0]
    with pytest.raises(ValidationError, match="frozen"):
        requirement.__setattr__("statement", "changed")


# -- validation of malformed catalogues --------------------------------------------------


def test_parse_accepts_a_minimal_document() -> None:
    parsed = parse_requirements(_document(_entry()))
    assert parsed.get("FILTER-001").source_references == ("4.1",)


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        pytest.param([_entry(), _entry()], "FILTER-001 is defined twice", id="duplicate"),
        pytest.param([_entry(id="FILTR-001")], "differs from its area", id="prefix"),
        pytest.param([_entry(id="FILTER-7")], "malformed", id="id-format"),
        pytest.param([_entry(area="FILTERS", id="FILTERS-001")], "documented area", id="area"),
        pytest.param([_entry(depends_on=["FILTER-002"])], "not in the catalogue", id="depends"),
        pytest.param([_entry(depends_on=["FILTER-001"])], "depends on itself", id="self"),
        pytest.param(
            [_entry(source="ambiguity 3")], "needs a non-empty 'decision'", id="no-decision"
        ),
        pytest.param([_entry(decision="Why.")], "does not start with", id="stray-decision"),
        pytest.param([_entry(source="rule 4.1")], "source reference", id="source-format"),
        pytest.param([_entry(level="MUST NOT")], "level", id="level"),
        pytest.param([_entry(checkability="manual")], "checkability", id="checkability"),
        pytest.param([_entry(unknown_key=1)], "unknown_key", id="extra-key"),
    ],
)
def test_parse_rejects_malformed_entries(entries: list[dict[str, Any]], fragment: str) -> None:
    with pytest.raises(RequirementCatalogueError, match=re.escape(fragment)):
        parse_requirements(_document(*copy.deepcopy(entries)))


def test_errors_name_the_offending_requirement() -> None:
    with pytest.raises(RequirementCatalogueError, match="requirement FILTER-002"):
        parse_requirements(_document(_entry(), _entry(id="FILTER-002", level="OPTIONAL")))


@pytest.mark.parametrize(
    "document",
    [None, [], {"requirements": []}, {"catalogue_version": 1, "requirements": "x"}],
)
def test_parse_rejects_malformed_documents(document: object) -> None:
    with pytest.raises(RequirementCatalogueError):
        parse_requirements(document)


def test_parse_rejects_a_bad_header() -> None:
    document = _document(_entry())
    document["catalogue_version"] = "one"
    with pytest.raises(RequirementCatalogueError, match="header"):
        parse_requirements(document)
