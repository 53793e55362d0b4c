"""Text a student controls, made inert before an instructor's terminal, log, report or spreadsheet shows it.

Student ids (file names), grade_ids, first lines of cells, exception messages and warnings all pass through
inert(): printable ASCII on one line (anything else written as a Python escape, so an ESC or a carriage
return cannot move the cursor or forge a progress line), at most `limit` characters, and whatever Markdown
or HTML would read as markup written as a character reference (report.md gets no heading, link, image or
tag from a student). It is idempotent: text that went through it goes through it again unchanged.
"""
from __future__ import annotations

import re

LIMIT = 300
# Tags, links and images, table cells, code spans and emphasis: written as references, which are text only.
MARKUP = {"<": "&lt;", ">": "&gt;", "[": "&#91;", "]": "&#93;", "|": "&#124;", "`": "&#96;", "*": "&#42;"}
WWW = re.compile(r"www", re.I)


def _piece(text: str, i: int, markup: bool = True) -> str:
    """Character i of `text` as inert text (`markup`: also written so that Markdown and HTML read no markup)."""
    char = text[i]
    if markup and char in MARKUP:
        return MARKUP[char]
    if markup and char == ":" and text.startswith("//", i + 1):  # a bare URL becomes a link in GitHub's Markdown
        return "&#58;"
    if markup and char == "." and WWW.fullmatch(text[max(i - 3, 0):i]):
        return "&#46;"
    if " " <= char <= "~":
        return char
    if "\udc80" <= char <= "\udcff":  # an undecodable byte of a file name
        return f"\\x{ord(char) - 0xdc00:02x}"
    return ascii(char)[1:-1]


def inert(text, limit: int = LIMIT, markup: bool = True) -> str:
    """`text` as printable ASCII on one line, markup escaped, at most `limit` characters (cut with ' ...').
    markup=False leaves [ ] < > | ` * as they are, for a place no markup is read in (a fenced code block)."""
    text = text if type(text) is str else str(text)
    pieces, size = [], 0
    for i in range(min(len(text), limit + 1)):  # each character gives one or more: never more work than this
        pieces.append(_piece(text, i, markup))
        size += len(pieces[-1])
        if size > limit:
            break
    if size <= limit:
        return "".join(pieces)
    while size > limit - 4:
        size -= len(pieces.pop())
    return "".join(pieces) + " ..."  # the space: no "www" or ":" just before the dots makes them a link


def csv_cell(text: str) -> str:
    """A spreadsheet cell that is text, never a formula: a leading = + - @ (or tab, CR) is quoted."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def code_block(text, limit: int = LIMIT, language: str = "python") -> list[str]:
    """Markdown lines of a fenced code block showing `text` (printable ASCII on one line, as inert() makes it) as
    it is: its fence is longer than any run of backticks in it, so the text cannot close it early."""
    line = inert(text, limit, markup=False)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", line)), default=0))
    return [fence + language, line, fence]
