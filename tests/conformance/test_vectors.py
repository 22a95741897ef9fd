"""Language-neutral test vectors: committed, current, and reproduced by the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_testkit.conformance import load_vector, replay_trace
from harness_testkit.conformance._adapter._vectors import BUILTIN_TRACES, make_vector

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "vectors"


def test_every_builtin_trace_has_a_committed_vector() -> None:
    committed = {path.stem for path in VECTORS.glob("*.json")}
    assert committed == set(BUILTIN_TRACES)


@pytest.mark.parametrize("name", sorted(BUILTIN_TRACES))
def test_committed_vector_is_current(name: str) -> None:
    description, turns = BUILTIN_TRACES[name]
    committed = load_vector(VECTORS / f"{name}.json")
    regenerated = json.loads(json.dumps(make_vector(name, description, turns), default=str))
    assert committed == regenerated, (
        f"conformance/vectors/{name}.json is stale; regenerate with "
        "harness_testkit.conformance._adapter._vectors.write_builtin_vectors"
    )


@pytest.mark.parametrize("path", sorted(VECTORS.glob("*.json")), ids=lambda p: p.stem)
def test_the_reference_reproduces_each_vector(path: Path) -> None:
    vector = load_vector(path)
    assert replay_trace(vector["harnessParts"]) == vector["expectedConsumerParts"]


def test_a_file_that_is_not_a_vector_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not a harness-testkit test vector"):
        load_vector(bogus)
