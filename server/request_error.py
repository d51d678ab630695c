"""The one error every API translator raises for a request it cannot take (standard library)."""

from __future__ import annotations


class RequestError(ValueError):
    """A request this API cannot take: str() is a sentence saying what is wrong and what to do;
    ``param`` names the field where the API has a place for it."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param
