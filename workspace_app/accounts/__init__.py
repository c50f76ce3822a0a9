"""Accounts: users with roles per workspace, their API keys, the audit log, and the one policy of what a role allows.

    policy.py     roles (owner, editor, viewer), actions, `allows` and `check` (the one place that decides)
    identities.py people an identity provider signs in (OpenID Connect): allowed email domains, first user names
    passwords.py  scrypt hashes with a per-user salt; API keys (random, stored as SHA-256 digests)
    service.py    AccountService: users, keys, memberships, the gate every front end calls, the audit log
"""
