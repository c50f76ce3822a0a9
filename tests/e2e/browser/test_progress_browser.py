"""A user in Chromium watches long jobs (issue 29 item 4, issue 28 item 5): on the Sources page a source's row shows
its stage's count and the time left in that stage; on the Patients page an import shows its rows of the total and
the time left, as `workspace-app serve`'s worker measures them (screenshots in tmp_path, copied to
/tmp/workspace-screenshots/progress-*.png)."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest
from served import CHROMIUM_ARGS, open_page, require_chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = Path("/tmp/workspace-screenshots")
ROWS = 20_000  # 10 batches of 2,000: an import long enough to be watched


def long_notes(folder: Path) -> Path:
    """A Markdown source of ~200 passages no embedding cache has seen (each paragraph carries a fresh token)."""
    lines = ["# Long notes\n"]
    for index in range(600):
        lines.append(f"Paragraph {index} ({uuid.uuid4().hex}): beta blockers after myocardial infarction reduce "
                     "mortality; the dose is titrated to heart rate and blood pressure over several weeks.\n")
    path = folder / "long-notes.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def events_file(folder: Path) -> Path:
    contents = ["Potassium 3.1 mmol/L (low)", "Potassium chloride 40 mEq PO", "Sodium 139 mmol/L", "INR 2.4 (high)"]
    path = folder / "events.csv"
    path.write_text("event_id,patient_id,timestamp,event_type,sub_type,content\n" + "".join(
        f"e{n},P-{n % 11},2150-03-01 {n % 24:02d}:00:00,lab,Chemistry,{contents[n % 4]}\n" for n in range(ROWS)
    ), encoding="utf-8")
    return path


def test_a_source_and_an_import_show_their_totals_and_time_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import expect, sync_playwright

    require_chromium()
    monkeypatch.setenv("WORKSPACE_QUEUE__PACE_MIN_MEASURED_S", "0")  # the served worker measures from its first step
    notes, records = long_notes(tmp_path), events_file(tmp_path)
    with serving(tmp_path / "data", tmp_path) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(url)
        page.locator(".st-key-create-workspace-name input").fill("Progress")
        page.locator(".st-key-create-workspace-submit button").click()
        expect(page.get_by_text("Now working in").or_(page.get_by_text("Created workspace"))).to_be_visible()
        open_page(page, "Sources", "Sources")
        page.locator("input[type=file]").set_input_files([str(notes)])
        row = page.locator("[class*='st-key-sources-row-']").filter(has_text=notes.name)
        timed = re.compile(r"\d+/\d+ passages? · about \d+ (s|min) left in this step|"
                           r"Embedding passages \d+/\d+ · about \d+ (s|min) left in this step")
        expect(row.get_by_text(timed)).to_be_visible(timeout=240_000)
        page.screenshot(path=str(tmp_path / "progress-sources.png"), full_page=True)

        open_page(page, "Patients", "Patients")
        page.locator(".st-key-patients-import-path input").fill(str(records))
        page.locator(".st-key-patients-import-start button").click()
        running = page.get_by_text(re.compile(
            rf"Importing events\.csv: [\d,]+ of {ROWS:,} rows · [\d,]+ events stored · about \d+ (s|min) left"
        ))
        expect(running).to_be_visible(timeout=240_000)
        expect(page.get_by_text(re.compile(rf"[\d,]+ of {ROWS:,} rows in all"))).to_be_visible()
        page.screenshot(path=str(tmp_path / "progress-patients.png"), full_page=True)
        expect(page.get_by_text(re.compile(rf"Imported events\.csv: {ROWS:,} events"))).to_be_visible(timeout=300_000)
        browser.close()
    SHOTS.mkdir(exist_ok=True)
    for name in ("progress-sources.png", "progress-patients.png"):
        assert (tmp_path / name).stat().st_size > 10_000
        shutil.copy(tmp_path / name, SHOTS / name)
