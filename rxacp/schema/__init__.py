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

This package does no I/O and knows nothing of JSON-RPC ids, transports or Rx.
"""

# The export list lives once, in each module's ``__all__``: a model added by the generator, a
# helper or a method constant is re-exported here without a third copy of its name.
from rxacp.schema import _generated, helpers, methods
from rxacp.schema._base import UNKNOWN_TAG, AcpModel
from rxacp.schema._generated import *  # noqa: F403 - exactly _generated.__all__
from rxacp.schema.helpers import *  # noqa: F403 - exactly helpers.__all__
from rxacp.schema.methods import *  # noqa: F403 - exactly methods.__all__

__all__ = ["UNKNOWN_TAG", "AcpModel"]
__all__ += _generated.__all__
__all__ += helpers.__all__
__all__ += methods.__all__
