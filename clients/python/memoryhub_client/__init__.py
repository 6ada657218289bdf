"""Typed Python client for the MemoryHub agent REST API (sync and async)."""

from __future__ import annotations

from memoryhub_client.client import AsyncMemoryHub, MemoryHub, RetryEvent
from memoryhub_client.errors import (
    APIError,
    CommitRejected,
    Conflicting,
    Forbidden,
    HubConnectionError,
    InvalidInput,
    MemoryHubError,
    NotFound,
    RateLimited,
    ServerError,
    TooLarge,
    Unauthorized,
    Unavailable,
)
from memoryhub_client.models import NewMemory
from memoryhub_client.retries import NO_RETRIES, RetryPolicy

__all__ = [
    "NO_RETRIES",
    "APIError",
    "AsyncMemoryHub",
    "CommitRejected",
    "Conflicting",
    "Forbidden",
    "HubConnectionError",
    "InvalidInput",
    "MemoryHub",
    "MemoryHubError",
    "NewMemory",
    "NotFound",
    "RateLimited",
    "RetryEvent",
    "RetryPolicy",
    "ServerError",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
]
__version__ = "0.1.0"
