"""Skills: named instruction bundles with optional files, delivered with every turn."""

from __future__ import annotations

import posixpath

from pydantic import Field, field_validator, model_validator

from ._stream_parts import WireModel

__all__ = ["Skill", "SkillFile", "skill_file_path_problem", "skill_name_problem"]


def skill_name_problem(name: str) -> str | None:
    """Return why ``name`` cannot name a skill directory, or ``None`` when it can."""
    if not name or name != name.strip():
        return "it must be non-empty without surrounding whitespace"
    if name in (".", ".."):
        return "it must not be '.' or '..'"
    if any(char in name for char in "/\\\0"):
        return "it must not contain '/', '\\' or NUL"
    return None


def skill_file_path_problem(path: str) -> str | None:
    """Return why ``path`` is not a safe skill-relative POSIX path, or ``None``.

    Safe means: non-empty, relative (no leading ``/``), POSIX separators only, no NUL,
    and no ``..`` segment anywhere (a bare ``..`` included).
    """
    if not path:
        return "it is empty"
    if "\0" in path:
        return "it contains NUL"
    if "\\" in path:
        return "it uses a backslash; use POSIX '/' separators"
    if path.startswith("/"):
        return "it is absolute; give a path relative to the skill directory"
    if ".." in path.split("/"):
        return "it contains a '..' segment"
    normalized = posixpath.normpath(path)
    if normalized in (".", ""):
        return "it does not name a file inside the skill directory"
    return None


class SkillFile(WireModel):
    """An extra file of a skill, at a skill-relative POSIX path."""

    path: str
    content: str

    @field_validator("path")
    @classmethod
    def _safe_path(cls, value: str) -> str:
        problem = skill_file_path_problem(value)
        if problem is not None:
            raise ValueError(f"Invalid skill file path {value!r}: {problem}.")
        return value


class Skill(WireModel):
    """A skill: ``SKILL.md`` is rendered from name, description and content."""

    name: str
    description: str
    content: str
    files: list[SkillFile] | None = Field(default=None)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        problem = skill_name_problem(value)
        if problem is not None:
            raise ValueError(f"Invalid skill name: {value} ({problem}).")
        return value

    @model_validator(mode="after")
    def _unique_files(self) -> Skill:
        # A later file with the same normalized path replaces an earlier one when
        # materialized; a duplicate in one skill is almost always a mistake, so say so.
        seen: set[str] = set()
        for file in self.files or []:
            normalized = posixpath.normpath(file.path)
            if normalized in seen:
                raise ValueError(
                    f"Invalid skill file path for {self.name}: {file.path} appears twice."
                )
            seen.add(normalized)
        return self

    def render_skill_md(self) -> str:
        """Render ``SKILL.md`` the way adapters materialize it."""
        return f"---\nname: {self.name}\ndescription: {self.description}\n---\n\n{self.content}"
