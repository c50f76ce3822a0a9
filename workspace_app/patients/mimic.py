"""Read the MIMIC-IV format (the demo's `hosp/` and `icu/` gzipped CSVs) as patients, admissions and events.

Rows are streamed with the csv module. Event ids are deterministic: `<table>:<the table's own key>` (a key repeated
in its table, as a prescription's `pharmacy_id` for each component, gets `.2`, `.3`... in file order), so a
re-import updates rows instead of adding them. `source_row` is the row's line in the decompressed file (the
header is line 1). The hospital's own link keys (poe_id, pharmacy_id, linkorderid, orderid) go to `links`.
SEE: https://mimic.mit.edu/docs/iv/modules/hosp/ for the tables and their columns.
"""

from __future__ import annotations

import csv
import gzip
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workspace_app.models.events import Admission, Event, Patient, VocabularyEntry

Row = dict[str, str]
_FOLDERS = {"inputevents": "icu"}  # the module of a table outside hosp/


def is_mimic_dir(path: Path) -> bool:
    """Whether a folder looks like MIMIC-IV (hosp/admissions.csv.gz)."""
    return (path / "hosp" / "admissions.csv.gz").is_file()


def read_rows(path: Path) -> Iterator[tuple[int, Row]]:
    """(line number, row) of a gzipped (or plain) CSV file, streamed."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:  # type: ignore[operator]
        reader = csv.DictReader(handle)
        for row in reader:
            yield reader.line_num, row


def _lookup(path: Path, key: Callable[[Row], str], value: Callable[[Row], str]) -> dict[str, str]:
    return {key(row): value(row) for _, row in read_rows(path)} if path.is_file() else {}


def _number(text: str) -> str:
    """'3.10' -> '3.1', '140.0' -> '140' (values as a clinician writes them)."""
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    return f"{round(value, 2):g}"


@dataclass
class MimicReader:
    """The tables of one MIMIC-IV folder, limited to some patients if asked."""

    folder: Path
    patients: set[str] | None = None
    admit_times: dict[str, str] = field(default_factory=dict)
    used_icd: set[tuple[str, str]] = field(default_factory=set)  # (version, code) of the diagnoses read
    used_items: set[str] = field(default_factory=set)  # lab item ids of the results read

    def _rows(self, table: str) -> Iterator[tuple[int, Row]]:
        path = self.folder / f"{table}.csv.gz"
        if not path.is_file():
            return
        for line, row in read_rows(path):
            if self.patients is None or row.get("subject_id") in self.patients:
                yield line, row

    def _keyed(self, table: str, key: str) -> Iterator[tuple[str, int, Row]]:
        """(event id, line, row), the id made unique by occurrence in the whole file (before filtering)."""
        seen: Counter[str] = Counter()
        path = self.folder / f"{table}.csv.gz"
        if not path.is_file():
            return
        for line, row in read_rows(path):
            seen[row[key]] += 1
            n = seen[row[key]]
            if self.patients is None or row.get("subject_id") in self.patients:
                yield f"{table.split('/')[-1]}:{row[key]}" + (f".{n}" if n > 1 else ""), line, row

    def read_patients(self) -> list[Patient]:
        """Patients with gender and anchor age."""
        return [
            Patient(row["subject_id"], row["gender"], int(row["anchor_age"]) if row["anchor_age"].isdigit() else None)
            for _, row in self._rows("hosp/patients")
        ]

    def read_admissions(self) -> tuple[list[Admission], list[Event]]:
        """Admissions, and one 'admission' event each at its admit time (remembered for diagnoses)."""
        admissions, events = [], []
        for line, row in self._rows("hosp/admissions"):
            self.admit_times[row["hadm_id"]] = row["admittime"]
            admissions.append(Admission(row["hadm_id"], row["subject_id"], row["admittime"], row["dischtime"],
                                        row["admission_type"]))
            content = (f"Hospital admission ({row['admission_type'].lower()}) from {row['admission_location'].lower()}; "
                       f"discharged to {row['discharge_location'].lower() or 'unknown'}")
            events.append(Event(f"admissions:{row['hadm_id']}", row["subject_id"], row["admittime"], "admission",
                                row["admission_type"], content, "admissions", line, admission_id=row["hadm_id"]))
        return admissions, events

    def event_tables(self) -> list[tuple[str, Callable[[], Iterable[Event]]]]:
        """(table, reader of its events) in import order (admissions must have been read first)."""
        return [
            ("diagnoses_icd", self.diagnoses), ("procedures_icd", self.procedures), ("labevents", self.labs),
            ("microbiologyevents", self.microbiology), ("prescriptions", self.prescriptions), ("poe", self.orders),
            ("emar", self.administrations), ("inputevents", self.infusions),
        ]

    def table_files(self) -> list[tuple[str, Path]]:
        """(table, its file) of what an import reads rows from, in import order: admissions, then `event_tables`."""
        names = ["admissions", *(name for name, _ in self.event_tables())]
        return [(name, self.folder / f"{_FOLDERS.get(name, 'hosp')}/{name}.csv.gz") for name in names]

    def diagnoses(self) -> Iterator[Event]:
        """Coded diagnoses as 'history' events at their admission's admit time."""
        titles = _lookup(self.folder / "hosp/d_icd_diagnoses.csv.gz", lambda r: f"{r['icd_version']}:{r['icd_code']}",
                         lambda r: r["long_title"])
        for line, row in self._rows("hosp/diagnoses_icd"):
            code = f"{row['icd_version']}:{row['icd_code']}"
            self.used_icd.add((row["icd_version"], row["icd_code"]))
            content = f"Diagnosis: {titles.get(code, 'unknown code')} (ICD-{row['icd_version']} {row['icd_code']})"
            yield Event(f"diagnoses_icd:{row['hadm_id']}:{row['seq_num']}", row["subject_id"],
                        self.admit_times.get(row["hadm_id"], ""), "history", "diagnosis", content, "diagnoses_icd",
                        line, concepts=(f"icd:{row['icd_code']}",), admission_id=row["hadm_id"])

    def procedures(self) -> Iterator[Event]:
        """Coded procedures as 'surgery' events on their chart date."""
        titles = _lookup(self.folder / "hosp/d_icd_procedures.csv.gz", lambda r: f"{r['icd_version']}:{r['icd_code']}",
                         lambda r: r["long_title"])
        for line, row in self._rows("hosp/procedures_icd"):
            code = f"{row['icd_version']}:{row['icd_code']}"
            content = f"Procedure: {titles.get(code, 'unknown code')} (ICD-{row['icd_version']} {row['icd_code']})"
            yield Event(f"procedures_icd:{row['hadm_id']}:{row['seq_num']}", row["subject_id"], row["chartdate"],
                        "surgery", "procedure", content, "procedures_icd", line,
                        concepts=(f"icd:{row['icd_code']}",), admission_id=row["hadm_id"])

    def labs(self) -> Iterator[Event]:
        """Lab results: 'Potassium 3.1 mmol/L (low; ref 3.5–5.1)'."""
        items = {}
        for _, row in read_rows(self.folder / "hosp/d_labitems.csv.gz"):
            items[row["itemid"]] = (row["label"], row["category"])
        for line, row in self._rows("hosp/labevents"):
            label, category = items.get(row["itemid"], (f"lab item {row['itemid']}", "Lab"))
            self.used_items.add(row["itemid"])
            yield Event(f"labevents:{row['labevent_id']}", row["subject_id"], row["charttime"], "lab", category,
                        lab_content(label, row), "labevents", line, admission_id=row["hadm_id"])

    def microbiology(self) -> Iterator[Event]:
        """Cultures and susceptibilities: 'BLOOD CULTURE Blood Culture, Routine: STAPH AUREUS COAG +'."""
        for line, row in self._rows("hosp/microbiologyevents"):
            result = row["org_name"] or row["comments"].strip() or "pending"
            if row["ab_name"]:
                result += f"; {row['ab_name']} {row['interpretation'] or row['dilution_text']}".rstrip()
            yield Event(f"microbiologyevents:{row['microevent_id']}", row["subject_id"],
                        row["charttime"] or row["chartdate"], "lab", "microbiology",
                        f"{row['spec_type_desc']} {row['test_name']}: {result}", "microbiologyevents", line,
                        admission_id=row["hadm_id"])

    def prescriptions(self) -> Iterator[Event]:
        """Pharmacy prescriptions: 'Furosemide 40 mg IV (MAIN)'."""
        for event_id, line, row in self._keyed("hosp/prescriptions", "pharmacy_id"):
            dose = " ".join(p for p in (_number(row["dose_val_rx"]), row["dose_unit_rx"], row["route"]) if p)
            content = f"Prescription: {row['drug']} {dose}".rstrip() + f" ({row['drug_type'].lower()})"
            yield Event(event_id, row["subject_id"], row["starttime"], "order", "prescription", content, "prescriptions",
                        line, _links(row, "poe_id", "pharmacy_id"), admission_id=row["hadm_id"])

    def orders(self) -> Iterator[Event]:
        """Provider orders (POE) with their detail fields: 'Order: General Care / Tubes/Drains (New); ...'."""
        details: dict[str, list[str]] = {}
        for _, row in self._rows("hosp/poe_detail"):
            details.setdefault(row["poe_id"], []).append(f"{row['field_name']}: {row['field_value']}")
        for line, row in self._rows("hosp/poe"):
            kind = " / ".join(p for p in (row["order_type"], row["order_subtype"]) if p)
            extra = "; ".join(details.get(row["poe_id"], []))
            content = f"Order: {kind} ({row['transaction_type'].lower()})" + (f"; {extra}" if extra else "")
            yield Event(f"poe:{row['poe_id']}", row["subject_id"], row["ordertime"], "order", row["order_type"] or "order",
                        content, "poe", line, _links(row, "poe_id"), admission_id=row["hadm_id"])

    def administrations(self) -> Iterator[Event]:
        """Medication administrations (eMAR): 'Magnesium Sulfate: Administered'."""
        for line, row in self._rows("hosp/emar"):
            content = f"Medication administration: {row['medication'] or 'unnamed'}: {row['event_txt'] or 'recorded'}"
            yield Event(f"emar:{row['emar_id']}", row["subject_id"], row["charttime"], "nursing", "administration",
                        content, "emar", line, _links(row, "poe_id", "pharmacy_id"), admission_id=row["hadm_id"])

    def infusions(self) -> Iterator[Event]:
        """ICU inputs: 'Infusion: Norepinephrine 0.5 mg at 0.05 mcg/kg/min (Vasopressors)'."""
        labels = _lookup(self.folder / "icu/d_items.csv.gz", lambda r: r["itemid"], lambda r: r["label"])
        for event_id, line, row in self._keyed("icu/inputevents", "orderid"):
            rate = f" at {_number(row['rate'])} {row['rateuom']}" if row["rate"] else ""
            category = row["ordercategoryname"].split("-", 1)[-1]
            content = (f"Infusion: {labels.get(row['itemid'], row['itemid'])} {_number(row['amount'])} "
                       f"{row['amountuom']}{rate} ({category})")
            yield Event(event_id, row["subject_id"], row["starttime"], "nursing", "infusion", content, "inputevents",
                        line, _links(row, "orderid", "linkorderid"), admission_id=row["hadm_id"])


    def vocabulary(self) -> list[VocabularyEntry]:
        """The dictionaries' entries for the codes the events read so far use: ICD diagnosis long titles
        (d_icd_diagnoses) and lab item labels with fluid and category (d_labitems)."""
        entries = [
            VocabularyEntry(f"icd{row['icd_version']}", row["icd_code"], row["long_title"],
                            source="MIMIC-IV d_icd_diagnoses")
            for _, row in _read_if_present(self.folder / "hosp/d_icd_diagnoses.csv.gz")
            if (row["icd_version"], row["icd_code"]) in self.used_icd
        ]
        for _, row in _read_if_present(self.folder / "hosp/d_labitems.csv.gz"):
            if row["itemid"] in self.used_items:
                detail = ", ".join(p for p in (row["fluid"], row["category"]) if p)
                entries.append(VocabularyEntry("labitem", row["itemid"], row["label"], detail, "MIMIC-IV d_labitems"))
        return entries


def _read_if_present(path: Path) -> Iterator[tuple[int, Row]]:
    return read_rows(path) if path.is_file() else iter(())


def _links(row: Row, *keys: str) -> dict[str, str]:
    return {key: row[key] for key in keys if row.get(key)}


def lab_content(label: str, row: Row) -> str:
    """A lab result as a clinician reads it: value, unit, direction of an abnormal flag and the reference range."""
    value = _number(row["valuenum"]) if row["valuenum"] else row["value"].strip()
    text = " ".join(p for p in (label, value or "(no value)", row["valueuom"]) if p)
    lower, upper = row["ref_range_lower"], row["ref_range_upper"]
    direction = lab_direction(row["valuenum"], lower, upper, row["flag"])
    ref = f"ref {_number(lower)}–{_number(upper)}" if lower and upper else ""
    note = "; ".join(p for p in (direction, ref) if p)
    return f"{text} ({note})" if note else text


def lab_direction(value: str, lower: str, upper: str, flag: str) -> str:
    """'low' / 'high' from the value against its reference range when flagged (or out of range), 'abnormal' for a
    flag without a usable range, '' for a normal result."""
    try:
        number, low, high = float(value), float(lower), float(upper)
    except ValueError:
        return "abnormal" if flag else ""
    if number < low:
        return "low"
    if number > high:
        return "high"
    return "abnormal" if flag else ""
