"""Every report form links each requirement id to its anchor on the docs site."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner
from rich.console import Console

from harness_testkit._cli import cli
from harness_testkit.conformance import CheckResult, Report
from harness_testkit.conformance._html import render_html, run_from_json
from harness_testkit.spec import DOCS_URL_ENV

pytestmark = pytest.mark.requirement("DECISION-019")

BASE = "https://docs.example.org/kit/"
FILTER_007 = f"{BASE}requirements/filter.html#FILTER-007"
ADAPTER_044 = f"{BASE}requirements/adapter.html#ADAPTER-044"


@pytest.fixture(autouse=True)
def _base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, BASE)


def _report() -> Report:
    return Report(
        suite_version="0.1.0",
        adapter="pkg:factory",
        harness_id="fake",
        profile="smoke",
        max_examples=5,
        seed=0,
        sandbox="local",
        results=(
            CheckResult(
                check_id="scripted.filtering",
                title="filtering",
                tier="scripted",
                requirements=("FILTER-007", "ADAPTER-044"),
                level="MUST",
                areas=("FILTER", "ADAPTER"),
                status="fail",
                message="a denied built-in ran",
                failed_requirement="FILTER-007",
                failed_level="MUST",
            ),
        ),
    )


def test_markdown_links_every_id() -> None:
    text = _report().to_markdown()
    assert f"[FILTER-007]({FILTER_007}), [ADAPTER-044]({ADAPTER_044})" in text
    assert f"## `scripted.filtering` ([FILTER-007]({FILTER_007}))" in text


def test_junit_carries_a_url_per_requirement() -> None:
    root = ElementTree.fromstring(_report().to_junit_xml())
    properties = root.findall(".//testcase/properties/property")
    ids = [p.get("value") for p in properties if p.get("name") == "requirement"]
    urls = [p.get("value") for p in properties if p.get("name") == "requirement-url"]
    assert ids == ["FILTER-007", "ADAPTER-044"]
    assert urls == [FILTER_007, ADAPTER_044]


def test_html_links_every_id() -> None:
    (run,) = run_from_json(json.loads(_report().to_json()), source="test", base_dir=Path())
    page = render_html([run])
    assert f'<a href="{FILTER_007}"><code>FILTER-007</code></a>' in page
    assert f'<a href="{ADAPTER_044}"><code>ADAPTER-044</code></a>' in page


def test_the_console_links_ids_in_a_terminal_and_prints_the_failures_url() -> None:
    terminal = io.StringIO()
    _report().print_console(console=Console(file=terminal, force_terminal=True, width=200))
    # OSC 8: ESC ] 8 ; params ; URL ESC \, then the linked text.
    assert re.search(rf"\x1b\]8;[^;]*;{re.escape(FILTER_007)}\x1b\\FILTER-007", terminal.getvalue())
    log = io.StringIO()
    _report().print_console(console=Console(file=log, force_terminal=False, width=200))
    assert f"  requirement: {FILTER_007}\n" in log.getvalue()


def test_the_docs_url_option_sets_the_base_for_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DOCS_URL_ENV)
    source = tmp_path / "report.json"
    source.write_text(_report().to_json(), encoding="utf-8")
    page = tmp_path / "report.html"
    other = "https://elsewhere.example/docs/"
    result = CliRunner().invoke(
        cli, ["--docs-url", other, "report", str(source), "--html", str(page)]
    )
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert f'href="{other}requirements/filter.html#FILTER-007"' in html
