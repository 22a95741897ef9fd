"""A deterministic, scriptable harness-v1 runtime: the harness every suite runs against.

``FakeHarness(script=..., profile="claude-code", seed=0)`` implements the adapter
contract for real: built-ins run in the sandbox session, host tools wait for
``submit_tool_result``, approvals for ``submit_tool_approval``; lifecycle states are
plain JSON and continue in another process. Profiles reproduce the capability matrix of
the real adapters; :func:`generate_script` and :func:`scripts` make random valid scripts.
"""

from ._clock import Clock as Clock
from ._clock import EventLoopClock as EventLoopClock
from ._clock import VirtualClock as VirtualClock
from ._errors import FakeHarnessCrashError as FakeHarnessCrashError
from ._errors import FakeHarnessError as FakeHarnessError
from ._errors import ScriptMismatchError as ScriptMismatchError
from ._errors import TurnAbortedError as TurnAbortedError
from ._examples import example_path as example_path
from ._examples import load_example as load_example
from ._generate import ACTION_KINDS as ACTION_KINDS
from ._generate import generate_script as generate_script
from ._harness import FakeHarness as FakeHarness
from ._observations import ApprovalReceived as ApprovalReceived
from ._observations import ApprovalRequested as ApprovalRequested
from ._observations import CompactionPerformed as CompactionPerformed
from ._observations import LifecycleEvent as LifecycleEvent
from ._observations import Observation as Observation
from ._observations import ObservationLog as ObservationLog
from ._observations import SessionStarted as SessionStarted
from ._observations import ToolExecuted as ToolExecuted
from ._observations import ToolResultReceived as ToolResultReceived
from ._observations import TurnStarted as TurnStarted
from ._observations import UserMessageReceived as UserMessageReceived
from ._observations import WorkspaceMutated as WorkspaceMutated
from ._profiles import HarnessProfile as HarnessProfile
from ._profiles import get_profile as get_profile
from ._profiles import profiles as profiles
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
from ._script import ScriptStep as ScriptStep
from ._script import ScriptTurn as ScriptTurn
from ._script import StepCondition as StepCondition
from ._script import StepUsage as StepUsage
from ._script import TextAction as TextAction
from ._script import WaitForUserMessageAction as WaitForUserMessageAction
from ._script import WebSearchAnswer as WebSearchAnswer
from ._scripting_extension import ScriptableHarness as ScriptableHarness
from ._scripting_extension import is_scriptable as is_scriptable
from ._session import FakeHarnessSession as FakeHarnessSession
from ._strategies import scripts as scripts
from ._turn_driver import FakePromptControl as FakePromptControl
from ._turn_driver import TurnRuntime as TurnRuntime
from ._validate import ScriptProblem as ScriptProblem
from ._validate import script_problems as script_problems
from ._workspace import Workspace as Workspace
from ._workspace import glob_to_regex as glob_to_regex

__all__ = [
    "ACTION_KINDS",
    "Action",
    "ApprovalReceived",
    "ApprovalRequested",
    "BuiltinCallAction",
    "Chunking",
    "Clock",
    "CloseEarlyFault",
    "CompactionPerformed",
    "CrashFault",
    "DelayAction",
    "DelayPartFault",
    "DropFinishStepFault",
    "ErrorAction",
    "EventLoopClock",
    "FakeHarness",
    "FakeHarnessCrashError",
    "FakeHarnessError",
    "FakeHarnessSession",
    "FakePromptControl",
    "Fault",
    "FileMutation",
    "FileMutationAction",
    "HangFault",
    "HarnessProfile",
    "HostToolCallAction",
    "LifecycleEvent",
    "MalformedPartFault",
    "McpCallAction",
    "McpServer",
    "McpTool",
    "Observation",
    "ObservationLog",
    "RawAction",
    "ReasoningAction",
    "Script",
    "ScriptMismatchError",
    "ScriptProblem",
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
    "TurnAbortedError",
    "TurnRuntime",
    "TurnStarted",
    "UserMessageReceived",
    "VirtualClock",
    "WaitForUserMessageAction",
    "WebSearchAnswer",
    "Workspace",
    "WorkspaceMutated",
    "example_path",
    "generate_script",
    "get_profile",
    "glob_to_regex",
    "is_scriptable",
    "load_example",
    "profiles",
    "script_problems",
    "scripts",
]
