"""What an answer cites: its ``[n]`` markers renumbered in reading order, and where in the
source each cited passage's quoted sentence stands.

Pure functions, no I/O; ``context.citations`` and the chat service build on them.

**Renumbering** (:func:`cite`). The answerer numbers passages by their place in the
prompt context (``[n]`` = ``decision.context.used[n-1]``), so an answer reads
``[2] ... [6] ... [3] ... [1]`` and the passages it never quotes would still be listed.
:func:`cite` finds the markers in order of first appearance, renumbers them ``[1]..[m]``
in that order (rewriting the text) and returns the cited passages in that order. Rules at
the edges:

* a marker is ``[n]`` or ``[n, k, ...]`` with numbers of one to three digits (``[2026]`` is
  no marker); every number in a list is renumbered;
* a repeated marker keeps the number it got at its first appearance;
* a marker for a passage that does not exist (``[0]``, ``[9]`` with four passages) is
  **dropped** from the text with the space before it (a number in a list is dropped from
  the list): it points nowhere, and left in place it would read as one of the renumbered
  markers;
* an answer that cites no existing passage (an LLM that wrote no marker at all) keeps
  the behaviour from before renumbering: every used passage is listed, in context order,
  because the answer was written from them and names none in particular.

**Location** (:func:`locate`). A chunk records where it starts (``heading_path``, and
``page`` for PDF) and, since pipeline format 3, where inside it a section or a page
begins (``section_breaks``: ``[[offset, [heading, ...]], ...]``; ``page_breaks``:
``[[offset, page], ...]``, offsets into the chunk's text). The cited sentence is found in
the chunk's text (by its words, so a table row rendered as ``Status LED: Blinking red;
...`` still finds ``| Blinking red | ...``) and its section and page are those in force at
that offset. A chunk stored before format 3 has no breaks: its section is then the
heading the sentence stands under (as the answerer's segmentation read it), or the
chunk's start path, and its page the chunk's start page.

**Source** (:func:`shown_source`). Ingest stores a path relative to the manifest (or the
repository, or the allowed root); a version stored before that may hold an absolute
server path, which is shown as its file name only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Generic, Mapping, NamedTuple, Sequence, TypeVar

T = TypeVar("T")

#: ``[3]`` or ``[1, 4]``: one to three digits per number, so a bracketed year is no marker
MARKER = re.compile(r"([ \t]*)\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_WORD = re.compile(r"\w+")
#: at most this many leading words of a sentence are looked for in the chunk's text
_PROBE_WORDS = 12


@dataclass(frozen=True)
class Cited(Generic[T]):
    """The answer with its markers renumbered, and the passages it cites in marker order."""

    text: str
    passages: tuple[T, ...]
    #: ``order[k]`` is the 1-based context position of the passage now marked ``[k+1]``
    order: tuple[int, ...]
    #: False when the answer cited no existing passage (then ``passages`` is every used one)
    marked: bool


def cite(text: str, used: Sequence[T]) -> Cited[T]:
    """Renumber ``text``'s markers ``[1]..[m]`` in order of first appearance; see the module
    docstring for repeated, unknown and missing markers."""
    numbers: dict[int, int] = {}  # context position -> new number

    def renumber(match: re.Match[str]) -> str:
        kept = []
        for raw in match.group(2).split(","):
            n = int(raw)
            if not 1 <= n <= len(used):
                continue  # a passage that does not exist: dropped
            kept.append(numbers.setdefault(n, len(numbers) + 1))
        if not kept:
            return ""
        return f"{match.group(1)}[{', '.join(str(k) for k in dict.fromkeys(kept))}]"

    renumbered = MARKER.sub(renumber, text)
    if not numbers:
        return Cited(renumbered, tuple(used), tuple(range(1, len(used) + 1)), False)
    order = tuple(numbers)  # insertion order = order of first appearance
    return Cited(renumbered, tuple(used[n - 1] for n in order), order, True)


def shown_source(source: str) -> str:
    """``source`` as answers show it: an absolute path (stored by an older ingest) becomes its
    file name, so no server path leaves the service; anything else is returned unchanged."""
    if not source:
        return source
    if source.startswith(("/", "\\")) or PureWindowsPath(source).drive:
        name = PureWindowsPath(source).name if "\\" in source else PurePosixPath(source).name
        return name or source
    return source


# --- where a cited sentence stands -------------------------------------------------------
def quoted_sentences(answer_explain: Mapping[str, Any] | None) -> dict[str, list[tuple[str, str | None]]]:
    """``chunk_id -> [(sentence, heading), ...]`` of the sentences an extractive answer quoted
    (its ``answer_explain.sentences``, in answer order); empty for any other answerer."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for s in (answer_explain or {}).get("sentences") or ():
        if isinstance(s, Mapping) and isinstance(s.get("chunk_id"), str) and isinstance(s.get("sentence"), str):
            heading = s.get("heading")
            out.setdefault(s["chunk_id"], []).append((s["sentence"], heading if isinstance(heading, str) else None))
    return out


def _probe(words: Sequence[str]) -> re.Pattern[str] | None:
    words = list(words)[:_PROBE_WORDS]
    if not words:
        return None
    return re.compile(r"\b" + r"\W+".join(re.escape(w) for w in words) + r"\b", re.IGNORECASE)


def sentence_offset(chunk_text: str, sentence: str) -> int | None:
    """Where ``sentence`` (as the answerer's segmentation rendered it) starts in ``chunk_text``:
    its leading words in order, anything but words between them (line breaks of a PDF, list
    markers, table pipes); a table row rendered ``Name: value; Name: value.`` is looked for by
    its values. None when it is not found."""
    candidates = [_WORD.findall(sentence)]
    if ": " in sentence:  # a table row with its column names: the raw row holds only the values
        values = [part.split(": ", 1)[-1] for part in sentence.rstrip(".").split("; ")]
        candidates.append([w for v in values for w in _WORD.findall(v)])
    for words in candidates:
        for size in (len(words), 6, 3):  # fewer words when the sentence was cut (explain keeps 200 characters)
            pattern = _probe(words[:size])
            match = pattern.search(chunk_text) if pattern is not None else None
            if match:
                return match.start()
    return None


def _path(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if str(v)]
    return [value] if isinstance(value, str) and value else []


def _breaks(metadata: Mapping[str, Any], key: str) -> list[tuple[int, Any]]:
    raw = metadata.get(key)
    out = []
    for item in raw if isinstance(raw, (list, tuple)) else ():
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], int):
            out.append((item[0], item[1]))
    return sorted(out, key=lambda b: b[0])


def _at(breaks: Sequence[tuple[int, Any]], offset: int, start: Any) -> Any:
    value = start
    for at, v in breaks:
        if at > offset:
            break
        value = v
    return value


class Location(NamedTuple):
    #: heading path joined by " > " (or the one heading the sentence stands under)
    section: str | None
    #: PDF page number
    page: int | None


def _start_page(metadata: Mapping[str, Any]) -> int | None:
    page = metadata.get("page")
    if isinstance(page, bool):
        return None
    if isinstance(page, int):
        return page
    if isinstance(page, str) and page.isdigit():
        return int(page)
    return None


def locate(chunk_text: str, metadata: Mapping[str, Any], quoted: Sequence[tuple[str, str | None]] = ()) -> Location:
    """Section and page of the first quoted sentence of a chunk found in its text; with no
    quoted sentence (an LLM answer cites the passage as a whole), where the chunk starts."""
    start_path = _path(metadata.get("heading_path"))
    start_page = _start_page(metadata)
    has_breaks = "section_breaks" in metadata or "page_breaks" in metadata
    for sentence, heading in quoted:
        offset = sentence_offset(chunk_text, sentence)
        if offset is None:
            continue
        page = _at(_breaks(metadata, "page_breaks"), offset, start_page)
        if has_breaks:
            path = _path(_at(_breaks(metadata, "section_breaks"), offset, start_path))
            if heading and heading not in path:
                path = [*path, heading]  # a heading the loader did not mark (PDF, plain text)
        elif heading:  # stored before format 3: the chunk's start path may be an earlier section
            path = start_path[:start_path.index(heading) + 1] if heading in start_path else [heading]
        else:
            path = start_path
        return Location(" > ".join(path) or None, page if isinstance(page, int) else None)
    if quoted and quoted[0][1]:  # not found in the text (sanitized since?): the answerer's own heading
        return Location(quoted[0][1], start_page)
    return Location(" > ".join(start_path) or None, start_page)
