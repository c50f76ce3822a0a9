"""Every CLI command has a rule (walked from the argument parser: a command added without one fails), and each
command that touches a workspace is run with `--as` an owner, an editor, a viewer and a stranger in a real
`workspace-app` process: 0 reads or writes beyond the role. A refused run exits 2 naming why (a stranger is told
the workspace does not exist), prints nothing of the workspace and leaves the catalog as it was.

Commands that load the language models (~14 s a run) are run at their own level and below; above it, a cheaper
command with the same rule (the same action) stands for them, so every role meets every action."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.accounts.service import AccountService
from workspace_app.adapters.cli import build_parser
from workspace_app.adapters.cli_accounts import RULES
from workspace_app.config import AccountsSettings
from workspace_app.storage.sqlite.catalog import SqliteCatalog

pytestmark = pytest.mark.slow

PASSWORD = "a long enough password"
MARKER = "Zyloprix"
SOURCE = f"{MARKER} dosing.\n\nWarfarin should target an INR of 2.0 to 3.0 in atrial fibrillation. {MARKER} is taken with food.\n"
QUESTION = "What INR should warfarin target?"
USERS = {"owner": "olga", "editor": "ed", "viewer": "vic", "stranger": "sam"}
RANK = {"viewer": 1, "editor": 2, "owner": 3}
ACCOUNTS_ON = {"WORKSPACE_ACCOUNTS__ENABLED": "true", "WORKSPACE_ACCOUNTS__PASSWORD_COST": "1024"}

# The least each command needs: a role in the workspace it names, or
#   anyone (its own things)   admin   operator (runs the server: never --as)
EXPECT = {
    "workspace create": "anyone", "workspace list": "anyone", "workspace rename": "owner", "workspace delete": "owner",
    "workspace share": "owner", "workspace unshare": "owner", "workspace members": "owner",
    "ingest": "editor", "search": "viewer", "ask": "viewer", "eval": "viewer", "studio": "viewer",
    "documents": "viewer", "remove": "editor", "cancel": "editor", "retry": "editor", "reindex": "editor",
    "graph export": "viewer", "audit": "owner",
    "patients import": "admin", "patients list": "admin", "patients imports": "admin", "patients similar": "admin",
    "patients mine-links": "admin", "events": "admin", "related": "admin",
    "worker": "operator", "api": "operator", "serve": "operator",
    "users add": "admin", "users list": "admin", "users password": "anyone",
    "keys create": "anyone", "keys list": "anyone", "keys revoke": "anyone",
}


def command_keys(parser: argparse.ArgumentParser) -> set[str]:
    """`command` or `command action` for every command of the parser."""
    keys = set()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        actions = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        keys |= {f"{name} {action}" for action in actions[0].choices} if actions else {name}
    return keys


def test_every_command_has_a_rule_and_an_expectation() -> None:
    keys = command_keys(build_parser())
    assert sorted(keys - set(RULES)) == [], "commands without a rule in adapters/cli_accounts.py RULES"
    assert sorted(keys ^ set(EXPECT)) == [], "commands the test has no expectation for (or that no longer exist)"
    for heavy, cheaper in STANDS_IN.items():
        assert RULES[heavy] == RULES[cheaper] and EXPECT[heavy] == EXPECT[cheaper], (heavy, cheaper)


def state(data_dir: Path) -> dict[str, Any]:
    """Everything a command could change in the catalog, read behind the CLI."""
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        tables = ("workspaces", "documents", "chats", "chat_messages", "notes", "memberships", "users", "api_keys")
        found = {t: db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
        found["audit"] = db.execute("SELECT COUNT(*) FROM audit_log").fetchone()
        found["document_states"] = db.execute("SELECT id, status, included FROM documents ORDER BY 1").fetchall()
    return found


def argv_for(key: str, tmp: Path, persona: str) -> list[str]:
    """The command line that tries a command on the shared workspace `Cardio` (`workspace rename|delete` on a
    scratch workspace shared like it; `remove` a document that is not there when the role allows it, so one try
    does not spoil the next: the role check runs before the document is looked for)."""
    questions = tmp / "questions.jsonl"
    return {
        "workspace rename": ["workspace", "rename", f"Scratch rename {persona}", f"Renamed {persona}"],
        "workspace delete": ["workspace", "delete", f"Scratch delete {persona}"],
        "workspace share": ["workspace", "share", "Cardio", "root", "--role", "viewer"],
        "workspace unshare": ["workspace", "unshare", "Cardio", "root"],
        "workspace members": ["workspace", "members", "Cardio"],
        "ingest": ["ingest", "-w", "Cardio", "--no-wait", str(tmp / f"{persona}.txt")],
        "search": ["search", "-w", "Cardio", "--json", QUESTION],
        "ask": ["ask", "-w", "Cardio", "--json", QUESTION],
        "eval": ["eval", str(questions), "-w", "Cardio", "--mode", "naive", "--json"],
        "studio": ["studio", "faq", "-w", "Cardio", "--mode", "naive", "--json"],
        "documents": ["documents", "-w", "Cardio", "--json"],
        "remove": ["remove", "-w", "Cardio", "zyloprix.txt" if RANK.get(persona, 0) < 2 else "missing.txt"],
        "cancel": ["cancel", "-w", "Cardio", "zyloprix.txt"],
        "retry": ["retry", "-w", "Cardio", "zyloprix.txt"],
        "reindex": ["reindex", "-w", "Cardio", "missing.txt"],
        "graph export": ["graph", "export", "-w", "Cardio"],
        "audit": ["audit", "-w", "Cardio", "--json"],
    }[key]


Run = Callable[..., subprocess.CompletedProcess[str]]


def environ() -> dict[str, str]:
    """A CLI child's environment: no developer settings, offline models, accounts on (PYTHONPATH kept: the tree)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKSPACE_", "OPENAI_"))}
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **ACCOUNTS_ON}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    """A data dir with accounts on: root (the admin) and the four personas; Cardio owned by olga, shared with ed
    (editor) and vic (viewer), holding one ingested source."""
    tmp = tmp_path_factory.mktemp("cli-roles")
    data = tmp / "data"

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(data), *args]
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=300, env=environ(), cwd=tmp,
                              check=False)

    for name in ("root", *USERS.values()):
        assert run("users", "add", name, stdin=PASSWORD + "\n").returncode == 0
    (tmp / "zyloprix.txt").write_text(SOURCE, encoding="utf-8")
    for persona in USERS:
        (tmp / f"{persona}.txt").write_text(SOURCE + persona, encoding="utf-8")
    (tmp / "questions.jsonl").write_text(json.dumps({"question": QUESTION, "doc": "zyloprix.txt", "pages": [1]}) + "\n")
    steps = [
        ("--as", "olga", "workspace", "create", "Cardio"),
        ("--as", "olga", "ingest", "-w", "Cardio", str(tmp / "zyloprix.txt")),
    ]
    steps += [("--as", "olga", "workspace", "share", "Cardio", "ed", "--role", "editor"),
              ("--as", "olga", "workspace", "share", "Cardio", "vic", "--role", "viewer")]
    for step in steps:
        done = run(*step)
        assert done.returncode == 0, (step, done.stderr[-2000:])
    add_scratch_workspaces(data)
    return data, run


def add_scratch_workspaces(data: Path) -> None:
    """Workspaces to rename and delete, one per persona, shared like Cardio (made in the catalog directly: the CLI
    made and shared Cardio already)."""
    catalog = SqliteCatalog(data / "catalog.sqlite")
    try:
        accounts = AccountService(*[catalog.accounts] * 4, catalog, AccountsSettings(enabled=True, password_cost=1024))
        olga = accounts.user("olga")
        for name in [f"Scratch {verb} {persona}" for verb in ("rename", "delete") for persona in USERS]:
            accounts.created(olga, catalog.create_workspace(name))
            accounts.share(olga, name, "ed", "editor")
            accounts.share(olga, name, "vic", "viewer")
    finally:
        catalog.close()


# A command that loads the language models -> a cheaper one with the same rule, run in its place above its level.
STANDS_IN = {"search": "documents", "eval": "ask", "studio": "ask"}

# Tried on targets that make them fail after the role check (a missing document, a source already ready), so that
# one persona's try does not spoil the next one's: for these, "allowed" means "not refused by the role".
FAILS_AFTER_THE_CHECK = {"remove", "cancel", "retry", "reindex"}
WORKSPACE_COMMANDS = sorted(key for key, level in EXPECT.items() if level in RANK)


@pytest.mark.parametrize("persona", ["stranger", "viewer", "editor", "owner"])  # the order they run in
def test_each_workspace_command_gives_the_persona_its_role_and_nothing_more(
    world: tuple[Path, Run], persona: str
) -> None:
    data, run = world
    problems = []
    for key in WORKSPACE_COMMANDS:
        level = EXPECT[key]
        allowed = RANK.get(persona, 0) >= RANK[level]
        if key in STANDS_IN and RANK.get(persona, 0) > RANK[level]:
            continue  # its rule is the one of STANDS_IN[key], run for this persona too
        before = state(data)
        done = run("--as", USERS[persona], *argv_for(key, data.parent, persona))
        what = f"{persona} {key} -> exit {done.returncode}"
        refused = done.returncode == 2 and ("There is no workspace" in done.stderr or "does not allow" in done.stderr)
        if allowed and (refused or (done.returncode != 0 and key not in FAILS_AFTER_THE_CHECK)):
            problems.append(f"{what}: refused or failed though the role allows it: {done.stderr[-300:]}")
        if not allowed:
            wanted = "There is no workspace" if persona == "stranger" else "does not allow"
            if done.returncode != 2 or wanted not in done.stderr:
                problems.append(f"{what}: expected a refusal saying {wanted!r}: {done.stderr[-300:]}")
            if done.stdout.strip() or MARKER in done.stderr:
                problems.append(f"{what}: a refused run printed something of the workspace: {done.stdout[:200]}")
            if state(data) != before:
                problems.append(f"{what}: a refused run changed the catalog")
    assert problems == [], "\n".join(problems)


def test_list_admin_and_operator_commands_refuse_whom_they_should(world: tuple[Path, Run]) -> None:
    data, run = world
    assert "Cardio" in run("--as", "vic", "workspace", "list").stdout
    assert "Cardio" not in run("--as", "sam", "workspace", "list").stdout
    assert "Cardio" in run("workspace", "list").stdout, "the operator sees every workspace"
    for argv in (["users", "list"], ["patients", "list"], ["events", "-p", "1"], ["keys", "create", "olga"]):
        done = run("--as", "ed", *argv)
        assert done.returncode == 2 and "admin" in done.stderr, (argv, done.stderr)
    worker = run("--as", "root", "worker")
    assert worker.returncode == 2 and "leave out --as" in worker.stderr
    assert run("--as", "vic", "ask", "-w", "Cardio", QUESTION).returncode == 0
    assert run("--as", "ed", "ingest", "-w", "Cardio", "--no-wait", str(data.parent / "editor.txt")).returncode == 0
    own = run("--as", "ed", "keys", "create", "ed")
    assert own.returncode == 0 and json.loads(own.stdout)["key"].startswith("wsk_")
    log = run("--as", "olga", "audit", "-w", "Cardio", "--json")
    entries = [json.loads(line) for line in log.stdout.splitlines()]
    assert {"user": "vic", "action": "asked", "detail": QUESTION}.items() <= next(
        e for e in entries if e["user"] == "vic" and e["action"] == "asked").items()
    assert any(e["action"] == "uploaded" and e["user"] == "ed" for e in entries)
    csv_log = run("--as", "olga", "audit", "-w", "Cardio", "--csv")
    assert csv_log.stdout.startswith("at,user,action,workspace_id,target,detail\n")
    assert run("--as", "sam", "users", "password", "olga", stdin=PASSWORD + "!\n").returncode == 2
