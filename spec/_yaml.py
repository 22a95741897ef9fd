"""YAML 1.2 for every user-written file (scripts, scenarios, capability declarations).

YAML 1.1 (PyYAML) reads ``answer: yes`` as ``true`` and ``0777`` as an octal number; YAML
1.2 (ruamel.yaml, pure-Python safe loader) keeps ``yes`` a string. :func:`load_yaml`
parses a document and reports a syntax error with its line; :class:`YamlLocator` maps a
path inside the document (``("actions", 2, "approve")``) to the line it starts on.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ._errors import HarnessUsageError

__all__ = ["YamlError", "YamlLocator", "load_yaml"]


class YamlError(HarnessUsageError):
    """A document that is not valid YAML 1.2.

    Attributes:
        source: How the document is named (a path, or ``<string>``).
        problem: What the parser found wrong.
        line: 1-based line of the problem, when known.
    """

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "YamlError"

    def __init__(self, source: str, problem: str, line: int | None) -> None:
        self.source = source
        self.problem = problem
        self.line = line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: invalid YAML: {problem}")


def _parser() -> YAML:
    # The pure loader: the C extension implements YAML 1.1 only.
    parser = YAML(typ="safe", pure=True)
    parser.version = (1, 2)
    return parser


#: Deepest nesting of mappings and sequences accepted in a user-written document.
MAX_YAML_DEPTH = 64


def load_yaml(text: str, *, source: str = "<string>", max_depth: int = MAX_YAML_DEPTH) -> Any:
    """Parse one YAML 1.2 document (JSON is YAML too) into plain Python values.

    Aliases are refused (a few lines of anchors can stand for billions of nodes) and so is
    nesting deeper than ``max_depth``; both are found in one pass over the parser's events,
    before any value is built.

    Raises:
        YamlError: naming ``source``, the line and the problem.
    """
    try:
        _refuse_unbounded(text, source, max_depth)
        return _parser().load(io.StringIO(text))
    except RecursionError:
        raise YamlError(source, f"nesting deeper than {max_depth} levels", None) from None
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or str(error)
        raise YamlError(source, problem, mark.line + 1 if mark is not None else None) from None
    except YAMLError as error:
        raise YamlError(source, str(error), None) from None


def _refuse_unbounded(text: str, source: str, max_depth: int) -> None:
    depth = 0
    for event in _parser().parse(io.StringIO(text)):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, AliasEvent):
            raise YamlError(
                source, f"aliases (*{event.anchor}) are not accepted; write the value out", line
            )
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlError(source, f"nesting deeper than {max_depth} levels", line)
        elif isinstance(event, CollectionEndEvent):
            depth -= 1


class YamlLocator:
    """Maps document paths to 1-based line numbers through the YAML node tree.

    Args:
        text: The document.
        spellings: Other spellings of a mapping key to try (e.g. camelCase and
            snake_case of the same field); default: the key itself only.
    """

    def __init__(self, text: str, spellings: Callable[[str], set[str]] | None = None) -> None:
        self._spellings = spellings or (lambda key: {key})
        try:
            self._root: Node | None = _parser().compose(io.StringIO(text))
        except YAMLError:
            self._root = None

    def line(self, path: Sequence[int | str]) -> int | None:
        """The line of the deepest node on ``path`` that exists, or ``None``."""
        node = self._root
        if node is None:
            return None
        best: int = node.start_mark.line + 1
        for item in path:
            child: Node | None = None
            if isinstance(node, MappingNode) and isinstance(item, str):
                wanted = self._spellings(item)
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.value in wanted:
                        child = value
                        best = key.start_mark.line + 1
                        break
            elif (
                isinstance(node, SequenceNode)
                and isinstance(item, int)
                and 0 <= item < len(node.value)
            ):
                child = node.value[item]
                best = child.start_mark.line + 1
            if child is None:
                return best
            node = child
        return best
