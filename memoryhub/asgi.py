"""The web process's application (``run_hub`` serves it with uvicorn): Django, and MCP at ``/mcp/``.

Django stays a WSGI application — run in a pool of threads by a2wsgi, as it ran
under gunicorn's threads — because Django under ASGI runs every synchronous view
of a process in one shared thread. The MCP SDK's streamable HTTP transport is an
ASGI (Starlette) application; a path router sends ``/mcp`` and ``/mcp/…`` to it
and everything else to Django, and hands the server's lifespan to MCP (its
session manager runs there).
"""

from __future__ import annotations

import os
from typing import cast

from a2wsgi import WSGIMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
# One BLAS thread, set before numpy loads (an operator's own setting wins). Recall's matrix products are
# small (30 hits × 384), and waking OpenBLAS's second thread for each added 4–8 ms to the p95 of recall
# over HTTP on the 2-core VM (docs/BENCHMARKS.md, 2026-11-26); requests run side by side on threads and
# processes anyway. The same reason the embedder's session runs on one thread.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Django requests each web process answers at once (gunicorn ran 4 threads a process before).
DJANGO_THREADS = 4


def build_application() -> ASGIApp:
    """A fresh application: the SDK's session manager can run only once per app (tests start several)."""
    # Importing memoryhub.wsgi sets Django up (and warms the models); only then can MCP's modules load models.
    # (Two steps, so that sorting the imports cannot put MCP's first.)
    from memoryhub import wsgi

    django_wsgi = wsgi.application

    from mcp_server.http import PATH, mcp_http_app

    # a2wsgi types WSGI and ASGI more narrowly than Django and Starlette do; they are the same protocols.
    django = cast(ASGIApp, WSGIMiddleware(django_wsgi, workers=DJANGO_THREADS))  # type: ignore[arg-type]
    mcp = mcp_http_app()
    bare_path = PATH.rstrip("/")

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await mcp(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here: the connection is refused
        path = scope["path"]
        if path == bare_path:
            # Clients are configured with ".../mcp" as often as ".../mcp/": both reach the endpoint, unredirected.
            scope = {**scope, "path": PATH, "raw_path": PATH.encode()}
            path = PATH
        if path.startswith(PATH):
            await mcp(scope, receive, send)
        else:
            await django(scope, receive, send)

    return route


application = build_application()
