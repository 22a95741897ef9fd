"""Zoo areas "session identity", "capability honesty" and "turn settings": defects in
what an adapter says about itself and in what a turn passes on to its runtime."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from harness_testkit.spec import (
    Bootstrap,
    BootstrapFile,
    JsonResponseFormat,
    JSONValue,
    PromptControl,
    PromptTurnOptions,
)

from ._machinery import Defect, MutantAdapter, MutantControl, MutantSession

__all__ = ["DEFECTS"]


class _SuffixedSessionId(MutantSession):
    @property
    def session_id(self) -> str:
        """The runtime's own id instead of the one given to do_start."""
        return f"{self.inner.session_id}-runtime"


class _NeverResumed(MutantSession):
    @property
    def is_resume(self) -> bool:
        """Always False."""
        return False


class _WrongSpecificationVersion(MutantAdapter):
    @property
    def specification_version(self) -> str:
        """Not harness-v1."""
        return "harness-v2"


class _FlappingHarnessId(MutantAdapter):
    _reads = 0

    @property
    def harness_id(self) -> str:
        """Every other read names another harness."""
        self._reads += 1
        return self.fake.harness_id if self._reads % 2 else f"{self.fake.harness_id}-runtime"


class _StaticCapabilities(MutantAdapter):
    #: What harness-v1 has no place for: a static capabilities object.
    capabilities: ClassVar[dict[str, bool]] = {"steering": False, "compaction": False}


class _InvalidBootstrap(MutantAdapter):
    async def get_bootstrap(self) -> Any:
        """A recipe whose ``files`` is not a list of files."""
        return {"harnessId": self.harness_id, "bootstrapDir": ".harness/fake", "files": "x"}


class _ForeignBootstrap(MutantAdapter):
    async def get_bootstrap(self) -> Bootstrap:
        """A deterministic recipe that names another harness."""
        return Bootstrap(harness_id="other-harness", bootstrap_dir=".harness/fake", files=[])


class _UnstableBootstrap(MutantAdapter):
    _calls = 0

    async def get_bootstrap(self) -> Bootstrap:
        """A recipe whose marker file changes on every call."""
        self._calls += 1
        return Bootstrap(
            harness_id=self.harness_id,
            bootstrap_dir=".harness/fake",
            files=[BootstrapFile(path="marker.txt", content=f"generation {self._calls}\n")],
        )


def _json_format_dropped(session: MutantSession, options: Any) -> Any:
    return dataclasses.replace(options, response_format=None)


def _schema_ignored(session: MutantSession, options: PromptTurnOptions) -> PromptTurnOptions:
    response_format = options.response_format
    if isinstance(response_format, JsonResponseFormat) and response_format.schema_:
        # The runtime keeps "JSON" but drops the schema it was given.
        response_format = response_format.model_copy(update={"schema_": {}})
    return dataclasses.replace(options, response_format=response_format)


class _SteeringStubControl(MutantControl):
    offers_steering = True

    async def _submit_user_message(self, text: str) -> None:
        return None  # offered, accepted, and dropped


class _SilentCompact(MutantSession):
    async def do_compact(self, custom_instructions: str | None = None) -> None:
        return None  # accepted and ignored, although the runtime cannot compact


class _DeferredSteeringControl(MutantControl):
    async def _submit_user_message(self, text: str) -> None:
        self.session.memo.setdefault("deferred", []).append(text)


class _DeferredSteering(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        control = await super().do_prompt_turn(options)
        # Messages sent during the previous turn reach the runtime with the next one.
        deferred: list[str] = self.memo.setdefault("deferred", [])
        for text in deferred:
            await self.inner.turn.control.submit_user_message(text)  # type: ignore[union-attr]
        deferred.clear()
        return control


def _instructions_dropped(session: MutantSession, options: PromptTurnOptions) -> PromptTurnOptions:
    return dataclasses.replace(options, instructions=None)


def _skills_accumulate(session: MutantSession, options: PromptTurnOptions) -> PromptTurnOptions:
    skills: dict[str, Any] = session.memo.setdefault("skills", {})
    skills.update({skill.name: skill for skill in options.skills})
    return dataclasses.replace(options, skills=tuple(skills.values()))


class _HostOutputLostControl(MutantControl):
    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        await super().submit_tool_result(tool_call_id, None, is_error, tool_result)


_IDENTITY = "session identity"
_HONESTY = "capability honesty"
_SETTINGS = "turn settings"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "wrong-session-id",
        "ADAPTER-023",
        _IDENTITY,
        "session_id is the runtime's own id, not the one given to do_start.",
        session=_SuffixedSessionId,
    ),
    Defect(
        "is-resume-always-false",
        "ADAPTER-024",
        _IDENTITY,
        "is_resume is False even for sessions started from a state.",
        profile="codex",
        session=_NeverResumed,
    ),
    Defect(
        "wrong-specification-version",
        "ADAPTER-001",
        _IDENTITY,
        "specification_version is `harness-v2`.",
        adapter=_WrongSpecificationVersion,
    ),
    Defect(
        "harness-id-not-kebab-case",
        "ADAPTER-004",
        _IDENTITY,
        "harness_id is `Fake_Harness`.",
        fake={"harness_id": "Fake_Harness"},
    ),
    Defect(
        "harness-id-changes",
        "ADAPTER-003",
        _IDENTITY,
        "harness_id alternates between two values from one read to the next.",
        adapter=_FlappingHarnessId,
    ),
    Defect(
        "static-capabilities-object",
        "ADAPTER-009",
        _IDENTITY,
        "The adapter carries a static `capabilities` object.",
        adapter=_StaticCapabilities,
    ),
    Defect(
        "bootstrap-recipe-invalid",
        "BOOTSTRAP-001",
        _IDENTITY,
        "get_bootstrap() returns a recipe whose `files` is a string.",
        adapter=_InvalidBootstrap,
    ),
    Defect(
        "bootstrap-names-another-harness",
        "BOOTSTRAP-002",
        _IDENTITY,
        "get_bootstrap() returns a recipe whose harnessId is another harness's.",
        adapter=_ForeignBootstrap,
    ),
    Defect(
        "bootstrap-not-deterministic",
        "BOOTSTRAP-003",
        _IDENTITY,
        "get_bootstrap() returns a different recipe on every call.",
        adapter=_UnstableBootstrap,
    ),
    Defect(
        "json-format-accepted-undeclared",
        "ADAPTER-041",
        _HONESTY,
        "A runtime without JSON output runs JSON turns as plain text instead of refusing them.",
        turn_options=_json_format_dropped,
    ),
    Defect(
        "json-schema-ignored",
        "RESULT-020",
        _HONESTY,
        "JSON turns keep the JSON format but lose their schema on the way to the runtime.",
        profile="codex",
        prompt_options=_schema_ignored,
    ),
    Defect(
        "steering-method-undeclared",
        "ADAPTER-010",
        _HONESTY,
        "Controls offer submit_user_message although the runtime cannot steer (it drops the text).",
        profile="codex",
        control=_SteeringStubControl,
    ),
    Defect(
        "compact-undeclared-accepted",
        "ADAPTER-039",
        _HONESTY,
        "do_compact returns normally although the runtime cannot compact.",
        session=_SilentCompact,
    ),
    Defect(
        "steering-deferred",
        "STOP-014",
        _HONESTY,
        "A user message sent during a turn reaches the runtime only with the next turn.",
        profile="claude-code",
        session=_DeferredSteering,
        control=_DeferredSteeringControl,
    ),
    Defect(
        "instructions-dropped",
        "PROMPT-007",
        _SETTINGS,
        "The turn's instructions never reach the runtime.",
        prompt_options=_instructions_dropped,
    ),
    Defect(
        "skills-accumulate",
        "ADAPTER-027",
        _SETTINGS,
        "Skills of earlier turns stay offered on later turns.",
        prompt_options=_skills_accumulate,
    ),
    Defect(
        "host-output-lost",
        "HOSTTOOL-006",
        _SETTINGS,
        "Host tool results reach the runtime with a null output.",
        control=_HostOutputLostControl,
    ),
)
