"""Replay bundles: read and validate one before anything in it is trusted.

A bundle is JSON written by a failing check (``_runner._write_bundle``). Reading one is
bounded (``_inputs``: a regular file, size, depth, JSON-safe integers) and validated by
:class:`Bundle`; every problem is a :class:`BundleError` naming the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness_testkit.common import MAX_SAFE_INTEGER, InputError, read_structured
from harness_testkit.spec import HarnessUsageError

__all__ = ["BUNDLE_VERSION", "Bundle", "BundleError", "load_bundle_model"]

BUNDLE_VERSION = 1


class BundleError(HarnessUsageError):
    """The file is not a usable replay bundle; the message names the field."""

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "BundleError"


class Bundle(BaseModel):
    """The fields of a replay bundle that replay uses (others are kept for people)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    bundle_version: Literal[1] = Field(alias="bundleVersion")
    adapter: str = Field(min_length=1, max_length=500)
    capabilities: dict[str, Any]
    profile: Literal["smoke", "standard", "exhaustive"]
    seed: int = Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER, strict=True)
    sandbox: Literal["local", "docker"]
    backend: Literal["asyncio", "trio"]
    check: str = Field(min_length=1, max_length=200)
    failed_requirement: str | None = Field(default=None, alias="failedRequirement")
    message: str = ""
    traceback: str | None = None
    scenario: Any = None


def load_bundle_model(path: Path) -> Bundle:
    """Read and validate the bundle at ``path``.

    Raises:
        BundleError: naming the file and what is wrong.
    """
    try:
        data = read_structured(path, what="replay bundle", json_only=True)
    except InputError as error:
        raise BundleError(str(error)) from None
    if not isinstance(data, dict):
        raise BundleError(f"{path} is not a replay bundle: expected a JSON object")
    if data.get("bundleVersion") != BUNDLE_VERSION:
        raise BundleError(
            f"{path} is not a harness-testkit replay bundle of version {BUNDLE_VERSION} "
            f"(bundleVersion: {str(data.get('bundleVersion'))[:40]!r})"
        )
    try:
        return Bundle.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or '(root)'}: {item['msg']}"
            for item in error.errors()[:5]
        )
        raise BundleError(f"{path} is not a valid replay bundle: {problems}") from None
