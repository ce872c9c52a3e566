"""Sieve's exceptions: one class per engine status code, all under :class:`Error`.

The embedded API raises them with the engine's own message; :class:`sieve.Client` raises the
same classes from the server's HTTP status and its ``{"error": ...}`` message.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "NotFound",
    "Corruption",
    "NotSupported",
    "InvalidArgument",
    "IOError",
    "AlreadyExists",
    "ResourceExhausted",
    "Unavailable",
    "Internal",
    "Unauthorized",
]


class Error(Exception):
    """Base class of every error Sieve raises.

    ``code`` names the engine's status code (``"InvalidArgument"``, ...). Errors raised by
    :class:`sieve.Client` also carry ``http_status``, the server's HTTP status (else None).
    """

    code = "Error"

    def __init__(self, message: str = "", *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.http_status = http_status


class NotFound(Error, LookupError):
    """No such collection, database (with ``create=False``) or route."""

    code = "NotFound"


class Corruption(Error):
    """The store's contents are damaged. From ``check()``: ``problems`` lists what was found."""

    code = "Corruption"

    def __init__(self, message: str = "", *, http_status: int | None = None,
                 problems: list[str] | None = None) -> None:
        super().__init__(message, http_status=http_status)
        self.problems = list(problems or [])


class NotSupported(Error):
    """The backend cannot honour a request (a filter, metric or dtype it does not support)."""

    code = "NotSupported"


class InvalidArgument(Error, ValueError):
    """Bad input: wrong dims, a filter that does not parse (the message names the position),
    bad k, duplicate ids, attribute values of the wrong type (the message names row and
    attribute), a malformed request."""

    code = "InvalidArgument"


class IOError(Error, OSError):  # noqa: A001 - the engine's name for the code
    """The path cannot be used, or another process holds the database's lock."""

    code = "IOError"


class AlreadyExists(Error):
    """A collection of that name exists."""

    code = "AlreadyExists"


class ResourceExhausted(Error):
    """Out of device or host memory; from the client also a request or body over the server's
    limits (HTTP 413)."""

    code = "ResourceExhausted"


class Unavailable(Error):
    """No usable GPU for ``device="gpu"``; from the client also a server that cannot be
    reached or answers 503."""

    code = "Unavailable"


class Internal(Error):
    """An internal failure of the engine or the server (HTTP 500)."""

    code = "Internal"


class Unauthorized(Error, PermissionError):
    """The server wants a bearer token, or got the wrong one (HTTP 401; client only)."""

    code = "Unauthorized"
