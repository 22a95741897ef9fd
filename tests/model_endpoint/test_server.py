"""The endpoint's lifecycle: sync and async context managers, records, errors, the CLI."""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import anthropic
import pytest

from harness_testkit.model_endpoint import (
    EndpointScript,
    ModelEndpoint,
    UnforeseenRequestError,
)

HELLO: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]


def endpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("model-endpoint-")]


def refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def ask(endpoint: ModelEndpoint, text: str = "hi") -> str:
    with anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk:
        reply = sdk.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": text}]
        )
    block = reply.content[0]
    assert block.type == "text"
    return block.text


def test_sync_context_manager_leaves_no_thread_or_socket() -> None:
    with ModelEndpoint(EndpointScript.from_texts("one")) as endpoint:
        port = endpoint.port
        assert endpoint.base_url == f"http://127.0.0.1:{port}"
        assert endpoint.openai_base_url == f"http://127.0.0.1:{port}/v1"
        assert ask(endpoint) == "one"
        assert len(endpoint_threads()) == 1
    assert endpoint_threads() == []
    assert refused(port)
    assert [r.index for r in endpoint.requests] == [0]  # records outlive the server
    with pytest.raises(RuntimeError, match="not running"):
        _ = endpoint.port


@pytest.mark.anyio
async def test_async_context_manager_on_both_backends() -> None:
    async with ModelEndpoint(EndpointScript.from_texts("async one", "async two")) as endpoint:
        async with anthropic.AsyncAnthropic(
            base_url=endpoint.base_url, api_key="k", max_retries=0
        ) as sdk:
            first = await sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
            async with sdk.messages.stream(model="m", max_tokens=8, messages=HELLO) as stream:
                streamed = "".join([text async for text in stream.text_stream])
        port = endpoint.port
    assert first.content[0].type == "text"
    assert first.content[0].text == "async one"
    assert streamed == "async two"
    assert endpoint_threads() == []
    assert refused(port)


def test_raise_on_error_reports_unforeseen_requests_on_exit() -> None:
    def serve_two_requests() -> None:
        with ModelEndpoint(EndpointScript.from_texts("only"), raise_on_error=True) as endpoint:
            ask(endpoint)
            with pytest.raises(anthropic.BadRequestError):
                ask(endpoint)

    with pytest.raises(UnforeseenRequestError, match="request #1") as raised:
        serve_two_requests()
    assert [e.request_index for e in raised.value.errors] == [1]


def test_set_script_restarts_from_the_first_reply_and_keeps_records() -> None:
    with ModelEndpoint(EndpointScript.from_texts("a")) as endpoint:
        assert ask(endpoint) == "a"
        endpoint.set_script(EndpointScript.from_texts("b"))
        assert ask(endpoint) == "b"
        assert [(r.index, r.reply_index) for r in endpoint.requests] == [(0, 0), (1, 0)]
        endpoint.check()


def test_empty_endpoint_answers_every_request_with_an_error() -> None:
    with ModelEndpoint() as endpoint:
        with pytest.raises(anthropic.BadRequestError, match="replies have all been served"):
            ask(endpoint)
        with pytest.raises(UnforeseenRequestError):
            endpoint.check()


def test_matches_repeat_and_pauses() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {"match": {"lastUserText": "^weather"}, "content": ["sunny"]},
                {
                    "match": {"lastUserText": "^skip-me", "onMismatch": "skip"},
                    "content": ["skipped"],
                },
                {"content": [{"pause": 0.01}, "late", {"pause": 0.01}], "delay": 0.01},
            ],
            "repeatFrom": 1,
        }
    )
    with ModelEndpoint(script) as endpoint:
        with pytest.raises(anthropic.BadRequestError, match="does not match reply #0"):
            ask(endpoint, "hello")
        assert ask(endpoint, "weather today?") == "sunny"
        assert ask(endpoint, "anything") == "late"
        assert ask(endpoint, "skip-me please") == "skipped"  # repeatFrom 1
        assert ask(endpoint, "again") == "late"
        assert [r.reply_index for r in endpoint.requests] == [None, 0, 2, 1, 2]


def test_a_busy_port_is_an_os_error() -> None:
    with ModelEndpoint() as first, pytest.raises(OSError, match="in use"):
        ModelEndpoint(port=first.port).start()
    assert endpoint_threads() == []


def test_cli_serves_until_terminated(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n  - Hello from the CLI\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "harness_testkit", "model-endpoint", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        base_url = lines.get(timeout=30).strip()
        assert base_url.startswith("http://127.0.0.1:")
        request = urllib.request.Request(
            f"{base_url}/v1/messages",
            data=json.dumps({"model": "m", "max_tokens": 8, "messages": HELLO}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
        assert body["content"] == [{"type": "text", "text": "Hello from the CLI"}]
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0
        assert "served 1 model request(s)" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def test_cli_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("replies:\n  - status: 99\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "harness_testkit", "model-endpoint", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "status" in done.stderr


def test_stopping_cancels_a_reply_still_waiting() -> None:
    script = EndpointScript.model_validate({"replies": [{"content": ["late"], "delay": 600}]})
    outcome: queue.Queue[BaseException | str] = queue.Queue()

    def request(endpoint: ModelEndpoint) -> None:
        try:
            outcome.put(ask(endpoint))
        except BaseException as error:  # handed to the test thread
            outcome.put(error)

    with ModelEndpoint(script, stop_timeout=2) as endpoint:
        client = threading.Thread(target=request, args=(endpoint,), daemon=True)
        client.start()
        waited = threading.Event()
        for _ in range(3000):  # the request is recorded before the scripted delay
            if endpoint.requests:
                break
            waited.wait(0.01)
        assert endpoint.requests
    # uvicorn answers 500 for a reply cancelled before it started (a cut once it had): the
    # client ends with an error either way, whichever class its SDK release wraps it in.
    ended = outcome.get(timeout=30)
    assert isinstance(ended, Exception)
    assert getattr(ended, "status_code", 500) == 500
    client.join(30)
    assert not client.is_alive()
    assert endpoint_threads() == []


def test_a_client_hanging_up_ends_a_paused_stream(caplog: pytest.LogCaptureFixture) -> None:
    # A runtime stopped mid-reply closes its connection: the scripted pause must not keep
    # the response alive until the server's shutdown cancels it.
    script = EndpointScript.model_validate({"replies": [{"content": ["a", {"pause": 600}, "b"]}]})
    caplog.set_level(logging.INFO, logger="uvicorn.error")
    # Left in reverse order: the client hangs up, then the endpoint stops.
    with (
        ModelEndpoint(script, stop_timeout=4) as endpoint,
        anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk,
        sdk.messages.stream(model="m", max_tokens=8, messages=HELLO) as stream,
    ):
        assert next(iter(stream.text_stream)) == "a"
    assert endpoint_threads() == []
    assert not [r for r in caplog.records if "graceful shutdown" in r.getMessage()]


def test_streamed_pauses_and_event_delays_keep_the_content() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {
                    "content": ["a", {"pause": 0.05}, "b", {"pause": 0.05}],
                    "eventDelay": 0.001,
                }
            ]
        }
    )
    with (
        ModelEndpoint(script) as endpoint,
        anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk,
        sdk.messages.stream(model="m", max_tokens=8, messages=HELLO) as stream,
    ):
        assert list(stream.text_stream) == ["a", "b"]


def test_an_error_reply_can_answer_the_runtimes_retries() -> None:
    script = EndpointScript.model_validate({"replies": [{"status": 500, "times": 3}, "recovered"]})
    with ModelEndpoint(script) as endpoint:
        for _ in range(3):
            with pytest.raises(anthropic.InternalServerError):
                ask(endpoint)
        assert ask(endpoint) == "recovered"
        assert [r.reply_index for r in endpoint.requests] == [0, 0, 0, 1]


def test_until_new_prompt_answers_retries_of_the_same_prompt() -> None:
    script = EndpointScript.model_validate(
        {"replies": [{"status": 400, "message": "no", "untilNewPrompt": True}, "next turn"]}
    )
    with ModelEndpoint(script) as endpoint:
        for _ in range(4):
            with pytest.raises(anthropic.BadRequestError, match="no"):
                ask(endpoint, "same prompt")
        assert ask(endpoint, "a new prompt") == "next turn"
        assert [r.reply_index for r in endpoint.requests] == [0, 0, 0, 0, 1]
