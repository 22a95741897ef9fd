"""A harness-v1 adapter for Claude Code, driven through ``claude-agent-sdk``.

``make_adapter()`` returns a :class:`ClaudeCodeHarness` whose model is the kit's scripted
model endpoint, so the real Claude Code CLI runs fully offline under the conformance
suite::

    harness-testkit check harness_testkit.adapters.claude_code:make_adapter --profile standard

Install with ``pip install 'harness-testkit[claude-code]'``.
"""

from harness_testkit.conformance import AdapterCapabilities

from ._builtins import BUILTIN_TOOLS as BUILTIN_TOOLS
from ._builtins import HOST_SERVER as HOST_SERVER
from ._harness import HARNESS_ID as HARNESS_ID
from ._harness import ClaudeCodeHarness as ClaudeCodeHarness
from ._harness import sdk_missing_reason as sdk_missing_reason
from ._session import ClaudeCodeSession as ClaudeCodeSession
from ._turn import ClaudeCodePromptControl as ClaudeCodePromptControl

__all__ = [
    "BUILTIN_TOOLS",
    "HARNESS_ID",
    "HOST_SERVER",
    "ClaudeCodeHarness",
    "ClaudeCodePromptControl",
    "ClaudeCodeSession",
    "sdk_missing_reason",
]


def make_adapter() -> ClaudeCodeHarness:
    """The adapter under the conformance suite: Claude Code on the scripted model endpoint."""
    return ClaudeCodeHarness()


make_adapter.capabilities = AdapterCapabilities(  # type: ignore[attr-defined]
    builtin_tool_approvals=True,
    builtin_tool_filtering=True,
    resume=True,
    continuation="lossy",
    scripting=True,
    turn_timeout=60.0,
)
