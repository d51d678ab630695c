"""Hugging Face: search, repository details, remote GGUF headers, downloads (no Qt)."""
