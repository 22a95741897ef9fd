"""Bootstrap recipes: what an adapter installs into a sandbox, and their identities.

The identity of a recipe is computed exactly as the TypeScript implementation does, so
markers and snapshot names written by either side are recognised by the other: SHA-256
over UTF-8 fields each followed by a NUL byte (``harnessId``, ``bootstrapDir``, then every
file sorted by path as ``localeCompare`` orders them, path then content, then the compact
JSON of the ``commands`` array, then the schema version ``"1"``); the identity is the
first 16 lowercase hex digits.
"""

from __future__ import annotations

import hashlib
import posixpath
import unicodedata

from pydantic import Field

from ._json import dump_json
from ._stream_parts import WireModel

__all__ = [
    "BOOTSTRAP_SCHEMA_VERSION",
    "SANDBOX_BOOTSTRAP_IDENTITY_VERSION",
    "Bootstrap",
    "BootstrapCommand",
    "BootstrapFile",
    "bootstrap_marker_path",
    "hash_fields",
    "locale_compare_key",
    "sandbox_bootstrap_identity",
]

BOOTSTRAP_SCHEMA_VERSION = 1
SANDBOX_BOOTSTRAP_IDENTITY_VERSION = 1


class BootstrapFile(WireModel):
    """A file the recipe writes (relative paths resolve against the sandbox cwd)."""

    path: str
    content: str


class BootstrapCommand(WireModel):
    """A shell command the recipe runs from the bootstrap directory."""

    command: str


class Bootstrap(WireModel):
    """A harness bootstrap recipe (``get_bootstrap()``)."""

    harness_id: str
    bootstrap_dir: str
    files: list[BootstrapFile] = Field(default_factory=list)
    commands: list[BootstrapCommand] = Field(default_factory=list)

    def identity(self) -> str:
        """The recipe identity: 16 lowercase hex digits."""
        fields: list[str] = [self.harness_id, self.bootstrap_dir]
        for file in sorted(self.files, key=lambda item: locale_compare_key(item.path)):
            fields.extend((file.path, file.content))
        fields.append(dump_json([command.to_wire() for command in self.commands]))
        fields.append(str(BOOTSTRAP_SCHEMA_VERSION))
        return hash_fields(fields)


def hash_fields(fields: list[str]) -> str:
    """SHA-256 over NUL-terminated UTF-8 fields, first 16 hex digits."""
    digest = hashlib.sha256()
    for field in fields:
        digest.update(field.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def locale_compare_key(text: str) -> tuple[tuple[tuple[int, str], ...], tuple[int, ...], str]:
    """A sort key approximating ICU root collation (``String.prototype.localeCompare``).

    Primary level: whitespace, then punctuation, then symbols, then digits, then letters
    (letters compared case- and accent-insensitively); tertiary level: lowercase before
    uppercase; code points break remaining ties. This matches ``localeCompare`` for the
    ASCII paths recipes use in practice.
    """

    def primary(char: str) -> tuple[int, str]:
        base = unicodedata.normalize("NFD", char)[0]
        if base.isspace():
            group = 0
        elif base.isalpha():
            group = 4
        elif base.isdigit():
            group = 3
        elif unicodedata.category(base).startswith("P"):
            group = 1
        else:
            group = 2
        return (group, base.casefold())

    primaries = tuple(primary(char) for char in text)
    tertiary = tuple(1 if char.isupper() else 0 for char in text)
    return (primaries, tertiary, text)


def bootstrap_marker_path(bootstrap_dir: str, identity: str, default_working_directory: str) -> str:
    """``<resolved bootstrapDir>/.bootstrap-<identity>.ok``.

    Args:
        bootstrap_dir: The recipe's directory, absolute or relative to the sandbox cwd.
        identity: The recipe identity.
        default_working_directory: The sandbox's absolute default working directory.
    """
    directory = posixpath.join(default_working_directory, bootstrap_dir)
    return posixpath.join(posixpath.normpath(directory), f".bootstrap-{identity}.ok")


def sandbox_bootstrap_identity(
    recipe_identity: str | None,
    *,
    bootstrap_hash: str | None = None,
    work_dir: str | None = None,
    has_on_bootstrap: bool = False,
) -> str | None:
    """The identity a provider receives for snapshot reuse.

    Equal to the recipe identity unless a caller ``on_bootstrap`` exists or both a recipe
    and a ``work_dir`` are set; then a second hash over the version, the recipe identity,
    the bootstrap hash and the work dir (each empty when absent).
    """
    if not has_on_bootstrap and not (recipe_identity is not None and work_dir is not None):
        return recipe_identity
    return hash_fields(
        [
            str(SANDBOX_BOOTSTRAP_IDENTITY_VERSION),
            recipe_identity or "",
            bootstrap_hash or "",
            work_dir or "",
        ]
    )
