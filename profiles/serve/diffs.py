"""Side-by-side diffs of two texts, as rows the studio shows in two columns.

Rows hold plain text split into segments marked changed or not; the page escapes every segment
when it draws it, so a diff of hostile text is as harmless as the text. Long unchanged runs fold
into one row that says how many lines it hides.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = ["DiffRow", "Segment", "side_by_side"]

#: Lines of context kept on each side of a change when a run of unchanged lines folds.
CONTEXT_LINES = 3
#: Lines longer than this are compared whole, not character by character (that is quadratic).
_INTRALINE_CHARS = 2_000
#: What a line is compared in: words, runs of spaces, single other characters.
_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class Segment:
    """A piece of one side of a row; `changed` pieces are highlighted."""

    text: str
    changed: bool = False


@dataclass(frozen=True)
class DiffRow:
    """One row: `same`, `changed`, `removed` (left only), `added` (right only) or `skipped`.

    A `skipped` row stands for `hidden` unchanged lines.
    """

    kind: str
    left_no: int | None = None
    left: tuple[Segment, ...] = ()
    right_no: int | None = None
    right: tuple[Segment, ...] = ()
    hidden: int = 0


def side_by_side(old: str, new: str, *, context: int = CONTEXT_LINES) -> list[DiffRow]:
    """The rows of a side-by-side diff from `old` to `new`; an empty list when they are equal."""
    if old == new:
        return []
    # split at "\n" only: texts that differ by a final newline or a "\r" differ in the rows too;
    # a final newline both share ends their last lines rather than starting an empty one
    left, right = old.split("\n"), new.split("\n")
    if old.endswith("\n") and new.endswith("\n"):
        left, right = left[:-1], right[:-1]
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":  # nothing before the first change, nor after the last, needs context
            rows.extend(_equal(left, i1, i2, j1, context, first=index == 0, last=index == len(opcodes) - 1))
        elif tag == "replace":
            for offset in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + offset, j1 + offset
                if i < i2 and j < j2:
                    a, b = _intraline(left[i], right[j])
                    rows.append(DiffRow("changed", i + 1, a, j + 1, b))
                elif i < i2:
                    rows.append(DiffRow("removed", i + 1, (Segment(left[i], True),)))
                else:
                    rows.append(DiffRow("added", right_no=j + 1, right=(Segment(right[j], True),)))
        elif tag == "delete":
            rows.extend(DiffRow("removed", i + 1, (Segment(left[i], True),)) for i in range(i1, i2))
        else:
            rows.extend(DiffRow("added", right_no=j + 1, right=(Segment(right[j], True),)) for j in range(j1, j2))
    return rows


def _equal(
    lines: list[str], start: int, stop: int, other: int, context: int, *, first: bool, last: bool
) -> list[DiffRow]:
    """Unchanged lines, folding the middle of a long run (and the whole run before the first change)."""
    keep_before = 0 if first else context
    keep_after = 0 if last else context
    count = stop - start
    if count <= keep_before + keep_after + 1:
        picked = list(range(count))
        hidden_at = None
    else:
        picked = [*range(keep_before), *range(count - keep_after, count)]
        hidden_at = keep_before
    rows = []
    for position, index in enumerate(picked):
        if position == hidden_at:
            rows.append(DiffRow("skipped", hidden=count - keep_before - keep_after))
        rows.append(
            DiffRow(
                "same",
                start + index + 1,
                (Segment(lines[start + index]),),
                other + index + 1,
                (Segment(lines[start + index]),),
            )
        )
    if hidden_at is not None and hidden_at == len(picked):
        rows.append(DiffRow("skipped", hidden=count - keep_before - keep_after))
    return rows


def _intraline(a: str, b: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """The two lines split into unchanged and changed pieces, word by word (letters shared by
    two different words are noise, not a change a reader wants pointed at)."""
    if len(a) > _INTRALINE_CHARS or len(b) > _INTRALINE_CHARS:
        return (Segment(a, True),), (Segment(b, True),)
    words_a, words_b = _WORDS.findall(a), _WORDS.findall(b)
    left: list[Segment] = []
    right: list[Segment] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(Segment("".join(words_a[i1:i2])))
            right.append(Segment("".join(words_b[j1:j2])))
            continue
        if i2 > i1:
            left.append(Segment("".join(words_a[i1:i2]), True))
        if j2 > j1:
            right.append(Segment("".join(words_b[j1:j2]), True))
    return tuple(left), tuple(right)
