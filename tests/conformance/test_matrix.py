"""The version matrix: one adapter's versions side by side (built from JSON reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import CheckResult, Report
from harness_testkit.conformance._html import render_html, run_from_json
from harness_testkit.conformance._matrix import (
    MatrixColumn,
    build_matrix,
    matrix_markdown,
    parse_matrix_target,
)
from harness_testkit.conformance._report import Status


def _result(
    check_id: str, status: Status, requirements: tuple[str, ...], **extra: Any
) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        title=check_id,
        tier="scripted",
        requirements=requirements,
        level="MUST",
        areas=("ADAPTER",),
        status=status,
        **extra,
    )


def _column(tmp_path: Path, version: str, results: list[CheckResult]) -> MatrixColumn:
    report = Report(
        suite_version="0.1.0",
        adapter=f"npm:@ai-sdk/harness-pi@{version}",
        harness_id="pi",
        profile="smoke",
        max_examples=5,
        seed=3,
        sandbox="local",
        results=tuple(results),
    )
    path = tmp_path / "reports" / f"{version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.to_json(), encoding="utf-8")
    return MatrixColumn(version, path, None, 12.0)


def test_a_version_list_is_parsed_and_a_bad_one_is_named() -> None:
    assert parse_matrix_target("npm:@ai-sdk/harness-pi@1.0.76,1.0.123") == (
        "@ai-sdk/harness-pi",
        ["1.0.76", "1.0.123"],
    )
    for bad in ("npm:@ai-sdk/harness-pi", "npm:pkg@1.0,1.0", "npm:pkg@1.0,", "./folder#x"):
        with pytest.raises(ValueError, match="npm:NAME@V1,V2"):
            parse_matrix_target(bad)


def test_rows_are_requirements_columns_versions_and_differences_are_listed(
    tmp_path: Path,
) -> None:
    bundle = tmp_path / "bundles" / "1.0.76" / "scripted.b.replay.json"
    bundle.parent.mkdir(parents=True)
    bundle.write_text("{}", encoding="utf-8")
    old = _column(
        tmp_path,
        "1.0.76",
        [
            _result("scripted.a", "pass", ("ADAPTER-001",)),
            _result(
                "scripted.b",
                "fail",
                ("STREAM-001", "STREAM-002"),
                failed_requirement="STREAM-001",
                bundle=str(bundle),
            ),
            _result("scripted.c", "skip", ("MERGE-001",)),
        ],
    )
    new = _column(
        tmp_path,
        "1.0.123",
        [
            _result("scripted.a", "pass", ("ADAPTER-001",)),
            _result(
                "scripted.b", "xfail", ("STREAM-001", "STREAM-002"), failed_requirement="STREAM-001"
            ),
            _result("scripted.c", "pass", ("MERGE-001",)),
        ],
    )
    gone = MatrixColumn("1.0.113", None, "npm failed installing it", 3.0)
    document = build_matrix("@ai-sdk/harness-pi", "smoke", 3, [old, gone, new], tmp_path)
    rows = {row["requirement"]: row for row in document["rows"]}
    assert rows["ADAPTER-001"]["cells"]["1.0.76"]["status"] == "pass"
    assert not rows["ADAPTER-001"]["differs"]
    assert rows["STREAM-001"]["cells"]["1.0.76"] == {
        "status": "fail",
        "detail": "fail",
        "checks": ["scripted.b"],
        "bundle": "bundles/1.0.76/scripted.b.replay.json",
    }
    assert rows["STREAM-001"]["cells"]["1.0.123"]["status"] == "declared"
    # The check stopped at STREAM-001: STREAM-002 was not verified by it.
    assert rows["STREAM-002"]["cells"]["1.0.76"]["status"] == "skipped"
    assert rows["MERGE-001"]["cells"]["1.0.76"]["status"] == "skipped"
    assert document["differences"] == ["MERGE-001", "STREAM-001"]
    assert document["columns"][1] == {
        "version": "1.0.113",
        "seconds": 3.0,
        "error": "npm failed installing it",
    }
    page = matrix_markdown(document)
    assert "| 1.0.113 | did not run: npm failed installing it | | |" in page
    assert (
        "| STREAM-001 | MUST | [fail](bundles/1.0.76/scripted.b.replay.json) | — | declared |"
        in page
    )
    assert "--profile smoke --seed 3" in page
    runs = [
        run
        for column in (old, new)
        for run in run_from_json(
            json.loads(Path(str(column.report)).read_text()), source="r", base_dir=tmp_path
        )
    ]
    html = render_html(runs, link_base=tmp_path)
    assert 'href="bundles/1.0.76/scripted.b.replay.json"' in html


def test_the_command_refuses_a_bad_target_with_one_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["matrix", "npm:pkg", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "is not a version list" in result.output
