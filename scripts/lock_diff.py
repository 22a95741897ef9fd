"""Which installed distributions differ from ``uv.lock``: what moved in a newest or lowest run.

Run with the Python of the environment to compare (``python scripts/lock_diff.py
uv.lock``). It prints one line per distribution whose version is not the lock's, one per
distribution the lock has and the environment lacks (or the other way round), and a
count; the nox sessions ``newest`` and ``lowest`` print it before their tests, so a
failing run already names the packages that moved. Exit status 0 whatever differs: a
difference is the point of those runs, not an error.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from importlib.metadata import distributions
from pathlib import Path

__all__ = ["diff_lines", "installed_versions", "locked_versions", "main", "normalize"]


def normalize(name: str) -> str:
    """The PEP 503 normalized form of a distribution name (``ruamel.yaml`` -> ``ruamel-yaml``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock_text: str) -> dict[str, set[str]]:
    """Distribution -> the versions ``uv.lock`` holds (more than one where markers fork).

    The project itself (an editable or virtual source) is left out: its version is the
    working tree's.
    """
    data = tomllib.loads(lock_text)
    locked: dict[str, set[str]] = {}
    for package in data.get("package", []):
        source = package.get("source", {})
        if "editable" in source or "virtual" in source:
            continue
        version = package.get("version")
        if isinstance(version, str):
            locked.setdefault(normalize(package["name"]), set()).add(version)
    return locked


def installed_versions(found: Iterable[tuple[str, str]] | None = None) -> dict[str, str]:
    """Distribution -> version in this environment (``found``: (name, version) pairs to use
    instead of this interpreter's)."""
    if found is None:
        found = ((d.metadata["Name"], d.version) for d in distributions() if d.metadata["Name"])
    return {normalize(name): version for name, version in found}


def diff_lines(
    locked: Mapping[str, set[str]], installed: Mapping[str, str], *, project: str
) -> list[str]:
    """What differs, one line per distribution, sorted by name; empty when nothing does.

    Args:
        locked: From :func:`locked_versions`.
        installed: From :func:`installed_versions`.
        project: The project's own (normalized) name, never compared.
    """
    lines: list[str] = []
    for name in sorted(set(locked) | set(installed)):
        if name == project:
            continue
        have = installed.get(name)
        want = locked.get(name)
        if want is None:
            lines.append(f"{name}: {have} (not in the lock)")
        elif have is None:
            # A locked package for another platform or Python, or one only an extra not
            # installed here needs: listed, since it is not what ran.
            lines.append(f"{name}: lock {' or '.join(sorted(want))}, not installed")
        elif have not in want:
            lines.append(f"{name}: lock {' or '.join(sorted(want))} -> {have}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the difference between this environment and the lock."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lock", type=Path, help="the uv.lock to compare with")
    parser.add_argument("--label", default="this environment", help="what the lines describe")
    parser.add_argument("--project", default="harness-testkit", help="the project's own name")
    args = parser.parse_args(argv)
    lines = diff_lines(
        locked_versions(args.lock.read_text(encoding="utf-8")),
        installed_versions(),
        project=normalize(args.project),
    )
    print(f"{args.label} vs {args.lock}: {len(lines)} distribution(s) differ")
    for line in lines:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
