"""Run :class:`AcpAsgiApp` on uvicorn: in the foreground (:func:`serve`) or on a daemon thread
(:class:`UvicornThread`, for tests, examples and embedding).

This module is *not* responsible for the app itself (``_app``); any ASGI server works too.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any, Self

from rxacp.transport._remote import ServerContext

__all__ = ["UvicornThread", "serve"]


def _config(app: Any, sock_host: str, port: int, **options: Any) -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise ImportError(
            'serving the ACP ASGI app needs uvicorn: pip install "rxacp[http]"'
        ) from exc
    options.setdefault("log_level", "warning")
    options.setdefault("lifespan", "on")
    options.setdefault("ws", "websockets-sansio")
    options.setdefault("timeout_graceful_shutdown", 5)  # SSE streams never end by themselves
    # uvicorn reads each WebSocket frame whole before the app can admit it into its budget: cap
    # a frame at the app's message cap, and no permessage-deflate (a few KiB on the wire would
    # inflate to that cap on every connection at once)
    cap = getattr(app, "max_message_size", None)
    if isinstance(cap, int):
        options.setdefault("ws_max_size", cap)
    options.setdefault("ws_per_message_deflate", False)
    return uvicorn.Config(app, host=sock_host, port=port, **options)


def serve(app: Any, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
    """Serve ``app`` on ``host:port`` with uvicorn until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    uvicorn.Server(_config(app, host, port, **options)).run()


class UvicornThread(ServerContext):
    """``app`` served by uvicorn on a daemon thread of its own; ``port=0`` picks a free port.

    ``start()`` returns once it listens (:attr:`port`, :attr:`url`); ``close()`` stops it
    (ASGI lifespan shutdown: the app ends its connections). A context manager too.
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
        self.app, self.host = app, host
        self._sock = socket.create_server((host, port))
        self.port: int = self._sock.getsockname()[1]
        self._server = __import__("uvicorn").Server(_config(app, host, self.port, **options))
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def url(self) -> str:
        """``http://host:port`` plus the app's ``path`` (when it has one)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{getattr(self.app, 'path', '')}"

    def start(self, timeout: float = 10.0) -> Self:
        """Start serving; returns once listening."""
        if self._thread is not None:
            raise RuntimeError("UvicornThread started twice")
        self._thread = threading.Thread(target=self._run, name="rxacp-uvicorn", daemon=True)
        self._thread.start()
        waited = 0.0
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("uvicorn stopped while starting")
            self._thread.join(0.02)
            waited += 0.02
            if waited > timeout:
                raise TimeoutError(f"uvicorn did not start within {timeout:g} s")
        return self

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self._server.serve(sockets=[self._sock])

    def close(self, timeout: float = 15.0) -> None:
        """Stop serving (idempotent), waiting at most ``timeout`` seconds: the app's
        connections are ended first (``aclose()``), so open streams do not hold the shutdown."""
        if self._closed:
            return
        self._closed = True
        loop, closer = self._loop, getattr(self.app, "aclose", None)
        if loop is not None and loop.is_running() and callable(closer):
            coro = closer()
            try:
                asyncio.run_coroutine_threadsafe(coro, loop).result(timeout)
            except RuntimeError:  # the loop stopped meanwhile
                coro.close()
            except Exception:
                pass
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._sock.close()
