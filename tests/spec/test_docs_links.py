"""Requirement URLs: one scheme for every report, under a configurable base URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.spec import (
    DOCS_URL_ENV,
    HarnessUsageError,
    Requirement,
    docs_base_url,
    load_requirements,
    requirement_page,
    requirement_url,
)

pytestmark = pytest.mark.requirement("DECISION-019")

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_base_is_the_local_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)
    assert docs_base_url() == (ROOT / "site").as_uri() + "/"
    assert requirement_url("FILTER-007") == (
        f"{(ROOT / 'site').as_uri()}/requirements/filter.html#FILTER-007"
    )


def test_the_environment_sets_the_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, "https://docs.example.org/kit")
    assert requirement_url("ADAPTER-044") == (
        "https://docs.example.org/kit/requirements/adapter.html#ADAPTER-044"
    )


def test_an_empty_environment_value_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, "  ")
    assert docs_base_url().startswith("file://")


def test_an_explicit_base_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, "https://ignored.example/")
    assert requirement_url("STOP-001", base_url="/docs") == "/docs/requirements/stop.html#STOP-001"


@pytest.mark.parametrize("bad", ["filter-007", "FILTER-7", "FILTER", "", "FILTER-007 "])
def test_a_malformed_id_is_refused_by_name(bad: str) -> None:
    with pytest.raises(HarnessUsageError, match="is not a requirement id"):
        requirement_url(bad)


@given(st.sampled_from(load_requirements().requirements))
def test_every_catalogue_id_maps_to_its_area_page(requirement: Requirement) -> None:
    url = requirement_url(requirement.id, base_url="https://x.example/")
    assert url == f"https://x.example/{requirement_page(requirement.area)}#{requirement.id}"
