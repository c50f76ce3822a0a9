"""Versioned catalog schema: each entry is applied once, in order, and recorded in `schema_version`."""

from __future__ import annotations

import sqlite3

from workspace_app.storage.sqlite.database import Step
from workspace_app.storage.sqlite.keywords import create_keyword_table, keyword_table


def _add_missing_chunk_kind(db: sqlite3.Connection) -> None:
    """Give `chunks` its `kind` column where migration 1 ran before `kind` was written into it."""
    if "kind" not in {row[1] for row in db.execute("PRAGMA table_info(chunks)")}:
        db.execute("ALTER TABLE chunks ADD COLUMN kind TEXT NOT NULL DEFAULT 'body'")


def _split_keyword_index(db: sqlite3.Connection) -> None:
    """Move the shared FTS5 table into one per workspace, so BM25 statistics are the workspace's own."""
    for (workspace_id,) in db.execute("SELECT id FROM workspaces").fetchall():
        create_keyword_table(db, workspace_id)
        db.execute(
            f"INSERT INTO {keyword_table(workspace_id)} (rowid, section, body) SELECT rowid, section, body "
            "FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE workspace_id = ?)",
            (workspace_id,),
        )
    db.execute("DROP TABLE chunks_fts")


def _rename_shared_names(db: sqlite3.Connection) -> None:
    """Two different files of a workspace with one name: the later ones get " (2)", " (3)"... before the suffix,
    as new ones do (documents/service.py `unused_name`), so a name picks one document."""
    rows = db.execute("SELECT id, workspace_id, name FROM documents ORDER BY workspace_id, added_at, id").fetchall()
    taken: dict[str, set[str]] = {}
    for document_id, workspace_id, name in rows:
        names = taken.setdefault(workspace_id, set())
        new = name
        n = 2
        while new in names:
            stem, dot, suffix = name.rpartition(".")
            new = f"{stem} ({n}).{suffix}" if dot else f"{name} ({n})"
            n += 1
        if new != name:
            db.execute("UPDATE documents SET name = ? WHERE id = ?", (new, document_id))
        names.add(new)


def _rebuild_notes(db: sqlite3.Connection) -> None:
    """Notes with an optional answer, a Markdown body, an update time and the chat message they came from."""
    db.execute(
        """CREATE TABLE notes_v9 (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            answer TEXT,
            body TEXT NOT NULL DEFAULT '',
            message_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )
    db.execute(
        "INSERT INTO notes_v9 (id, workspace_id, title, answer, created_at, updated_at) "
        "SELECT id, workspace_id, COALESCE(NULLIF(json_extract(answer, '$.standalone_question'), ''), title), "
        "answer, created_at, created_at FROM notes"
    )
    db.execute("DROP TABLE notes")
    db.execute("ALTER TABLE notes_v9 RENAME TO notes")
    db.execute("CREATE INDEX notes_workspace ON notes(workspace_id, created_at)")
    db.execute("CREATE UNIQUE INDEX notes_message ON notes(workspace_id, message_id) WHERE message_id IS NOT NULL")


MIGRATIONS: list[list[Step]] = [
    [
        """CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE documents (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size_bytes INTEGER NOT NULL,
            media_type TEXT NOT NULL,
            pages INTEGER NOT NULL DEFAULT 0,
            chunks INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            stage TEXT NOT NULL,
            progress REAL NOT NULL DEFAULT 0,
            error TEXT,
            added_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            pages_without_text TEXT NOT NULL DEFAULT '[]',
            included INTEGER NOT NULL DEFAULT 1,
            UNIQUE (workspace_id, sha256)
        )""",
        "CREATE INDEX documents_workspace ON documents(workspace_id)",
        """CREATE TABLE chunks (
            id TEXT NOT NULL UNIQUE,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            section TEXT NOT NULL,
            page_start INTEGER NOT NULL,
            page_end INTEGER NOT NULL,
            token_count INTEGER NOT NULL,
            rects TEXT NOT NULL,
            recommendation_class TEXT,
            evidence_level TEXT,
            kind TEXT NOT NULL DEFAULT 'body'
        )""",
        "CREATE INDEX chunks_document ON chunks(document_id, ordinal)",
        "CREATE INDEX chunks_workspace ON chunks(workspace_id)",
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(section, body, tokenize = 'porter unicode61 remove_diacritics 2')",
    ],
    # 2: ingestion jobs run by workers: progress counts, an ETA, a lease (owner + heartbeat, seconds since
    # the epoch by SQLite's clock, so every process agrees) and a cooperative cancel flag.
    [
        "ALTER TABLE documents ADD COLUMN pages_parsed INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN chunks_embedded INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN chunks_total INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN eta_s REAL",
        "ALTER TABLE documents ADD COLUMN lease_owner TEXT",
        "ALTER TABLE documents ADD COLUMN lease_heartbeat REAL",
        "ALTER TABLE documents ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX documents_status ON documents(status)",
    ],
    # 3: abbreviations defined in each document ("orthostatic hypotension (OH)"), used to expand queries.
    [
        """CREATE TABLE abbreviations (
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            short TEXT NOT NULL,
            long TEXT NOT NULL,
            PRIMARY KEY (document_id, short)
        )""",
        "CREATE INDEX abbreviations_workspace ON abbreviations(workspace_id)",
    ],
    # 4: catalogs created by the first release lack `chunks.kind` (added to migration 1 in place later).
    [_add_missing_chunk_kind],
    # 5: chats (per workspace), their question/answer exchanges and saved notes; answers are JSON records.
    [
        """CREATE TABLE chats (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX chats_workspace ON chats(workspace_id, updated_at)",
        """CREATE TABLE chat_messages (
            id TEXT PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (chat_id, position)
        )""",
        """CREATE TABLE notes (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            answer TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX notes_workspace ON notes(workspace_id, created_at)",
    ],
    # 6: one FTS5 table per workspace (`fts_<workspace id>`): BM25 statistics no longer mix workspaces.
    [_split_keyword_index],
    # 7: the entity graph (workspace_app/graph): entities, their mentions in chunks, relations with the chunks that
    # show them (one row per document, summed when read), communities with their reports, document summaries, and
    # the LLM extraction cache. Rows go with their chunk, document or workspace (foreign keys cascade); the cache is
    # keyed by content (model, prompt version and chunk text hash) so it is shared and survives re-ingestion.
    [
        """CREATE TABLE graph_entities (
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            aliases TEXT NOT NULL DEFAULT '[]',
            mentions INTEGER NOT NULL DEFAULT 0,
            documents INTEGER NOT NULL DEFAULT 0,
            degree INTEGER NOT NULL DEFAULT 0,
            community INTEGER,
            PRIMARY KEY (workspace_id, id)
        )""",
        """CREATE TABLE graph_mentions (
            workspace_id TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            page_start INTEGER NOT NULL,
            count INTEGER NOT NULL,
            surfaces TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (chunk_id, entity_id)
        )""",
        "CREATE INDEX graph_mentions_entity ON graph_mentions(workspace_id, entity_id)",
        "CREATE INDEX graph_mentions_document ON graph_mentions(document_id)",
        """CREATE TABLE graph_relations (
            workspace_id TEXT NOT NULL,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            type TEXT NOT NULL,
            weight REAL NOT NULL,
            chunk_ids TEXT NOT NULL,
            PRIMARY KEY (document_id, source, target, type)
        )""",
        "CREATE INDEX graph_relations_workspace ON graph_relations(workspace_id, source)",
        """CREATE TABLE graph_communities (
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            level INTEGER NOT NULL,
            id INTEGER NOT NULL,
            parent INTEGER,
            report TEXT NOT NULL,
            PRIMARY KEY (workspace_id, level, id)
        )""",
        """CREATE TABLE graph_document_summaries (
            workspace_id TEXT NOT NULL,
            document_id TEXT NOT NULL PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            summary TEXT NOT NULL
        )""",
        """CREATE TABLE graph_llm_cache (
            model TEXT NOT NULL,
            key TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (model, key)
        )""",
    ],
    # 8: which state of the mentions the stored communities, reports and summaries were computed from, so a
    # batch of uploads refreshes them once (at the end, or on the first read) instead of after every document.
    [
        """CREATE TABLE graph_refreshed (
            workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
            mentions_max INTEGER NOT NULL,
            mentions_count INTEGER NOT NULL
        )""",
    ],
    # 9: counts of the current stage whatever it is (sections while chunking, passages while indexing...), whether a
    # failure may succeed on retry (1 for rows failed before this column: they kept offering Retry), the source
    # guide of each document (JSON, recomputed when its version changes) and each workspace's suggested questions
    # (JSON, valid for the set of sources they were checked against, `sources_key`).
    [
        "ALTER TABLE documents ADD COLUMN stage_done INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN stage_total INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN error_retryable INTEGER NOT NULL DEFAULT 1",
        """CREATE TABLE document_guides (
            document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            version TEXT NOT NULL,
            guide TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX document_guides_workspace ON document_guides(workspace_id)",
        """CREATE TABLE workspace_suggestions (
            workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
            sources_key TEXT NOT NULL,
            questions TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
    ],
    # 10: notes of one's own (Markdown `body`, no answer), editable (`updated_at`), and tied to the chat message they
    # were saved from (`message_id`, unique per workspace) so the same answer cannot be saved twice. SQLite cannot
    # drop NOT NULL from `answer`, so the table is rebuilt; existing notes are kept, and a saved follow-up is
    # retitled with the standalone question it was answered as.
    [_rebuild_notes],
    # 11: automatic retries of a job that failed for a passing reason (the vector store down for a moment): which
    # try this is (`attempt`, from 1), how many the queue allows (`attempts`) and when the next one starts
    # (`next_try_at`, epoch seconds by the database's clock; NULL when none is planned).
    [
        "ALTER TABLE documents ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE documents ADD COLUMN next_try_at REAL",
        _rename_shared_names,
    ],
    # 12: patient records (seed 004): patients, their admissions and clinical events (upserted by `event_id`;
    # `ts` is epoch seconds for time windows; `links` holds the hospital's own keys as JSON, `concepts` the
    # concepts found at import), and each event's vector per embedding model (`text_key` is the sha256 of the
    # embedded text, so an event whose content changed is embedded again and nothing else is). Written to run again
    # harmlessly (IF NOT EXISTS), as a test re-applies the migrations from 11 on.
    [
        """CREATE TABLE IF NOT EXISTS patients (
            patient_id TEXT PRIMARY KEY,
            gender TEXT NOT NULL DEFAULT '',
            age INTEGER
        )""",
        """CREATE TABLE IF NOT EXISTS admissions (
            admission_id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL REFERENCES patients(patient_id) ON DELETE CASCADE,
            admit_time TEXT NOT NULL,
            discharge_time TEXT NOT NULL,
            admission_type TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX IF NOT EXISTS admissions_patient ON admissions(patient_id)",
        """CREATE TABLE IF NOT EXISTS events (
            event_id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL REFERENCES patients(patient_id) ON DELETE CASCADE,
            ts REAL NOT NULL,
            timestamp TEXT NOT NULL,
            event_type TEXT NOT NULL,
            sub_type TEXT NOT NULL,
            content TEXT NOT NULL,
            source_table TEXT NOT NULL,
            source_row INTEGER NOT NULL,
            links TEXT NOT NULL,
            concepts TEXT NOT NULL,
            admission_id TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS events_patient_time ON events(patient_id, ts)",
        """CREATE TABLE IF NOT EXISTS event_vectors (
            event_id TEXT NOT NULL REFERENCES events(event_id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_key TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (event_id, model)
        ) WITHOUT ROWID""",
    ],
    # 13: the standard vocabulary of imported records (seed 002 QUERY-003's bottom level): each code the records use
    # with its dictionary's title, e.g. ('icd9', '42731', 'Atrial fibrillation') from MIMIC's d_icd_diagnoses or
    # ('labitem', '51237', 'INR(PT)') from d_labitems; upserted by (system, code) at import. Runs again harmlessly.
    [
        """CREATE TABLE IF NOT EXISTS vocabulary (
            system TEXT NOT NULL,
            code TEXT NOT NULL,
            title TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (system, code)
        ) WITHOUT ROWID""",
    ],
    # 14: patient imports run by the worker (queue entries "import:<id>"): what is read, progress after each batch
    # (table, events stored), the outcome (counts, bad rows) and the lease of the worker running it, as documents have.
    [
        """CREATE TABLE IF NOT EXISTS imports (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL,
            patients TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL DEFAULT 'queued',
            current_table TEXT NOT NULL DEFAULT '',
            events INTEGER NOT NULL DEFAULT 0,
            patient_count INTEGER NOT NULL DEFAULT 0,
            admissions INTEGER NOT NULL DEFAULT 0,
            embedded INTEGER NOT NULL DEFAULT 0,
            error_count INTEGER NOT NULL DEFAULT 0,
            first_errors TEXT NOT NULL DEFAULT '[]',
            error TEXT NOT NULL DEFAULT '',
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            started_at REAL,
            finished_at REAL,
            lease_owner TEXT,
            lease_heartbeat REAL
        )""",
    ],
    # 15: suggested questions per document (JSON), each checked against its own document only and kept under the
    # key of what checked it (`check_key`: the code's version, the guide's, the query mode, the file's hash), so a
    # change of a workspace's sources recomputes only the parts of the sources added.
    [
        """CREATE TABLE IF NOT EXISTS document_suggestions (
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            check_key TEXT NOT NULL,
            questions TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document_id, check_key)
        ) WITHOUT ROWID""",
    ],
    # 16: totals and time left (issue 29 item 4, issue 28 item 5): a document's stage says whether it is waiting for
    # the model (no time left then, and no "estimating…"); an import has the rows of the table being read and of all
    # of them (the totals counted before reading), the tables read, and the time left in the table and in all, at
    # the pace measured in the run (workspace_app/jobs/pace.py). NULL time left: not measured yet.
    [
        "ALTER TABLE documents ADD COLUMN stage_waiting INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN table_done INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN table_rows INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN table_number INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN tables_total INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN rows_done INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN rows_total INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE imports ADD COLUMN table_eta_s REAL",
        "ALTER TABLE imports ADD COLUMN eta_s REAL",
    ],
    # 17: figures (issue 31 item 2): each image or vector drawing found with its caption, its box on its page (PDF
    # points, top-left origin), the text inside it, the chunks of its page it sits beside (JSON ids, nearest first)
    # and its thumbnail's file name; removed with its document. `figures_fts` holds the core's index terms of its
    # caption, inner text and nearby text (storage does not tokenize), for the figure search beside passage search.
    [
        """CREATE TABLE IF NOT EXISTS figures (
            id TEXT PRIMARY KEY,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            page INTEGER NOT NULL,
            x0 REAL NOT NULL,
            y0 REAL NOT NULL,
            x1 REAL NOT NULL,
            y1 REAL NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            caption TEXT NOT NULL DEFAULT '',
            inner_text TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL DEFAULT '',
            chunk_ids TEXT NOT NULL DEFAULT '[]',
            thumbnail TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX IF NOT EXISTS figures_document ON figures(document_id, ordinal)",
        "CREATE INDEX IF NOT EXISTS figures_workspace ON figures(workspace_id)",
        (
            "CREATE VIRTUAL TABLE IF NOT EXISTS figures_fts USING fts5(caption, body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        ),
    ],
    # 18: accounts (issue 30 item 1): users (unique name, scrypt password hash, admin flag), their roles per workspace
    # (owner, editor, viewer; gone with the workspace or the user), their API keys (an id and the SHA-256 of the key,
    # never the key; revoked keys kept) and the audit log (who did what, where, when; kept when a workspace goes).
    [
        """CREATE TABLE IF NOT EXISTS users (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            is_admin INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS memberships (
            workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (workspace_id, user_id)
        )""",
        "CREATE INDEX IF NOT EXISTS memberships_user ON memberships(user_id)",
        """CREATE TABLE IF NOT EXISTS api_keys (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            digest TEXT NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys(user_id)",
        """CREATE TABLE IF NOT EXISTS audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            user_name TEXT NOT NULL,
            action TEXT NOT NULL,
            workspace_id TEXT NOT NULL DEFAULT '',
            target TEXT NOT NULL DEFAULT '',
            detail TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX IF NOT EXISTS audit_log_workspace ON audit_log(workspace_id, id)",
        "CREATE INDEX IF NOT EXISTS audit_log_user ON audit_log(user_name, id)",
    ],
    # 19: sign-in through an identity provider (issue 30 item 1): the provider's person (issuer and subject,
    # unique together) linked to the user made at their first sign-in; gone with the user.
    [
        """CREATE TABLE IF NOT EXISTS user_identities (
            issuer TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            email TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            PRIMARY KEY (issuer, subject)
        )""",
        "CREATE INDEX IF NOT EXISTS user_identities_user ON user_identities(user_id)",
    ],
]
