"""Chat and note titles made from a question: whitespace folded, and a long one shortened at a word's end."""

from __future__ import annotations

import pytest

from workspace_app.chats.service import clean_title
from workspace_app.errors import WorkspaceError


def test_a_long_question_is_shortened_at_a_words_end() -> None:
    question = "In women with high triglycerides or cholesterol, can omega-3 fatty acids be used, and how strong is it?"
    title = clean_title(question, limit=60)
    assert len(title) <= 60 and title.endswith("…")
    assert question.startswith(title[:-1]) and question[len(title) - 1] == " ", "cut before a space, not mid-word"
    assert clean_title("  What\n is   AF? ") == "What is AF?"


def test_a_title_without_spaces_is_cut_where_it_must_be() -> None:
    assert clean_title("房颤" * 50, limit=20) == "房颤" * 9 + "房…"
    with pytest.raises(WorkspaceError):
        clean_title(" \u200b\n ")
