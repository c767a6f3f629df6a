"""The exception of a defect in an input file."""

from typing import Optional


class FormatError(OSError, ValueError):
    """A defect in an input file: its ``filename`` and, where known, its 1-based
    ``lineno``. Both an ``OSError`` (like a file that cannot be read) and a
    ``ValueError`` (like any other bad input)."""

    def __init__(self, message: str, filename: Optional[str] = None, lineno: Optional[int] = None):
        super().__init__(message)
        self.filename = filename
        self.lineno = lineno

    def __str__(self) -> str:
        return str(self.args[0])
