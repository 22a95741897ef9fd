"""What ran: the versions a report names beside its verdict.

A report is only evidence when it says what was tested with what: the kit's version, the
version of the Python distribution the adapter's factory comes from, and the versions the
adapter declares of itself and of the runtime it drives (its optional ``versions``
attribute, a mapping of name to version; for example
``{"claude-agent-sdk": "0.2.190", "claude-code-cli": "2.1.337"}``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, packages_distributions, version

from harness_testkit import __version__

__all__ = ["KIT", "distribution_of", "run_versions", "version_line"]

#: The kit's own name in every ``versions`` mapping.
KIT = "harness-testkit"


@functools.lru_cache(maxsize=1)
def _top_level_names() -> Mapping[str, list[str]]:
    """Top-level module -> distributions, read once per process: reading every installed
    distribution's file list took longer than a fast target's whole report."""
    return packages_distributions()


def distribution_of(factory: object) -> tuple[str, str] | None:
    """The installed distribution (name, version) that ships ``factory``'s module.

    ``None`` for a module no installed distribution ships (a local file, a test module).
    """
    module = getattr(factory, "__module__", None)
    if not isinstance(module, str) or not module:
        return None
    names = _top_level_names().get(module.partition(".")[0])
    if not names:
        return None
    # A top-level name shipped by several distributions (namespace packages) is
    # ambiguous; the first is reported, as importlib.metadata lists them.
    try:
        return names[0], version(names[0])
    except PackageNotFoundError:  # listed but gone (uninstalled while running)
        return None


def run_versions(factory: object, adapter: object | None) -> tuple[dict[str, str], list[str]]:
    """The versions a report records, and warnings about a malformed ``versions``.

    Order: the kit, the adapter's distribution, then what the adapter declares. A name
    already recorded is not replaced by the adapter's declaration (the kit's version is
    the kit's, whatever an adapter says).

    Args:
        factory: The adapter factory (its module names the distribution).
        adapter: An adapter the factory made, or ``None`` when the factory failed.
    """
    versions = {KIT: __version__}
    warnings: list[str] = []
    shipped = distribution_of(factory)
    if shipped is not None:
        versions.setdefault(*shipped)
    if adapter is None:
        return versions, warnings
    try:
        declared = getattr(adapter, "versions", None)
    except Exception as error:  # a property that raises: the report says so, and goes on
        return versions, [f"the adapter's `versions` raised {type(error).__name__}: {error}"]
    if declared is None:
        return versions, warnings
    if not isinstance(declared, Mapping):
        warnings.append(
            f"the adapter's `versions` is a {type(declared).__name__}, not a mapping of "
            "name to version; it is left out of the report"
        )
        return versions, warnings
    for name, value in declared.items():
        if not isinstance(name, str) or not isinstance(value, str):
            warnings.append(
                f"the adapter's `versions` entry {name!r}: {value!r} is not a string pair; "
                "it is left out of the report"
            )
            continue
        versions.setdefault(name, value)
    return versions, warnings


def version_line(versions: Mapping[str, str]) -> str:
    """``harness-testkit 0.1.0, claude-agent-sdk 0.2.190, ...`` (empty for none).

    The kit comes first even from a JSON report, whose keys are sorted.
    """
    ordered = sorted(versions.items(), key=lambda item: item[0] != KIT)
    return ", ".join(f"{name} {value}" for name, value in ordered)
