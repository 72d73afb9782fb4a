"""Exceptions raised by joulenet."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario key and what is wrong with it.

    Raised for the same problems, with the same key and message, whether the
    scenario came from a TOML file or a Python dict.
    """

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}" if key else message)

    def __reduce__(self):  # picklable across processes
        return (ScenarioError, (self.key, self.message))
