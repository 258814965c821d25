"""The client→agent calls that are nothing but a row of the method table, defined once for
both client surfaces: :class:`PlainCalls` (the Observable form, a base of ``AcpAsyncClient``)
and :class:`SyncPlainCalls` (their blocking twins, a base of ``AcpSyncClient``), over the
descriptors of :mod:`rxacp.roles.table_calls`.

Each call is declared by one line, ``name: Request[Params, Result] = Request(method)``: the
name and the two model names are checked against the table when the class is created, the
docstring is made from the table, and the blocking twin has the same name and signature. A
call takes the request model or its wire dict (camelCase); an :class:`OptionalRequest` (a
model without required fields) also takes nothing. Unstable models are imported for type
checking only, so declaring their calls loads nothing (``_send`` finds them through the table).

This module is *not* responsible for the calls with behaviour of their own (``initialize``'s
negotiation, ``session/close``'s listeners, the prompt turn, ``session/cancel``, extensions:
``async_client.py``; their blocking forms: ``sync_client.py``), nor for gating, sending or
waiting (the clients' ``_send`` and ``_block``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from ..roles.table_calls import BlockingCaller, Caller, TableMethod, table_spec
from ..roles.twins import blocking as twin
from ..schema import methods as m
from ..schema._base import AcpModel
from ..session import AcpObservable
from ._calls import RequestLike

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

__all__ = ["OptionalRequest", "PlainCalls", "Request", "SyncPlainCalls"]

_Req = TypeVar("_Req", bound=AcpModel)
_Req_contra = TypeVar("_Req_contra", bound=AcpModel, contravariant=True)
_Resp = TypeVar("_Resp")
_Resp_co = TypeVar("_Resp_co", covariant=True)


class RequestCall(Protocol[_Req_contra, _Resp]):
    """A bound client→agent request: ``(request) -> AcpObservable[Response]``."""

    def __call__(self, request: _Req_contra | RequestLike) -> AcpObservable[_Resp]: ...


class OptionalRequestCall(Protocol[_Req_contra, _Resp]):
    """A bound client→agent request whose request may be left out (an empty one)."""

    def __call__(
        self, request: _Req_contra | RequestLike | None = None
    ) -> AcpObservable[_Resp]: ...


class BlockingRequestCall(Protocol[_Req_contra, _Resp_co]):
    """A bound blocking client→agent request: ``(request) -> Response``."""

    def __call__(self, request: _Req_contra | RequestLike) -> _Resp_co: ...


class OptionalBlockingRequestCall(Protocol[_Req_contra, _Resp_co]):
    """A bound blocking client→agent request whose request may be left out."""

    def __call__(self, request: _Req_contra | RequestLike | None = None) -> _Resp_co: ...


_DECLARED = re.compile(r"(?:\w+\.)?\w+\[(\w+), (\w+)\]")


def _declared_spec(owner: type[Any], name: str, method: str) -> tuple[m.MethodSpec, str, str]:
    """The table's entry for ``method``, checked against the annotation ``name`` has in
    ``owner`` (``Request[Params, Result]``) by model name, so nothing is imported; and the
    two names."""
    annotation = inspect.get_annotations(owner).get(name)
    found = _DECLARED.fullmatch(annotation) if isinstance(annotation, str) else None
    if found is None:
        raise TypeError(
            f"{owner.__name__}.{name}: declare it as `{name}: Request[Params, Result] = "
            f"Request({method!r})` (with `from __future__ import annotations`)"
        )
    return table_spec(method, "agent", found[1], found[2]), found[1], found[2]


def _function(method: str, optional: bool, blocking: bool) -> Callable[..., Any]:
    """The call itself, with its real signature (``request`` required unless ``optional``);
    its blocking twin is made the one way twins are (:func:`rxacp.roles.twins.blocking`)."""
    if optional:

        def send_optional(caller: Caller, request: Any = None) -> AcpObservable[Any]:
            return caller._send(method, {} if request is None else request)

        return twin(send_optional, method) if blocking else send_optional

    def send(caller: Caller, request: Any) -> AcpObservable[Any]:
        return caller._send(method, request)

    return twin(send, method) if blocking else send


def _doc(spec: m.MethodSpec, note: str, optional: bool, blocking: bool) -> str:
    unstable = "**Unstable.** " if spec.unstable else ""
    gate = f" (gated by ``{spec.capability}``)" if spec.capability else ""
    head = f"{unstable}``{spec.name}``{gate}" + (f": {note}" if note else "")
    takes = "Takes the request model or its wire dict (camelCase)" + (
        ", or nothing (an empty request)." if optional else "."
    )
    if blocking:
        return (
            f"{head}; blocks until the answer and returns it.\n\n{takes}\n"
            "Bounded by the request timeout; Ctrl-C disposes the call (``$/cancel_request``).\n"
            "A capability the agent did not advertise raises ``AcpCapabilityException`` and\n"
            "nothing is sent."
        )
    return (
        f"{head}; a cold Observable of the answer::\n\n"
        "    ──request──▶ ─────R|      not advertised: X (AcpCapabilityException, nothing sent)\n\n"
        f"{takes}"
    )


class _PlainCall(TableMethod):
    """One plain client→agent call; the subclasses type its bound form."""

    _optional = False
    _blocking = False

    def __init__(
        self, method: str, note: str = "", checked: tuple[m.MethodSpec, str, str] | None = None
    ) -> None:
        self._method = method
        self._note = note
        self._checked = checked

    def __set_name__(self, owner: type[Any], name: str) -> None:
        checked = self._checked
        if checked is None:  # declared here (a blocking twin comes checked)
            checked = self._checked = _declared_spec(owner, name, self._method)
        self.spec, params, result = checked
        self._fn = fn = _function(self.spec.name, self._optional, self._blocking)
        fn.__doc__ = _doc(self.spec, self._note, self._optional, self._blocking)
        none = " | None" if self._optional else ""
        inspect.unwrap(fn).__annotations__ = {  # what help() and inspect.signature show
            "request": f"{params} | RequestLike{none}",
            "return": result if self._blocking else f"AcpObservable[{result}]",
        }
        super().__set_name__(owner, name)

    def _twin(self) -> tuple[str, str, tuple[m.MethodSpec, str, str] | None]:
        return self._method, self._note, self._checked


class Request(_PlainCall, Generic[_Req, _Resp]):
    """A client→agent request as a cold Observable of its answer."""

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Request[_Req, _Resp]: ...
    @overload
    def __get__(self, obj: Caller, owner: type[Any]) -> RequestCall[_Req, _Resp]: ...
    def __get__(self, obj: Caller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)

    def blocking(self) -> BlockingRequest[_Req, _Resp]:
        """The blocking twin of this call (for ``AcpSyncClient``)."""
        return BlockingRequest(*self._twin())


class OptionalRequest(_PlainCall, Generic[_Req, _Resp]):
    """A :class:`Request` whose request may be left out (its model has no required field)."""

    _optional = True

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> OptionalRequest[_Req, _Resp]: ...
    @overload
    def __get__(self, obj: Caller, owner: type[Any]) -> OptionalRequestCall[_Req, _Resp]: ...
    def __get__(self, obj: Caller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)

    def blocking(self) -> OptionalBlockingRequest[_Req, _Resp]:
        """The blocking twin of this call (for ``AcpSyncClient``)."""
        return OptionalBlockingRequest(*self._twin())


class BlockingRequest(_PlainCall, Generic[_Req, _Resp]):
    """A client→agent request that blocks until its answer (``Request.blocking``)."""

    _blocking = True

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> BlockingRequest[_Req, _Resp]: ...
    @overload
    def __get__(
        self, obj: BlockingCaller, owner: type[Any]
    ) -> BlockingRequestCall[_Req, _Resp]: ...
    def __get__(self, obj: BlockingCaller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)


class OptionalBlockingRequest(_PlainCall, Generic[_Req, _Resp]):
    """The blocking twin of an :class:`OptionalRequest`."""

    _optional = True
    _blocking = True

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> OptionalBlockingRequest[_Req, _Resp]: ...
    @overload
    def __get__(
        self, obj: BlockingCaller, owner: type[Any]
    ) -> OptionalBlockingRequestCall[_Req, _Resp]: ...
    def __get__(self, obj: BlockingCaller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)


class PlainCalls:
    """The table-driven calls of the async client (its base class; no state of its own)."""

    def _send(self, method: str, params: Any) -> AcpObservable[Any]:
        """The cold Observable of one request, gated (``AcpAsyncClient._send``)."""
        raise NotImplementedError

    # authentication
    authenticate: Request[AuthenticateRequest, AuthenticateResponse] = Request(
        m.AUTHENTICATE, "with one of the agent's advertised auth methods"
    )
    logout: OptionalRequest[LogoutRequest, LogoutResponse] = OptionalRequest(m.LOGOUT)
    # sessions
    new_session: Request[NewSessionRequest, NewSessionResponse] = Request(
        m.SESSION_NEW, "create a session for ``cwd`` (absolute) with MCP servers"
    )
    load_session: Request[LoadSessionRequest, LoadSessionResponse] = Request(
        m.SESSION_LOAD,
        "history replays as ``session/update``\\ s that reach the consumers before the answer",
    )
    list_sessions: OptionalRequest[ListSessionsRequest, ListSessionsResponse] = OptionalRequest(
        m.SESSION_LIST
    )
    delete_session: Request[DeleteSessionRequest, DeleteSessionResponse] = Request(m.SESSION_DELETE)
    resume_session: Request[ResumeSessionRequest, ResumeSessionResponse] = Request(
        m.SESSION_RESUME, "no history replay"
    )
    set_session_mode: Request[SetSessionModeRequest, SetSessionModeResponse] = Request(
        m.SESSION_SET_MODE
    )
    set_session_config_option: Request[
        SetSessionConfigOptionRequest, SetSessionConfigOptionResponse
    ] = Request(m.SESSION_SET_CONFIG_OPTION)
    # unstable
    fork_session: Request[ForkSessionRequest, ForkSessionResponse] = Request(m.SESSION_FORK)
    list_providers: OptionalRequest[ListProvidersRequest, ListProvidersResponse] = OptionalRequest(
        m.PROVIDERS_LIST
    )
    set_provider: Request[SetProviderRequest, SetProviderResponse] = Request(m.PROVIDERS_SET)
    disable_provider: Request[DisableProviderRequest, DisableProviderResponse] = Request(
        m.PROVIDERS_DISABLE
    )
    archive_session: Request[ArchiveSessionRequest, ArchiveSessionResponse] = Request(
        m.SESSION_ARCHIVE
    )
    unarchive_session: Request[UnarchiveSessionRequest, UnarchiveSessionResponse] = Request(
        m.SESSION_UNARCHIVE
    )
    session_status: Request[SessionStatusRequest, SessionStatusResponse] = Request(m.SESSION_STATUS)
    set_session_title: Request[SetSessionTitleRequest, SetSessionTitleResponse] = Request(
        m.SESSION_SET_TITLE
    )
    auth_status: OptionalRequest[AuthStatusRequest, AuthStatusResponse] = OptionalRequest(
        m.AUTH_STATUS
    )


class SyncPlainCalls:
    """The blocking twins of :class:`PlainCalls` (a base of ``AcpSyncClient``, which provides
    ``_send`` and ``_block``)."""

    authenticate = PlainCalls.authenticate.blocking()
    logout = PlainCalls.logout.blocking()
    new_session = PlainCalls.new_session.blocking()
    load_session = PlainCalls.load_session.blocking()
    list_sessions = PlainCalls.list_sessions.blocking()
    delete_session = PlainCalls.delete_session.blocking()
    resume_session = PlainCalls.resume_session.blocking()
    set_session_mode = PlainCalls.set_session_mode.blocking()
    set_session_config_option = PlainCalls.set_session_config_option.blocking()
    fork_session = PlainCalls.fork_session.blocking()
    list_providers = PlainCalls.list_providers.blocking()
    set_provider = PlainCalls.set_provider.blocking()
    disable_provider = PlainCalls.disable_provider.blocking()
    archive_session = PlainCalls.archive_session.blocking()
    unarchive_session = PlainCalls.unarchive_session.blocking()
    session_status = PlainCalls.session_status.blocking()
    set_session_title = PlainCalls.set_session_title.blocking()
    auth_status = PlainCalls.auth_status.blocking()
