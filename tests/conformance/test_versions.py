"""Every report names what ran: the kit, the adapter's distribution, the adapter's runtime."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from xml.etree import ElementTree

import pytest
from rich.console import Console

from harness_testkit import __version__
from harness_testkit.conformance import (
    AdapterTarget,
    Report,
    RunOptions,
    run_suite,
    self_test_targets,
)
from harness_testkit.conformance._html import render_html, run_from_json
from harness_testkit.conformance._versions import distribution_of, run_versions
from harness_testkit.fake_harness import FakeHarness

#: The first check of the suite, enough for a report.
ONE_CHECK = ["adapter.surface"]


class _Declares:
    """An adapter stand-in with a given ``versions`` attribute (only that is read)."""

    def __init__(self, versions: object) -> None:
        self.versions = versions


class _Raises:
    @property
    def versions(self) -> Mapping[str, str]:
        raise RuntimeError("runtime not started")


def _factory() -> None:
    """A factory of this test module: no installed distribution ships it."""


def test_the_kit_and_the_distribution_of_the_factory_come_first() -> None:
    assert distribution_of(FakeHarness) == ("harness-testkit", __version__)
    assert distribution_of(_factory) is None  # tests/ is in no distribution
    versions, warnings = run_versions(FakeHarness, FakeHarness())
    assert versions == {"harness-testkit": __version__, "fake-harness": __version__}
    assert warnings == []


def test_what_the_adapter_declares_is_added_but_never_replaces_the_kit() -> None:
    declared = _Declares({"my-runtime": "1.2.3", "harness-testkit": "99"})
    versions, warnings = run_versions(_factory, declared)
    assert list(versions.items()) == [("harness-testkit", __version__), ("my-runtime", "1.2.3")]
    assert warnings == []
    assert run_versions(_factory, None) == ({"harness-testkit": __version__}, [])
    assert run_versions(_factory, object()) == ({"harness-testkit": __version__}, [])


@pytest.mark.parametrize(
    ("adapter", "warning"),
    [
        (_Declares(["1.0"]), "the adapter's `versions` is a list, not a mapping"),
        (_Declares({"runtime": 1}), "the adapter's `versions` entry 'runtime': 1 is not a string"),
        (_Raises(), "the adapter's `versions` raised RuntimeError: runtime not started"),
    ],
)
def test_a_malformed_versions_is_a_warning_not_a_crash(adapter: object, warning: str) -> None:
    versions, warnings = run_versions(_factory, adapter)
    assert versions == {"harness-testkit": __version__}
    (only,) = warnings
    assert only.startswith(warning), only


@pytest.fixture(scope="module")
def report() -> Report:
    target = next(t for t in self_test_targets() if t.name == "self:claude-code")
    return run_suite(target, RunOptions(profile="smoke"), check_ids=ONE_CHECK)


def test_every_report_form_names_the_versions(report: Report, tmp_path: Path) -> None:
    expected = {"harness-testkit": __version__, "fake-harness": __version__}
    line = f"harness-testkit {__version__}, fake-harness {__version__}"
    assert report.versions == expected
    assert json.loads(report.to_json())["versions"] == expected
    assert f"- versions: {line}\n" in report.to_markdown()
    suites = ElementTree.fromstring(report.to_junit_xml()).findall("testsuite")
    assert suites
    for suite in suites:
        properties = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
        assert properties == {f"version:{name}": value for name, value in expected.items()}
    console = Console(record=True, width=200)
    report.print_console(console=console)
    assert f"versions: {line}" in console.export_text()
    runs = run_from_json(json.loads(report.to_json()), source="r.json", base_dir=tmp_path)
    assert f"versions {line}" in render_html(runs)
    two = render_html(runs * 2)
    assert f"<th>versions</th><td>{line}</td><td>{line}</td>" in two


class _NoVersions:
    """The fake harness without its ``versions`` (an adapter that declares none)."""

    def __init__(self) -> None:
        self._harness = FakeHarness()

    def __getattr__(self, name: str) -> object:
        if name == "versions":
            raise AttributeError(name)
        return getattr(self._harness, name)


def test_a_report_of_an_adapter_without_versions_still_names_the_kit() -> None:
    target = AdapterTarget(factory=_NoVersions, name="tests:no-versions")  # type: ignore[arg-type]  # duck-typed adapter
    report = run_suite(target, RunOptions(profile="smoke"), check_ids=ONE_CHECK)
    assert report.versions == {"harness-testkit": __version__}
    assert all("versions" not in warning for warning in report.warnings)
