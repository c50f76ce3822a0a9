"""PDF parsing and chunking on the real guideline PDFs: sections, pages, furniture, text repair, reading order.

Expected facts were read off the PDFs with pymupdf (`page.get_text("dict")`); where a test compares with the
raw text layer it derives the expectation from that layer at test time, so it checks the parser, not a copy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from workspace_app.ingest.glyphs import FontEncodings, recover_page
from workspace_app.ingest.readers.pdf import parse_pdf

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def spaced(text: str) -> str:
    """Text with ligatures expanded and every run of whitespace or control characters made one space; "≥" and
    "≤" as the raw text layer holds them when a symbol font draws them ("$", "#")."""
    text = text.translate(_LIGATURES).replace("≥", "$").replace("≤", "#")
    return re.sub(r"[\s\x00-\x1f]+", " ", text).strip()


def squashed(text: str) -> str:
    """Only letters and digits, lower-cased: robust to spacing, punctuation and hyphenation."""
    return re.sub(r"[\W_]+", "", text.translate(_LIGATURES).lower())


def raw_lines(page: pymupdf.Page) -> list[tuple[tuple[float, float, float, float], str, float]]:
    """Horizontal text lines of a page as pymupdf returns them, symbol-font glyphs read back as ingestion reads
    them ("\x01" of MathematicalPi-One as "≥"): (bbox, text, size of first span)."""
    lines = []
    raw = page.get_text("dict")
    recover_page(page, raw, FontEncodings(page.parent), pymupdf.TEXTFLAGS_DICT)
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            text = "".join(span["text"] for span in line["spans"]).strip()
            if text and line["dir"] == (1.0, 0.0):
                lines.append((tuple(line["bbox"]), text, round(line["spans"][0]["size"], 1)))
    return lines


def body_line_pairs(page: pymupdf.Page) -> list[tuple[str, str]]:
    """Consecutive full lines of one column in the page's body font: (upper line, the line below it)."""
    lines = raw_lines(page)
    sizes: Counter[float] = Counter()
    for _, text, size in lines:
        sizes[size] += len(text)
    body = sizes.most_common(1)[0][0]
    lines = [line for line in lines if abs(line[2] - body) < 0.3 and line[0][2] - line[0][0] >= 150]
    pairs = []
    for (ax0, _, _, ay1), upper, _ in lines:
        for (bx0, by0, _, by1), lower, _ in lines:
            if abs(ax0 - bx0) <= 1.5 and 0 <= by0 - ay1 <= 0.8 * (by1 - by0):
                pairs.append((upper, lower))
    return pairs


def texts_on(chunks: list[Any], page: int) -> str:
    return " ".join(spaced(c.text) for c in chunks if c.page_start <= page <= c.page_end)


# Sections and pages


@pytest.mark.parametrize(
    ("name", "page", "section_part"),
    [
        ("shen-2017-syncope.pdf", 10, "2.3.1. History and Physical Examination"),
        ("shen-2017-syncope.pdf", 11, "2.3.2. Electrocardiography"),
        ("shen-2017-syncope.pdf", 11, "2.3.3. Risk Assessment"),
        ("mosca-2011-women-cvd.pdf", 9, "Selection of Expert Panel"),
        ("zh-acute-af-ed-2024.pdf", 7, "3.2 节律控制"),
        ("zh-acute-af-ed-2024.pdf", 9, "3.3 抗凝治疗"),
    ],
)
def test_a_chunk_on_the_page_carries_the_section_path(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], name: str, page: int, section_part: str
) -> None:
    chunks = chunk_pdf(guidelines / name)
    sections = {c.section for c in chunks if c.page_start <= page <= c.page_end}
    assert any(section_part in section for section in sections), (name, page, sorted(sections))


def test_nested_sections_are_joined_outer_to_inner(guidelines: Path, chunk_pdf: Callable[[Path], list[Any]]) -> None:
    chunks = chunk_pdf(guidelines / "zh-acute-af-ed-2024.pdf")
    paths = [c.section.split(" > ") for c in chunks if "3.2 节律控制" in c.section]
    assert paths
    for path in paths:
        assert path[0].startswith("急性心房颤动中国急诊管理指南"), path
        assert path.index("3.2 节律控制") >= 1


def _eval_items(docs: set[str], skip: set[str]) -> list[dict[str, Any]]:
    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "eval" / "guidelines_dev.jsonl"
    if not path.is_file():
        return []
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [item for item in items if item["doc"] in docs and item["id"] not in skip]


# Quotes of the dev questions that are running prose (table cells are left out: their order is the table's).
EVAL_QUOTES = _eval_items(
    {"shen-2017-syncope.pdf", "mosca-2011-women-cvd.pdf", "arnett-2014-guideline-strategies.pdf",
     "zh-acute-af-ed-2024.pdf"},
    skip={"gdev-011", "gdev-031", "gdev-035", "gdev-038"},
)


@pytest.mark.parametrize("item", EVAL_QUOTES, ids=[item["id"] for item in EVAL_QUOTES])
def test_dev_question_quotes_are_in_a_chunk_on_their_page(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], item: dict[str, Any]
) -> None:
    chunks = chunk_pdf(guidelines / item["doc"])
    wanted = squashed(item["quote"])[:60]
    holding = [(c.page_start, c.page_end) for c in chunks if wanted in squashed(c.text)]
    assert holding != [], f"{item['id']}: no chunk of {item['doc']} reads {item['quote'][:80]!r}"
    assert any(start <= item["quote_page"] <= end for start, end in holding), (item["quote_page"], holding)


# Running headers and footers


@pytest.mark.parametrize(
    ("name", "furniture"),
    [
        ("shen-2017-syncope.pdf", "J A C C V O L . 7 0 , N O . 5 , 2 0 1 7"),
        ("shen-2017-syncope.pdf", "A U G U S T 1 , 2 0 1 7 : e 3 9 – 1 1 0"),
        ("shen-2017-syncope.pdf", "2017 ACC/AHA/HRS Syncope Guideline"),
        ("mosca-2011-women-cvd.pdf", "JACC Vol. 57, No. 12, 2011"),
        ("mosca-2011-women-cvd.pdf", "Guidelines for the Prevention of CVD in Women—2011 Update"),
        ("arnett-2014-guideline-strategies.pdf", "AHA/ACC/HHS Strategies on Comorbidities"),
        ("zh-acute-af-ed-2024.pdf", "中华急诊医学杂志2024 年8 月第33 卷第8 期"),
        ("zh-dapt-chd-consensus-2021.pdf", "中华心血管病杂志2021 年5 月第49 卷第5 期"),
        ("zh-dapt-chd-consensus-2021.pdf", "Chin J Cardiol, May 2021, Vol. 49, No. 5"),
    ],
)
def test_running_headers_and_footers_are_dropped(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], name: str, furniture: str
) -> None:
    key = re.sub(r"\s+", "", furniture)
    with pymupdf.open(guidelines / name) as doc:
        pages_with_it = sum(key in re.sub(r"\s+", "", page.get_text()) for page in doc)
        assert pages_with_it >= doc.page_count // 2  # it really is a running header in the PDF
    leaked = [c for c in chunk_pdf(guidelines / name) if key in re.sub(r"\s+", "", c.text)]
    assert not leaked, f"{furniture!r} is in {len(leaked)} chunks, e.g. page {leaked[0].page_start}"


def test_letter_spaced_journal_header_is_absent_everywhere(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    for name in ("shen-2017-syncope.pdf", "arnett-2014-guideline-strategies.pdf"):
        assert not [c for c in chunk_pdf(guidelines / name) if "J A C C V O L" in c.text], name


# Text repair: ligatures, hyphenation, Chinese line breaks


@pytest.mark.parametrize("name", ["mosca-2011-women-cvd.pdf", "arnett-2014-guideline-strategies.pdf"])
def test_ligatures_are_expanded(guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], name: str) -> None:
    with pymupdf.open(guidelines / name) as doc:
        raw = "".join(page.get_text() for page in doc)
    assert "ﬁ" in raw and "speciﬁc" in raw  # the PDF's text layer has ligatures
    text = "\n".join(c.text for c in chunk_pdf(guidelines / name))
    assert not set("ﬀﬁﬂﬃﬄﬅﬆ") & set(text)
    assert "specific" in text


def _line_end_hyphenations(path: Path) -> list[tuple[int, str, str]]:
    """(page, head, tail) for each body line ending in `word-` followed by a line starting in lower case."""
    found = []
    with pymupdf.open(path) as doc:
        for page in doc:
            for upper, lower in body_line_pairs(page):
                head = re.search(r"([A-Za-z]{2,})-$", upper)
                tail = re.match(r"([a-z]{2,})", lower)
                if head and tail:
                    found.append((page.number + 1, head.group(1), tail.group(1)))
    return found


def test_words_split_at_line_ends_are_joined(excerpt: Callable[..., Path], chunk_pdf: Callable[..., list[Any]]) -> None:
    pdf = excerpt("mosca-2011-women-cvd.pdf", 2, 8)
    splits = _line_end_hyphenations(pdf)
    with pymupdf.open(pdf) as doc:
        inline = spaced(" ".join(page.get_text() for page in doc))
    split_words = [(page, head, tail) for page, head, tail in splits if f"{head}-{tail}" not in inline]
    assert len(split_words) >= 40
    chunks = chunk_pdf(pdf)
    missing = [(page, f"{head}-|{tail}") for page, head, tail in split_words if head + tail not in texts_on(chunks, page)]
    assert not missing, f"not joined: {missing[:10]}"


def test_real_hyphens_at_line_ends_stay_without_a_space(
    excerpt: Callable[..., Path], chunk_pdf: Callable[..., list[Any]]
) -> None:
    # "cost-|effectiveness" (page 3 of the 2011 women's guideline) is a hyphenated compound broken after its
    # hyphen: it must read "cost-effectiveness", not "cost- effectiveness".
    pdf = excerpt("mosca-2011-women-cvd.pdf", 2, 8)
    chunks = chunk_pdf(pdf)
    text = " ".join(spaced(c.text) for c in chunks)
    assert ("cost", "effectiveness") in {(head.lower(), tail) for _, head, tail in _line_end_hyphenations(pdf)}
    # "short- and long-term" is a suspended hyphen and keeps its space.
    broken = sorted(set(re.findall(r"\b[A-Za-z]{2,}- (?!(?:and|or|to|nor)\b)[a-z]{2,}\b", text)))
    assert not broken, f"hyphenated words broken by a space: {broken}"


@pytest.mark.parametrize(("name", "first", "last"), [("zh-dapt-chd-consensus-2021.pdf", 2, 3),
                                                     ("grundy-2018-cholesterol.pdf", 52, 52)])
def test_a_range_broken_after_its_dash_or_tilde_reads_without_a_space(
    excerpt: Callable[..., Path], chunk_pdf: Callable[..., list[Any]], name: str, first: int, last: int
) -> None:
    # "负荷剂量需6~|8 h", "DAPT（12~|24 个月）", "(1.7–|4.8 mmol/L)": a range broken at a line end is one range.
    pdf = excerpt(name, first, last)
    breaks = []
    with pymupdf.open(pdf) as doc:
        for page in doc:
            lines = [line for _, line, _ in raw_lines(page)]
            for upper, lower in pairwise(lines):
                if re.search(r"\d[–~]$", upper) and lower[:1].isdigit():
                    breaks.append((page.number + 1, upper[-6:], lower[:4]))
    assert len(breaks) >= (3 if name.startswith("zh") else 1), breaks
    chunks = chunk_pdf(pdf)
    apart = [b for b in breaks if b[1] + b[2] not in texts_on(chunks, b[0])]
    assert not apart, f"ranges read with a space after their dash or tilde: {apart}"


def test_chinese_line_breaks_add_no_spaces(excerpt: Callable[..., Path], chunk_pdf: Callable[..., list[Any]]) -> None:
    pdf = excerpt("zh-acute-af-ed-2024.pdf", 5, 9)
    breaks = []
    with pymupdf.open(pdf) as doc:
        for page in doc:
            for upper, lower in body_line_pairs(page):
                if _CJK.match(upper[-1]) and _CJK.match(lower[0]):
                    breaks.append((page.number + 1, upper[-3:], lower[:3]))
    assert len(breaks) >= 50
    chunks = chunk_pdf(pdf)
    spaced_breaks = [b for b in breaks if f"{b[1]} {b[2]}" in texts_on(chunks, b[0])]
    joined = [b for b in breaks if b[1] + b[2] in texts_on(chunks, b[0])]
    assert not spaced_breaks, f"a space was put between Chinese characters at line breaks: {spaced_breaks[:5]}"
    assert len(joined) >= 0.9 * len(breaks), f"{len(breaks) - len(joined)} of {len(breaks)} line breaks read wrongly"


# Reading order


@pytest.mark.parametrize(
    ("name", "page", "sentence"),
    [
        pytest.param(  # left column of a two-column page, broken over three lines
            "arnett-2014-guideline-strategies.pdf", 1,
            "Cardiovascular disease, the leading cause of death in the United States and worldwide, accounts for "
            "substantial suffering",
            id="arnett-p1-left-column",
        ),
        pytest.param(  # right column; pymupdf returns the justified line "In the large ... the" word by word
            "arnett-2014-guideline-strategies.pdf", 1,
            "In the large population of Medicare beneficiaries, the prevalence of persons with multiple chronic "
            "conditions is considerably greater",
            id="arnett-p1-justified-words",
        ),
        pytest.param(  # right column beside the start of Table 2 in the left one
            "mosca-2011-women-cvd.pdf", 5,
            "because there are no data to support the association between a reduction in hsCRP and improved "
            "clinical outcomes",
            id="mosca-p5-beside-table",
        ),
        pytest.param(  # first sentence of the text, set with a drop capital "S"
            "mosca-2011-women-cvd.pdf", 2,
            "Substantial progress has been made in the awareness, treatment, and prevention of cardiovascular "
            "disease (CVD) in women",
            id="mosca-p2-drop-capital",
        ),
        pytest.param(  # Chinese two-column page: the piece "“永" overlaps the full stop set half-width before it
            # ("…维持窦性心律。") by most of an em; read apart, it went into another sentence ("…最危险的心“永律失常")
            "zh-acute-af-ed-2024.pdf", 2, "应特别注意预激综合征伴发房颤是最危险的心律失常之一",
            id="zh-acute-p2-half-width-punctuation",
        ),
        pytest.param(  # right column beside a section heading in the left one, above a full-width table
            "shen-2017-syncope.pdf", 39,
            "differential diagnosis or a complete synopsis of all conditions associated with syncope",
            id="shen-p39-beside-heading",
        ),
    ],
)
def test_sentences_read_in_column_order(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], name: str, page: int, sentence: str
) -> None:
    found = sentence in texts_on(chunk_pdf(guidelines / name), page)
    assert found, f"{name} p.{page} does not read {sentence!r}"


@pytest.mark.parametrize(
    ("name", "pages"),
    [
        ("shen-2017-syncope.pdf", [8, 9, 10, 11, 21, 33, 39]),
        ("mosca-2011-women-cvd.pdf", [3, 5, 6, 7, 8]),
        ("arnett-2014-guideline-strategies.pdf", [1, 2, 3]),
    ],
)
def test_every_column_line_continues_with_the_line_below_it(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], name: str, pages: list[int]
) -> None:
    chunks = chunk_pdf(guidelines / name)
    wrong = []
    with pymupdf.open(guidelines / name) as doc:
        for number in pages:
            on_page = texts_on(chunks, number)
            for upper, lower in body_line_pairs(doc[number - 1]):
                upper_words, lower_words = spaced(upper).split(), spaced(lower).split()
                # A line ending in a hyphen or slash joins the next without a space ("AHA/" "ACC" -> "AHA/ACC").
                if upper.endswith(("-", "/")) or len(upper_words) < 3 or len(lower_words) < 3:
                    continue
                seam = " ".join(upper_words[-3:] + lower_words[:3])
                if seam not in on_page:
                    wrong.append((number, seam))
    assert not wrong, f"lines not followed by the line below them: {wrong[:8]}"


# Whole-document facts


def test_every_page_of_a_text_pdf_yields_text(guidelines: Path) -> None:
    parsed = parse_pdf(guidelines / "mosca-2011-women-cvd.pdf", "mosca")
    assert parsed.page_count == 20
    assert parsed.pages_without_text == []
    covered = {p for paragraph in parsed.paragraphs for p in range(paragraph.page_start, paragraph.page_end + 1)}
    assert covered == set(range(1, 21))


def test_pdf_with_an_empty_user_password_parses(guidelines: Path) -> None:
    # zh-dapt-chd-consensus-2021.pdf is AES-encrypted with an empty user password: it opens without asking.
    with pymupdf.open(guidelines / "zh-dapt-chd-consensus-2021.pdf") as doc:
        assert "AES" in (doc.metadata or {}).get("encryption", "")
    parsed = parse_pdf(guidelines / "zh-dapt-chd-consensus-2021.pdf", "zh-dapt")
    assert parsed.page_count == 23
    assert "双联抗血小板" in "".join(p.text for p in parsed.paragraphs)


def test_dingbat_bullets_read_as_bullets_not_letters(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017 p8-9 draws list bullets as "n" in a dingbat font; read as text they were "n Initial OH"."""
    path = excerpt("shen-2017-syncope.pdf", 8, 9)
    with pymupdf.open(path) as pdf:
        drawn = [
            span["text"] for page in pdf for block in page.get_text("dict")["blocks"]
            for line in block.get("lines", []) for span in line["spans"] if span["font"] == "AdvPS6658"
        ]
    assert drawn and set(drawn) == {"n"}  # the layer really holds "n" in that font
    text = "\n".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs)
    for item in ("Initial (immediate) OH", "Classic OH", "Delayed OH", "Neurogenic OH"):
        assert f"• {item}" in text
    assert not re.search(r"(?:^|\s)n (?:Initial|Classic|Delayed|Neurogenic) ", text)


def test_a_line_resumed_after_a_raised_reference_mark_stays_in_its_sentence(
    excerpt: Callable[[str, int, int], Path],
) -> None:
    """zh-acute-af-ed-2024 p10: pymupdf returns "[117]），INR 处于治疗目标范围内的时间" (the mark raised and small)
    as a block of its own beside "考虑在1.5~2. 0 之间"; read as its own run of lines it ended up after the
    paragraph, in another passage, and the warfarin sentence was cut."""
    path = excerpt("zh-acute-af-ed-2024.pdf", 10, 10)
    with pymupdf.open(path) as pdf:
        blocks = [
            "".join(span["text"] for line in block["lines"] for span in line["spans"])
            for block in pdf[0].get_text("dict")["blocks"] if block.get("lines")
        ]
    assert any(b.startswith("[117]") for b in blocks)  # the layer really splits the line there
    text = "".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs)
    assert "考虑在1.5~2. 0 之间[117]），INR 处于治疗目标范围内的时间（TTR）应>70%" in text
    assert "危险因素[121]，既容易出现抗凝不足" in text


def test_lines_a_font_boxes_too_tall_stay_in_reading_order(excerpt: Callable[[str, int, int], Path]) -> None:
    """zh-dapt-chd-consensus-2021 sets digits in a Latin font whose boxes are twice as tall as its letters: the
    line "（600 mg）可以减轻…" overlapped the lines above and below it, and both columns of page 8 were read
    interleaved ("…相比替格瑞洛单药治需考虑原有抗血小板治疗方案…")."""
    path = excerpt("zh-dapt-chd-consensus-2021.pdf", 8, 8)
    text = "".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs)
    assert "在替换时先使用氯吡格雷负荷剂量（600 mg）可以减轻血小板高反应性［84］。考虑到替格瑞洛的半衰期" in text
    assert "给予氯吡格雷负荷剂量300~600 mg［81］。替格瑞洛与氯吡格雷之间的相互转换建议见图1。" in text
    assert "阿司匹林（75 mg qd）较安慰剂降低约34% 的心肌梗死及猝死发生率［86］。" in text


def test_a_raised_mark_reaching_into_the_piece_before_it_stays_on_its_line(
    excerpt: Callable[[str, int, int], Path],
) -> None:
    """zh-dapt-chd-consensus-2021 p9: "3 个月" and "［51］。荟萃分析表明…" are one visual line, but the raised mark's box
    reaches 1.7 pt into "月"; read as two lines the mark's piece went on the line above, and "3 个月" moved into the
    next sentence ("疗程至1~［51］。…可降低3 个月30%的出血风险")."""
    path = excerpt("zh-dapt-chd-consensus-2021.pdf", 9, 9)
    text = "".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs).replace(" ", "")
    assert "应考虑缩短PCI术后DAPT疗程至1~3个月［51］。荟萃分析表明，≤3个月的DAPT可降低30%的出血风险" in text


@pytest.mark.parametrize(
    ("name", "page", "sentence"),
    [
        # "效）" and "［3］，半衰期…" are one visual line in two blocks; the parenthesis' box overlaps the mark by 5 pt.
        ("zh-dapt-chd-consensus-2021.pdf", 2, "（600 mg 负荷量于2~6 h 起效）［3］，半衰期为6 h［4］。"),
        # "…多个方面：" and "（1）系统" meet at two marks set half-width: their boxes overlap by exactly one em.
        ("zh-hfpef-consensus-2023.pdf", 2, "HFpEF 发病机制复杂，涉及多个方面：（1）系统性炎症：这是HFpEF 发生的重要机制。"),
    ],
)
def test_pieces_meeting_at_half_width_chinese_punctuation_are_one_line(
    excerpt: Callable[[str, int, int], Path], name: str, page: int, sentence: str
) -> None:
    path = excerpt(name, page, page)
    text = "".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs)
    assert sentence in text


def test_each_graded_row_of_a_chinese_table_keeps_its_whole_statement(excerpt: Callable[[str, int, int], Path]) -> None:
    """zh-dapt-chd-consensus-2021 p9, table 11: a cell's last line ("预防［57‑58］") holds more characters of its raised
    reference mark than of text, and a row's first line starts a little above its grade cells. The last line was
    left out of its row ("…长期二级 Ⅱb A" + "预防［57‑58］"), and the row below was joined to the one above it, so that
    one recommendation lost its middle and its grade."""
    path = excerpt("zh-dapt-chd-consensus-2021.pdf", 9, 9)
    rows = [p.text.replace(" ", "") for p in parse_pdf(path, path.name).paragraphs]
    assert "若不能耐受阿司匹林，建议每日服用P2Y12受体抑制剂［88］ⅠB" in rows
    assert "对于高缺血风险且无高出血风险的患者a，应考虑阿司匹林联合第二种抗栓药进行长期二级预防［57‑58］ⅡaA" in rows
    assert "对于至少具有一项中度缺血风险且无高出血风险的患者a，可考虑阿司匹林联合第二种抗栓药进行长期二级预防［57‑58］ⅡbA" in rows


def test_a_chinese_line_ending_a_sentence_short_of_the_edge_ends_its_paragraph(
    excerpt: Callable[[str, int, int], Path],
) -> None:
    """Chinese text indents each paragraph's first line. zh-hfpef-consensus-2023 p2 sets its section headings like
    the body, at the margin, after a paragraph's short last line: "…有不同于HFrEF 的发病机制和治疗方案。" then
    "1 背景介绍", and "…3.1%[18]。" then "1.2 HFpEF 的发病机制". Read on as one paragraph, the headings ended their
    paragraphs' text and no passage had them as its section."""
    path = excerpt("zh-hfpef-consensus-2023.pdf", 2, 2)
    paragraphs = parse_pdf(path, path.name).paragraphs
    assert [p.text for p in paragraphs if p.is_heading and p.text.startswith("1.2")] == ["1.2 HFpEF 的发病机制"]
    assert any(p.text.endswith("有不同于HFrEF 的发病机制和治疗方案。") for p in paragraphs)


def test_a_chinese_heading_run_into_its_first_line_stays_in_its_sentence(excerpt: Callable[[str, int, int], Path]) -> None:
    """zh-acute-af-ed-2024 p5: "3.1.1 心室率控制的目标 急性房颤的心室率控制应以患者" runs on into "的血流动力学稳定…" on the
    line below; taken for a heading, the sentence's first words went into the section title."""
    path = excerpt("zh-acute-af-ed-2024.pdf", 5, 5)
    paragraphs = parse_pdf(path, path.name).paragraphs
    assert any("急性房颤的心室率控制应以患者的血流动力学稳定和病情改善为目标" in p.text and not p.is_heading for p in paragraphs)


def test_the_header_of_a_second_graded_table_in_a_column_stays_a_header(excerpt: Callable[[str, int, int], Path]) -> None:
    """zh-acute-af-ed-2024 p2 has two graded tables, one above the other, in its right column. The second's header
    ("推荐意见 / 推荐级别 / 证据级别") was joined only for the first table of a column, so its cells ran into the first row
    ("证据级别识别与评估急性房颤的病因或诱因…")."""
    path = excerpt("zh-acute-af-ed-2024.pdf", 2, 2)
    texts = [p.text for p in parse_pdf(path, path.name).paragraphs]
    assert "识别与评估急性房颤的病因或诱因是管理房颤的重要内容 Ⅰ C" in texts
    assert "推荐意见 推荐级别 证据级别" in texts
    assert not [t for t in texts if t.startswith(("推荐级别", "证据级别"))]


def test_a_chinese_numbered_line_with_an_acronym_is_running_text_not_a_heading(
    excerpt: Callable[[str, int, int], Path],
) -> None:
    """A Chinese line has no capitals: "1. 血管入路：MATRIX 试验是迄今为止规模最" is the first line of a numbered
    paragraph, set like the body. Read as a heading in capitals (its only Latin letters are an acronym's), it cut
    its sentence in two and named the section of every passage after it."""
    path = excerpt("zh-dapt-chd-consensus-2021.pdf", 5, 5)
    paragraphs = parse_pdf(path, path.name).paragraphs
    assert not [p.text for p in paragraphs if p.is_heading and "MATRIX" in p.text]
    text = "".join(paragraph.text for paragraph in paragraphs)
    assert "1. 血管入路：MATRIX 试验是迄今为止规模最大（n=8 404）的关于介入部位选择的临床研究" in text


def test_symbol_font_comparisons_read_as_greater_or_less_equal(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017 draws "≥" and "≤" with a symbol font whose glyphs are "$" and "#" in the text layer."""
    path = excerpt("shen-2017-syncope.pdf", 8, 8)
    text = " ".join(" ".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs).split())
    assert "a pause ≥3 s and/or a decrease of systolic pressure ≥50 mm Hg" in text
    assert "$3 s" not in text and "$50" not in text


def test_dollar_signs_of_text_fonts_stay_dollars() -> None:
    from workspace_app.ingest.glyphs import comparison_fonts, recover_span

    spans = [
        {"text": "costs ", "font": "Times"}, {"text": "$", "font": "Times"}, {"text": "5,000 for LDL-C ", "font": "Times"},
        {"text": "$", "font": "Sym"}, {"text": "190", "font": "Times"}, {"text": " #", "font": "Sym"},
    ]
    fonts = comparison_fonts({"blocks": [{"lines": [{"spans": spans}]}]})
    assert fonts == {"Sym"}
    for span in spans:
        recover_span(span, {}, span["font"] in fonts, lambda index: True)
    assert "".join(span["text"] for span in spans) == "costs $5,000 for LDL-C ≥190 ≤"


@pytest.mark.parametrize(
    ("page", "row"),
    [
        # Table 3: narrow terms on the left, each beside its definition.
        (8, "• Delayed OH A sustained reduction of systolic BP of ≥20 mm Hg (or 30 mm Hg in patients with supine hypertension)"),
        (8, "Loss of consciousness A cognitive state in which one lacks awareness of oneself"),
        # Table 10: wide conditions on the left, each beside its narrow waiting time.
        (45, "Carotid sinus syncope, treated with permanent pacemaker (698) 1 week"),
        (45, "VVS, 1–6 syncope per year (694) 1 month"),
    ],
)
def test_two_column_tables_read_row_by_row(excerpt: Callable[[str, int, int], Path], page: int, row: str) -> None:
    """Read column by column, every term of shen-2017's Table 3 came before every definition."""
    path = excerpt("shen-2017-syncope.pdf", page, page)
    text = " ".join(" ".join(paragraph.text for paragraph in parse_pdf(path, path.name).paragraphs).split())
    assert row in text


def test_each_table_row_is_a_paragraph_of_its_own(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017 Table 10: a condition and its waiting time are one row, quoted alone ("… treated with ablation
    (698) 1 week"), not run on into the next condition; a condition's indented second line stays in its row. So
    are arnett-2014's Table 1 rows (rank and prevalence per index condition)."""
    path = excerpt("shen-2017-syncope.pdf", 45, 45)
    paragraphs = [" ".join(p.text.split()) for p in parse_pdf(path, path.name).paragraphs]
    assert "Syncope due to SVT, pharmacologically suppressed (698) 1 month" in paragraphs
    assert "Syncope due to SVT, treated with ablation (698) 1 week" in paragraphs
    assert "Syncope due to nonreflex bradycardia, untreated (698) Not fit to drive" in paragraphs
    path = excerpt("arnett-2014-guideline-strategies.pdf", 3, 3)
    paragraphs = [" ".join(p.text.split()) for p in parse_pdf(path, path.name).paragraphs]
    assert "Alzheimer’s disease/dementia † 10 (26.3) † 9 (33.8)" in paragraphs


def _paragraphs(excerpt: Callable[[str, int, int], Path], name: str, page: int) -> list[str]:
    path = excerpt(name, page, page)
    return [" ".join(p.text.split()) for p in parse_pdf(path, path.name).paragraphs]


def test_a_ruled_table_row_is_one_paragraph_across_its_columns(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017 Table 6 (seven columns): a study's year, size, events, outcome, predictors and NPV are one row;
    a study name and a predictor list wrapped onto the lines below stay in it. Read by position, the columns ran
    as separate runs and no passage held the SFSR row."""
    paragraphs = _paragraphs(excerpt, "shen-2017-syncope.pdf", 12)
    assert (
        "SFSR (72) 2004 684 79 (12%) 7-d serious events§ Yes Abnormal ECG‡; dyspnea; hematocrit; systolic BP <90 mm Hg;"
        " HF 99" in paragraphs
    )
    assert any(
        p.startswith("Boston Syncope Rule (70) 2007 293 68 (23%) 30-d serious events") and p.endswith("primary central nervous event 100")
        for p in paragraphs
    )


def test_a_ruled_tables_rows_carry_its_caption_and_header(excerpt: Callable[[str, int, int], Path]) -> None:
    """arnett-2014 sets Table 1's label left of a two-line title; the rows are read under both, and the header."""
    path = excerpt("arnett-2014-guideline-strategies.pdf", 3, 3)
    row = next(p for p in parse_pdf(path, path.name).paragraphs if p.text.startswith("Alzheimer"))
    assert row.table.startswith("TABLE 1 The 10 Most Common Comorbidities for 4 Index Cardiovascular Conditions")
    assert "Ischemic Heart Disease* Comorbidity" in row.table and len(row.table) <= 200
    assert row.section.endswith(row.table) and not row.is_heading


def test_a_ruled_table_whose_cells_wrap_reads_each_row_whole(excerpt: Callable[[str, int, int], Path]) -> None:
    """tracy-2012's pacemaker table: every cell wraps, so each visual line fills most columns; a first cell going
    on in lower case ("Single-chamber atrial / pacemaker") or left empty continues the row above."""
    paragraphs = _paragraphs(excerpt, "tracy-2012-device-therapy.pdf", 23)
    row = next(p for p in paragraphs if p.startswith("Single-chamber atrial pacemaker "))
    assert "No suspected abnormality of atrioventricular conduction and not at increased risk for future" in row
    assert not any(p.startswith("pacemaker ") for p in paragraphs)


def test_a_group_label_of_a_ruled_table_stays_a_row_of_its_own(excerpt: Callable[[str, int, int], Path]) -> None:
    """eckel-2013 Table 5: "PHYSICAL ACTIVITY" and "Lipids" label the rows below them, in reading order; a
    recommendation row holds its grade, evidence statements, class and level."""
    paragraphs = _paragraphs(excerpt, "eckel-2013-lifestyle.pdf", 7)
    at = paragraphs.index("PHYSICAL ACTIVITY")
    assert paragraphs[at + 1] == "Lipids"
    assert paragraphs[at + 2].startswith("1. In general, advise adults to engage in aerobic physical activity to reduce LDL-C")
    assert paragraphs[at + 2].endswith("B (Moderate) CQ3: ES1 (moderate), ES2 (moderate), ES5 (low) IIa A")


def test_a_table_of_one_row_of_lists_is_read_by_column(excerpt: Callable[[str, int, int], Path]) -> None:
    """kusumoto-2018 Table 4: a header of drug classes over one row of lists; joined across, every drug would
    lose its class, so each class is read with its own list."""
    paragraphs = _paragraphs(excerpt, "kusumoto-2018-bradycardia.pdf", 15)
    at = paragraphs.index("Psychoactive")
    assert paragraphs[at + 1].startswith("• Donepezil • Lithium")


def test_a_word_hyphenated_at_a_cell_edge_is_joined(excerpt: Callable[[str, int, int], Path]) -> None:
    """stout-2018 p. 14: "hospi- / tal" inside a joined row's cell reads "hospital"."""
    assert any("Perform procedure in a hospital with cardiologists, anesthesiologists" in p
               for p in _paragraphs(excerpt, "stout-2018-achd.pdf", 14))


def test_a_three_column_reference_page_is_not_read_as_a_table(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017 p. 50: its third column is as narrow as a table column, but it is justified text."""
    path = excerpt("shen-2017-syncope.pdf", 50, 50)
    paragraphs = [" ".join(p.text.split()) for p in parse_pdf(path, path.name).paragraphs]
    assert (
        "36. Kapoor WN, Karpf M, Wieand S, et al. A prospective evaluation and follow-up of patients with syncope. "
        "N Engl J Med. 1983;309:197–204." in paragraphs
    )
    assert any(p.startswith("55. Day SC, Cook EF, Funkenstein H, et al. Evaluation and outcome") for p in paragraphs)


def test_an_italic_variable_n_is_not_taken_for_a_bullet() -> None:
    from workspace_app.ingest.readers.pdf import _line_text

    fonts = {"Dingbats"}
    assert _line_text([{"text": "n", "font": "Dingbats"}, {"text": " = 40 patients", "font": "Times"}], fonts) == (
        "n = 40 patients"
    )
    assert _line_text([{"text": "n", "font": "Dingbats"}, {"text": " Classic OH", "font": "Times"}], fonts) == "• Classic OH"
