"""Hypothesis settings of the property checks: named profiles and the example database.

Every conformance profile is registered with hypothesis by name
(``harness-testkit-smoke``, ``-standard``, ``-exhaustive``), so a project's own property
tests can ``settings.load_profile("harness-testkit-standard")``. Failing scenarios are
kept in a directory database (default ``harness-testkit-out/hypothesis``): the next run
of the same check against the same adapter replays them first, before generating.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from ._context import PROFILES

__all__ = ["DEFAULT_EXAMPLE_DATABASE", "database_key", "profile_name", "property_settings"]

#: Where the CLI and the pytest plugin keep failing examples (relative to the working
#: directory, resp. the pytest root).
DEFAULT_EXAMPLE_DATABASE = Path("harness-testkit-out/hypothesis")


def profile_name(profile: str) -> str:
    """The hypothesis profile name of a conformance profile."""
    return f"harness-testkit-{profile}"


for _profile in PROFILES.values():
    settings.register_profile(
        profile_name(_profile.name),
        max_examples=_profile.max_examples,
        deadline=None,
        derandomize=False,
        # The adapter's speed is not the generator's fault; every other health check
        # (a strategy that filters too much, a too large draw) stays on.
        suppress_health_check=[HealthCheck.too_slow],
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        database=None,
    )


def property_settings(profile: str, database: Path | None, *, shrink: bool = True) -> settings:
    """The settings a property check runs under: the named profile plus the database.

    With ``database`` ``None`` nothing is stored and nothing is replayed; with ``shrink``
    false a failure is reported as found (a declared failure needs no minimal example).
    """
    base = settings.get_profile(profile_name(profile))
    return settings(
        base,
        database=DirectoryBasedExampleDatabase(str(database)) if database is not None else None,
        phases=base.phases if shrink else tuple(p for p in base.phases if p is not Phase.shrink),
    )


def database_key(check_id: str, adapter: str) -> bytes:
    """The database key of a check run against an adapter (one entry set per pair)."""
    return f"harness-testkit/{adapter}/{check_id}".encode()
