"""The text analyzers of ``text`` attributes, callable on their own (sieve::AnalyzeText)."""

from __future__ import annotations

from . import _sieve


def analyze(text: str, analyzer: str = "english", positions: bool = False
            ) -> list[str] | list[tuple[str, int]]:
    """The terms a ``text`` attribute's value (or a ``MATCH``, ``MATCH_ALL`` or ``PHRASE``
    text) becomes under ``analyzer``, in text order: what the inverted index holds and BM25
    scores, so another engine (bm25s, Tantivy) or a test oracle can work on the same tokens.

    ``analyzer`` is ``"english"`` (the default: words case folded, English stop words
    dropped, Porter2 stems), ``"simple"`` (case folded words) or ``"stem:<language>"`` (a
    Snowball stemmer, no stop words); see the filter language's "Text analyzers".

    With ``positions=True`` each term comes as ``(term, position)``, position being its
    word's index among the text's words: a gap is a dropped word (``PHRASE`` keeps it).

    >>> sieve.analyze("The runners were RUNNING")
    ['runner', 'were', 'run']

    Raises:
        InvalidArgument: no analyzer of that name (the message lists them), or a text over
            64 MiB.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    terms, where = _sieve.analyze(text, analyzer)
    return list(zip(terms, where)) if positions else terms
