"""The kit's own sandbox image: ``FROM scratch`` plus the host's static busybox.

No image registry is assumed reachable, so the Docker provider builds this image locally
(in memory, through the SDK) the first time it needs it: Debian's static busybox with its
applets installed, ``/tmp``, a non-root ``sandbox`` user (uid 1000) and ``/workspace``.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
import tarfile
from pathlib import Path

from harness_testkit import __version__
from harness_testkit.spec import SandboxUnavailableError

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_SANDBOX_IMAGE",
    "SANDBOX_HOME",
    "SANDBOX_UID",
    "SANDBOX_WORKSPACE",
    "SNAPSHOT_SEED",
    "build_context",
    "find_static_busybox",
    "sandbox_dockerfile",
]

#: Where the kit's image puts its non-root user and the working directory.
SANDBOX_UID = 1000
SANDBOX_HOME = "/home/sandbox"
SANDBOX_WORKSPACE = "/workspace"
#: Where a snapshot keeps the workspace it baked: the session's workspace is a fresh
#: size-limited tmpfs, filled from here when a session starts from the snapshot.
SNAPSHOT_SEED = "/opt/harness-testkit-seed"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def find_static_busybox(path: str | os.PathLike[str] | None = None) -> Path:
    """Locate a statically linked busybox on the host for the sandbox image.

    Args:
        path: An explicit busybox binary; default: ``/bin/busybox`` or ``/usr/bin/busybox``.

    Returns:
        The binary's path.

    Raises:
        SandboxUnavailableError: None was found, or the one found is dynamically linked.
    """
    candidates = (
        [Path(path)] if path is not None else [Path("/bin/busybox"), Path("/usr/bin/busybox")]
    )
    for candidate in candidates:
        if candidate.is_file():
            if _elf_needs_interpreter(candidate):
                raise SandboxUnavailableError(
                    f"{candidate} is a dynamically linked busybox, which cannot run in the "
                    "kit's FROM-scratch sandbox image; install the static one "
                    "(`apt-get install busybox-static`) or pass image= to use another image."
                )
            return candidate
    where = " or ".join(str(candidate) for candidate in candidates)
    raise SandboxUnavailableError(
        f"No busybox binary at {where}, so the sandbox image cannot be built; install it "
        "with `apt-get install busybox-static` (or pass busybox= / --busybox), or pass "
        "image= to use an image you already have."
    )


def _elf_needs_interpreter(path: Path) -> bool:
    """Whether an ELF binary has a PT_INTERP header (is dynamically linked)."""
    with path.open("rb") as file:
        header = file.read(64)
        if header[:4] != b"\x7fELF":
            return False
        is_64 = header[4] == 2
        endian = "<" if header[5] == 1 else ">"
        if is_64:
            (phoff,) = struct.unpack_from(endian + "Q", header, 0x20)
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 0x36)
        else:
            (phoff,) = struct.unpack_from(endian + "I", header, 0x1C)
            phentsize, phnum = struct.unpack_from(endian + "HH", header, 0x2A)
        for index in range(phnum):
            file.seek(phoff + index * phentsize)
            (p_type,) = struct.unpack(endian + "I", file.read(4))
            if p_type == 3:  # PT_INTERP
                return True
    return False


def sandbox_dockerfile() -> str:
    return "\n".join(
        [
            "FROM scratch",
            "COPY busybox /bin/busybox",
            'RUN ["/bin/busybox", "--install", "-s", "/bin"]',
            'RUN ["/bin/sh", "-c", "'
            f"mkdir -p /tmp /root {SANDBOX_HOME} {SANDBOX_WORKSPACE} {SNAPSHOT_SEED} /etc "
            "/usr/local/bin /usr/bin /sbin /usr/sbin"
            " && chmod 1777 /tmp"
            " && echo root:x:0:0:root:/root:/bin/sh > /etc/passwd"
            f" && echo sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:{SANDBOX_HOME}:/bin/sh"
            " >> /etc/passwd"
            " && echo root:x:0: > /etc/group"
            f" && echo sandbox:x:{SANDBOX_UID}: >> /etc/group"
            f" && chown {SANDBOX_UID}:{SANDBOX_UID} {SANDBOX_HOME} {SANDBOX_WORKSPACE}"
            f" {SNAPSHOT_SEED}"
            '"]',
            f"ENV HOME={SANDBOX_HOME} PATH={DEFAULT_PATH}",
            f"WORKDIR {SANDBOX_WORKSPACE}",
            f"USER {SANDBOX_UID}:{SANDBOX_UID}",
            'CMD ["/bin/sh"]',
            "",
        ]
    )


#: The image the provider builds when none is given; the tag changes with its recipe, so
#: an engine holding an image built from an older recipe builds the new one.
DEFAULT_SANDBOX_IMAGE = (
    f"harness-testkit-sandbox:{__version__}-"
    + hashlib.sha256(sandbox_dockerfile().encode()).hexdigest()[:8]
)


def build_context(busybox: Path) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        dockerfile = sandbox_dockerfile().encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        archive.add(str(busybox), arcname="busybox")
    buffer.seek(0)
    return buffer
