"""harness-v1 adapters for real agent runtimes, checked by the kit's conformance suite.

Each subpackage drives one runtime and is installed with its extra, for example
``harness_testkit.adapters.claude_code`` with ``pip install 'harness-testkit[claude-code]'``.
"""

__all__: list[str] = []
