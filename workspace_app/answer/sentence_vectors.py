"""Sentence vectors made at ingestion: every sentence an answer may score, embedded once while its document is
ingested, so that an ask embeds only its question.

The offline answerer compares the question with each candidate sentence by both embedders (extractive.py). Their
vectors are kept in the embedding cache, keyed by text; without this stage an ask embeds the sentences it has not
met before, which was most of a fresh question's time (bench/README.md, "Sentence vectors at ingestion"). The
main embedder reads the English sentences only (it is English-only: the answerer asks it about English pairs); the
multilingual one reads them all.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from workspace_app.answer.extractive import scored_texts
from workspace_app.embedding.embedder import Embedder
from workspace_app.models.documents import Chunk, Document
from workspace_app.text.cjk import has_cjk

GROUP = 128  # sentences read by both embedders before the next ones (a few seconds of work on 2 cores)


class SentenceVectorsStage:
    """Embeds a document's scorable sentences into the embedding cache (an ingestion `IndexStage`)."""

    name = "sentences"

    def __init__(self, embedder: Embedder, multilingual: Embedder | None = None, group: int = GROUP) -> None:
        self._embedder = embedder
        self._multilingual = multilingual
        self._group = group

    def run(self, document: Document, chunks: list[Chunk], report: Callable[[int, int], None]) -> None:
        """Embed what is not cached yet; (done, total) counts sentences over both embedders.

        The sentences go in groups, each read by both embedders in turn, so that the count moves at one pace from
        start to end: all of one embedder and then all of the other would move it at two (the multilingual one is
        ~4x faster), and the time left measured on the first half would be wrong for the second (issue 29).
        """
        texts = list(dict.fromkeys(text for chunk in chunks for text in scored_texts(chunk)))
        work = [
            (embedder, batch)
            for start in range(0, len(texts), self._group)
            for embedder, batch in self._work(texts[start : start + self._group])
            if embedder.keeps_vectors and batch
        ]
        total = sum(len(batch) for _, batch in work)
        report(0, total)  # the count starts here, after the document's sentences are found (its time left from here)
        done = 0
        for embedder, batch in work:
            embedder.embed_passages(batch, partial(_moved, report, done, total))
            done += len(batch)
        report(total, total)

    def _work(self, texts: list[str]) -> list[tuple[Embedder, list[str]]]:
        english = [text for text in texts if not has_cjk(text)]
        return [(self._embedder, english)] + ([(self._multilingual, texts)] if self._multilingual else [])


def _moved(report: Callable[[int, int], None], before: int, total: int, done: int, _of: int) -> None:
    """One embedder's (done, of) as the stage's count over both."""
    report(before + done, total)
