"""Password hashes and API keys, with the standard library only.

Passwords: scrypt (RFC 7914) with a random 16-byte salt per user, stored as `scrypt$n$r$p$salt$hash` (hex) so the
cost can rise later without breaking old hashes; compared with `hmac.compare_digest`.
API keys: `wsk_<id>_<secret>`, 32 random bytes of secret; the catalog keeps the id and the SHA-256 of the whole key
(a random key needs no slow hash), shown once at creation and never again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "wsk_"
SCRYPT_R = 8
SCRYPT_P = 1


def hash_password(password: str, cost: int) -> str:
    """The stored form of a password: scrypt with a new salt at cost N = `cost` (a power of two)."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, cost, SCRYPT_R, SCRYPT_P)
    return f"scrypt${cost}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def password_matches(password: str, stored: str) -> bool:
    """Whether a password is the one a stored hash was made from (constant-time comparison)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        computed = _scrypt(password, bytes.fromhex(salt), int(n), int(r), int(p))
    except ValueError:
        return False
    return hmac.compare_digest(computed, bytes.fromhex(digest))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r + (1 << 20), dklen=32)


def new_api_key() -> tuple[str, str, str]:
    """(key id, the key to show once, its SHA-256 digest to store)."""
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    return key_id, key, key_digest(key)


def key_digest(key: str) -> str:
    """The SHA-256 hex digest of an API key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_id_of(key: str) -> str | None:
    """The id inside a key of ours (`wsk_<id>_<secret>`), or None for anything else."""
    if not key.startswith(KEY_PREFIX):
        return None
    key_id, _, secret = key[len(KEY_PREFIX):].partition("_")
    return key_id if key_id and secret else None


def digests_match(presented: str, stored_digest: str) -> bool:
    """Whether a presented key hashes to the stored digest (constant-time comparison)."""
    return hmac.compare_digest(key_digest(presented), stored_digest)
