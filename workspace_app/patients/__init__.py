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
    records.py        the record as the cross-level and timeline answers read it (crosslevel.py's PatientRecords)
    crosslevel.py     a question about a patient answered across levels (patient, guideline, vocabulary), or from the
                      timeline; patient_evidence.py chooses the events it cites
    guideline_fit.py  whether care follows the guideline: targets.py reads a target from a guideline sentence
                      (lexicon/measures.tsv, comparators.tsv) and compares the patient's values; populations.py sets
                      apart a recommendation for a population the record does not meet (lexicon/populations.tsv)
    service.py        PatientService: import, list, events, related (what the App exposes as app.patients)
"""
