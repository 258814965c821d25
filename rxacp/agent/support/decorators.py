"""The decorators of decorator-based agents: ``@acp_agent``, one decorator per client→agent
method (``@prompt``, ``@new_session``...), ``@ext_method`` / ``@ext_notification``,
``@exception_handler`` and the ``SessionId`` parameter marker.

Decorators only *mark* functions and classes (an attribute on the function); they never wrap
or change them, so a decorated method is still a plain method you can call in a unit test.
The method decorators are all made by one factory driven by ``rxacp.schema.methods.METHODS``.

This module is *not* responsible for finding the marks (``discovery.py``), resolving arguments
(``resolvers.py``) or running anything (``dispatch.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ...roles.handlers import check_ext_method
from ...schema.methods import METHODS, MethodSpec

__all__ = [
    "AgentInfo",
    "MethodDecorator",
    "SessionId",
    "acp_agent",
    "authenticate",
    "cancel",
    "close_session",
    "delete_session",
    "disable_provider",
    "exception_handler",
    "ext_method",
    "ext_notification",
    "fork_session",
    "initialize",
    "list_providers",
    "list_sessions",
    "load_session",
    "logout",
    "new_session",
    "prompt",
    "resume_session",
    "set_provider",
    "set_session_config_option",
    "set_session_mode",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C", bound=type)

MARK_ATTR = "__acp_handler_marks__"
EXCEPTION_ATTR = "__acp_exception_types__"
AGENT_ATTR = "__acp_agent_info__"


class SessionId:
    """Marker for ``Annotated[str, SessionId]``: the parameter receives the request's session id.

    Only handlers whose request carries a ``sessionId`` may declare it (checked at build time).
    """


@dataclass(frozen=True)
class AgentInfo:
    """What ``@acp_agent`` recorded: the ``agentInfo`` of the default ``initialize`` answer."""

    name: str
    version: str
    title: str | None = None


@dataclass(frozen=True)
class HandlerMark:
    """One mark left on a function: the ACP method it handles and what kind of method it is.

    ``spec`` is None for extension methods (``kind`` is ``"request"`` or ``"notification"``).
    """

    method: str
    kind: str
    spec: MethodSpec | None
    decorator: str


def _add_mark(fn: Any, mark: HandlerMark) -> None:
    if not callable(fn) or isinstance(fn, (staticmethod, classmethod, type)):
        raise TypeError(
            f"@{mark.decorator} must decorate a function (put @staticmethod/@classmethod above it),"
            f" not {fn!r}"
        )
    marks: tuple[HandlerMark, ...] = getattr(fn, MARK_ATTR, ())
    if any(m.method == mark.method for m in marks):
        raise TypeError(f"@{mark.decorator} is applied twice to {fn.__qualname__}")
    setattr(fn, MARK_ATTR, (*marks, mark))


class MethodDecorator:
    """Marks a method as the handler of one client→agent ACP method (``@prompt``...).

    The decorated function is returned unchanged.
    """

    def __init__(self, spec: MethodSpec) -> None:
        self.spec = spec
        self.__name__ = spec.python_name
        unstable = "Unstable: " if spec.unstable else ""
        self.__doc__ = f"{unstable}mark a method as the ``{spec.name}`` handler."

    def __call__(self, fn: _F) -> _F:
        _add_mark(fn, HandlerMark(self.spec.name, self.spec.kind, self.spec, self.spec.python_name))
        return fn

    def __repr__(self) -> str:
        return f"@{self.spec.python_name} ({self.spec.name})"


def _decorator(python_name: str) -> MethodDecorator:
    """The one factory: the decorator of the agent-side method called ``python_name``."""
    for spec in METHODS.values():
        if spec.side == "agent" and spec.python_name == python_name:
            return MethodDecorator(spec)
    raise LookupError(f"no client→agent method named {python_name!r} in METHODS")


initialize = _decorator("initialize")
authenticate = _decorator("authenticate")
logout = _decorator("logout")
new_session = _decorator("new_session")
load_session = _decorator("load_session")
list_sessions = _decorator("list_sessions")
delete_session = _decorator("delete_session")
resume_session = _decorator("resume_session")
close_session = _decorator("close_session")
set_session_mode = _decorator("set_session_mode")
set_session_config_option = _decorator("set_session_config_option")
prompt = _decorator("prompt")
cancel = _decorator("cancel")
fork_session = _decorator("fork_session")
list_providers = _decorator("list_providers")
set_provider = _decorator("set_provider")
disable_provider = _decorator("disable_provider")


def _ext_marker(method: str, kind: str, decorator: str) -> Callable[[_F], _F]:
    check_ext_method(method, f"@{decorator}")

    def mark(fn: _F) -> _F:
        _add_mark(fn, HandlerMark(method, kind, None, decorator))
        return fn

    return mark


def ext_method(method: str) -> Callable[[_F], _F]:
    """Mark a method as the handler of the extension request ``method`` (starts with ``_``).

    Parameters annotated ``dict``/``Any`` get the raw params; a pydantic model type gets them
    validated into that model. The return value (any JSON, or a model) is the result.
    """
    return _ext_marker(method, "request", "ext_method")


def ext_notification(method: str) -> Callable[[_F], _F]:
    """Mark a method as the handler of the extension notification ``method`` (starts with
    ``_``); handled in arrival order, its return value is ignored."""
    return _ext_marker(method, "notification", "ext_notification")


def exception_handler(*types: type[BaseException]) -> Callable[[_F], _F]:
    """Mark a method as the handler of exceptions of ``types`` raised by any handler.

    The most specific handler wins (nearest in the exception's MRO). It may take the exception,
    the request, :class:`InvocationContext`... (resolved like handler arguments) and return a
    response (used as the answer, processed like the handler's own return value), or raise or
    return an exception (answered as that error). Without ``types``, the types are taken from
    its exception-typed parameters.
    """
    for t in types:
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            raise TypeError(f"@exception_handler takes exception types, not {t!r}")

    def mark(fn: _F) -> _F:
        if not callable(fn) or isinstance(fn, (staticmethod, classmethod)):
            raise TypeError(f"@exception_handler must decorate a function, not {fn!r}")
        setattr(fn, EXCEPTION_ATTR, tuple(types))
        return fn

    return mark


def acp_agent(name: str, version: str, title: str | None = None) -> Callable[[_C], _C]:
    """Mark a class as an ACP agent; ``name``/``version``/``title`` become its ``agentInfo``."""
    if not isinstance(name, str) or not name or not isinstance(version, str) or not version:
        raise TypeError("@acp_agent needs a non-empty name= and version=")

    def mark(cls: _C) -> _C:
        if not isinstance(cls, type):
            raise TypeError(f"@acp_agent decorates a class, not {cls!r}")
        setattr(cls, AGENT_ATTR, AgentInfo(name, version, title))
        return cls

    return mark
