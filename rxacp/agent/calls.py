"""The agent→client calls, defined once from the method table for all four surfaces.

``AcpAsyncAgent`` and ``PromptContext`` get the Observable form of every agent→client method
of ``rxacp.schema.methods.METHODS`` (``read_text_file``, ``create_terminal``...), and
``AcpSyncAgent`` and ``SyncPromptContext`` its blocking twin, from one descriptor per method:
the same name, the same signature and the same capability gate everywhere. Each call takes the
request model, or its fields as keywords (``ctx.terminal_output(terminal_id=tid)``); on a prompt
context ``session_id`` defaults to the turn's session, and the call belongs to the turn (it is
disposed when the turn is cancelled).

This module is *not* responsible for the convenience helpers built on these calls
(``read_file``, ``ask_permission``, ``execute``... live on the contexts, ``context.py``), nor
for gating and sending (``AgentCore.call``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

import reactivex

from ..roles.table_calls import BlockingCaller, Caller, TableMethod, table_spec
from ..roles.twins import blocking
from ..schema import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    CreateTerminalRequest,
    CreateTerminalResponse,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from ..schema import methods as m
from ..schema._base import AcpModel
from ..session import AcpObservable
from ..session.blocking import wait_for

if TYPE_CHECKING:
    from .core import AgentCore

__all__: list[str] = []  # internal: the surfaces export the calls

_Req = TypeVar("_Req", bound=AcpModel)
_Req_contra = TypeVar("_Req_contra", bound=AcpModel, contravariant=True)
_Resp = TypeVar("_Resp")
_Resp_co = TypeVar("_Resp_co", covariant=True)
_T = TypeVar("_T")


class _Caller(Caller, Protocol):
    """What an agent-side surface provides besides ``_send``: notifications, and the session
    a call defaults to."""

    def _notify(self, method: str, params: Any) -> None: ...

    def _call_session_id(self) -> str | None: ...


class _BlockingCaller(_Caller, BlockingCaller, Protocol):
    pass


class RequestCall(Protocol[_Req_contra, _Resp]):
    """A bound agent→client request: ``(request | **fields) -> AcpObservable[Response]``."""

    def __call__(
        self, request: _Req_contra | None = None, /, **fields: Any
    ) -> AcpObservable[_Resp]: ...


class BlockingRequestCall(Protocol[_Req_contra, _Resp_co]):
    """A bound blocking agent→client request: ``(request | **fields) -> Response``."""

    def __call__(self, request: _Req_contra | None = None, /, **fields: Any) -> _Resp_co: ...


class NotificationCall(Protocol[_Req_contra]):
    """A bound agent→client notification: ``(notification | **fields) -> None``."""

    def __call__(self, notification: _Req_contra | None = None, /, **fields: Any) -> None: ...


class _Params:
    """Builds one method's request: as given, or from keywords (``session_id`` defaulted).

    Made once per method: the model's field names are looked up here, not per call.
    """

    __slots__ = ("_accepted", "_model", "_name", "_names", "_session")

    def __init__(self, spec: m.MethodSpec) -> None:
        self._model = model = spec.params_type
        self._accepted = (model, dict)
        self._name = spec.python_name
        self._names = frozenset(model.model_fields)
        self._session = "session_id" in self._names

    def __call__(self, caller: _Caller, request: Any, fields: dict[str, Any]) -> Any:
        if request is not None:
            if fields:
                raise TypeError(f"{self._name}() takes a request or keywords, not both")
            if not isinstance(request, self._accepted):
                raise TypeError(
                    f"{self._name}() takes a {self._model.__name__} (or its fields as "
                    f"keywords), not {type(request).__name__}"
                )
            return request
        if not self._names.issuperset(fields):
            unknown = sorted(set(fields) - self._names)
            raise TypeError(
                f"{self._name}() got unknown field(s) of {self._model.__name__}: {unknown}"
            )
        if self._session and "session_id" not in fields:
            session_id = caller._call_session_id()
            if session_id is not None:
                fields["session_id"] = session_id
        return self._model(**fields)


def _doc(spec: m.MethodSpec, form: str) -> str:
    summary = (spec.params_type.__doc__ or "").strip().splitlines()[0].rstrip(".")
    needs = f" (needs ``{spec.capability}``)" if spec.capability else ""
    return (
        f"``{spec.name}``{needs}: {summary[0].lower()}{summary[1:]}; {form}\n\n"
        "Takes the request model, or its fields as keywords (on a prompt context\n"
        "``session_id`` defaults to the turn's session). A capability the client did not\n"
        "advertise fails with ``AcpCapabilityException`` and nothing is sent."
    )


class Request(TableMethod, Generic[_Req, _Resp]):
    """An agent→client request as a cold Observable of its response::

    subscribe ──request──▶ ─────R|      dispose before R → $/cancel_request
    """

    def __init__(self, method: str, params: type[_Req], result: type[_Resp]) -> None:
        self.spec = spec = table_spec(method, "client", params, result)
        build = _Params(spec)

        def call(caller: _Caller, request: Any = None, /, **fields: Any) -> AcpObservable[Any]:
            return caller._send(spec.name, build(caller, request, fields))

        call.__doc__ = _doc(spec, "a cold Observable of the response. ``--response|``")
        self._fn = call

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Request[_Req, _Resp]: ...
    @overload
    def __get__(self, obj: _Caller, owner: type[Any]) -> RequestCall[_Req, _Resp]: ...
    def __get__(self, obj: _Caller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)

    def blocking(self) -> BlockingRequest[_Req, _Resp]:
        """The blocking twin of this call (for the sync surfaces)."""
        return BlockingRequest(self)


class BlockingRequest(TableMethod, Generic[_Req, _Resp]):
    """An agent→client request that blocks until its response (made by ``Request.blocking``)."""

    def __init__(self, request: Request[_Req, _Resp]) -> None:
        self.spec = spec = request.spec
        self._fn = blocking(request._fn, spec.name)
        self._fn.__doc__ = _doc(spec, "blocks until the response and returns it.")

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> BlockingRequest[_Req, _Resp]: ...
    @overload
    def __get__(
        self, obj: _BlockingCaller, owner: type[Any]
    ) -> BlockingRequestCall[_Req, _Resp]: ...
    def __get__(self, obj: _BlockingCaller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)


class Notification(TableMethod, Generic[_Req]):
    """An agent→client notification: sent at once (never blocks), gated like a request."""

    def __init__(self, method: str, params: type[_Req]) -> None:
        self.spec = spec = table_spec(method, "client", params, None)
        build = _Params(spec)

        def call(caller: _Caller, notification: Any = None, /, **fields: Any) -> None:
            caller._notify(spec.name, build(caller, notification, fields))

        call.__doc__ = _doc(spec, "sent at once (a notification has no answer).")
        self._fn = call

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Notification[_Req]: ...
    @overload
    def __get__(self, obj: _Caller, owner: type[Any]) -> NotificationCall[_Req]: ...
    def __get__(self, obj: _Caller | None, owner: type[Any]) -> Any:
        return self if obj is None else self._bind(obj)


class AsyncClientCalls:
    """Every agent→client method as a cold Observable (``AcpAsyncAgent``, ``PromptContext``)."""

    request_permission = Request(
        m.SESSION_REQUEST_PERMISSION, RequestPermissionRequest, RequestPermissionResponse
    )
    read_text_file = Request(m.FS_READ_TEXT_FILE, ReadTextFileRequest, ReadTextFileResponse)
    write_text_file = Request(m.FS_WRITE_TEXT_FILE, WriteTextFileRequest, WriteTextFileResponse)
    create_terminal = Request(m.TERMINAL_CREATE, CreateTerminalRequest, CreateTerminalResponse)
    terminal_output = Request(m.TERMINAL_OUTPUT, TerminalOutputRequest, TerminalOutputResponse)
    release_terminal = Request(m.TERMINAL_RELEASE, ReleaseTerminalRequest, ReleaseTerminalResponse)
    wait_for_terminal_exit = Request(
        m.TERMINAL_WAIT_FOR_EXIT, WaitForTerminalExitRequest, WaitForTerminalExitResponse
    )
    kill_terminal = Request(m.TERMINAL_KILL, KillTerminalRequest, KillTerminalResponse)
    create_elicitation = Request(
        m.ELICITATION_CREATE, CreateElicitationRequest, CreateElicitationResponse
    )
    complete_elicitation = Notification(m.ELICITATION_COMPLETE, CompleteElicitationNotification)


class SyncClientCalls:
    """The blocking twins of :class:`AsyncClientCalls` (``AcpSyncAgent``,
    ``SyncPromptContext``); a surface provides ``_send``, ``_notify`` and ``_core``."""

    _core: AgentCore

    request_permission = AsyncClientCalls.request_permission.blocking()
    read_text_file = AsyncClientCalls.read_text_file.blocking()
    write_text_file = AsyncClientCalls.write_text_file.blocking()
    create_terminal = AsyncClientCalls.create_terminal.blocking()
    terminal_output = AsyncClientCalls.terminal_output.blocking()
    release_terminal = AsyncClientCalls.release_terminal.blocking()
    wait_for_terminal_exit = AsyncClientCalls.wait_for_terminal_exit.blocking()
    kill_terminal = AsyncClientCalls.kill_terminal.blocking()
    create_elicitation = AsyncClientCalls.create_elicitation.blocking()
    complete_elicitation = AsyncClientCalls.complete_elicitation

    def _block(self, source: reactivex.Observable[_T], what: str) -> _T:
        """The one blocking wait of the sync agent and sync context: ``source``'s last value,
        bounded by ``AgentCore.wait_bound``; refuses to run on the connection's event loop,
        which it would deadlock."""
        session = self._core.session
        if session.in_loop():
            raise RuntimeError(f"a blocking {what} call would block the connection's event loop")
        return wait_for(source, self._core.wait_bound(), what=what)
