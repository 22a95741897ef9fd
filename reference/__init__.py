"""The reference ``HarnessAgent`` and the sandbox providers.

``HarnessAgent`` runs any harness-v1 adapter with the official semantics: tool merging
and filtering, approvals, host and client-side tools, pauses and continuations,
lifecycle states, and the projection of harness parts into AI SDK consumer parts.
"""

from ._agent import HarnessAgent as HarnessAgent
from ._agent import PrepareCall as PrepareCall
from ._agent import compute_tool_filtering as compute_tool_filtering
from ._docker_sandbox import DockerSandboxProvider as DockerSandboxProvider
from ._docker_sandbox import DockerSandboxSession as DockerSandboxSession
from ._ids import IdGenerator as IdGenerator
from ._local_sandbox import LocalSandboxProvider as LocalSandboxProvider
from ._local_sandbox import LocalSandboxSession as LocalSandboxSession
from ._results import GenerateResult as GenerateResult
from ._results import StepResult as StepResult
from ._sandbox_common import extract_lines as extract_lines
from ._sandbox_setup import SandboxConfig as SandboxConfig
from ._session import AgentSession as AgentSession
from ._session import SessionStatus as SessionStatus
from ._stream_result import StreamResult as StreamResult
from ._strip import strip_work_dir as strip_work_dir
from ._tool import Tool as Tool
from ._tool import ToolExecutionOptions as ToolExecutionOptions
from ._tool import tool as tool
from ._turn_state import ApprovalContinuation as ApprovalContinuation
from ._turn_state import ResultContinuation as ResultContinuation
from ._turn_state import StopCondition as StopCondition
from ._turn_state import TurnState as TurnState

__all__ = [
    "AgentSession",
    "ApprovalContinuation",
    "DockerSandboxProvider",
    "DockerSandboxSession",
    "GenerateResult",
    "HarnessAgent",
    "IdGenerator",
    "LocalSandboxProvider",
    "LocalSandboxSession",
    "PrepareCall",
    "ResultContinuation",
    "SandboxConfig",
    "SessionStatus",
    "StepResult",
    "StopCondition",
    "StreamResult",
    "Tool",
    "ToolExecutionOptions",
    "TurnState",
    "compute_tool_filtering",
    "extract_lines",
    "strip_work_dir",
    "tool",
]
