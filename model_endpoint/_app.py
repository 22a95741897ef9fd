"""The ASGI application (Starlette): routes, recording, delays, streaming and cuts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ._anthropic import AnthropicMessages
from ._engine import Engine, ResolvedReply
from ._openai_chat import OpenAIChat
from ._openai_responses import OpenAIResponses
from ._records import RecordedRequest
from ._wire import Codec, InvalidRequestError, as_json, clean_headers, last_user_text

__all__ = ["StreamCutError", "build_app", "codecs"]


class StreamCutError(Exception):
    """Raised inside the app to cut a connection mid-response (a scripted truncation).

    The server then closes the connection without finishing the body, which is what a
    dropped upstream connection looks like to the client. The server's log filter hides
    the traceback of this one exception.
    """


async def _start(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": headers})


class _EventStream(Response):
    """Server-sent events, with pauses between events and an optional cut."""

    def __init__(self, segments: Sequence[Sequence[bytes]], reply: ResolvedReply) -> None:
        super().__init__(media_type="text/event-stream")
        # Pause ``reply.pauses[i]`` before segment i + 1 (segment 0 opens the message).
        self._events = [
            (reply.pauses.get(position - 1, 0.0) if not offset else 0.0, event)
            for position, segment in enumerate(segments)
            for offset, event in enumerate(segment)
        ]
        self._event_delay = reply.event_delay
        self._cut_after = reply.truncate_after_events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A client that hangs up ends the stream at once: a scripted pause must not keep
        # serving a closed connection (nor hold the server's shutdown for its grace time).
        streaming = asyncio.ensure_future(self._stream(send))
        watching = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((streaming, watching), return_when=asyncio.FIRST_COMPLETED)
        finally:
            watching.cancel()
            streaming.cancel()  # no-op when it ended; else the client left (or shutdown)
            await asyncio.gather(watching, streaming, return_exceptions=True)
        if not streaming.cancelled():
            streaming.result()  # a scripted cut (StreamCutError) propagates

    async def _stream(self, send: Send) -> None:
        await _start(
            send,
            [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache"),
            ],
        )
        for sent, (pause, event) in enumerate(self._events):
            if self._cut_after is not None and sent >= self._cut_after:
                break
            if sent and self._event_delay:
                await asyncio.sleep(self._event_delay)
            if pause:
                await asyncio.sleep(pause)
            await send({"type": "http.response.body", "body": event, "more_body": True})
        if self._cut_after is not None:
            raise StreamCutError(f"stream cut after {self._cut_after} events, as scripted")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _disconnected(receive: Receive) -> None:
    """Return when the client has closed the connection."""
    while (await receive())["type"] != "http.disconnect":
        pass


class _CutBody(Response):
    """A JSON body announced in full (``content-length``) but cut in the middle."""

    def __init__(self, data: bytes) -> None:
        super().__init__(media_type="application/json")
        self._data = data

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = str(len(self._data)).encode()
        await _start(send, [(b"content-type", b"application/json"), (b"content-length", length)])
        half = self._data[: len(self._data) // 2]
        await send({"type": "http.response.body", "body": half, "more_body": True})
        raise StreamCutError("response body cut in the middle, as scripted")


def codecs() -> dict[str, Codec]:
    """The codecs by route path."""
    return {
        "/v1/messages": AnthropicMessages(),
        "/v1/responses": OpenAIResponses(),
        "/v1/chat/completions": OpenAIChat(),
    }


def _error_codec(request: Request) -> Codec:
    # Unknown routes answer in the shape the client most likely parses.
    anthropic = (
        request.url.path.startswith("/v1/messages") or "anthropic-version" in request.headers
    )
    return AnthropicMessages() if anthropic else OpenAIChat()


def build_app(engine: Engine) -> Starlette:
    """The application serving ``engine``'s script."""
    by_path = codecs()

    async def read_json(request: Request) -> Any:
        raw = await request.body()
        try:
            return json.loads(raw)
        except ValueError as error:
            raise InvalidRequestError(f"the body is not valid JSON: {error}") from error

    def endpoint_error(codec: Codec, status: int, message: str) -> JSONResponse:
        return JSONResponse(codec.error_body(status, message, None), status_code=status)

    def invalid(codec: Codec, request: Request, error: InvalidRequestError) -> JSONResponse:
        message = f"harness-testkit scripted model endpoint: invalid request: {error}"
        engine.record_error("invalid-request", message, request.url.path)
        return endpoint_error(codec, 400, message)

    def record(request: Request, codec: Codec, body: Any) -> RecordedRequest:
        parsed = codec.parse(body)
        return RecordedRequest(
            index=engine.next_index(),
            path=request.url.path,
            query=dict(request.query_params),
            protocol=codec.protocol,
            model=parsed.model,
            stream=parsed.stream,
            system=parsed.system,
            messages=parsed.messages,
            tools=parsed.tools,
            tool_results=[result for m in parsed.messages for result in m.tool_results],
            last_user_text=last_user_text(parsed.messages),
            settings=parsed.settings,
            headers=clean_headers(request.headers.items()),
            body=as_json(body),
        )

    async def model_request(request: Request) -> Response:
        codec = by_path[request.url.path]
        try:
            recorded = record(request, codec, await read_json(request))
        except InvalidRequestError as error:
            return invalid(codec, request, error)
        selection = engine.answer(recorded)
        if selection.delay:
            await asyncio.sleep(selection.delay)
        if selection.endpoint_error is not None:
            return endpoint_error(codec, 400, selection.endpoint_error.message)
        if selection.error is not None:
            scripted = selection.error
            headers = (
                {} if scripted.retry_after is None else {"retry-after": f"{scripted.retry_after:g}"}
            )
            return JSONResponse(
                codec.error_body(scripted.status, scripted.message, scripted.error_type),
                status_code=scripted.status,
                headers=headers,
            )
        reply = selection.message
        assert reply is not None
        if recorded.stream:
            return _EventStream(codec.events(reply, selection.request), reply)
        if reply.total_pause:
            await asyncio.sleep(reply.total_pause)
        if reply.stream_error is not None:
            failure = reply.stream_error
            return JSONResponse(
                codec.error_body(failure.status, failure.message, failure.error_type),
                status_code=failure.status,
            )
        data = json.dumps(codec.render(reply, selection.request), ensure_ascii=False).encode()
        if reply.truncate_after_events is not None:
            return _CutBody(data)
        return Response(data, media_type="application/json")

    async def count_tokens(request: Request) -> Response:
        codec = AnthropicMessages()
        try:
            return JSONResponse(codec.count_tokens(await read_json(request)))
        except InvalidRequestError as error:
            return invalid(codec, request, error)

    async def unknown_route(request: Request) -> Response:
        message = (
            f"harness-testkit scripted model endpoint: no route {request.method} "
            f"{request.url.path}; it serves POST {', POST '.join(sorted(by_path))} and "
            "POST /v1/messages/count_tokens"
        )
        engine.record_error("unknown-route", message, request.url.path)
        return endpoint_error(_error_codec(request), 404, message)

    routes = [Route(path, model_request, methods=["POST"]) for path in by_path]
    routes.append(Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]))
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes.append(Route("/{path:path}", unknown_route, methods=methods))
    return Starlette(routes=routes)
