"""What Hearth keeps in its SQLite store: conversations, local models, per-model settings (no Qt)."""
