"""harness-testkit: conformance testkit and reference simulator for harness-v1 adapters.

The distribution holds these packages, each with one facade (README, "What is inside"):

- :mod:`harness_testkit.spec`: the harness-v1 contract as runtime-validated models,
  protocols, errors and the numbered requirement catalogue.
- :mod:`harness_testkit.common`: what several packages share (bounded input reading,
  user regexes, process checks); internal to the distribution.
- :mod:`harness_testkit.reference`: the reference ``HarnessAgent`` and the workflow runners.
- :mod:`harness_testkit.sandbox`: the sandbox providers (embedded local default, Docker).
- :mod:`harness_testkit.fake_harness`: a deterministic, scriptable harness runtime.
- :mod:`harness_testkit.simulate`: offline simulation of scenarios on the fake harness.
- :mod:`harness_testkit.conformance`: the check suites, pytest plugin support and reports.
- :mod:`harness_testkit.model_endpoint`: a scripted model endpoint on 127.0.0.1.
- :mod:`harness_testkit.adapters.claude_code`: the Claude Code adapter.

The root package itself holds the ``harness-testkit`` console script and the pytest plugin.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("harness-testkit")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
