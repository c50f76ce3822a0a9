"""Readers: the registry from media type to the reader that parses it, and the one list of supported files.

Everything that needs to know which files we take (upload validation, the upload widget, the store's file
suffix, the viewer) asks this registry. A new file type is a reader module and one `FileType` line below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from workspace_app.errors import UnsupportedFileError
from workspace_app.ingest.layout import ParsedDocument
from workspace_app.ingest.ocr import PageOcr
from workspace_app.ingest.readers.pdf import StageCallback, check_pdf, parse_pdf
from workspace_app.ingest.readers.text import parse_text


class Reader(Protocol):
    """Parses a stored file into paragraphs (with page boxes where the format has pages); `ocr` says whether and how
    pages without a text layer are read by OCR (formats without pages ignore it)."""

    def __call__(
        self, path: Path, display_name: str, report: StageCallback | None, grade_cells: bool, ocr: PageOcr | None
    ) -> ParsedDocument: ...


@dataclass(frozen=True)
class FileType:
    """A supported kind of file: its media type, the suffixes it comes with (the first is stored), its reader."""

    media_type: str
    suffixes: tuple[str, ...]
    label: str
    reader: Reader
    has_pages: bool


def _read_pdf(
    path: Path, display_name: str, report: StageCallback | None, grade_cells: bool, ocr: PageOcr | None
) -> ParsedDocument:
    return parse_pdf(path, display_name, report, grade_cells=grade_cells, ocr=ocr)


def _read_text(
    path: Path, display_name: str, report: StageCallback | None, grade_cells: bool, ocr: PageOcr | None
) -> ParsedDocument:
    return parse_text(path, display_name, markdown=False)


def _read_markdown(
    path: Path, display_name: str, report: StageCallback | None, grade_cells: bool, ocr: PageOcr | None
) -> ParsedDocument:
    return parse_text(path, display_name, markdown=True)


FILE_TYPES: tuple[FileType, ...] = (
    FileType("application/pdf", (".pdf",), "PDF", _read_pdf, has_pages=True),
    FileType("text/plain", (".txt",), ".txt", _read_text, has_pages=False),
    FileType("text/markdown", (".md", ".markdown"), ".md", _read_markdown, has_pages=False),
)
_BY_MEDIA_TYPE = {file_type.media_type: file_type for file_type in FILE_TYPES}
_BY_SUFFIX = {suffix: file_type for file_type in FILE_TYPES for suffix in file_type.suffixes}


def supported_labels() -> str:
    """'PDF, .txt or .md': the supported files as a user reads them."""
    labels = [file_type.label for file_type in FILE_TYPES]
    return ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else labels[0]


def upload_suffixes() -> list[str]:
    """Suffixes without the dot, as the upload widget takes them (the first suffix of each type)."""
    return [file_type.suffixes[0].lstrip(".") for file_type in FILE_TYPES]


def media_type_for(name: str) -> str:
    """The media type of a file by its name, or a clear error naming what is supported."""
    suffix = Path(name).suffix.lower()
    if suffix not in _BY_SUFFIX:
        raise UnsupportedFileError(
            f"{name}: '{suffix or 'no extension'}' files are not supported. Upload {supported_labels()} files."
        )
    return _BY_SUFFIX[suffix].media_type


def stored_suffix(media_type: str) -> str:
    """The suffix a stored file of this media type gets."""
    return _BY_MEDIA_TYPE[media_type].suffixes[0]


def has_pages(media_type: str) -> bool:
    """Whether sources of this type have pages to show (the PDF viewer)."""
    found = _BY_MEDIA_TYPE.get(media_type)
    return found is not None and found.has_pages


def read_source(
    path: Path, display_name: str, media_type: str, report: StageCallback | None = None, *, grade_cells: bool = True,
    ocr: PageOcr | None = None,
) -> ParsedDocument:
    """Parse a stored file with the reader registered for its media type; `report` hears its stages' counts (a PDF's
    "parsing" and "tables"); `grade_cells` joins recommendation grade cells ("IIa B-NR") to their rows (the domain
    pack's grammar says whether its documents have them); `ocr` reads pages without a text layer (none: such pages
    stay empty, and a PDF without any text is refused)."""
    found = _BY_MEDIA_TYPE.get(media_type)
    if found is None:
        raise UnsupportedFileError(
            f"{display_name}: this file type is not supported. Upload {supported_labels()} files."
        )
    return found.reader(path, display_name, report, grade_cells, ocr)


def check_source(path: Path, display_name: str, media_type: str, *, ocr: bool = False) -> None:
    """The quick checks made before a file is queued: raise the error its reading would (empty, not the type its
    name says, damaged, locked; without `ocr`, a PDF without a text layer), so a front end that does not wait still
    says at once what is wrong."""
    if media_type == "application/pdf":
        check_pdf(path, display_name, ocr=ocr)
    else:
        read_source(path, display_name, media_type)
