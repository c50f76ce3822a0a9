"""The CLI's accounts: `users`, `keys`, `audit`, `workspace share|unshare|members`, and the role check every
command passes before it runs (the one policy, accounts/policy.py, as the API's roles.py uses it).

The CLI is the operator's tool on the server: without `--as USER` it acts as the operator (everything allowed;
whoever can run it can read the data dir anyway), recorded in the audit log as "operator". With `--as USER` (and
accounts on) it acts as that user: only their workspaces, only what their role allows, recorded under their name.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workspace_app.accounts.policy import Action
from workspace_app.accounts.service import AUDIT_FORMATS, AccountService, export_audit
from workspace_app.config import Settings
from workspace_app.errors import PermissionDeniedError, WorkspaceError
from workspace_app.models.accounts import User
from workspace_app.models.documents import Workspace


@dataclass(frozen=True)
class CommandRule:
    """What a command needs: the action in the workspace it names (`workspace` or `name` argument), admin, or the
    operator alone (commands that run the server)."""

    action: Action | None = None
    argument: str = "workspace"
    admin: bool = False
    operator: bool = False


READ, ASK, EDIT = CommandRule(Action.READ), CommandRule(Action.ASK), CommandRule(Action.EDIT)
MANAGE_NAMED = CommandRule(Action.MANAGE, "name")
ANYONE, ADMIN, OPERATOR = CommandRule(), CommandRule(admin=True), CommandRule(operator=True)

RULES: dict[str, CommandRule] = {
    "workspace create": ANYONE, "workspace list": ANYONE, "workspace rename": MANAGE_NAMED,
    "workspace delete": MANAGE_NAMED, "workspace share": MANAGE_NAMED, "workspace unshare": MANAGE_NAMED,
    "workspace members": MANAGE_NAMED,
    "ingest": EDIT, "search": READ, "ask": ASK, "eval": ASK, "studio": ASK, "documents": READ,
    "remove": EDIT, "cancel": EDIT, "retry": EDIT, "reindex": EDIT, "graph export": READ,
    "patients import": ADMIN, "patients list": ADMIN, "patients imports": ADMIN, "patients similar": ADMIN,
    "patients mine-links": ADMIN, "events": ADMIN, "related": ADMIN,
    "worker": OPERATOR, "api": OPERATOR, "serve": OPERATOR,
    "users add": ADMIN, "users list": ADMIN, "users password": ANYONE,
    "keys create": ANYONE, "keys list": ANYONE, "keys revoke": ANYONE,
    "audit": CommandRule(Action.MANAGE),
}
"""Every command's rule (tests/accounts/test_cli_roles.py fails on a command without one)."""


def command_key(args: argparse.Namespace) -> str:
    """`workspace share`, `ask`...: the command and, for commands with sub-commands, the action."""
    action = getattr(args, "action", None)
    return f"{args.command} {action}" if action else str(args.command)


def rule_of(args: argparse.Namespace) -> CommandRule:
    """The command's rule, stricter where its options write: `studio --save` keeps a note, `ask --patient` reads
    patient records."""
    rule = RULES[command_key(args)]
    if args.command == "studio" and args.save:
        return EDIT
    if args.command == "ask" and args.patient:
        return CommandRule(Action.ASK, admin=True)
    return rule


def add_account_commands(commands: Any, workspace_commands: Any) -> None:
    """`users`, `keys`, `audit` and `workspace share|unshare|members`."""
    share = workspace_commands.add_parser("share", help="give a user a role in a workspace (accounts on)")
    share.add_argument("name", help="the workspace")
    share.add_argument("user")
    share.add_argument("--role", choices=("viewer", "editor", "owner"), required=True)
    unshare = workspace_commands.add_parser("unshare", help="take a user's role in a workspace away")
    unshare.add_argument("name", help="the workspace")
    unshare.add_argument("user")
    members = workspace_commands.add_parser("members", help="a workspace's members and their roles")
    members.add_argument("name", help="the workspace")
    members.add_argument("--json", action="store_true")

    users = commands.add_parser("users", help="local accounts (the password is read from a prompt or stdin)")
    user_commands = users.add_subparsers(dest="action", required=True)
    add = user_commands.add_parser("add", help="add a user; the first user is an admin")
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="may manage users and everyone's keys")
    user_commands.add_parser("list").add_argument("--json", action="store_true")
    user_commands.add_parser("password", help="set a user's new password").add_argument("name")

    keys = commands.add_parser("keys", help="a user's API keys (a new key is printed once)")
    key_commands = keys.add_subparsers(dest="action", required=True)
    create = key_commands.add_parser("create")
    create.add_argument("user")
    create.add_argument("--label", default="", help="which client or script uses it")
    key_commands.add_parser("list").add_argument("user")
    revoke = key_commands.add_parser("revoke")
    revoke.add_argument("user")
    revoke.add_argument("key_id")

    audit = commands.add_parser("audit", help="a workspace's audit log (owners): who did what, when")
    audit.add_argument("--workspace", "-w", required=True)
    audit.add_argument("--json", action="store_true", help="JSON lines, one entry a line (the export)")
    audit.add_argument("--csv", action="store_true", help="CSV with a header row (the export)")


@contextmanager
def account_service(settings: Settings) -> Iterator[AccountService]:
    """The account service on the catalog alone, closed afterwards."""
    from workspace_app.adapters.wiring import open_accounts

    accounts, catalog = open_accounts(settings)
    try:
        yield accounts
    finally:
        catalog.close()


def check_command(args: argparse.Namespace, settings: Settings) -> tuple[User | None, Workspace | None]:
    """Before a command runs: who it acts as and the workspace it names, refused (like the API: a stranger is told
    the workspace does not exist, a member without the role 403) when the role does not allow it."""
    name = getattr(args, "as_user", None)
    if not settings.accounts.enabled:
        if name:
            raise WorkspaceError("--as needs accounts: set WORKSPACE_ACCOUNTS__ENABLED=true.")
        return None, None
    rule = rule_of(args)
    with account_service(settings) as accounts:
        user = accounts.user(name) if name else None
        if rule.operator and user is not None:
            raise PermissionDeniedError(f"`workspace-app {args.command}` runs the server as its operator: leave out --as.")
        if rule.admin:
            accounts.require_admin(user)
        named = getattr(args, rule.argument, None) if rule.action else None
        workspace = accounts.open(user, named, rule.action) if named and rule.action else None
    return user, workspace


def record_command(args: argparse.Namespace, settings: Settings, user: User | None, workspace: Workspace | None) -> None:
    """After a command succeeded: its audit entries (with accounts on), and the owner of a workspace it created."""
    if not settings.accounts.enabled:
        return
    with account_service(settings) as accounts:
        for action, target, detail in audit_entries(args):
            if action == "created workspace":
                accounts.created(user, accounts.open(None, args.name, Action.READ))
            else:
                accounts.record(user, action, workspace.id if workspace else "", target, detail)


def audit_entries(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(action, target, detail) for what a command did that the audit log keeps."""
    key = command_key(args)
    if key == "workspace create":
        return [("created workspace", args.name, "")]
    if key in ("workspace delete", "workspace rename"):
        return [(f"{args.action}d workspace", getattr(args, "new_name", args.name), "")]
    if key == "ingest":
        return [("uploaded", Path(path).name, "cli") for path in args.files]
    if key == "remove":
        return [("removed", args.document, "")]
    if key == "ask":
        questions = [args.query] if args.query else [f"questions from {args.queries}"]
        return [("asked", f"patient:{args.patient}" if args.patient else "", q) for q in questions]
    if key in ("eval", "studio"):
        return [("asked", key, str(getattr(args, "questions", None) or args.kind))]
    if key == "graph export":
        return [("exported", "graph", "")]
    return []


def run_users(args: argparse.Namespace, settings: Settings, user: User | None) -> int:
    """`users add | list | password`."""
    with account_service(settings) as accounts:
        _note_when_off(accounts)
        if args.action == "add":
            added = accounts.add_user(args.name, read_password(f"Password for {args.name}: "), args.admin)
            accounts.record(user, "added user", target=added.name)
            print(json.dumps(added.to_json(), ensure_ascii=False))
        elif args.action == "list":
            for found in accounts.list_users():
                admin = "\tadmin" if found.is_admin else ""
                print(json.dumps(found.to_json(), ensure_ascii=False) if args.json else f"{found.name}{admin}")
        else:
            accounts.require_self_or_admin(user, accounts.user(args.name))
            accounts.set_password(args.name, read_password(f"New password for {args.name}: "))
            print(json.dumps({"password_set": args.name}, ensure_ascii=False))
    return 0


def run_keys(args: argparse.Namespace, settings: Settings, user: User | None) -> int:
    """`keys create | list | revoke`: a new key is printed once, never stored."""
    with account_service(settings) as accounts:
        _note_when_off(accounts)
        if args.action == "create":
            record, key = accounts.create_key(user, args.user, args.label)
            print(json.dumps({**record.to_json(), "key": key}, ensure_ascii=False))
            print("Keep the key now: it is not shown again (only its digest is stored).", file=sys.stderr)
        elif args.action == "list":
            for found in accounts.list_keys(user, args.user):
                print(json.dumps(found.to_json(), ensure_ascii=False))
        else:
            accounts.revoke_key(user, args.user, args.key_id)
            print(json.dumps({"revoked": args.key_id}, ensure_ascii=False))
    return 0


def run_audit(args: argparse.Namespace, settings: Settings, user: User | None, out: Callable[[str], None]) -> int:
    """`audit --workspace W [--json | --csv]`: the log, oldest first, as a table or an export."""
    with account_service(settings) as accounts:
        _note_when_off(accounts)
        entries = accounts.audit(user, args.workspace)
    fmt = "csv" if args.csv else "jsonl" if args.json else None
    if fmt in AUDIT_FORMATS:
        out(export_audit(entries, fmt))
        return 0
    for e in entries:
        detail = f"\t{e.detail}" if e.detail else ""
        out(f"{e.at}\t{e.user}\t{e.action}\t{e.target}{detail}\n")
    return 0


def run_sharing(args: argparse.Namespace, settings: Settings, user: User | None, out: Callable[[str], None]) -> int:
    """`workspace share | unshare | members`."""
    with account_service(settings) as accounts:
        _note_when_off(accounts)
        if args.action == "share":
            out(json.dumps(accounts.share(user, args.name, args.user, args.role).to_json(), ensure_ascii=False) + "\n")
        elif args.action == "unshare":
            accounts.unshare(user, args.name, args.user)
            out(json.dumps({"unshared": args.user, "workspace": args.name}, ensure_ascii=False) + "\n")
        else:
            for m in accounts.members(user, args.name):
                out(json.dumps(m.to_json(), ensure_ascii=False) + "\n" if args.json else f"{m.user_name}\t{m.role}\n")
    return 0


def read_password(prompt: str) -> str:
    """A password from the terminal (asked twice) or the first line of stdin; never from an argument."""
    if sys.stdin.isatty():
        first = getpass.getpass(prompt)
        if getpass.getpass("Again: ") != first:
            raise WorkspaceError("The two passwords differ. Run the command again.")
        return first
    line = sys.stdin.readline()
    if not line:
        raise WorkspaceError("Give the password on stdin (one line), or run the command in a terminal to be asked.")
    return line.rstrip("\r\n")


def _note_when_off(accounts: AccountService) -> None:
    if not accounts.enabled:
        print("note: accounts are off; they apply once WORKSPACE_ACCOUNTS__ENABLED=true.", file=sys.stderr)
