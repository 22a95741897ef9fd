"""A scripted model endpoint: real HTTP on ``127.0.0.1`` speaking the providers' protocols.

``with ModelEndpoint(script) as ep:`` serves an :class:`EndpointScript` (each model
request gets the next scripted reply) in the Anthropic Messages, OpenAI Responses and
OpenAI Chat Completions wire protocols, streaming and not, and records every request
(``ep.requests``) and every request it could not answer from the script (``ep.errors``).
Point a real runtime at ``ep.base_url`` to script its model.

Serving needs the ``model-endpoint`` extra (Starlette and uvicorn): without it, this
facade and its script and record models still import, and asking for
:class:`ModelEndpoint` raises :class:`~harness_testkit.spec.MissingExtraError` naming the
extra, so ``harness-testkit model-endpoint --help`` works on a bare install.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._convert import ScriptConversionError as ScriptConversionError
from ._convert import from_kit_script as from_kit_script
from ._convert import servable_steps as servable_steps
from ._records import EndpointError as EndpointError
from ._records import EndpointErrorKind as EndpointErrorKind
from ._records import RecordedMessage as RecordedMessage
from ._records import RecordedRequest as RecordedRequest
from ._records import RecordedToolCall as RecordedToolCall
from ._records import RecordedToolResult as RecordedToolResult
from ._records import UnforeseenRequestError as UnforeseenRequestError
from ._records import WireProtocol as WireProtocol
from ._script import Block as Block
from ._script import EndpointScript as EndpointScript
from ._script import ErrorReply as ErrorReply
from ._script import MessageReply as MessageReply
from ._script import PauseBlock as PauseBlock
from ._script import Reply as Reply
from ._script import ReplyMatch as ReplyMatch
from ._script import ReplyUsage as ReplyUsage
from ._script import StopReason as StopReason
from ._script import StreamError as StreamError
from ._script import TextBlock as TextBlock
from ._script import ThinkingBlock as ThinkingBlock
from ._script import ToolCallBlock as ToolCallBlock
from ._script import ToolResultMatch as ToolResultMatch

if _TYPE_CHECKING:
    from ._server import ModelEndpoint as ModelEndpoint

__all__ = [
    "Block",
    "EndpointError",
    "EndpointErrorKind",
    "EndpointScript",
    "ErrorReply",
    "MessageReply",
    "ModelEndpoint",
    "PauseBlock",
    "RecordedMessage",
    "RecordedRequest",
    "RecordedToolCall",
    "RecordedToolResult",
    "Reply",
    "ReplyMatch",
    "ReplyUsage",
    "ScriptConversionError",
    "StopReason",
    "StreamError",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolResultMatch",
    "UnforeseenRequestError",
    "WireProtocol",
    "from_kit_script",
    "servable_steps",
]


def __getattr__(name: str) -> object:
    # ModelEndpoint is imported on first use: the server needs the `model-endpoint` extra,
    # and the models above (and the CLI's help) must not.
    if name == "ModelEndpoint":
        from ._server import ModelEndpoint

        return ModelEndpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
