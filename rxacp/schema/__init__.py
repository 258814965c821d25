"""rxacp.schema: pydantic models for every ACP type, method constants and the method table.

Everything of the stable protocol (version 1) is importable from here:

- every model and type alias generated from ``schema.json`` (class names follow the schema's
  ``$defs``; see ``_generated.py``), with the Java-SDK variant names (``AgentMessageChunk``,
  ``ToolCallUpdateNotification``, ``PermissionSelected`` ...) and factories
  (``InitializeResponse.ok()``, ``PromptResponse.end_turn()``, ``PromptRequest.text()`` ...);
- every string union as a ``StrEnum`` equal to its wire strings (``StopReason.END_TURN``,
  ``ToolKind.EDIT``) and the tags of every tagged union (``SessionUpdateKind``...); a plain string
  is accepted wherever they are;
- :class:`AcpModel` with ``to_wire()`` / ``from_wire()``;
- method-name constants, :data:`METHODS` and :class:`MethodSpec` (``methods.py``).

Unstable types live in :mod:`rxacp.schema.unstable` (an overlay: unchanged definitions are the
classes of this package), which is imported only when used. The schema's provenance (npm package
``@agentclientprotocol/sdk``, version, sha256 of each file) is ``spec/SOURCE.json``; refresh
with ``scripts/update_schema.py --from-npm VERSION``.

This package does no I/O and knows nothing of JSON-RPC ids, transports or Rx. ``import
rxacp.schema`` loads no model: each name is imported from its module on first use (PEP 562;
``dir()``, ``__all__``, star imports and type checkers see every name as before).
"""

# The export list lives once, in each module's ``__all__``: a model added by the generator, a
# helper or a method constant is re-exported here without a third copy of its name.
# ``_exports.py`` (written by scripts/generate_schema.py from those lists) says which module
# defines each name, so that this package imports none of them until one is used.

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from rxacp.schema._exports import MODULES

if TYPE_CHECKING:
    from rxacp.schema import _generated as _generated
    from rxacp.schema import helpers as helpers
    from rxacp.schema import methods as methods
    from rxacp.schema._base import UNKNOWN_TAG as UNKNOWN_TAG
    from rxacp.schema._base import AcpModel as AcpModel
    from rxacp.schema._generated import *  # noqa: F403 - exactly _generated.__all__
    from rxacp.schema.helpers import *  # noqa: F403 - exactly helpers.__all__
    from rxacp.schema.methods import *  # noqa: F403 - exactly methods.__all__

__all__ = [name for names in MODULES.values() for name in names]

_HOME: dict[str, str] = {name: module for module, names in MODULES.items() for name in names}
"""Each exported name -> the submodule defining it (the later one where two export it)."""


def _submodule(name: str) -> Any:
    # The import statement's machinery (not importlib.import_module): ``-X importtime`` then
    # reports the submodule on its own line, not inside the importer's self time.
    __import__(f"{__name__}.{name}")
    return sys.modules[f"{__name__}.{name}"]


def _lazy_getattr(name: str) -> Any:
    if name in MODULES:  # the submodules themselves (``rxacp.schema.methods``)
        return _submodule(name)
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _submodule(home)
    # Every name that module has defined at once: later lookups are plain module attributes
    # (``_generated`` defines some models on first use: those are copied when asked for).
    namespace, defined = globals(), vars(module)
    for exported in MODULES[home]:
        if _HOME[exported] == home and exported in defined:
            namespace[exported] = defined[exported]
    namespace[name] = value = getattr(module, name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # a type checker sees the imports above, and an unknown name as an error
    __getattr__ = _lazy_getattr
