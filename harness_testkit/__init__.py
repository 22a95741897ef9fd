"""harness-testkit: conformance testkit and reference simulator for harness-v1 adapters.

The distribution is split into four packages, each with one facade:

- :mod:`harness_testkit.spec`: the harness-v1 contract as runtime-validated models,
  protocols, errors and the numbered requirement catalogue.
- :mod:`harness_testkit.reference`: the reference ``HarnessAgent`` and the sandbox
  providers (embedded local default, Docker).
- :mod:`harness_testkit.fake_harness`: a deterministic, scriptable harness runtime.
- :mod:`harness_testkit.conformance`: property-based suites, pytest plugin and reports.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("harness-testkit")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
