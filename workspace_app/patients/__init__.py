"""Patient records (seed 004, ICUMemoryAgent): clinical events per patient imported from MIMIC-IV or a generic
events file, concepts found at import, and explained related-event search.

    models/events.py  Event, Admission, Patient, ImportReport (plain data, shared with storage)
    mimic.py          the MIMIC-IV tables as events (streamed gzipped CSVs)
    events_file.py    a generic CSV / JSON Lines events file, bad rows reported by line
    lexicon.py        drug classes, lab aliases, disease words (lexicon/*.tsv, English and Chinese)
    concepts.py       concepts of an event (drugs, classes, diseases, labs, abnormal ↑/↓)
    rules.py          clinical rules and type priors from YAML (rules.yaml shipped), validated
    link_mining.py    treatment links learned from the record (abnormal lab -> medication, order, re-check) on a
                      training split of patients, written as rules with provenance (mined_rules.yaml)
    related.py        recall + weighted rerank with reasons (and mined links in words); plain vector search as the baseline
    timeline_questions.py  the plan of a question in words about one patient's timeline (lexicon/timeline.tsv)
    timeline_tools.py      the event tools that carry the plan out (by concept, kind, text; windows; before/after)
    records.py        the record as the cross-level and timeline answers read it (answer/crosslevel.py's PatientRecords)
    service.py        PatientService: import, list, events, related (what the App exposes as app.patients)
"""
