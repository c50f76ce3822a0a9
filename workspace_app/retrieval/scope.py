"""The scope of a question or a search, resolved once: the workspace, the documents searched, their names.

Resolved at the front of `ask` and `search` and passed down, so retrieval modes, the search and the answerer
never look the workspace or its documents up again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from workspace_app.errors import (
    AmbiguousDocumentError,
    DocumentNotFoundError,
    WorkspaceError,
    WorkspaceNotFoundError,
)
from workspace_app.models.documents import Document, Workspace


class ScopeCatalog(Protocol):
    """What resolving a scope reads: the workspace and its documents."""

    def find_workspace(self, name_or_id: str) -> Workspace | None: ...
    def list_documents(self, workspace_id: str) -> list[Document]: ...


@dataclass(frozen=True)
class Scope:
    """A workspace and the documents searched in it (`document_ids` None: the whole workspace, all ready)."""

    workspace: Workspace
    document_ids: list[str] | None
    ready_ids: list[str]
    chunk_total: int
    names: dict[str, str]
    chunk_counts: dict[str, int] = field(default_factory=dict)  # each document's passages, by id
    # Running documents whose pages read so far by OCR keyword search may return (a search's scope, never a
    # question's: answers cite ready documents only).
    partial_ids: list[str] = field(default_factory=list)

    @property
    def searched_names(self) -> dict[str, str]:
        """File names of the documents searched, by id."""
        ids = self.document_ids if self.document_ids is not None else self.ready_ids
        return {document_id: self.names[document_id] for document_id in ids if document_id in self.names}

    def narrowed(self, document_ids: list[str] | None) -> Scope:
        """The same scope searching only these documents (routing), its passage count theirs."""
        ids = document_ids if document_ids is not None else self.ready_ids
        total = sum(self.chunk_counts.get(document_id, 0) for document_id in ids) or self.chunk_total
        return replace(self, document_ids=document_ids, chunk_total=total)


def find_workspace(catalog: ScopeCatalog, name_or_id: str) -> Workspace:
    """A workspace by name or id, or a clear error."""
    found = catalog.find_workspace(name_or_id)
    if found is None:
        raise WorkspaceNotFoundError(
            f"There is no workspace '{name_or_id}'. Create it first (workspace-app workspace create NAME)."
        )
    return found


def search_scope(catalog: ScopeCatalog, workspace: str, wanted: Sequence[str] | None) -> Scope:
    """A search's scope: the ready documents among `wanted` (names, ids or sha256), or every ready one."""
    ws = find_workspace(catalog, workspace)
    documents = catalog.list_documents(ws.id)
    ready = [d for d in documents if d.status == "ready"]
    if wanted is None:
        ids = None if len(ready) == len(documents) else [d.id for d in ready]
        running = [d for d in documents if d.status == "running"]
    else:
        picked = [pick_document(ws, documents, key) for key in wanted]
        ids = [d.id for d in picked if d.status == "ready"]
        running = [d for d in picked if d.status == "running"]
    return replace(_scope(ws, documents, ids, ready), partial_ids=[d.id for d in running])


def answer_scope(catalog: ScopeCatalog, workspace: str, wanted: Sequence[str] | None) -> Scope:
    """A question's scope: the chosen documents, or the ready ones switched on for chat; an error when none is."""
    ws = find_workspace(catalog, workspace)
    documents = catalog.list_documents(ws.id)
    if wanted is None:
        chosen = [d for d in documents if d.status == "ready" and d.included]
    else:
        wanted_ids = [pick_document(ws, documents, key).id for key in wanted]
        chosen = [d for d in documents if d.id in wanted_ids and d.status == "ready"]
    if not chosen:
        raise WorkspaceError(
            f"No ready sources are selected in '{ws.name}'. Add PDFs on the Sources page, wait until they "
            "are ready, and keep at least one switched on for chat."
        )
    ready = [d for d in documents if d.status == "ready"]
    chosen_ids = None if len(chosen) == len(ready) == len(documents) else [d.id for d in chosen]
    return _scope(ws, documents, chosen_ids, chosen)


def pick_document(ws: Workspace, documents: list[Document], key: str) -> Document:
    """The document `key` names: its id, its sha256, else its name; a name two documents share is refused with
    both listed (never one picked silently)."""
    for attribute in ("id", "sha256"):
        found = next((d for d in documents if getattr(d, attribute) == key), None)
        if found is not None:
            return found
    named = [d for d in documents if d.name == key]
    if len(named) > 1:
        listed = "; ".join(f"id {d.id} (added {d.added_at[:16].replace('T', ' ')}, {d.status})" for d in named)
        raise AmbiguousDocumentError(
            f"{len(named)} documents in '{ws.name}' are named '{key}': {listed}. Name the one you mean by its id."
        )
    if not named:
        raise DocumentNotFoundError(f"There is no document '{key}' in workspace '{ws.name}'.")
    return named[0]


def _scope(ws: Workspace, documents: list[Document], ids: list[str] | None, counted: list[Document]) -> Scope:
    names = {d.id: d.name for d in documents}
    return Scope(ws, ids, [d.id for d in counted], sum(d.chunks for d in counted), names, {d.id: d.chunks for d in documents})
