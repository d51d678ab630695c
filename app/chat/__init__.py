"""Conversations as data: messages and the transcript state machine (no Qt)."""
