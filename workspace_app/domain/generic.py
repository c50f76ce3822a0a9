"""The generic pack: no lexicon, no grades, no question cues, no suggestion patterns; neutral warm-up questions.
The engine reads any PDF (reports, papers, filings) with its general signals alone."""

from __future__ import annotations

from workspace_app.domain.pack import DomainPack

GENERIC = DomainPack(name="generic")
