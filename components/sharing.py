"""A workspace's members and sharing (owners, with accounts on): who has which role, a form to share with a user
or change their role, a button to take a role away, and the audit log export."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.text import escape_markdown
from workspace_app.models.accounts import Membership

ROLES = ("viewer", "editor", "owner")


@dataclass(frozen=True)
class SharingAction:
    """What the owner asked for: share (user, role), unshare (user) or export the audit log (format)."""

    kind: str
    user: str = ""
    role: str = ""


def render_sharing(members: list[Membership], *, key: str) -> SharingAction | None:
    """The members with their roles, the share form, unshare buttons and the audit export; the owner's action."""
    chosen: SharingAction | None = None
    with st.expander("Sharing and audit log", icon=":material/group:"):
        for member in members:
            name, role, remove = st.columns([3, 2, 1])
            name.markdown(escape_markdown(member.user_name))
            role.caption(member.role)
            if remove.button("Remove", key=f"{key}-unshare-{member.user_id}", icon=":material/person_remove:"):
                chosen = SharingAction("unshare", member.user_name)
        with st.form(key=f"{key}-form", clear_on_submit=True):
            user = st.text_input("User name", key=f"{key}-user")
            role = st.selectbox("Role", ROLES, key=f"{key}-role")
            if st.form_submit_button("Share", key=f"{key}-share") and user.strip():
                chosen = SharingAction("share", user.strip(), str(role))
        if st.button("Export the audit log (CSV)", key=f"{key}-audit", icon=":material/download:"):
            chosen = SharingAction("audit", role="csv")
    return chosen


def render_audit_download(data: str, *, key: str) -> None:
    """The prepared audit log, to save."""
    st.download_button("Save audit.csv", data.encode("utf-8"), file_name="audit.csv", mime="text/csv",
                       key=f"{key}-save", icon=":material/save:")
