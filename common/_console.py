"""Console output that suits where it goes: a terminal, a CI log or a pipe.

A terminal gets rich's colours, its width and live progress bars. A CI log or a pipe
gets no cursor movement and no hard wrapping: rich would wrap at 80 columns there and
split check ids mid-word, while a log viewer wraps long lines itself. ``NO_COLOR`` (any
non-empty value, https://no-color.org) and ``TERM=dumb`` remove every escape code:
colours, bold and dim, and the cursor movement of live displays.
"""

from __future__ import annotations

import os
import shutil
import sys
from types import TracebackType
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported when a command prints, not with `common`
    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["LOG_WIDTH", "RunProgress", "interactive", "make_console", "no_escape_codes"]

#: The width of a console that writes to a log or a pipe: wide enough that nothing the kit
#: prints is wrapped (a check id, a requirement list, a replay command stay on one line).
LOG_WIDTH = 4096


def no_escape_codes() -> bool:
    """Whether the user asked for output without escape codes (``NO_COLOR``, ``TERM=dumb``)."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def make_console(
    file: IO[str] | None = None, *, stderr: bool = False, log_width: int = LOG_WIDTH
) -> Console:
    """A rich console for one of the kit's commands.

    Args:
        file: Where to write (default: stdout, or stderr with ``stderr``).
        stderr: Write to stderr.
        log_width: The width when the stream is not a terminal (a log, a pipe); the
            default wraps nothing.
    """
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    tty = _isatty(stream)
    if no_escape_codes():
        width = shutil.get_terminal_size().columns if tty else log_width
        return Console(
            file=file,
            stderr=stderr,
            color_system=None,
            force_terminal=False,
            no_color=True,
            highlight=False,
            width=width,
        )
    if tty:
        return Console(file=file, stderr=stderr, highlight=False)
    # Not a terminal: rich still colours when FORCE_COLOR asks for it.
    return Console(file=file, stderr=stderr, highlight=False, width=log_width)


def interactive(console: Console) -> bool:
    """Whether ``console`` writes to a terminal that can show a live display."""
    return (
        console.is_terminal
        and not console.is_dumb_terminal
        and not no_escape_codes()
        and _isatty(console.file)
    )


class RunProgress:
    """The progress of a long run over a known number of items (checks, mutants, sessions).

    On a terminal, a live bar names the item running now and is gone when the run ends;
    elsewhere (a CI log, a pipe), one line per finished item: ``[3/91] pass  STREAM-001``.
    Use it as a context manager.

    Args:
        console: Where to write (see :func:`make_console`).
        total: How many items the run has.
        title: What runs, for the bar and the log's first line (``my.module:make (smoke)``).
        unit: What the items are (``checks``, ``mutants``, ``sessions``).
    """

    def __init__(self, console: Console, *, total: int, title: str, unit: str) -> None:
        self.console = console
        self.total = total
        self.title = title
        self.unit = unit
        self.finished_count = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if interactive(console):
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._progress.add_task(title, total=total)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        else:
            # "1 sessions" reads wrong: the units are plurals ending in "s".
            unit = self.unit[:-1] if self.total == 1 and self.unit.endswith("s") else self.unit
            self.note(f"{self.title}: {self.total} {unit}")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def started(self, name: str) -> None:
        """``name`` runs now (the bar shows it; a log shows finished items only)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=f"{self.title} {name}")

    def finished(self, name: str, outcome: str, detail: str = "", *, notable: bool = False) -> None:
        """``name`` ended with ``outcome``; ``detail`` follows it on its line.

        Args:
            name: The item (a check id, a mutant's name, a session id).
            outcome: How it ended (``pass``, ``fail``, ``killed``, ...).
            detail: More on the same line (a requirement, a duration).
            notable: On a terminal, also print the line above the bar (a failure).
        """
        self.finished_count += 1
        line = f"[{self.finished_count}/{self.total}] {outcome:8} {name}"
        if detail:
            line += f" {detail}"
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1)
            if notable:
                self._progress.console.print(line, markup=False, highlight=False)
            return
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        """A line outside the count (above the bar on a terminal)."""
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)
