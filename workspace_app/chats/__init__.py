"""Chats and notes: the conversations kept beside a workspace's answers, and what they cite."""
