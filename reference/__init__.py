"""The reference ``HarnessAgent``.

``HarnessAgent`` runs any harness-v1 adapter with the official semantics: tool merging
and filtering, approvals, host and client-side tools, pauses and continuations,
lifecycle states, and the projection of harness parts into AI SDK consumer parts.

The sandbox providers live in ``harness_testkit.sandbox`` and the offline simulation in
``harness_testkit.simulate``; their names stay importable from here as re-exports (the
simulation's lazily, since ``simulate`` itself builds on this package).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from harness_testkit.sandbox import DockerSandboxProvider as DockerSandboxProvider
from harness_testkit.sandbox import DockerSandboxSession as DockerSandboxSession
from harness_testkit.sandbox import LocalSandboxProvider as LocalSandboxProvider
from harness_testkit.sandbox import LocalSandboxSession as LocalSandboxSession
from harness_testkit.sandbox import extract_lines as extract_lines

from ._agent import HarnessAgent as HarnessAgent
from ._agent import PrepareCall as PrepareCall
from ._agent import compute_tool_filtering as compute_tool_filtering
from ._ids import IdGenerator as IdGenerator
from ._results import GenerateResult as GenerateResult
from ._results import StepResult as StepResult
from ._sandbox_setup import SandboxConfig as SandboxConfig
from ._session import AgentSession as AgentSession
from ._session import SessionStatus as SessionStatus
from ._stream_result import MAX_RETAINED_PARTS as MAX_RETAINED_PARTS
from ._stream_result import NoObjectGeneratedError as NoObjectGeneratedError
from ._stream_result import PartLimitExceededError as PartLimitExceededError
from ._stream_result import StreamResult as StreamResult
from ._strip import strip_work_dir as strip_work_dir
from ._tool import InvalidToolInputError as InvalidToolInputError
from ._tool import Tool as Tool
from ._tool import ToolExecutionOptions as ToolExecutionOptions
from ._tool import tool as tool
from ._turn_state import ApprovalContinuation as ApprovalContinuation
from ._turn_state import ResultContinuation as ResultContinuation
from ._turn_state import StopCondition as StopCondition
from ._turn_state import TurnState as TurnState
from ._workflow import AnyioClock as AnyioClock
from ._workflow import ManualClock as ManualClock
from ._workflow import PartCollector as PartCollector
from ._workflow import WorkflowClock as WorkflowClock
from ._workflow import WorkflowFailedError as WorkflowFailedError
from ._workflow import WorkflowResult as WorkflowResult
from ._workflow import WorkflowState as WorkflowState
from ._workflow import WorkflowStatus as WorkflowStatus
from ._workflow import WorkflowStreamContext as WorkflowStreamContext
from ._workflow import WorkflowUsage as WorkflowUsage
from ._workflow import WorkflowWritable as WorkflowWritable
from ._workflow import create_workflow_state as create_workflow_state
from ._workflow import finalize_workflow as finalize_workflow
from ._workflow import run_agent_step as run_agent_step
from ._workflow import run_time_slice as run_time_slice
from ._workflow import step_count_is as step_count_is

if _TYPE_CHECKING:
    from harness_testkit.simulate import SIMULATION_VOLATILE_FIELDS as SIMULATION_VOLATILE_FIELDS
    from harness_testkit.simulate import ClusterUnavailableError as ClusterUnavailableError
    from harness_testkit.simulate import DaskEngine as DaskEngine
    from harness_testkit.simulate import LoadedScenario as LoadedScenario
    from harness_testkit.simulate import Scenario as Scenario
    from harness_testkit.simulate import ScenarioError as ScenarioError
    from harness_testkit.simulate import ScenarioIssue as ScenarioIssue
    from harness_testkit.simulate import SessionReport as SessionReport
    from harness_testkit.simulate import SimulationObserver as SimulationObserver
    from harness_testkit.simulate import SimulationOptions as SimulationOptions
    from harness_testkit.simulate import SimulationSummary as SimulationSummary
    from harness_testkit.simulate import builtin_scenario_path as builtin_scenario_path
    from harness_testkit.simulate import builtin_scenarios as builtin_scenarios
    from harness_testkit.simulate import load_scenario as load_scenario
    from harness_testkit.simulate import normalize_transcript_line as normalize_transcript_line
    from harness_testkit.simulate import parse_scenario as parse_scenario
    from harness_testkit.simulate import scenario_json_schema as scenario_json_schema
    from harness_testkit.simulate import simulate as simulate
    from harness_testkit.simulate import simulate_sharded as simulate_sharded

#: Simulation names re-exported from ``harness_testkit.simulate`` on first use.
_SIMULATION_NAMES = frozenset(
    {
        "LoadedScenario",
        "Scenario",
        "ScenarioError",
        "ScenarioIssue",
        "builtin_scenario_path",
        "builtin_scenarios",
        "load_scenario",
        "parse_scenario",
        "scenario_json_schema",
        "SIMULATION_VOLATILE_FIELDS",
        "SessionReport",
        "SimulationObserver",
        "SimulationOptions",
        "SimulationSummary",
        "normalize_transcript_line",
        "simulate",
        "simulate_sharded",
        "DaskEngine",
        "ClusterUnavailableError",
    }
)


def __getattr__(name: str) -> _Any:
    if name in _SIMULATION_NAMES:
        import harness_testkit.simulate as simulation

        return getattr(simulation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MAX_RETAINED_PARTS",
    "SIMULATION_VOLATILE_FIELDS",
    "AgentSession",
    "AnyioClock",
    "ApprovalContinuation",
    "ClusterUnavailableError",
    "DaskEngine",
    "DockerSandboxProvider",
    "DockerSandboxSession",
    "GenerateResult",
    "HarnessAgent",
    "IdGenerator",
    "InvalidToolInputError",
    "LoadedScenario",
    "LocalSandboxProvider",
    "LocalSandboxSession",
    "ManualClock",
    "NoObjectGeneratedError",
    "PartCollector",
    "PartLimitExceededError",
    "PrepareCall",
    "ResultContinuation",
    "SandboxConfig",
    "Scenario",
    "ScenarioError",
    "ScenarioIssue",
    "SessionReport",
    "SessionStatus",
    "SimulationObserver",
    "SimulationOptions",
    "SimulationSummary",
    "StepResult",
    "StopCondition",
    "StreamResult",
    "Tool",
    "ToolExecutionOptions",
    "TurnState",
    "WorkflowClock",
    "WorkflowFailedError",
    "WorkflowResult",
    "WorkflowState",
    "WorkflowStatus",
    "WorkflowStreamContext",
    "WorkflowUsage",
    "WorkflowWritable",
    "builtin_scenario_path",
    "builtin_scenarios",
    "compute_tool_filtering",
    "create_workflow_state",
    "extract_lines",
    "finalize_workflow",
    "load_scenario",
    "normalize_transcript_line",
    "parse_scenario",
    "run_agent_step",
    "run_time_slice",
    "scenario_json_schema",
    "simulate",
    "simulate_sharded",
    "step_count_is",
    "strip_work_dir",
    "tool",
]
