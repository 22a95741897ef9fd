"""HTML reports: one run, several side by side, from `check --html` and `report`, in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import CheckResult, Report
from harness_testkit.conformance._html import COLOURS, load_report, render_html, run_from_json
from harness_testkit.conformance._report import Status
from tests.narrowing import of_type


def _result(
    check_id: str, status: Status, requirements: tuple[str, ...], **extra: Any
) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        title=f"title of {check_id}",
        tier="black-box",
        requirements=requirements,
        level="MUST",
        areas=("ADAPTER",),
        status=status,
        **extra,
    )


def _report(tmp_path: Path, adapter: str = "pkg.mod:make", fail: bool = True) -> dict[str, Any]:
    bundle = tmp_path / f"{adapter.replace(':', '-')}.replay.json"
    bundle.write_text(
        json.dumps(
            {
                "scenario": {"prompt": "minimal"},
                "transcript": [{"session": 0, "parts": [{"type": "text-delta", "delta": "hi"}]}],
            }
        )
    )
    results = [
        _result("adapter.surface", "pass", ("ADAPTER-001", "ADAPTER-003")),
        _result(
            "adapter.capability-flags",
            "fail" if fail else "pass",
            ("ADAPTER-048", "APPROVAL-040"),
            message="[APPROVAL-040] declared builtin_tool_approvals differs\n  expected: True",
            failed_requirement="APPROVAL-040" if fail else None,
            failed_level="MUST" if fail else None,
            replay_command=f"harness-testkit replay {bundle}" if fail else None,
            bundle=str(bundle) if fail else None,
        ),
        _result("stream.grammar", "xfail", ("STREAM-001",), message="known bug: x"),
        _result("scripted.a", "skip", ("MERGE-001",), message="needs capability `scripting`"),
        _result("scripted.b", "skip", ("MERGE-002",), message="needs capability `scripting`"),
        _result("session.identity", "blocked", ("ADAPTER-010",), message="blocked: prerequisite"),
    ]
    report = Report(
        suite_version="0.1.0",
        adapter=adapter,
        harness_id="demo",
        profile="smoke",
        max_examples=5,
        seed=0,
        sandbox="local",
        results=tuple(results),
        capabilities={
            "origin": "caps.yaml",
            "effective": {"resume": True},
            "sources": {"resume": "declared"},
            "mismatches": ["`builtin_tool_approvals` is declared true but the adapter shows false"],
        },
    )
    data: dict[str, Any] = json.loads(report.to_json())
    # Statuses and fields a newer core adds are read too.
    data["results"].append(
        {
            "check_id": "turn.abort",
            "status": "error",
            "level": "MUST",
            "areas": ["STOP"],
            "requirements": ["STOP-001"],
            "message": "the check crashed",
            "traceback": ["Traceback (most recent call last):\n", "ValueError: boom\n"],
        }
    )
    data["results"].append(
        {"check_id": "new.kind", "status": "unverified", "requirements": ["ADAPTER-005"]}
    )
    return data


def _no_network_assets(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "url(" not in page
    assert "<script" not in page


def test_a_single_run_page(tmp_path: Path) -> None:
    runs = run_from_json(_report(tmp_path), source="r.json", base_dir=tmp_path)
    page = render_html(runs)
    _no_network_assets(page)
    assert 'data-verdict="FAIL"' in page
    # The matrix: one square per requirement, coloured by its status.
    assert 'data-requirement="APPROVAL-040" data-status="fail"' in page
    assert 'data-requirement="ADAPTER-001" data-status="pass"' in page
    # The failing check stopped at APPROVAL-040: ADAPTER-048 was not verified.
    assert 'data-requirement="ADAPTER-048" data-status="unverified"' in page
    assert 'data-requirement="STOP-001" data-status="error"' in page
    # Failures: message, traceback, replay command, evidence transcript and scenario.
    assert "declared builtin_tool_approvals differs" in page
    assert "ValueError: boom" in page
    assert "harness-testkit replay " in page
    assert "&quot;delta&quot;: &quot;hi&quot;" in page
    assert "&quot;prompt&quot;: &quot;minimal&quot;" in page
    # Identical skips are one row; the capabilities and their mismatch are shown.
    assert page.count("needs capability `scripting`") == 1
    assert "scripted.a, scripted.b" in page
    assert "mismatch: `builtin_tool_approvals` is declared true" in page


def test_several_runs_side_by_side(tmp_path: Path) -> None:
    first = run_from_json(_report(tmp_path, "a:one"), source="a", base_dir=tmp_path)
    second = run_from_json(_report(tmp_path, "b:two", fail=False), source="b", base_dir=tmp_path)
    page = render_html([*first, *second])
    _no_network_assets(page)
    assert "2 runs side by side" in page
    assert "a:one (smoke, suite 0.1.0)" in page
    assert "b:two (smoke, suite 0.1.0)" in page
    row = page[page.index("<code>APPROVAL-040</code>") :].split("</tr>")[0]
    assert re.findall(r'data-status="(\w+)"', row) == ["fail", "pass"]


def test_reports_are_read_defensively(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"adapter": "x"}')
    with pytest.raises(ValueError, match="not a harness-testkit conformance report"):
        load_report(bad)
    bad.write_text("{")
    with pytest.raises(ValueError, match=r"bad\.json:1: not JSON"):
        load_report(bad)
    # A report with one section per target gives one run per target.
    data = {"targets": [_report(tmp_path, "a:one"), _report(tmp_path, "b:two")]}
    assert [run.adapter for run in run_from_json(data, source="s", base_dir=tmp_path)] == [
        "a:one",
        "b:two",
    ]


def test_the_report_command_and_check_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    checked = runner.invoke(
        cli,
        [
            "check",
            "harness_testkit.fake_harness:FakeHarness",
            "--profile",
            "smoke",
            "--check",
            "adapter.surface",
            "--json",
            "a.json",
            "--html",
            "a.html",
        ],
    )
    assert checked.exit_code == 0, checked.output
    page = (tmp_path / "a.html").read_text()
    assert 'data-verdict="PASS"' in page
    assert "builtin_tool_approvals" in page  # the capabilities head the page
    (tmp_path / "b.json").write_text(json.dumps(_report(tmp_path)))
    compared = runner.invoke(cli, ["report", "a.json", "b.json", "--html", "out/cmp.html"])
    assert compared.exit_code == 0, compared.output
    assert "2 runs side by side" in (tmp_path / "out" / "cmp.html").read_text()
    missing = runner.invoke(cli, ["report", "nope.json", "--html", "x.html"])
    assert missing.exit_code == 2
    assert "cannot read report nope.json" in missing.output


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "CI=true requires Chromium for the HTML report test (apt-get install chromium)"
            )
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def test_the_matrix_is_visible_in_headless_chromium(tmp_path: Path) -> None:
    from PIL import Image

    chromium = _chromium()
    page = tmp_path / "report.html"
    page.write_text(render_html(run_from_json(_report(tmp_path), source="r", base_dir=tmp_path)))
    screenshot = tmp_path / "report.png"
    common = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    subprocess.run(
        [*common, f"--screenshot={screenshot}", "--window-size=1200,1100", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert 'id="matrix"' in dom
    assert 'data-status="fail"' in dom
    image = Image.open(screenshot).convert("RGB")
    assert image.size == (1200, 1100)

    def pixels(colour: str) -> int:
        wanted = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        colours = image.getcolors(maxcolors=1 << 20) or []
        return sum(
            count
            for count, rgb in colours
            if all(abs(a - b) <= 6 for a, b in zip(of_type(tuple, rgb), wanted, strict=True))
        )

    # Each requirement is a 22x22 square: the pass, fail and unverified cells are painted.
    assert pixels(COLOURS["pass"]) >= 2 * 22 * 22
    assert pixels(COLOURS["fail"]) >= 22 * 22
    assert pixels(COLOURS["unverified"]) >= 22 * 22
