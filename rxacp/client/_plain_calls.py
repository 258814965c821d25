"""The client→agent calls that are nothing but a row of the method table: one typed method
each (params coerced into the request model, result typed, capability-gated), stable and
unstable, over the one generic ``_call`` of :class:`~rxacp.client.AcpAsyncClient`.

Unstable models load only when an unstable call is made (they are imported for type checking
only; ``_call`` finds them through ``rxacp.schema.methods``).

This module is *not* responsible for the calls with behaviour of their own (``initialize``'s
negotiation, ``session/close``'s listeners, the prompt turn, ``session/cancel``, extensions:
``async_client.py``), nor for sending (``rxacp.session``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..schema import methods as m
from ..session import AcpObservable

if TYPE_CHECKING:
    from ..schema import (
        AuthenticateRequest,
        AuthenticateResponse,
        DeleteSessionRequest,
        DeleteSessionResponse,
        ListSessionsRequest,
        ListSessionsResponse,
        LoadSessionRequest,
        LoadSessionResponse,
        LogoutRequest,
        LogoutResponse,
        NewSessionRequest,
        NewSessionResponse,
        ResumeSessionRequest,
        ResumeSessionResponse,
        SetSessionConfigOptionRequest,
        SetSessionConfigOptionResponse,
        SetSessionModeRequest,
        SetSessionModeResponse,
    )
    from ..schema.unstable import (
        ArchiveSessionRequest,
        ArchiveSessionResponse,
        AuthStatusRequest,
        AuthStatusResponse,
        DisableProviderRequest,
        DisableProviderResponse,
        ForkSessionRequest,
        ForkSessionResponse,
        ListProvidersRequest,
        ListProvidersResponse,
        SessionStatusRequest,
        SessionStatusResponse,
        SetProviderRequest,
        SetProviderResponse,
        SetSessionTitleRequest,
        SetSessionTitleResponse,
        UnarchiveSessionRequest,
        UnarchiveSessionResponse,
    )
    from ._calls import RequestLike

__all__ = ["PlainCalls"]


class PlainCalls:
    """The table-driven calls of the async client (its base class; no state of its own)."""

    def _call(self, method: str, request: Any) -> AcpObservable[Any]:
        """The cold Observable of one request (``AcpAsyncClient._call``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ authentication
    def authenticate(
        self, request: AuthenticateRequest | RequestLike
    ) -> AcpObservable[AuthenticateResponse]:
        """``authenticate`` with one of the agent's advertised auth methods::

        ──request──▶ ─────R|
        """
        return self._call(m.AUTHENTICATE, request)

    def logout(
        self, request: LogoutRequest | RequestLike | None = None
    ) -> AcpObservable[LogoutResponse]:
        """``logout`` (gated by ``auth.logout``)::

        ──request──▶ ─────R|      not advertised: X (AcpCapabilityException, nothing sent)
        """
        return self._call(m.LOGOUT, {} if request is None else request)

    # ------------------------------------------------------------------ sessions
    def new_session(
        self, request: NewSessionRequest | RequestLike
    ) -> AcpObservable[NewSessionResponse]:
        """``session/new``: create a session for ``cwd`` (absolute) with MCP servers::

        ──request──▶ ─────R|      (R.session_id)
        """
        return self._call(m.SESSION_NEW, request)

    def load_session(
        self, request: LoadSessionRequest | RequestLike
    ) -> AcpObservable[LoadSessionResponse]:
        """``session/load`` (gated by ``loadSession``); history replays as ``session/update``\\ s
        that reach the consumers before the answer::

        ──request──▶ ──u─u─u──R|
        """
        return self._call(m.SESSION_LOAD, request)

    def list_sessions(
        self, request: ListSessionsRequest | RequestLike | None = None
    ) -> AcpObservable[ListSessionsResponse]:
        """``session/list`` (gated by ``sessionCapabilities.list``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_LIST, {} if request is None else request)

    def delete_session(
        self, request: DeleteSessionRequest | RequestLike
    ) -> AcpObservable[DeleteSessionResponse]:
        """``session/delete`` (gated by ``sessionCapabilities.delete``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_DELETE, request)

    def resume_session(
        self, request: ResumeSessionRequest | RequestLike
    ) -> AcpObservable[ResumeSessionResponse]:
        """``session/resume`` (gated by ``sessionCapabilities.resume``; no history replay)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_RESUME, request)

    def set_session_mode(
        self, request: SetSessionModeRequest | RequestLike
    ) -> AcpObservable[SetSessionModeResponse]:
        """``session/set_mode``::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_SET_MODE, request)

    def set_session_config_option(
        self, request: SetSessionConfigOptionRequest | RequestLike
    ) -> AcpObservable[SetSessionConfigOptionResponse]:
        """``session/set_config_option``::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_SET_CONFIG_OPTION, request)

    # ------------------------------------------------------------------ unstable
    def fork_session(
        self, request: ForkSessionRequest | RequestLike
    ) -> AcpObservable[ForkSessionResponse]:
        """**Unstable.** ``session/fork`` (gated by ``sessionCapabilities.fork``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_FORK, request)

    def list_providers(
        self, request: ListProvidersRequest | RequestLike | None = None
    ) -> AcpObservable[ListProvidersResponse]:
        """**Unstable.** ``providers/list`` (gated by ``providers``)::

        ──request──▶ ─────R|
        """
        return self._call(m.PROVIDERS_LIST, {} if request is None else request)

    def set_provider(
        self, request: SetProviderRequest | RequestLike
    ) -> AcpObservable[SetProviderResponse]:
        """**Unstable.** ``providers/set`` (gated by ``providers``)::

        ──request──▶ ─────R|
        """
        return self._call(m.PROVIDERS_SET, request)

    def disable_provider(
        self, request: DisableProviderRequest | RequestLike
    ) -> AcpObservable[DisableProviderResponse]:
        """**Unstable.** ``providers/disable`` (gated by ``providers``)::

        ──request──▶ ─────R|
        """
        return self._call(m.PROVIDERS_DISABLE, request)

    def archive_session(
        self, request: ArchiveSessionRequest | RequestLike
    ) -> AcpObservable[ArchiveSessionResponse]:
        """**Unstable.** ``session/archive`` (gated by ``sessionCapabilities.archive``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_ARCHIVE, request)

    def unarchive_session(
        self, request: UnarchiveSessionRequest | RequestLike
    ) -> AcpObservable[UnarchiveSessionResponse]:
        """**Unstable.** ``session/unarchive`` (gated by ``sessionCapabilities.archive``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_UNARCHIVE, request)

    def session_status(
        self, request: SessionStatusRequest | RequestLike
    ) -> AcpObservable[SessionStatusResponse]:
        """**Unstable.** ``session/status`` (gated by ``sessionCapabilities.status``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_STATUS, request)

    def set_session_title(
        self, request: SetSessionTitleRequest | RequestLike
    ) -> AcpObservable[SetSessionTitleResponse]:
        """**Unstable.** ``session/set_title`` (gated by ``sessionCapabilities.title``)::

        ──request──▶ ─────R|
        """
        return self._call(m.SESSION_SET_TITLE, request)

    def auth_status(
        self, request: AuthStatusRequest | RequestLike | None = None
    ) -> AcpObservable[AuthStatusResponse]:
        """**Unstable.** ``auth/status`` (gated by ``auth.status``)::

        ──request──▶ ─────R|
        """
        return self._call(m.AUTH_STATUS, {} if request is None else request)
