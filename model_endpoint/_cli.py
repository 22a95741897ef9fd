"""``harness-testkit model-endpoint``: serve a script until Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType

import click

from ._script import EndpointScript

__all__ = ["model_endpoint"]


def _load(path: Path, kit: bool, tool_names: tuple[str, ...]) -> EndpointScript:
    if not kit:
        if tool_names:
            raise click.UsageError("--tool-name only applies with --kit-script")
        return EndpointScript.from_file(path)
    from harness_testkit.scripting import Script

    from ._convert import from_kit_script

    mapping: dict[str, str] = {}
    for pair in tool_names:
        key, sep, native = pair.partition("=")
        if not sep or not key or not native:
            raise click.BadParameter(f"{pair!r} is not KEY=NATIVE", param_hint="--tool-name")
        mapping[key] = native
    return from_kit_script(Script.from_file(path), tool_names=mapping)


@click.command("model-endpoint")
@click.option(
    "--script",
    "script_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Endpoint script (YAML or JSON).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="0: any free port."
)
@click.option(
    "--kit-script", "kit", is_flag=True, help="The file is a fake_harness Script; convert it."
)
@click.option(
    "--tool-name",
    "tool_names",
    multiple=True,
    metavar="KEY=NATIVE",
    help="With --kit-script: a built-in's native name (repeatable), e.g. write=Write.",
)
def model_endpoint(script_path: Path, port: int, kit: bool, tool_names: tuple[str, ...]) -> None:
    """Serve a scripted model on 127.0.0.1 until interrupted.

    Prints the base URL first (Anthropic clients: as is; OpenAI clients: with /v1), then
    serves POST /v1/messages, /v1/messages/count_tokens, /v1/responses and
    /v1/chat/completions. On exit, reports the requests served and every request the
    script did not foresee (exit status 1 when there was one).
    """
    # Serving needs the `model-endpoint` extra; without it this raises MissingExtraError
    # (the console script's exit 2) before any work, and `--help` never gets here.
    from ._server import ModelEndpoint

    try:
        script = _load(script_path, kit, tool_names)
    except (ValueError, OSError) as error:
        raise click.BadParameter(f"{script_path}: {error}", param_hint="--script") from error
    stop = threading.Event()

    def on_terminate(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_terminate)
    try:
        with ModelEndpoint(script, port=port) as endpoint:
            click.echo(endpoint.base_url)
            try:
                while not stop.wait(0.2):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    errors = endpoint.errors
    click.echo(f"served {len(endpoint.requests)} model request(s)", err=True)
    for failure in errors:
        click.echo(f"endpoint error ({failure.kind}): {failure.message}", err=True)
    if errors:
        raise SystemExit(1)
