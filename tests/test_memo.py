"""torchup.core.memo.last_answer: the last answer, for the same objects only."""

from __future__ import annotations

from torchup.core.memo import last_answer


def test_the_same_objects_are_answered_from_memory_and_equal_ones_are_not() -> None:
    calls: list[object] = []

    @last_answer
    def length(text: str, extra: object = None) -> int:
        calls.append(text)
        return len(text)

    first = "x" * 1000
    equal = "".join(["x"] * 1000)  # (equal, another object)
    assert first == equal and first is not equal
    assert [length(first), length(first), length(equal), length(first)] == [1000] * 4
    assert len(calls) == 3  # the repeat came from memory; an equal text, then the first again, did not
    marker = object()
    length(first, marker)
    length(first, marker)
    length(first, object())
    assert len(calls) == 5  # every argument counts, by identity
