"""The harness-v1 contract: runtime-validated models, protocols, errors, requirements.

Everything an adapter author writes against is importable from here. Wire models
serialize with ``model.to_wire()`` (equivalently ``model_dump(mode="json",
by_alias=True, exclude_none=True)``) to the JSON a TypeScript peer reads, and validate
back with the ``parse_*`` helpers.
"""

from ._bootstrap import BOOTSTRAP_SCHEMA_VERSION as BOOTSTRAP_SCHEMA_VERSION
from ._bootstrap import Bootstrap as Bootstrap
from ._bootstrap import BootstrapCommand as BootstrapCommand
from ._bootstrap import BootstrapFile as BootstrapFile
from ._bootstrap import bootstrap_marker_path as bootstrap_marker_path
from ._bootstrap import sandbox_bootstrap_identity as sandbox_bootstrap_identity
from ._checkpoints import EventCheckpoint as EventCheckpoint
from ._checkpoints import attach_event_checkpoint as attach_event_checkpoint
from ._checkpoints import pin_event_checkpoint as pin_event_checkpoint
from ._clock import Clock as Clock
from ._consumer_parts import CONSUMER_PART_TYPES as CONSUMER_PART_TYPES
from ._consumer_parts import ConsumerAbortPart as ConsumerAbortPart
from ._consumer_parts import ConsumerErrorPart as ConsumerErrorPart
from ._consumer_parts import ConsumerFinishPart as ConsumerFinishPart
from ._consumer_parts import ConsumerFinishStepPart as ConsumerFinishStepPart
from ._consumer_parts import ConsumerPart as ConsumerPart
from ._consumer_parts import ConsumerRawPart as ConsumerRawPart
from ._consumer_parts import ConsumerReasoningDeltaPart as ConsumerReasoningDeltaPart
from ._consumer_parts import ConsumerReasoningEndPart as ConsumerReasoningEndPart
from ._consumer_parts import ConsumerReasoningStartPart as ConsumerReasoningStartPart
from ._consumer_parts import ConsumerStartPart as ConsumerStartPart
from ._consumer_parts import ConsumerStartStepPart as ConsumerStartStepPart
from ._consumer_parts import ConsumerTextDeltaPart as ConsumerTextDeltaPart
from ._consumer_parts import ConsumerTextEndPart as ConsumerTextEndPart
from ._consumer_parts import ConsumerTextStartPart as ConsumerTextStartPart
from ._consumer_parts import ConsumerToolApprovalRequestPart as ConsumerToolApprovalRequestPart
from ._consumer_parts import ConsumerToolApprovalResponsePart as ConsumerToolApprovalResponsePart
from ._consumer_parts import ConsumerToolCallPart as ConsumerToolCallPart
from ._consumer_parts import ConsumerToolErrorPart as ConsumerToolErrorPart
from ._consumer_parts import ConsumerToolInputDeltaPart as ConsumerToolInputDeltaPart
from ._consumer_parts import ConsumerToolInputEndPart as ConsumerToolInputEndPart
from ._consumer_parts import ConsumerToolInputStartPart as ConsumerToolInputStartPart
from ._consumer_parts import ConsumerToolResultPart as ConsumerToolResultPart
from ._consumer_parts import InputTokenDetails as InputTokenDetails
from ._consumer_parts import LanguageModelUsage as LanguageModelUsage
from ._consumer_parts import OutputTokenDetails as OutputTokenDetails
from ._consumer_parts import StepResponse as StepResponse
from ._consumer_parts import parse_consumer_part as parse_consumer_part
from ._docs_links import DOCS_URL_ENV as DOCS_URL_ENV
from ._docs_links import docs_base_url as docs_base_url
from ._docs_links import requirement_page as requirement_page
from ._docs_links import requirement_url as requirement_url
from ._errors import HarnessCapabilityUnsupportedError as HarnessCapabilityUnsupportedError
from ._errors import HarnessError as HarnessError
from ._errors import HarnessSandboxAuthenticationError as HarnessSandboxAuthenticationError
from ._errors import HarnessSessionStateError as HarnessSessionStateError
from ._errors import HarnessTurnError as HarnessTurnError
from ._errors import HarnessUsageError as HarnessUsageError
from ._errors import InvalidLifecycleStateError as InvalidLifecycleStateError
from ._errors import MissingExtraError as MissingExtraError
from ._errors import NoSuchToolError as NoSuchToolError
from ._errors import SandboxAbortedError as SandboxAbortedError
from ._errors import SandboxError as SandboxError
from ._errors import SandboxPathError as SandboxPathError
from ._errors import SandboxTimeoutError as SandboxTimeoutError
from ._errors import SandboxUnavailableError as SandboxUnavailableError
from ._errors import ToolContextValidationError as ToolContextValidationError
from ._errors import get_harness_error_message as get_harness_error_message
from ._host_protocol import HOST_PROTOCOL_VERSION as HOST_PROTOCOL_VERSION
from ._host_protocol import HOST_TO_KIT_METHODS as HOST_TO_KIT_METHODS
from ._host_protocol import KIT_TO_HOST_METHODS as KIT_TO_HOST_METHODS
from ._host_protocol import HostAdapterError as HostAdapterError
from ._host_protocol import HostDescription as HostDescription
from ._host_protocol import HostErrorData as HostErrorData
from ._host_protocol import HostProtocolError as HostProtocolError
from ._host_protocol import HostSetupError as HostSetupError
from ._host_protocol import host_protocol_schema as host_protocol_schema
from ._host_protocol import parse_host_message as parse_host_message
from ._json import MAX_SAFE_INTEGER as MAX_SAFE_INTEGER
from ._json import JSONValue as JSONValue
from ._json import find_non_json as find_non_json
from ._json import is_json_value as is_json_value
from ._json import safe_load_bounded as safe_load_bounded
from ._lifecycle import SPECIFICATION_VERSION as SPECIFICATION_VERSION
from ._lifecycle import CompletedToolResult as CompletedToolResult
from ._lifecycle import ContinueTurnState as ContinueTurnState
from ._lifecycle import LifecycleState as LifecycleState
from ._lifecycle import PendingToolApproval as PendingToolApproval
from ._lifecycle import PendingToolResult as PendingToolResult
from ._lifecycle import ResumeSessionState as ResumeSessionState
from ._lifecycle import TurnSettings as TurnSettings
from ._lifecycle import parse_lifecycle_state as parse_lifecycle_state
from ._protocols import ContinueTurnOptions as ContinueTurnOptions
from ._protocols import Emit as Emit
from ._protocols import HarnessAdapter as HarnessAdapter
from ._protocols import HarnessSession as HarnessSession
from ._protocols import NetworkSandboxSession as NetworkSandboxSession
from ._protocols import OnFirstCreate as OnFirstCreate
from ._protocols import PortEndpoint as PortEndpoint
from ._protocols import PromptControl as PromptControl
from ._protocols import PromptTurnOptions as PromptTurnOptions
from ._protocols import RunResult as RunResult
from ._protocols import SandboxProcess as SandboxProcess
from ._protocols import SandboxProvider as SandboxProvider
from ._protocols import SandboxSession as SandboxSession
from ._protocols import StartOptions as StartOptions
from ._protocols import UserMessage as UserMessage
from ._protocols import prompt_text as prompt_text
from ._requirements import AREAS as AREAS
from ._requirements import Checkability as Checkability
from ._requirements import Requirement as Requirement
from ._requirements import RequirementCatalogue as RequirementCatalogue
from ._requirements import RequirementCatalogueError as RequirementCatalogueError
from ._requirements import RequirementLevel as RequirementLevel
from ._requirements import Subject as Subject
from ._requirements import load_requirements as load_requirements
from ._response_format import JsonResponseFormat as JsonResponseFormat
from ._response_format import ResponseFormat as ResponseFormat
from ._response_format import TextResponseFormat as TextResponseFormat
from ._skills import Skill as Skill
from ._skills import SkillFile as SkillFile
from ._stream_parts import MAX_PART_DEPTH as MAX_PART_DEPTH
from ._stream_parts import STREAM_PART_TYPES as STREAM_PART_TYPES
from ._stream_parts import CallWarning as CallWarning
from ._stream_parts import CompactionPart as CompactionPart
from ._stream_parts import ErrorPart as ErrorPart
from ._stream_parts import FileChangePart as FileChangePart
from ._stream_parts import FinishPart as FinishPart
from ._stream_parts import FinishReason as FinishReason
from ._stream_parts import FinishStepPart as FinishStepPart
from ._stream_parts import InputTokens as InputTokens
from ._stream_parts import Metadata as ProviderMetadata
from ._stream_parts import OtherWarning as OtherWarning
from ._stream_parts import OutputTokens as OutputTokens
from ._stream_parts import RawPart as RawPart
from ._stream_parts import ReasoningDeltaPart as ReasoningDeltaPart
from ._stream_parts import ReasoningEndPart as ReasoningEndPart
from ._stream_parts import ReasoningStartPart as ReasoningStartPart
from ._stream_parts import StreamPart as StreamPart
from ._stream_parts import StreamStartPart as StreamStartPart
from ._stream_parts import TextDeltaPart as TextDeltaPart
from ._stream_parts import TextEndPart as TextEndPart
from ._stream_parts import TextStartPart as TextStartPart
from ._stream_parts import ToolApprovalRequestPart as ToolApprovalRequestPart
from ._stream_parts import ToolCallPart as ToolCallPart
from ._stream_parts import ToolInputDeltaPart as ToolInputDeltaPart
from ._stream_parts import ToolInputEndPart as ToolInputEndPart
from ._stream_parts import ToolInputStartPart as ToolInputStartPart
from ._stream_parts import ToolResultPart as ToolResultPart
from ._stream_parts import UnifiedFinishReason as UnifiedFinishReason
from ._stream_parts import UnsupportedSettingWarning as UnsupportedSettingWarning
from ._stream_parts import UnsupportedToolWarning as UnsupportedToolWarning
from ._stream_parts import Usage as Usage
from ._stream_parts import WireModel as WireModel
from ._stream_parts import parse_stream_part as parse_stream_part
from ._stream_parts import serialize_unknown as serialize_unknown
from ._tools import BASELINE_INPUT_SCHEMAS as BASELINE_INPUT_SCHEMAS
from ._tools import BUILTIN_TOOL_NAMES as BUILTIN_TOOL_NAMES
from ._tools import PERMISSION_MODES as PERMISSION_MODES
from ._tools import QUESTIONS_TOOL_INPUT_SCHEMA as QUESTIONS_TOOL_INPUT_SCHEMA
from ._tools import QUESTIONS_TOOL_OUTPUT_SCHEMA as QUESTIONS_TOOL_OUTPUT_SCHEMA
from ._tools import TOOL_USE_KINDS as TOOL_USE_KINDS
from ._tools import BuiltinTool as BuiltinTool
from ._tools import BuiltinToolFiltering as BuiltinToolFiltering
from ._tools import PermissionMode as PermissionMode
from ._tools import ToolSpec as ToolSpec
from ._tools import ToolUseKind as ToolUseKind
from ._tools import baseline_input_problems as baseline_input_problems
from ._tools import builtin_table_problems as builtin_table_problems
from ._tools import common_tool as common_tool
from ._tools import inactive_tool_reason as inactive_tool_reason
from ._tools import is_builtin_tool_included as is_builtin_tool_included
from ._tools import is_execution_denied as is_execution_denied
from ._tools import requires_approval as requires_approval
from ._yaml import YamlError as YamlError
from ._yaml import YamlLocator as YamlLocator
from ._yaml import load_yaml as load_yaml

__all__ = [
    "AREAS",
    "BASELINE_INPUT_SCHEMAS",
    "BOOTSTRAP_SCHEMA_VERSION",
    "BUILTIN_TOOL_NAMES",
    "CONSUMER_PART_TYPES",
    "DOCS_URL_ENV",
    "HOST_PROTOCOL_VERSION",
    "HOST_TO_KIT_METHODS",
    "KIT_TO_HOST_METHODS",
    "MAX_PART_DEPTH",
    "MAX_SAFE_INTEGER",
    "PERMISSION_MODES",
    "QUESTIONS_TOOL_INPUT_SCHEMA",
    "QUESTIONS_TOOL_OUTPUT_SCHEMA",
    "SPECIFICATION_VERSION",
    "STREAM_PART_TYPES",
    "TOOL_USE_KINDS",
    "Bootstrap",
    "BootstrapCommand",
    "BootstrapFile",
    "BuiltinTool",
    "BuiltinToolFiltering",
    "CallWarning",
    "Checkability",
    "Clock",
    "CompactionPart",
    "CompletedToolResult",
    "ConsumerAbortPart",
    "ConsumerErrorPart",
    "ConsumerFinishPart",
    "ConsumerFinishStepPart",
    "ConsumerPart",
    "ConsumerRawPart",
    "ConsumerReasoningDeltaPart",
    "ConsumerReasoningEndPart",
    "ConsumerReasoningStartPart",
    "ConsumerStartPart",
    "ConsumerStartStepPart",
    "ConsumerTextDeltaPart",
    "ConsumerTextEndPart",
    "ConsumerTextStartPart",
    "ConsumerToolApprovalRequestPart",
    "ConsumerToolApprovalResponsePart",
    "ConsumerToolCallPart",
    "ConsumerToolErrorPart",
    "ConsumerToolInputDeltaPart",
    "ConsumerToolInputEndPart",
    "ConsumerToolInputStartPart",
    "ConsumerToolResultPart",
    "ContinueTurnOptions",
    "ContinueTurnState",
    "Emit",
    "ErrorPart",
    "EventCheckpoint",
    "FileChangePart",
    "FinishPart",
    "FinishReason",
    "FinishStepPart",
    "HarnessAdapter",
    "HarnessCapabilityUnsupportedError",
    "HarnessError",
    "HarnessSandboxAuthenticationError",
    "HarnessSession",
    "HarnessSessionStateError",
    "HarnessTurnError",
    "HarnessUsageError",
    "HostAdapterError",
    "HostDescription",
    "HostErrorData",
    "HostProtocolError",
    "HostSetupError",
    "InputTokenDetails",
    "InputTokens",
    "InvalidLifecycleStateError",
    "JSONValue",
    "JsonResponseFormat",
    "LanguageModelUsage",
    "LifecycleState",
    "MissingExtraError",
    "NetworkSandboxSession",
    "NoSuchToolError",
    "OnFirstCreate",
    "OtherWarning",
    "OutputTokenDetails",
    "OutputTokens",
    "PendingToolApproval",
    "PendingToolResult",
    "PermissionMode",
    "PortEndpoint",
    "PromptControl",
    "PromptTurnOptions",
    "ProviderMetadata",
    "RawPart",
    "ReasoningDeltaPart",
    "ReasoningEndPart",
    "ReasoningStartPart",
    "Requirement",
    "RequirementCatalogue",
    "RequirementCatalogueError",
    "RequirementLevel",
    "ResponseFormat",
    "ResumeSessionState",
    "RunResult",
    "SandboxAbortedError",
    "SandboxError",
    "SandboxPathError",
    "SandboxProcess",
    "SandboxProvider",
    "SandboxSession",
    "SandboxTimeoutError",
    "SandboxUnavailableError",
    "Skill",
    "SkillFile",
    "StartOptions",
    "StepResponse",
    "StreamPart",
    "StreamStartPart",
    "Subject",
    "TextDeltaPart",
    "TextEndPart",
    "TextResponseFormat",
    "TextStartPart",
    "ToolApprovalRequestPart",
    "ToolCallPart",
    "ToolContextValidationError",
    "ToolInputDeltaPart",
    "ToolInputEndPart",
    "ToolInputStartPart",
    "ToolResultPart",
    "ToolSpec",
    "ToolUseKind",
    "TurnSettings",
    "UnifiedFinishReason",
    "UnsupportedSettingWarning",
    "UnsupportedToolWarning",
    "Usage",
    "UserMessage",
    "WireModel",
    "YamlError",
    "YamlLocator",
    "attach_event_checkpoint",
    "baseline_input_problems",
    "bootstrap_marker_path",
    "builtin_table_problems",
    "common_tool",
    "docs_base_url",
    "find_non_json",
    "get_harness_error_message",
    "host_protocol_schema",
    "inactive_tool_reason",
    "is_builtin_tool_included",
    "is_execution_denied",
    "is_json_value",
    "load_requirements",
    "load_yaml",
    "parse_consumer_part",
    "parse_host_message",
    "parse_lifecycle_state",
    "parse_stream_part",
    "pin_event_checkpoint",
    "prompt_text",
    "requirement_page",
    "requirement_url",
    "requires_approval",
    "safe_load_bounded",
    "sandbox_bootstrap_identity",
    "serialize_unknown",
]
