"""Tracebacks as evidence: the adapter's own frames first, then the full trace.

An *adapter frame* is one outside the kit's own packages (``conformance``, ``reference``,
``spec``, ``sandbox``, ``simulate``) and outside the libraries the kit runs on (the
standard library, anyio, trio, hypothesis, pydantic, pytest). The fake harness counts as
an adapter: it is the adapter under test of ``check --self``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterator

__all__ = ["MAX_TRACEBACK_CHARS", "format_error", "format_stack", "is_adapter_frame"]

#: Longest traceback kept in a report or bundle (the middle is elided).
MAX_TRACEBACK_CHARS = 20_000


def _library_roots() -> tuple[str, ...]:
    roots: list[str] = [os.path.dirname(os.__file__)]
    for name in (
        "anyio",
        "trio",
        "hypothesis",
        "pydantic",
        "_pytest",
        "pytest",
        "outcome",
        "click",
    ):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            roots.append(os.path.dirname(path))
    kit = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for package in ("conformance", "reference", "spec", "sandbox", "simulate", "harness_testkit"):
        roots.append(os.path.join(kit, package))
    return tuple(os.path.join(os.path.abspath(root), "") for root in roots)


def is_adapter_frame(filename: str) -> bool:
    """Whether a frame's file belongs to the adapter (see the module docstring)."""
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not any(path.startswith(root) for root in _library_roots())


def _walk(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    stack = [error]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, BaseExceptionGroup):
            stack.extend(reversed(item.exceptions))
        for linked in (item.__cause__, item.__context__):
            if linked is not None:
                stack.append(linked)


def _clip(text: str) -> str:
    if len(text) <= MAX_TRACEBACK_CHARS:
        return text
    half = MAX_TRACEBACK_CHARS // 2
    return f"{text[:half]}\n... ({len(text) - MAX_TRACEBACK_CHARS} characters elided) ...\n{text[-half:]}"


def format_stack(frames: traceback.StackSummary) -> str:
    """A stack (e.g. of a stuck thread), adapter frames first."""
    adapter = [frame for frame in frames if is_adapter_frame(frame.filename)]
    head = ""
    if adapter:
        head = "adapter frames (most recent call last):\n" + "".join(
            traceback.format_list(adapter[-15:])
        )
        head += "\n"
    return _clip(head + "full stack (most recent call last):\n" + "".join(frames.format()))


def format_error(error: BaseException) -> str:
    """The formatted traceback of ``error`` (groups and causes included), adapter frames first."""
    adapter: list[traceback.FrameSummary] = []
    for item in _walk(error):
        summary = traceback.extract_tb(item.__traceback__, limit=200)
        adapter.extend(frame for frame in summary if is_adapter_frame(frame.filename))
    try:
        full = "".join(traceback.TracebackException.from_exception(error, limit=60).format())
    except RecursionError:  # a pathological chain: the first line is still evidence
        full = f"{type(error).__name__}: {error!s:.2000}\n"
    head = ""
    if adapter:
        seen: set[tuple[str, int | None, str]] = set()
        ordered = []
        for frame in adapter:
            key = (frame.filename, frame.lineno, frame.name)
            if key not in seen:
                seen.add(key)
                ordered.append(frame)
        head = (
            "adapter frames (most recent call last):\n"
            + "".join(traceback.format_list(ordered[-15:]))
            + "\n"
        )
    return _clip(head + full)
