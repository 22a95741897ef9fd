"""The adapter host protocol on the kit's side: frames, errors and hosts that misbehave.

Each misbehaving host is a few lines of Python speaking (or breaking) the protocol on
stdio, so these tests need no Node: they prove the kit names the rule a host broke,
never hangs on one, and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_testkit.adapters.node._host import HostProcess
from harness_testkit.spec import (
    HOST_PROTOCOL_VERSION,
    HOST_TO_KIT_METHODS,
    KIT_TO_HOST_METHODS,
    HarnessCapabilityUnsupportedError,
    HostAdapterError,
    HostProtocolError,
    host_protocol_schema,
    parse_host_message,
)

requirement = pytest.mark.requirement

#: A host that answers every request with the result its script gives for the method.
HOST_TEMPLATE = """
import json, sys, os
answers = json.loads(os.environ["ANSWERS"])
for line in sys.stdin:
    frame = json.loads(line)
    if "id" not in frame:
        continue
    answer = answers.get(frame["method"], {"result": None})
    if answer == "die":
        sys.stderr.write("the host is going away\\n"); sys.stderr.flush()
        os._exit(7)
    if answer == "silent":
        continue
    if isinstance(answer, dict) and "raw" in answer:
        sys.stdout.write(answer["raw"] + "\\n"); sys.stdout.flush(); continue
    reply = {"jsonrpc": "2.0", "id": answer.get("id", frame["id"])}
    reply.update({k: v for k, v in answer.items() if k != "id"})
    sys.stdout.write(json.dumps(reply) + "\\n"); sys.stdout.flush()
"""


def fake_host(tmp_path: Path, answers: dict[str, object]) -> HostProcess:
    script = tmp_path / "host.py"
    script.write_text(textwrap.dedent(HOST_TEMPLATE), encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "ANSWERS": json.dumps(answers)}
    return HostProcess([sys.executable, str(script)], env=env, cwd=str(tmp_path), label="fake-host")


@pytest.fixture
def hosts() -> Iterator[list[HostProcess]]:
    started: list[HostProcess] = []
    yield started
    for host in started:
        host.close(grace=1.0)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie of ours counts as gone (its parent reaps it on close).
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "\tZ" in status.read_text()


# -- models ---------------------------------------------------------------------------------


@requirement("HOST-002")
@pytest.mark.parametrize(
    ("frame", "why"),
    [
        ([], "not a JSON-RPC 2.0 object"),
        ({"jsonrpc": "1.0", "id": 1, "result": None}, "not a JSON-RPC 2.0 object"),
        ({"jsonrpc": "2.0", "id": 1}, "neither result nor error"),
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}}, "both"),
        ({"jsonrpc": "2.0", "method": ""}, "malformed frame"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}}, "malformed frame"),
    ],
)
def test_malformed_frames_are_refused_naming_the_rule(frame: object, why: str) -> None:
    with pytest.raises(HostProtocolError, match=why) as caught:
        parse_host_message(frame)
    assert caught.value.requirement == "HOST-002"
    assert str(caught.value).startswith("[HOST-002]")


def test_well_formed_frames_parse() -> None:
    request = parse_host_message(
        {"jsonrpc": "2.0", "id": "h1", "method": "sandbox/run", "params": {}}
    )
    notification = parse_host_message({"jsonrpc": "2.0", "method": "emit", "params": {"turn": "t"}})
    response = parse_host_message({"jsonrpc": "2.0", "id": 3, "result": None})
    assert type(request).__name__ == "HostRequest"
    assert type(notification).__name__ == "HostNotification"
    assert type(response).__name__ == "HostResponse"


def test_the_schema_describes_every_method_both_ways() -> None:
    schema = host_protocol_schema()
    assert schema["x-protocolVersion"] == HOST_PROTOCOL_VERSION
    assert set(schema["x-methods"]) == set(KIT_TO_HOST_METHODS) | set(HOST_TO_KIT_METHODS)
    for method, entry in schema["x-methods"].items():
        reference = entry["params"]["$ref"].rsplit("/", 1)[-1]
        assert reference in schema["$defs"], method
    assert {"emit", "log", "$/cancelRequest"} <= set(schema["x-notifications"])


# -- hosts that misbehave -----------------------------------------------------------------


@requirement("HOST-001")
def test_a_line_that_is_not_json_ends_the_connection_quoting_it(
    tmp_path: Path, hosts: list[HostProcess]
) -> None:
    host = fake_host(tmp_path, {"initialize": {"raw": "Starting up..."}})
    hosts.append(host)
    with pytest.raises(HostProtocolError, match="not JSON: b'Starting up") as caught:
        host.call("initialize", {}, timeout=10)
    assert caught.value.requirement == "HOST-001"
    assert "logs go to stderr" in str(caught.value)


@requirement("HOST-003")
def test_an_answer_to_a_request_never_sent_is_a_violation(
    tmp_path: Path, hosts: list[HostProcess]
) -> None:
    host = fake_host(tmp_path, {"describe": {"id": 999, "result": None}})
    hosts.append(host)
    with pytest.raises(HostProtocolError, match="request 999") as caught:
        host.call("describe", {}, timeout=10)
    assert caught.value.requirement == "HOST-003"


@requirement("HOST-005")
def test_errors_come_through_as_the_specs_own_classes(
    tmp_path: Path, hosts: list[HostProcess]
) -> None:
    capability = {
        "error": {
            "code": -32000,
            "message": "no compaction",
            "data": {
                "name": "AI_HarnessCapabilityUnsupportedError",
                "message": "no compaction",
                "harnessId": "x",
            },
        }
    }
    plain = {
        "error": {
            "code": -32000,
            "message": "boom",
            "data": {"name": "TypeError", "message": "boom"},
        }
    }
    refused = {"error": {"code": -32601, "message": "unknown method 'doCompact'"}}
    host = fake_host(tmp_path, {"doCompact": capability, "doStop": plain, "doDetach": refused})
    hosts.append(host)
    with pytest.raises(HarnessCapabilityUnsupportedError, match="no compaction") as unsupported:
        host.call("doCompact", {}, timeout=10)
    assert unsupported.value.harness_id == "x"
    with pytest.raises(HostAdapterError) as adapter_error:
        host.call("doStop", {}, timeout=10)
    assert adapter_error.value.name == "TypeError"
    assert str(adapter_error.value) == "TypeError: boom"
    with pytest.raises(HostProtocolError, match="refused 'doDetach'") as protocol:
        host.call("doDetach", {}, timeout=10)
    assert protocol.value.requirement == "HOST-005"


@requirement("HOST-008")
def test_a_host_that_never_answers_fails_the_call_in_time(
    tmp_path: Path, hosts: list[HostProcess]
) -> None:
    host = fake_host(tmp_path, {"done": "silent"})
    hosts.append(host)
    started = time.monotonic()
    with pytest.raises(HostProtocolError, match=r"did not answer 'done' within 0\.5 s") as caught:
        host.call("done", {"turn": "t1"}, timeout=0.5)
    assert caught.value.requirement == "HOST-008"
    assert time.monotonic() - started < 5
    # The connection stays usable after a call the kit gave up on.
    assert host.call("describe", {}, timeout=10) is None


@requirement("HOST-009")
def test_a_host_that_dies_fails_pending_calls_with_its_status_and_stderr(
    tmp_path: Path, hosts: list[HostProcess]
) -> None:
    host = fake_host(tmp_path, {"doStart": "die"})
    hosts.append(host)
    with pytest.raises(HostProtocolError) as caught:
        host.call("doStart", {}, timeout=10)
    message = str(caught.value)
    assert caught.value.requirement == "HOST-009"
    assert "exited with status 7" in message
    assert "the host is going away" in message
    assert host.broken is caught.value
    # Every later call fails at once with the same reason.
    with pytest.raises(HostProtocolError, match="status 7"):
        host.call("describe", {}, timeout=10)


@requirement("HOST-009")
def test_closing_ends_the_host_and_its_process_group(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(
        textwrap.dedent(
            """
            import subprocess, sys, time
            child = subprocess.Popen(["sleep", "300"])
            sys.stderr.write(f"child {child.pid}\\n"); sys.stderr.flush()
            for line in sys.stdin:
                pass
            time.sleep(300)  # ignores its closed stdin: the kit must still end it
            """
        ),
        encoding="utf-8",
    )
    host = HostProcess(
        [sys.executable, str(script)],
        env={"PATH": os.environ["PATH"]},
        cwd=str(tmp_path),
        label="stubborn",
    )
    deadline = time.monotonic() + 10
    while "child" not in host.stderr_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(host.stderr_tail().split("child ")[1].split()[0])
    host.close(grace=0.5)
    assert _gone(host.pid)
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "a process the host started outlived it"
