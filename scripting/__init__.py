"""The kit's scripting extension: the contract between the conformance suite and a scriptable runtime.

A runtime that implements the extension (``set_script`` and ``observations``) lets the
suite script exactly what its model does (:class:`Script`: turns, steps, actions,
faults) and read back what the runtime received and did (:class:`ObservationLog`). The
fake harness implements it natively; a real runtime implements it by serving the script
from the kit's model endpoint and observing from outside (the Claude Code and Node
adapters). Living here, below both, the contract keeps real adapters from importing the
fake.
"""

from ._extension import ScriptableHarness as ScriptableHarness
from ._extension import is_scriptable as is_scriptable
from ._observations import ApprovalReceived as ApprovalReceived
from ._observations import ApprovalRequested as ApprovalRequested
from ._observations import CompactionPerformed as CompactionPerformed
from ._observations import LifecycleEvent as LifecycleEvent
from ._observations import Observation as Observation
from ._observations import ObservationEntry as ObservationEntry
from ._observations import ObservationLog as ObservationLog
from ._observations import SessionStarted as SessionStarted
from ._observations import ToolExecuted as ToolExecuted
from ._observations import ToolResultReceived as ToolResultReceived
from ._observations import TurnStarted as TurnStarted
from ._observations import UserMessageReceived as UserMessageReceived
from ._observations import WorkspaceMutated as WorkspaceMutated
from ._script import Action as Action
from ._script import BuiltinCallAction as BuiltinCallAction
from ._script import Chunking as Chunking
from ._script import CloseEarlyFault as CloseEarlyFault
from ._script import CrashFault as CrashFault
from ._script import DelayAction as DelayAction
from ._script import DelayPartFault as DelayPartFault
from ._script import DropFinishStepFault as DropFinishStepFault
from ._script import ErrorAction as ErrorAction
from ._script import Fault as Fault
from ._script import FileMutation as FileMutation
from ._script import FileMutationAction as FileMutationAction
from ._script import HangFault as HangFault
from ._script import HostToolCallAction as HostToolCallAction
from ._script import MalformedPartFault as MalformedPartFault
from ._script import McpCallAction as McpCallAction
from ._script import McpServer as McpServer
from ._script import McpTool as McpTool
from ._script import RawAction as RawAction
from ._script import ReasoningAction as ReasoningAction
from ._script import Script as Script
from ._script import ScriptedResult as ScriptedResult
from ._script import ScriptModel as ScriptModel
from ._script import ScriptStep as ScriptStep
from ._script import ScriptTurn as ScriptTurn
from ._script import StepCondition as StepCondition
from ._script import StepUsage as StepUsage
from ._script import TextAction as TextAction
from ._script import WaitForUserMessageAction as WaitForUserMessageAction
from ._script import WebSearchAnswer as WebSearchAnswer

__all__ = [
    "Action",
    "ApprovalReceived",
    "ApprovalRequested",
    "BuiltinCallAction",
    "Chunking",
    "CloseEarlyFault",
    "CompactionPerformed",
    "CrashFault",
    "DelayAction",
    "DelayPartFault",
    "DropFinishStepFault",
    "ErrorAction",
    "Fault",
    "FileMutation",
    "FileMutationAction",
    "HangFault",
    "HostToolCallAction",
    "LifecycleEvent",
    "MalformedPartFault",
    "McpCallAction",
    "McpServer",
    "McpTool",
    "Observation",
    "ObservationEntry",
    "ObservationLog",
    "RawAction",
    "ReasoningAction",
    "Script",
    "ScriptModel",
    "ScriptStep",
    "ScriptTurn",
    "ScriptableHarness",
    "ScriptedResult",
    "SessionStarted",
    "StepCondition",
    "StepUsage",
    "TextAction",
    "ToolExecuted",
    "ToolResultReceived",
    "TurnStarted",
    "UserMessageReceived",
    "WaitForUserMessageAction",
    "WebSearchAnswer",
    "WorkspaceMutated",
    "is_scriptable",
]
