"""english_sentences(text): runs of English words a zh student would have to read, outside code and identifiers.

A run is three or more English words in a row on one line, with nothing between them but spaces, numbers and
light punctuation. Chinese text, a line break, a table's column gap (two spaces or more) or sentence punctuation
ends a run. Not words: identifiers (snake_case, dotted, CamelCase, with digits), acronyms (TTFT, KV, SLO),
single letters, and anything quoted as code: `...`, '...', "...", a Python-looking call or tuple of names.
"""
from __future__ import annotations

import re

MIN_WORDS = 3
CODE = re.compile(r"`[^`\n]*`|(?<![A-Za-z])'[^'\n]*'|\"[^\"\n]*\"|\b\w+(?:\.\w+)*\([^()\n]*\)"
                  r"|\((?:\w+, )+\w+\)")  # the last: a tuple of names, (priority, arrival, id)
# what ends a run: CJK (and full-width punctuation), a column gap, a line break, sentence punctuation
BREAK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+| {2,}|\t|\n|[.;!?|=<>\[\]{}()/]\s")
WORD = re.compile(r"[A-Za-z][a-z]+(?:-[a-z]+)*(?:'[st])?|a")
NEUTRAL = re.compile(r"[-+]?\d[\d.,:%x]*|[A-Z]{2,}s?|[A-Z]|\W+")


def _is_word(token: str) -> bool:
    """An English word: letters only, lower case after the first (so not an acronym or an identifier)."""
    return bool(WORD.fullmatch(token))


def english_sentences(text: str) -> list[str]:
    """Each run of MIN_WORDS or more English words in `text`, as it appears there."""
    found = []
    for segment in BREAK.split(CODE.sub(" \x00 ", text)):
        run: list[str] = []
        for token in re.split(r"[\s,:]+", segment):
            token = token.strip("'\"()[]{}.;!?*")
            if _is_word(token):
                run.append(token)
                continue
            if "\x00" in token or (token and not NEUTRAL.fullmatch(token)):
                found += [" ".join(run)] if len(run) >= MIN_WORDS else []
                run = []
        found += [" ".join(run)] if len(run) >= MIN_WORDS else []
    return found
