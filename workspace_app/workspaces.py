"""Workspaces: create, list, find, rename and delete (a workspace is deleted with everything in it)."""

from __future__ import annotations

import re
import unicodedata

from workspace_app.documents.service import DocumentService
from workspace_app.errors import WorkspaceError
from workspace_app.models.documents import Workspace
from workspace_app.retrieval.scope import find_workspace
from workspace_app.storage.base import Catalog, VectorIndex
from workspace_app.text.names import refuse_control_characters


def clean_workspace_name(name: str) -> str:
    """Validate a workspace name: 1-80 visible characters, no control characters."""
    refuse_control_characters(name, "A workspace name")
    cleaned = re.sub(r"\s+", " ", "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")).strip()
    if not cleaned or len(cleaned) > 80:
        raise WorkspaceError("A workspace name needs 1 to 80 visible characters.")
    return cleaned


class WorkspaceService:
    """Project workspaces; each holds documents, chats, notes and an entity graph."""

    def __init__(self, catalog: Catalog, vectors: VectorIndex, documents: DocumentService) -> None:
        self._catalog = catalog
        self._vectors = vectors
        self._documents = documents

    def create(self, name: str) -> Workspace:
        """Create a workspace."""
        return self._catalog.create_workspace(clean_workspace_name(name))

    def list(self) -> list[Workspace]:
        """All workspaces."""
        return self._catalog.list_workspaces()

    def get(self, name_or_id: str) -> Workspace:
        """A workspace by name or id, or a clear error."""
        return find_workspace(self._catalog, name_or_id)

    def rename(self, name_or_id: str, new_name: str) -> Workspace:
        """Rename a workspace."""
        return self._catalog.rename_workspace(self.get(name_or_id).id, clean_workspace_name(new_name))

    def delete(self, name_or_id: str) -> None:
        """Delete a workspace with everything in it (files only when no other workspace uses them)."""
        workspace = self.get(name_or_id)
        documents = self._catalog.list_documents(workspace.id)
        self._vectors.drop_workspace(workspace.id)
        self._catalog.delete_workspace(workspace.id)
        for document in documents:
            self._documents.release_file(document)
