"""A deterministic, scriptable harness-v1 runtime: the harness every suite runs against.

``FakeHarness(script=..., profile="claude-code", seed=0)`` implements the adapter
contract for real: built-ins run in the sandbox session, host tools wait for
``submit_tool_result``, approvals for ``submit_tool_approval``; lifecycle states are
plain JSON and continue in another process. Profiles reproduce the capability matrix of
the real adapters; :func:`generate_script` and :func:`scripts` make random valid scripts.
"""

from harness_testkit.scripting import Action as Action
from harness_testkit.scripting import ApprovalReceived as ApprovalReceived
from harness_testkit.scripting import ApprovalRequested as ApprovalRequested
from harness_testkit.scripting import BuiltinCallAction as BuiltinCallAction
from harness_testkit.scripting import Chunking as Chunking
from harness_testkit.scripting import CloseEarlyFault as CloseEarlyFault
from harness_testkit.scripting import CompactionPerformed as CompactionPerformed
from harness_testkit.scripting import CrashFault as CrashFault
from harness_testkit.scripting import DelayAction as DelayAction
from harness_testkit.scripting import DelayPartFault as DelayPartFault
from harness_testkit.scripting import DropFinishStepFault as DropFinishStepFault
from harness_testkit.scripting import ErrorAction as ErrorAction
from harness_testkit.scripting import Fault as Fault
from harness_testkit.scripting import FileMutation as FileMutation
from harness_testkit.scripting import FileMutationAction as FileMutationAction
from harness_testkit.scripting import HangFault as HangFault
from harness_testkit.scripting import HostToolCallAction as HostToolCallAction
from harness_testkit.scripting import LifecycleEvent as LifecycleEvent
from harness_testkit.scripting import MalformedPartFault as MalformedPartFault
from harness_testkit.scripting import McpCallAction as McpCallAction
from harness_testkit.scripting import McpServer as McpServer
from harness_testkit.scripting import McpTool as McpTool
from harness_testkit.scripting import Observation as Observation
from harness_testkit.scripting import ObservationLog as ObservationLog
from harness_testkit.scripting import RawAction as RawAction
from harness_testkit.scripting import ReasoningAction as ReasoningAction
from harness_testkit.scripting import Script as Script
from harness_testkit.scripting import ScriptableHarness as ScriptableHarness
from harness_testkit.scripting import ScriptedResult as ScriptedResult
from harness_testkit.scripting import ScriptStep as ScriptStep
from harness_testkit.scripting import ScriptTurn as ScriptTurn
from harness_testkit.scripting import SessionStarted as SessionStarted
from harness_testkit.scripting import StepCondition as StepCondition
from harness_testkit.scripting import StepUsage as StepUsage
from harness_testkit.scripting import TextAction as TextAction
from harness_testkit.scripting import ToolExecuted as ToolExecuted
from harness_testkit.scripting import ToolResultReceived as ToolResultReceived
from harness_testkit.scripting import TurnStarted as TurnStarted
from harness_testkit.scripting import UserMessageReceived as UserMessageReceived
from harness_testkit.scripting import WaitForUserMessageAction as WaitForUserMessageAction
from harness_testkit.scripting import WebSearchAnswer as WebSearchAnswer
from harness_testkit.scripting import WorkspaceMutated as WorkspaceMutated
from harness_testkit.scripting import is_scriptable as is_scriptable

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
from ._profiles import HarnessProfile as HarnessProfile
from ._profiles import get_profile as get_profile
from ._profiles import profiles as profiles
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
