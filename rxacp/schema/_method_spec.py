"""The description of one ACP method (:class:`MethodSpec`) and the table's two constructors.

Re-exported by :mod:`rxacp.schema.methods` (the public home of these names); the table itself is
``_method_table.py``. Rows name their models (strings), resolved the first time a ``*_type``
attribute is read: from :mod:`rxacp.schema._generated` (whose models outside an agent's start-up
load on first use), or :mod:`rxacp.schema.unstable` for unstable methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, Literal

from rxacp.schema._base import AcpModel

__all__ = ["MethodKind", "MethodSide", "MethodSpec", "in_version", "note", "req"]

MethodSide = Literal["agent", "client", "both"]
"""The side that HANDLES a method; ``"both"`` for ``$/cancel_request`` and ``mcp/message``."""
MethodKind = Literal["request", "notification"]

_ModelRef = type[AcpModel] | str | None
"""A model class, or the name of a model (resolved on first use)."""


def _resolve(ref: _ModelRef, unstable: bool) -> Any:
    if ref is None or not isinstance(ref, str):
        return ref
    if unstable:
        from rxacp.schema import unstable as overlay  # unstable models load only when used

        return getattr(overlay, ref)
    from rxacp.schema import _generated  # its models outside a start-up load on first use

    return getattr(_generated, ref)


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """Everything the SDK needs to know about one ACP method.

    Attributes:
        name: the JSON-RPC method name.
        side: the side that handles it (``"agent"``, ``"client"`` or ``"both"``).
        kind: ``"request"`` (expects a result) or ``"notification"``.
        params_type: model of ``params``.
        result_type: model of ``result``; ``None`` for notifications and for a result that may
            be any JSON value (``mcp/message``, whose ``MessageMcpResponse`` is ``Any``).
        capability: dotted wire path into the handling side's capabilities that must be
            present and truthy (``"loadSession"``, ``"sessionCapabilities.list"``,
            ``"fs.readTextFile"``, ``"terminal"``...); ``None`` if the method is ungated.
        python_name: snake_case handler/call name (``"new_session"``, ``"prompt"``...).
        unstable: the method exists only in the unstable schema.
        notification_type: for a method that may also be sent as a notification
            (``mcp/message``), the params model of that form.

    The models of unstable methods live in :mod:`rxacp.schema.unstable`, which is imported the
    first time one of their ``*_type`` attributes is read (not when the table is built).
    """

    name: str
    side: MethodSide
    kind: MethodKind
    _params: _ModelRef
    _result: _ModelRef
    capability: str | None
    python_name: str
    unstable: bool
    _notification: _ModelRef = None
    _models: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    """The resolved models, by field: a model named by a string is looked up once (these
    properties are read on every call and every answer)."""

    def _model(self, name: str) -> Any:
        try:
            return self._models[name]
        except KeyError:
            model = self._models[name] = _resolve(getattr(self, name), self.unstable)
            return model

    @property
    def params_type(self) -> type[AcpModel]:
        """Model of ``params``."""
        model: type[AcpModel] = self._model("_params")
        return model

    @property
    def result_type(self) -> type[AcpModel] | None:
        """Model of ``result`` (``None``: a notification, or any JSON value)."""
        model: type[AcpModel] | None = self._model("_result")
        return model

    @property
    def notification_type(self) -> type[AcpModel] | None:
        """Params model of the notification form of a method that also has one."""
        model: type[AcpModel] | None = self._model("_notification")
        return model


def req(
    name: str,
    side: MethodSide,
    params: _ModelRef,
    result: _ModelRef,
    python_name: str,
    capability: str | None = None,
    *,
    unstable: bool = False,
    notification_type: _ModelRef = None,
) -> MethodSpec:
    """The :class:`MethodSpec` of a request (it expects a result)."""
    return MethodSpec(
        name, side, "request", params, result, capability, python_name, unstable, notification_type
    )


def note(
    name: str,
    side: MethodSide,
    params: _ModelRef,
    python_name: str,
    capability: str | None = None,
    *,
    unstable: bool = False,
) -> MethodSpec:
    """The :class:`MethodSpec` of a notification (no result)."""
    return MethodSpec(name, side, "notification", params, None, capability, python_name, unstable)


def in_version(spec: MethodSpec, models: ModuleType, **changes: Any) -> MethodSpec:
    """A row of one protocol version's table in another's: the same method with the models
    of the same names from ``models`` (that version's generated module), and ``changes``
    (``capability=``, ``_params=`` a renamed model...) applied. The one way a later version's
    table is derived from v1's, so what did not change is written once."""

    def model(ref: _ModelRef) -> _ModelRef:
        if ref is None:
            return None
        found: type[AcpModel] = getattr(models, ref if isinstance(ref, str) else ref.__name__)
        return found

    models_of = {"_params": spec._params, "_result": spec._result}
    fields: dict[str, Any] = {
        name: model(ref) for name, ref in models_of.items() if name not in changes
    }
    return replace(spec, **fields, **changes)
