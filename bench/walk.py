"""New-user walk (issue 12, "the whole walk redone in a browser"): `workspace-app serve` on a fresh data dir,
Chromium driven through every page as a demanding new user would, each check recorded as passed/failed with
what was seen, and screenshots for a person to look at.

    python -m bench.walk [--out DIR]      (default /tmp/walk: walk.json and *.png)

Clicks are never repeated to hide a lost one: a lost click is a failed check (a finding).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from bench.common import CORPUS_DIR
from bench.common.serving import CHROMIUM_ARGS, free_port, stop

SOURCES = ("arnett-2014-guideline-strategies.pdf", "mosca-2011-women-cvd.pdf", "zh-acute-af-ed-2024.pdf")
CORRUPT = "damaged scan.pdf"
QUESTIONS = (
    "Is aspirin recommended for healthy women under 65?",
    "What INR range is recommended for women with atrial fibrillation?",
    "急性房颤患者心室率控制的目标是什么？",
    "How are classes of recommendation and levels of evidence defined?",
    "Should hormone therapy be used to prevent cardiovascular disease in women?",
)
NEAR_MISS = "What dose of apixaban is recommended for children?"
SCROLLER = ("() => { const c = document.querySelector('[data-testid=stAppScrollToBottomContainer]')"
            " || document.scrollingElement; return {container: c.scrollTop, window: window.scrollY}; }")


class Walk:
    def __init__(self, out: Path, data: Path) -> None:
        self.out, self.data = out, data
        self.checks: dict[str, dict[str, Any]] = {}
        self.shots: list[str] = []
        self.timings: dict[str, Any] = {}
        self.page: Any = None

    def check(self, name: str, fn: Callable[[], Any]) -> Any:
        started = time.monotonic()
        try:
            detail = fn()
            passed = not (isinstance(detail, dict) and detail.get("passed") is False)
            self.checks[name] = {"passed": passed, "detail": detail}
        except Exception as error:  # noqa: BLE001 - a walk records what failed and goes on
            detail = f"{type(error).__name__}: {str(error)[:600]}"
            self.checks[name] = {"passed": False, "detail": detail}
            traceback.print_exc(limit=2)
            try:
                self.shoot(f"fail-{name}")
            except Exception as shot_error:  # noqa: BLE001 - a page that cannot be shot any more
                print(f"no screenshot of {name}: {shot_error}", file=sys.stderr)
        self.checks[name]["seconds"] = round(time.monotonic() - started, 1)
        print(f"[{time.strftime('%H:%M:%S')}] {name}: {self.checks[name]}", file=sys.stderr, flush=True)
        return self.checks[name]

    def shoot(self, name: str, full: bool = True) -> str:
        self.page.wait_for_timeout(700)
        path = self.out / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full)
        self.shots.append(str(path))
        return str(path)

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.data / "catalog.sqlite") as db:
            return list(db.execute(query, args).fetchall())


def idle(page: Any, timeout: int = 180_000) -> None:
    from playwright.sync_api import expect

    page.wait_for_timeout(800)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)


def nav(page: Any, name: str, heading: str | None = None) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("stTopNav").get_by_role("link", name=name).click()
    expect(page.get_by_role("heading", name=heading or name, exact=True)).to_be_visible(timeout=30_000)
    idle(page)


def params(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def messages(page: Any) -> Any:
    return page.get_by_test_id("stChatMessage")


def wait_answer(page: Any, before: int) -> float:
    """Seconds until the new answer is there and the run has ended."""
    from playwright.sync_api import expect

    started = time.monotonic()
    expect(messages(page)).to_have_count(before + 2, timeout=240_000)
    # the answer is streamed after its message shows ("Searching the sources…"): done when it stops changing
    last, seen, deadline = messages(page).last, "", time.monotonic() + 240
    while time.monotonic() < deadline:
        text = last.inner_text()
        busy = "Searching the sources" in text or last.locator("[data-testid='stSpinner']").count() > 0
        if text == seen and not busy:
            break
        seen = text
        page.wait_for_timeout(700)
    done = time.monotonic() - started - 0.7
    idle(page, 240_000)
    return done


def ask(page: Any, question: str) -> float:
    before = messages(page).count()
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")
    return wait_answer(page, before)


def run(walk: Walk, browser: Any, url: str, ready_at: float) -> None:
    from playwright.sync_api import expect

    page = walk.page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.goto(url)
    expect(page.get_by_test_id("stTopNav")).to_be_visible(timeout=90_000)
    corrupt = walk.out / CORRUPT
    corrupt.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    files = [CORPUS_DIR / name for name in SOURCES]

    # 1. Workspace and sources
    def create() -> str:
        page.locator(".st-key-create-workspace-name input").fill("Cardiology walk")
        page.locator(".st-key-create-workspace-submit button").click()
        expect(page.get_by_text("Created workspace").or_(page.get_by_text("Now working in")).first).to_be_visible(timeout=60_000)
        idle(page)
        return page.url
    walk.check("1a create workspace", create)

    progress: list[str] = []

    def upload() -> dict[str, Any]:
        nav(page, "Sources")
        page.locator("input[type=file]").set_input_files([str(p) for p in files] + [str(corrupt)])
        shot_mid = None
        deadline = time.monotonic() + 480
        summary = page.get_by_text(re.compile(r"^\d+ sources? ·"))
        while time.monotonic() < deadline:
            try:
                texts = page.locator("[data-testid='stProgress']").all_inner_texts()
            except Exception:  # noqa: BLE001 - the page reruns under us
                texts = []
            for text in texts:
                text = " ".join(text.split())
                if text and (not progress or progress[-1] != text):
                    progress.append(text)
            if shot_mid is None and len(progress) >= 3:
                shot_mid = walk.shoot("01-sources-progress")
            s = summary.first.inner_text() if summary.count() else ""
            if f"{len(files)} ready" in s:
                break
            page.wait_for_timeout(1500)
        s = summary.first.inner_text() if summary.count() else ""
        idle(page)
        walk.shoot("02-sources-ready")
        return {"passed": f"{len(files)} ready" in s, "summary": s, "distinct_progress_texts": len(progress),
                "progress_samples": progress[:40], "mid_screenshot": shot_mid}
    walk.check("1b upload 3 PDFs + a damaged one; progress counters move", upload)
    walk.timings["ingest_done_after_ready_s"] = round(time.monotonic() - ready_at, 1)

    def one_list() -> dict[str, Any]:
        frames = page.locator("[data-testid='stDataFrame']").count()
        failed = page.locator("[class*='st-key-sources-row-']").filter(has_text=CORRUPT)
        error_in_row = failed.get_by_text(re.compile("not a readable PDF|could not|failed", re.IGNORECASE)).count()
        retry = failed.get_by_role("button", name="Retry").count()
        checked = failed.get_by_role("checkbox").is_checked() if failed.get_by_role("checkbox").count() else None
        return {"passed": frames == 0 and error_in_row > 0 and retry == 0 and checked is not True,
                "dataframes": frames, "error_text_in_row": error_in_row, "retry_buttons_on_failed": retry,
                "failed_ticked": checked}
    walk.check("1c one list, error in the row, failed unticked without Retry", one_list)

    def duplicate() -> str:
        page.locator("input[type=file]").set_input_files([str(files[1])])
        box = page.get_by_text(re.compile("already in this workspace"))
        expect(box.first).to_be_visible(timeout=30_000)
        text = box.first.inner_text()
        idle(page)
        walk.shoot("03-sources-duplicate")
        return text
    walk.check("1d duplicate reported as duplicate", duplicate)

    def guide() -> dict[str, Any]:
        # the women's guideline has recommendations with class and level (arnett-2014 is about method, none)
        row = page.locator("[class*='st-key-sources-row-']").filter(has_text="mosca-2011-women-cvd.pdf")
        row.get_by_text("Source guide").first.click()
        expect(row.get_by_text("Key recommendations").first).to_be_visible(timeout=20_000)
        classes = row.get_by_text(re.compile(r"Class I")).count()
        walk.shoot("04-sources-guide")
        return {"class_labels_seen": classes, "guide": " ".join(row.inner_text().split())[:700]}
    walk.check("1e source guide shown", guide)

    def preview() -> dict[str, Any]:
        page.get_by_text("Preview a source").first.click()
        frame = page.frame_locator("[class*='st-key-sources-preview'] iframe").first
        expect(frame.locator("body[data-painted='1']")).to_be_attached(timeout=60_000)
        where = frame.locator(".where").inner_text()
        page.locator("[class*='st-key-sources-preview'] iframe").first.scroll_into_view_if_needed()
        walk.shoot("05-sources-preview", full=False)
        return {"where": where}
    walk.check("1f Preview a source", preview)

    # 2. Chat
    first_q: dict[str, str] = {}

    def greeting() -> dict[str, Any]:
        nav(page, "Chat")
        expect(page.get_by_text("Questions your sources answer")).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Your sources", exact=True)).to_be_visible()
        questions = page.locator("[class*='st-key-greeting-question-'] button")
        labels = list(dict.fromkeys(q.locator("p").first.inner_text().strip() for q in questions.all()))
        walk.shoot("06-chat-greeting")
        return {"suggested": labels}
    walk.check("2a empty chat: source guides + suggested questions", greeting)

    answers: list[dict[str, Any]] = []

    def suggested() -> dict[str, Any]:
        button = page.locator("[class*='st-key-greeting-question-'] button").first
        label = button.locator("p").first.inner_text().strip()
        first_q["text"] = label
        started = time.monotonic()
        button.click()
        expect(messages(page).filter(has_text=label).first).to_be_visible(timeout=60_000)
        wait_answer(page, 0)
        seconds = time.monotonic() - started  # from the click
        answers.append({"question": label, "seconds": round(seconds, 1), "after_ready_s": round(time.monotonic() - ready_at, 1)})
        walk.shoot("07-chat-suggested-answered")
        return {"asked": label, "seconds": round(seconds, 1)}
    walk.check("2b click a suggested question -> asked", suggested)

    for index, question in enumerate(QUESTIONS):
        def one(question: str = question) -> dict[str, Any]:
            seconds = ask(page, question)
            last = messages(page).last
            chips = last.get_by_role("button", name=re.compile(r"^\[\d+\]$")).count()
            text = " ".join(last.inner_text().split())[:300]
            answers.append({"question": question, "seconds": round(seconds, 1), "chips": chips})
            return {"passed": chips > 0, "seconds": round(seconds, 1), "chips": chips, "answer_start": text}
        walk.check(f"2c ask {index + 1}: {question[:40]}", one)

    def refusal() -> dict[str, Any]:
        seconds = ask(page, NEAR_MISS)
        last = messages(page).last
        chips = last.get_by_role("button", name=re.compile(r"^\[\d+\]$")).count()
        text = " ".join(last.inner_text().split())[:400]
        refused = chips == 0 and bool(re.search(r"(not|cannot|can't|don't|no) .*(source|answer|find|cover)", text, re.IGNORECASE))
        answers.append({"question": NEAR_MISS, "seconds": round(seconds, 1), "chips": chips})
        walk.shoot("08-chat-refusal", full=False)
        return {"passed": refused, "chips": chips, "answer": text}
    walk.check("2d near-miss refused", refusal)

    walk.timings["answers"] = answers
    chat_url = {"url": page.url}

    def chip() -> dict[str, Any]:
        chat_url["url"] = page.url
        candidates = [i for i in range(1, messages(page).count(), 2)
                      if messages(page).nth(i).get_by_role("button", name="[2]", exact=True).count()]
        target = messages(page).nth(candidates[-2] if len(candidates) > 1 else candidates[-1])
        button = target.get_by_role("button", name="[2]", exact=True).first
        button.scroll_into_view_if_needed()
        page.mouse.wheel(0, -150)  # a reader a little above the chip, as after reading the answer
        page.wait_for_timeout(600)
        before = page.evaluate(SCROLLER)
        clicked = time.monotonic()
        button.click()
        frame = page.frame_locator(".st-key-source-viewer iframe").first
        expect(frame.locator("body[data-painted='1'] [id^='quote-2-']").first).to_be_attached(timeout=30_000)
        painted = time.monotonic() - clicked
        idle(page)
        after = page.evaluate(SCROLLER)
        box = page.locator(".st-key-source-viewer iframe").first.bounding_box()
        where = frame.locator(".where").inner_text()
        walk.shoot("09-chat-viewer-open", full=False)
        zoom = frame.locator("#zoom-label").inner_text()
        frame.locator("#zoom-in").click()
        expect(frame.locator("#zoom-label")).not_to_have_text(zoom, timeout=10_000)
        zoomed = frame.locator("#zoom-label").inner_text()
        page.locator(".st-key-source-viewer-doc-next button").first.click()
        expect(frame.locator(".where")).not_to_have_text(where, timeout=30_000)
        idle(page)
        paged = frame.locator(".where").inner_text()
        after_paging = page.evaluate(SCROLLER)
        walk.shoot("10-chat-viewer-zoom-next", full=False)
        ok = before == after == after_paging and box is not None and 0 <= box["y"] < 1000
        return {"passed": ok, "scroll_before": before, "scroll_after_click": after, "scroll_after_paging": after_paging,
                "chip_to_painted_s": round(painted, 2), "viewer_box": box, "where": where,
                "zoom": f"{zoom} -> {zoomed}", "after_next": paged}
    walk.check("2e chip [2] on a later answer: chat does not move, passage boxed, zoom, page-through", chip)

    # 3. Reload
    def reload() -> dict[str, Any]:
        here = params(page)
        page.reload()
        expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=60_000)
        expect(page.get_by_text(first_q.get("text", QUESTIONS[0])).first).to_be_visible(timeout=60_000)
        idle(page)
        walk.shoot("11-reloaded")
        return {"passed": params(page) == here and "workspace" in here and "chat" in here, "params": here,
                "after": params(page)}
    walk.check("3 reload lands on the same workspace and chat", reload)

    # 4. Chat management
    def manage() -> dict[str, Any]:
        sidebar = page.get_by_test_id("stSidebar")
        chats_before = walk.sql("SELECT COUNT(*) FROM chats")[0][0]
        sidebar.get_by_role("button", name="New chat").click()
        expect(page).not_to_have_url(re.compile(f"chat={params(page).get('chat')}"), timeout=30_000)
        idle(page)
        new_id = params(page).get("chat")
        sidebar.get_by_role("button", name="Rename").click()
        page.get_by_label("Chat name").fill("Throwaway chat")
        page.get_by_role("button", name="Save name").click()
        expect(page.get_by_text("Renamed to Throwaway chat")).to_be_visible(timeout=30_000)
        idle(page)
        rename_open = page.get_by_role("button", name="Save name").count()
        sidebar.get_by_role("button", name="Delete").click()
        expect(page.get_by_text(re.compile("Delete Throwaway chat and all its answers"))).to_be_visible(timeout=20_000)
        page.get_by_role("button", name="Delete chat").dblclick()
        expect(page.get_by_text("Chat deleted.")).to_be_visible(timeout=30_000)
        page.wait_for_timeout(2500)
        idle(page)
        delete_open = page.get_by_role("button", name="Delete chat").count()
        chats_after = walk.sql("SELECT COUNT(*) FROM chats")[0][0]
        walk.shoot("12-chat-after-delete", full=False)
        ok = rename_open == 0 and delete_open == 0 and chats_after == chats_before and new_id != chat_url["url"]
        return {"passed": ok, "rename_popover_open_after_save": rename_open, "delete_popover_open_after": delete_open,
                "chats_before_new": chats_before, "chats_after_delete": chats_after, "now_at": params(page)}
    walk.check("4 rename closes popover; double-click delete deletes one chat", manage)

    # 5. Notes
    def save_note() -> dict[str, Any]:
        page.goto(chat_url["url"])
        expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=60_000)
        idle(page)
        notes_before = walk.sql("SELECT COUNT(*) FROM notes")[0][0]
        button = page.get_by_role("button", name="Save to notes").first
        button.scroll_into_view_if_needed()
        button.click()
        expect(page.get_by_text("Saved to notes.").first).to_be_visible(timeout=30_000)
        idle(page)
        saved = page.get_by_role("button", name="Saved to notes")
        disabled = saved.first.is_disabled() if saved.count() else None
        if saved.count():
            saved.first.click(force=True)  # a second click on the saved button
            idle(page)
        notes_after = walk.sql("SELECT COUNT(*) FROM notes")[0][0]
        return {"passed": saved.count() == 1 and disabled is True and notes_after == notes_before + 1,
                "saved_buttons": saved.count(), "disabled": disabled, "notes": f"{notes_before} -> {notes_after}"}
    walk.check("5a save to notes: shown saved, not duplicated", save_note)

    def export_chat() -> dict[str, Any]:
        with page.expect_download(timeout=30_000) as info:
            page.locator(".st-key-chats-export button").first.click()
        download = info.value
        text = Path(download.path()).read_text(encoding="utf-8")
        (walk.out / "export-chat.md").write_text(text, encoding="utf-8")
        escapes = sorted(set(re.findall(r"\\[-().\[\]*_#!]", text)))
        name = download.suggested_filename
        ok = not escapes and re.fullmatch(r"[\w .()\-]+\.md", name) is not None
        return {"passed": ok, "file_name": name, "escapes": escapes, "chars": len(text), "start": text[:300]}
    walk.check("7a export chat to Markdown", export_chat)

    def notes_page() -> dict[str, Any]:
        nav(page, "Notes")
        page.get_by_role("button", name="[1]", exact=True).first.click()
        frame = page.frame_locator(".st-key-notes-viewer iframe").first
        expect(frame.locator("body[data-painted='1'] [id^='quote-1-']").first).to_be_attached(timeout=30_000)
        idle(page)
        walk.shoot("13-notes-chip-viewer")
        page.get_by_text("New note").click()
        page.get_by_label("Title").fill("Ask about BP")
        page.get_by_label("Note (Markdown)").fill("**Check blood pressure** before aspirin.\n\n- women ≥65")
        page.get_by_role("button", name="Add note").click()
        expect(page.get_by_text("Note added.")).to_be_visible(timeout=30_000)
        idle(page)
        own = page.locator("[class*='st-key-note-']", has_text="Ask about BP").first
        own.get_by_role("button", name="Edit", exact=True).click()
        page.get_by_label("Your note (Markdown)").fill("**Check blood pressure** first; aim below 140/90.")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.get_by_text("aim below 140/90")).to_be_visible(timeout=30_000)
        idle(page)
        own = page.locator("[class*='st-key-note-']", has_text="Ask about BP").first
        own.get_by_role("button", name="Delete", exact=True).click()
        expect(page.get_by_text(re.compile("Delete the note Ask about BP"))).to_be_visible(timeout=20_000)
        walk.shoot("14-notes-delete-asks")
        page.get_by_role("button", name="Cancel").click()
        idle(page)
        return {"own_notes": walk.sql("SELECT COUNT(*) FROM notes WHERE title = 'Ask about BP'")[0][0]}
    walk.check("5b notes page: chip opens viewer, own note added/edited, delete asks", notes_page)

    def export_notes() -> dict[str, Any]:
        with page.expect_download(timeout=30_000) as info:
            page.locator(".st-key-notes-export button").first.click()
        download = info.value
        text = Path(download.path()).read_text(encoding="utf-8")
        (walk.out / "export-notes.md").write_text(text, encoding="utf-8")
        escapes = sorted(set(re.findall(r"\\[-().\[\]*_#!]", text)))
        name = download.suggested_filename
        ok = not escapes and re.fullmatch(r"[\w .()\-]+\.md", name) is not None
        return {"passed": ok, "file_name": name, "escapes": escapes, "chars": len(text), "start": text[:300]}
    walk.check("7b export notes to Markdown", export_notes)

    # 8. Graph
    def graph() -> dict[str, Any]:
        nav(page, "Graph")
        network = page.frame_locator("iframe[srcdoc*='vis.Network']").first
        expect(network.locator("body[data-drawn-ms]")).to_be_attached(timeout=90_000)
        idle(page)
        walk.shoot("15-graph")
        legend = network.locator("body").inner_text()[:600]
        page.locator(".st-key-graph-search input").fill("atrial fibrillation")
        page.locator(".st-key-graph-search input").press("Enter")
        idle(page)
        page.locator(".st-key-graph-pick").click()
        options = page.get_by_role("option")
        expect(options.first).to_be_visible(timeout=20_000)
        picked = options.first.inner_text()
        options.first.click()
        expect(page.get_by_text(re.compile(r"^Centred on ")).first).to_be_visible(timeout=30_000)
        idle(page)
        page.locator("[class*='st-key-graph-passage-0'] button").first.click()
        viewer = page.frame_locator(".st-key-graph-viewer iframe").first
        expect(viewer.locator("body[data-painted='1'] [id^='quote-1-']").first).to_be_attached(timeout=60_000)
        idle(page)
        walk.shoot("16-graph-passage-viewer")
        return {"picked": picked, "frame_text": legend}
    walk.check("8 graph: labels, legend, entity passage opens viewer", graph)

    # 6. Remove a cited source
    def remove() -> dict[str, Any]:
        cited = walk.sql("SELECT answer FROM chat_messages WHERE answer IS NOT NULL")
        counts: dict[str, int] = {}
        for (record,) in cited:
            for name in set(re.findall(r"[\w\-]+\.pdf", record or "")):
                counts[name] = counts.get(name, 0) + 1
        name = "mosca-2011-women-cvd.pdf" if counts.get("mosca-2011-women-cvd.pdf") else max(counts, key=counts.get)
        doc_id = walk.sql("SELECT id FROM documents WHERE name = ?", name)[0][0]
        nav(page, "Sources")
        page.locator(f".st-key-sources-remove-{doc_id} button").first.click()
        warning = page.get_by_text(re.compile(r"\d+ chats? cites?|cite"))
        expect(warning.first).to_be_visible(timeout=20_000)
        said = warning.first.inner_text()
        walk.shoot("17-remove-warning", full=False)
        page.locator(f".st-key-sources-confirm-remove-{doc_id} button").first.click()
        expect(page.get_by_text(f"Removed {name}")).to_be_visible(timeout=30_000)
        idle(page)
        page.goto(chat_url["url"])
        expect(page.get_by_role("heading", name="Chat", exact=True)).to_be_visible(timeout=60_000)
        idle(page)
        chip = None
        for i in range(1, messages(page).count(), 2):
            message = messages(page).nth(i)
            if name in message.inner_text() or True:
                button = message.get_by_role("button", name="[1]", exact=True)
                if button.count():
                    chip = button.first
                    break
        # open the chips of each answer until one is of the removed source
        shown = False
        for i in range(1, messages(page).count(), 2):
            for button in messages(page).nth(i).get_by_role("button", name=re.compile(r"^\[\d+\]$")).all():
                button.scroll_into_view_if_needed()
                button.click()
                idle(page)
                if page.get_by_text("This source was removed from the workspace").count():
                    shown = True
                    break
            if shown:
                break
        no_id_error = page.get_by_text("There is no document").count() == 0
        quote = page.locator(".st-key-source-viewer blockquote").first.inner_text() if shown else None
        walk.shoot("18-removed-source-citation", full=False)
        return {"passed": shown and no_id_error, "removed": name, "citing_answers": counts, "warning": said,
                "saved_quote": quote, "no_id_error": no_id_error, "first_chip_found": chip is not None}
    walk.check("6 remove a cited source: warning, then saved quote shown", remove)
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.walk", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/walk"))
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from bench.first_answer import start_serve

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="walk-") as tmp, open(args.out / "serve.log", "ab") as log:
        data = Path(tmp) / "data"
        walk = Walk(args.out, data)
        port = free_port()
        process, started, ready = start_serve(data, port, log)
        walk.timings["serve_ready_s"] = round(ready - started, 1)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
                try:
                    run(walk, browser, f"http://127.0.0.1:{port}", ready)
                finally:
                    browser.close()
        finally:
            stop(process)
            answers = walk.timings.get("answers", [])
            if len(answers) > 1:
                later = sorted(a["seconds"] for a in answers[1:])
                walk.timings["first_answer_s"] = answers[0]["seconds"]
                walk.timings["later_median_s"] = later[len(later) // 2]
                walk.timings["later_max_s"] = later[-1]
            summary = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_average": os.getloadavg(),
                       "passed": sum(c["passed"] for c in walk.checks.values()), "failed":
                       [n for n, c in walk.checks.items() if not c["passed"]], "checks": walk.checks,
                       "timings": walk.timings, "screenshots": walk.shots}
            (args.out / "walk.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
            print(json.dumps({k: summary[k] for k in ("passed", "failed", "timings")}, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
