"""Versioned PostgreSQL catalog schema: each entry is applied once, in order, and recorded in `schema_version`.

Version 1 is the SQLite catalog's schema at its version 16 for what PostgreSQL holds so far (workspaces, documents
with their job columns, chunks, abbreviations) plus the keyword index that stands in for FTS5: postings (a term's
positions in one column of one chunk) and each chunk's length in tokens. Times stay ISO 8601 text as in SQLite (the
same ordering); lease heartbeats and retry times are epoch seconds by the server's clock. Flags are booleans.
Version 2 adds chats and notes, version 3 source guides and suggestions, version 4 the vocabulary, version 5
patient imports, version 6 patient records, version 7 the entity graph, version 8 figures, version 9 accounts. New tables append
versions here.
"""

from __future__ import annotations

from workspace_app.storage.postgres.database import Step

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
            size_bytes BIGINT NOT NULL,
            media_type TEXT NOT NULL,
            pages INTEGER NOT NULL DEFAULT 0,
            chunks INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            stage TEXT NOT NULL,
            progress DOUBLE PRECISION NOT NULL DEFAULT 0,
            error TEXT,
            added_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            pages_without_text TEXT NOT NULL DEFAULT '[]',
            included BOOLEAN NOT NULL DEFAULT TRUE,
            pages_parsed INTEGER NOT NULL DEFAULT 0,
            chunks_embedded INTEGER NOT NULL DEFAULT 0,
            chunks_total INTEGER NOT NULL DEFAULT 0,
            eta_s DOUBLE PRECISION,
            lease_owner TEXT,
            lease_heartbeat DOUBLE PRECISION,
            cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
            stage_done INTEGER NOT NULL DEFAULT 0,
            stage_total INTEGER NOT NULL DEFAULT 0,
            error_retryable BOOLEAN NOT NULL DEFAULT TRUE,
            attempt INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_try_at DOUBLE PRECISION,
            stage_waiting BOOLEAN NOT NULL DEFAULT FALSE,
            UNIQUE (workspace_id, sha256)
        )""",
        "CREATE INDEX documents_workspace ON documents(workspace_id)",
        "CREATE INDEX documents_status ON documents(status)",
        """CREATE TABLE chunks (
            seq BIGSERIAL PRIMARY KEY,
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
        # The keyword index: FTS5's tokens of each chunk's section (col 0) and body (col 1) with their positions
        # (phrases of several tokens match at consecutive positions), and the chunk's total tokens (BM25's length).
        """CREATE TABLE keyword_postings (
            workspace_id TEXT NOT NULL,
            term TEXT NOT NULL,
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            col SMALLINT NOT NULL,
            positions INTEGER[] NOT NULL,
            PRIMARY KEY (workspace_id, term, chunk_id, col)
        )""",
        "CREATE INDEX keyword_postings_chunk ON keyword_postings(chunk_id)",
        """CREATE TABLE keyword_lengths (
            chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            tokens INTEGER NOT NULL
        )""",
        "CREATE INDEX keyword_lengths_workspace ON keyword_lengths(workspace_id)",
        """CREATE TABLE abbreviations (
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            short TEXT NOT NULL,
            long TEXT NOT NULL,
            PRIMARY KEY (document_id, short)
        )""",
        "CREATE INDEX abbreviations_workspace ON abbreviations(workspace_id)",
    ],
    # 2: chats (per workspace), their question/answer exchanges, and notes (an answer saved from a chat message at
    # most once, or a Markdown body of one's own); answers are JSON records, as in SQLite (its versions 5 and 10).
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
            answer TEXT,
            body TEXT NOT NULL DEFAULT '',
            message_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX notes_workspace ON notes(workspace_id, created_at)",
        "CREATE UNIQUE INDEX notes_message ON notes(workspace_id, message_id) WHERE message_id IS NOT NULL",
    ],
    # 3: each document's source guide (JSON, tagged with the version of the code that made it) and its suggested
    # questions (JSON, kept under the key of what checked them), as in SQLite (its versions 9 and 15).
    [
        """CREATE TABLE document_guides (
            document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            version TEXT NOT NULL,
            guide TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX document_guides_workspace ON document_guides(workspace_id)",
        """CREATE TABLE document_suggestions (
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            check_key TEXT NOT NULL,
            questions TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document_id, check_key)
        )""",
    ],
    # 4: the standard vocabulary of imported records (SQLite's version 13): each code with its dictionary's title.
    [
        """CREATE TABLE vocabulary (
            system TEXT NOT NULL,
            code TEXT NOT NULL,
            title TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (system, code)
        )""",
    ],
    # 5: patient imports run by workers (SQLite's versions 14 and 16): what is read, progress with totals and time
    # left, the outcome and the lease of the worker running it; times are epoch seconds.
    [
        """CREATE TABLE imports (
            seq BIGSERIAL UNIQUE,
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
            cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
            created_at DOUBLE PRECISION NOT NULL,
            started_at DOUBLE PRECISION,
            finished_at DOUBLE PRECISION,
            lease_owner TEXT,
            lease_heartbeat DOUBLE PRECISION,
            table_done BIGINT NOT NULL DEFAULT 0,
            table_rows BIGINT NOT NULL DEFAULT 0,
            table_number INTEGER NOT NULL DEFAULT 0,
            tables_total INTEGER NOT NULL DEFAULT 0,
            rows_done BIGINT NOT NULL DEFAULT 0,
            rows_total BIGINT NOT NULL DEFAULT 0,
            table_eta_s DOUBLE PRECISION,
            eta_s DOUBLE PRECISION
        )""",
    ],
    # 6: patient records (SQLite's version 12): patients, admissions, clinical events upserted by id (`ts` in epoch
    # seconds for time windows, `links` and `concepts` JSON) and each event's vector per model (float32 bytes, keyed
    # by the sha256 of the embedded text).
    [
        """CREATE TABLE patients (
            patient_id TEXT PRIMARY KEY,
            gender TEXT NOT NULL DEFAULT '',
            age INTEGER
        )""",
        """CREATE TABLE admissions (
            admission_id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL REFERENCES patients(patient_id) ON DELETE CASCADE,
            admit_time TEXT NOT NULL,
            discharge_time TEXT NOT NULL,
            admission_type TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX admissions_patient ON admissions(patient_id)",
        """CREATE TABLE events (
            event_id TEXT PRIMARY KEY,
            patient_id TEXT NOT NULL REFERENCES patients(patient_id) ON DELETE CASCADE,
            ts DOUBLE PRECISION NOT NULL,
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
        "CREATE INDEX events_patient_time ON events(patient_id, ts)",
        """CREATE TABLE event_vectors (
            event_id TEXT NOT NULL REFERENCES events(event_id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_key TEXT NOT NULL,
            vector BYTEA NOT NULL,
            PRIMARY KEY (event_id, model)
        )""",
    ],
    # 7: the entity graph (SQLite's versions 7 and 8): entities, their mentions in chunks, relations per document,
    # communities with their reports, document summaries, the language model's reply cache, and the mentions'
    # version the last refresh saw. `seq` stands in for SQLite's rowid (the graph's version, reading order).
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
            seq BIGSERIAL UNIQUE,
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
            seq BIGSERIAL UNIQUE,
            workspace_id TEXT NOT NULL,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            type TEXT NOT NULL,
            weight DOUBLE PRECISION NOT NULL,
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
            seq BIGSERIAL UNIQUE,
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
        """CREATE TABLE graph_refreshed (
            workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
            mentions_max BIGINT NOT NULL,
            mentions_count BIGINT NOT NULL
        )""",
    ],
    # 8: figures (SQLite's version 17): each image or vector drawing found with its caption, its box (PDF points,
    # top-left origin), the text inside it, the chunks it sits beside (JSON ids) and its thumbnail's file name,
    # removed with its document; with the core's index terms of its caption and body, which the figure search ranks
    # (storage/postgres/figures.py).
    [
        """CREATE TABLE figures (
            id TEXT PRIMARY KEY,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            workspace_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            page INTEGER NOT NULL,
            x0 DOUBLE PRECISION NOT NULL,
            y0 DOUBLE PRECISION NOT NULL,
            x1 DOUBLE PRECISION NOT NULL,
            y1 DOUBLE PRECISION NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            caption TEXT NOT NULL DEFAULT '',
            inner_text TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL DEFAULT '',
            chunk_ids TEXT NOT NULL DEFAULT '[]',
            thumbnail TEXT NOT NULL DEFAULT '',
            caption_terms TEXT NOT NULL DEFAULT '',
            body_terms TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX figures_document ON figures(document_id, ordinal)",
        "CREATE INDEX figures_workspace ON figures(workspace_id)",
    ],
    # 9: accounts (issue 30 item 1; SQLite's version 18): users (unique name, scrypt password hash, admin flag), their roles per workspace
    # (owner, editor, viewer; gone with the workspace or the user), their API keys (an id and the SHA-256 of the key,
    # never the key; revoked keys kept) and the audit log (who did what, where, when; kept when a workspace goes).
    [
        """CREATE TABLE IF NOT EXISTS users (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            is_admin BOOLEAN NOT NULL DEFAULT FALSE,
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
            id BIGSERIAL PRIMARY KEY,
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
    # 10: sign-in through an identity provider (issue 30 item 1; SQLite's version 19): the provider's person (issuer
    # and subject, unique together) linked to the user made at their first sign-in; gone with the user.
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
