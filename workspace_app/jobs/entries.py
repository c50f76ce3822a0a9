"""Entries of the job queue, typed: a document to ingest or a patient import to run.

The queue stores text. A document's entry is its bare id (as every queue written before patient imports holds);
an import's is `import:<id>`. `JobEntry.parse` is the one place that reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

JobKind = Literal["document", "import"]
_IMPORT = "import:"


@dataclass(frozen=True)
class JobEntry:
    """What a queue entry asks the worker to run."""

    kind: JobKind
    job_id: str

    @classmethod
    def document(cls, document_id: str) -> JobEntry:
        return cls("document", document_id)

    @classmethod
    def patient_import(cls, import_id: str) -> JobEntry:
        return cls("import", import_id)

    @classmethod
    def parse(cls, text: str) -> JobEntry:
        """The entry a queue item holds."""
        if text.startswith(_IMPORT):
            return cls("import", text[len(_IMPORT):])
        return cls("document", text)

    def __str__(self) -> str:
        """As the queue stores it."""
        return _IMPORT + self.job_id if self.kind == "import" else self.job_id
