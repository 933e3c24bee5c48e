"""OpenAI error objects: every failure the gateway reports, with its HTTP status.

OpenAI's clients read ``{"error": {"message", "type", "param", "code"}}`` and pick the
exception class from the status (400 ``BadRequestError``, 401 ``AuthenticationError``, ...),
so each failure is one :class:`GatewayError` carrying both, raised where it is found and
written once by the app.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import HarmonyGrammarError

__all__ = [
    "GatewayError",
    "UpstreamError",
    "bad_request",
]


class GatewayError(HarmonyGrammarError):
    """A request the gateway answers with an OpenAI error object and ``status``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        """The JSON body: ``{"error": {...}}``, as OpenAI sends it."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


class UpstreamError(GatewayError):
    """The engine behind the gateway failed: refused, timed out, 5xx, dropped, or malformed.

    502 (``upstream_error``) by default, 504 (``upstream_timeout``) for a timeout. In a
    stream that has started, the gateway ends the stream instead (see ``app.py``).
    """

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(
            504 if timeout else 502,
            message,
            type="server_error",
            code="upstream_timeout" if timeout else "upstream_error",
        )


def bad_request(message: str, param: str | None = None) -> GatewayError:
    """A 400 ``invalid_request_error`` naming the field at fault."""
    return GatewayError(400, message, param=param)
