"""``scripts/lock_diff.py``: the newest and lowest jobs name what moved from ``uv.lock``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts.lock_diff import diff_lines, installed_versions, locked_versions, normalize

ROOT = Path(__file__).resolve().parents[1]

#: (name, version, source) of a small uv.lock: the project itself, a package forked by
#: markers (two versions), and packages an environment may lack.
PACKAGES = [
    ("harness-testkit", "0.1.0", '{ editable = "." }'),
    ("anthropic", "2.17.0", '{ registry = "https://pypi.org/simple" }'),
    ("ruamel-yaml", "0.18.6", '{ registry = "https://pypi.org/simple" }'),
    ("numpy", "2.2.0", '{ registry = "https://pypi.org/simple" }'),
    ("numpy", "2.1.0", '{ registry = "https://pypi.org/simple" }'),
    ("colorama", "0.4.6", '{ registry = "https://pypi.org/simple" }'),
]
LOCK = 'version = 1\nrequires-python = ">=3.11"\n' + "".join(
    f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {source}\n'
    for name, version, source in PACKAGES
)


def test_the_lines_name_every_package_that_moved_and_nothing_else() -> None:
    locked = locked_versions(LOCK)
    assert locked == {
        "anthropic": {"2.17.0"},
        "ruamel-yaml": {"0.18.6"},
        "numpy": {"2.1.0", "2.2.0"},
        "colorama": {"0.4.6"},
    }
    installed = installed_versions(
        [
            ("anthropic", "0.40.0"),
            ("ruamel.yaml", "0.18.6"),
            ("NumPy", "2.1.0"),
            ("httpx", "0.27.0"),
            ("harness_testkit", "0.1.0"),
        ]
    )
    assert diff_lines(locked, installed, project="harness-testkit") == [
        "anthropic: lock 2.17.0 -> 0.40.0",
        "colorama: lock 0.4.6, not installed",
        "httpx: 0.27.0 (not in the lock)",
    ]
    assert diff_lines(locked, installed_versions([]), project="x")[0] == (
        "anthropic: lock 2.17.0, not installed"
    )
    assert normalize("ruamel.yaml") == "ruamel-yaml" == normalize("Ruamel_YAML")


def test_this_environment_against_the_repository_lock_prints_a_count() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lock_diff.py"), str(ROOT / "uv.lock")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first, *rest = done.stdout.splitlines()
    assert first.startswith(f"this environment vs {ROOT / 'uv.lock'}: {len(rest)} ")
    assert all(line.startswith("  ") for line in rest)
