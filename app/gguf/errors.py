"""Typed errors for GGUF reading; each ``str()`` is a sentence a user can act on.

The sentences are :class:`app.i18n.Text` (``T_``): ``str(error)`` returns the ``Text`` itself,
so the window translates it with ``ui_text(str(error))``.
"""

from __future__ import annotations

from app.i18n import T_, TextError


class GGUFError(TextError):
    """The file is not a model Hearth can read (damaged, hostile, or from the future)."""


class NotGGUFError(GGUFError):
    """The bytes do not start with the GGUF magic."""


class HeaderTruncatedError(GGUFError):
    """The buffer ends inside the header.

    ``needed`` is a lower bound for how many bytes from the start of the file the header needs,
    so a caller planning from a partial download can fetch at least that much and try again.
    """

    def __init__(self, needed: int, have: int, source: str | None = None) -> None:
        self.needed = needed
        self.have = have
        super().__init__(T_(
            "The model header in {source} is incomplete: it needs at least {needed:,} bytes but "
            "only {have:,} are there. Download more of the file (or all of it) and try again.",
            source=T_("the buffer") if source is None else source, needed=needed, have=have))


class MissingPartError(GGUFError):
    """One shard of a split model (``-0000k-of-0000N``) is not on disk."""


class RefusedError(GGUFError):
    """The file breaks a rule llama.cpp checks when it loads a model, so llama.cpp will refuse it
    (or abort on it). ``check`` names the rule (``"zero_dim"``, ``"shape"``, ``"kv_type"``...);
    ``what`` says what is wrong, in words. ``conversion``: a fault a converter, not a broken
    download, usually makes (a key of the wrong type, a missing tensor)."""

    def __init__(self, source: str, check: str, what: str, *, conversion: bool = False) -> None:
        self.check = check
        self.what = what
        if conversion:
            message = T_("{source} is damaged: {what}; llama.cpp will refuse it. Download it "
                         "again, or choose another conversion of the model.", source=source,
                         what=what)
        else:
            message = T_("{source} is damaged: {what}; llama.cpp will refuse it. Download it "
                         "again.", source=source, what=what)
        super().__init__(message)
