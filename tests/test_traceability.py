"""Traceability: every agent-checkable MUST of the catalogue has a tagged test.

Tests name the requirements they verify with ``@pytest.mark.requirement("ID", ...)``
(on the function, in ``pytestmark`` or on a ``pytest.param``). This module reads the
test sources with :mod:`ast` (nothing is imported or collected) and fails when

* a MUST whose checkability is ``agent`` (or whose subject is the kit) has no tagged
  test and is not listed, with a reason, in ``tests/untested_requirements.yaml``;
* a tag names an id the catalogue does not know;
* the untested list names an unknown id, a requirement outside that scope, gives a
  reason shorter than eight words, or lists an id that now has a tagged test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness_testkit.spec import Requirement, load_requirements

TESTS = Path(__file__).resolve().parent
UNTESTED_FILE = TESTS / "untested_requirements.yaml"
MIN_REASON_WORDS = 8


@dataclass(frozen=True)
class Tag:
    """One requirement id named by a marker, and where."""

    requirement_id: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path.relative_to(TESTS.parent)}:{self.line}"


def _is_requirement_marker(func: ast.expr) -> bool:
    """``pytest.mark.requirement`` / ``mark.requirement`` / an alias bound to it."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "requirement"
        and (
            (isinstance(func.value, ast.Attribute) and func.value.attr == "mark")
            or (isinstance(func.value, ast.Name) and func.value.id == "mark")
        )
    )


def _aliases(tree: ast.Module) -> set[str]:
    """Module-level names bound to the marker (``requirement = pytest.mark.requirement``)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_requirement_marker(node.value):
            targets = [target for target in node.targets if isinstance(target, ast.Name)]
            if len(targets) == len(node.targets):
                names.update(target.id for target in targets)
    return names


def _string_args(call: ast.Call, path: Path) -> Iterator[tuple[str, int]]:
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield arg.value, arg.lineno
        else:
            raise AssertionError(
                f"{path}:{call.lineno}: requirement markers take string literals only "
                f"(got {ast.unparse(arg)}) so traceability can read them statically."
            )


def tags_in_source(source: str, path: Path) -> list[Tag]:
    """Every requirement id named by a marker call in ``source``."""
    tree = ast.parse(source, filename=str(path))
    aliases = _aliases(tree)
    tags: list[Tag] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if _is_requirement_marker(func) or (isinstance(func, ast.Name) and func.id in aliases):
            tags.extend(Tag(value, path, line) for value, line in _string_args(node, path))
    return tags


def collect_tags(root: Path = TESTS) -> list[Tag]:
    """Tags of every ``tests/**/*.py`` module."""
    tags: list[Tag] = []
    for path in sorted(root.rglob("*.py")):
        tags.extend(tags_in_source(path.read_text(encoding="utf-8"), path))
    return tags


def in_scope(requirement: Requirement) -> bool:
    """MUSTs the kit's own tests verify: checkability ``agent`` or subject ``kit``."""
    return requirement.level == "MUST" and (
        requirement.checkability == "agent" or requirement.subject == "kit"
    )


def load_untested(path: Path = UNTESTED_FILE) -> dict[str, str]:
    """The justified untested list: ``{id: reason}``."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    assert isinstance(data, dict), f"{path.name} must map requirement ids to reasons."
    return {str(key): str(value) for key, value in data.items()}


@pytest.fixture(scope="module")
def tags() -> list[Tag]:
    return collect_tags()


@pytest.fixture(scope="module")
def untested() -> dict[str, str]:
    return load_untested()


def test_every_agent_must_has_a_tagged_test_or_a_reason(
    tags: list[Tag], untested: dict[str, str]
) -> None:
    tagged = {tag.requirement_id for tag in tags}
    missing = [
        requirement.id
        for requirement in load_requirements().requirements
        if in_scope(requirement) and requirement.id not in tagged and requirement.id not in untested
    ]
    assert not missing, (
        f"{len(missing)} agent/kit MUST requirement(s) have no test tagged with "
        f"@pytest.mark.requirement(...): {', '.join(missing)}. Tag the test that verifies "
        f"each, or list it with a reason in {UNTESTED_FILE.name}."
    )


def test_tags_name_known_requirements(tags: list[Tag]) -> None:
    catalogue = load_requirements()
    known = {requirement.id for requirement in catalogue.requirements}
    unknown = [f"{tag.requirement_id} ({tag})" for tag in tags if tag.requirement_id not in known]
    assert not unknown, f"requirement markers name unknown ids: {', '.join(unknown)}"


def test_untested_entries_are_known_in_scope_and_justified(untested: dict[str, str]) -> None:
    catalogue = {requirement.id: requirement for requirement in load_requirements().requirements}
    problems: list[str] = []
    for requirement_id, reason in untested.items():
        requirement = catalogue.get(requirement_id)
        if requirement is None:
            problems.append(f"{requirement_id} is not in the catalogue")
        elif not in_scope(requirement):
            problems.append(f"{requirement_id} is not an agent/kit MUST")
        if len(reason.split()) < MIN_REASON_WORDS:
            problems.append(f"{requirement_id}: give a reason of at least {MIN_REASON_WORDS} words")
    assert not problems, f"{UNTESTED_FILE.name}: {'; '.join(problems)}"


def test_untested_entries_are_not_stale(tags: list[Tag], untested: dict[str, str]) -> None:
    tagged = {tag.requirement_id: tag for tag in tags}
    stale = [f"{rid} (tested at {tagged[rid]})" for rid in untested if rid in tagged]
    assert not stale, (
        f"{UNTESTED_FILE.name} lists requirements that now have tagged tests; remove them: "
        f"{', '.join(stale)}"
    )


# -- the scanner itself -------------------------------------------------------------------------------

SAMPLE = '''
import pytest
from pytest import mark

requirement = pytest.mark.requirement
pytestmark = [pytest.mark.anyio, pytest.mark.requirement("A-001")]

@pytest.mark.requirement("A-002", "A-003")
def test_one(): ...

@requirement("A-004")
@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.requirement("A-005"))])
def test_two(x): ...

@mark.requirement("A-006")
def test_three(): ...

def test_four():
    """pytest.mark.requirement("NOT-001") in a docstring is not a tag."""
    # @pytest.mark.requirement("NOT-002")
    other.requirement("NOT-003")
'''


def test_scanner_reads_every_marker_form_and_nothing_else() -> None:
    found = [tag.requirement_id for tag in tags_in_source(SAMPLE, TESTS / "sample.py")]
    assert sorted(found) == ["A-001", "A-002", "A-003", "A-004", "A-005", "A-006"]


def test_scanner_refuses_computed_ids() -> None:
    with pytest.raises(AssertionError, match="string literals"):
        tags_in_source("import pytest\npytest.mark.requirement(ID)\n", TESTS / "sample.py")
