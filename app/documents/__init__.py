"""Documents in the chat (no Qt): their text (extract), the passages it is cut into (passages),
the full-text index that finds the passages a question needs (index), and what goes into the
model's context, whole or in passages, with a note of what went in (fit)."""
