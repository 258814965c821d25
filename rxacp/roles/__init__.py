"""The role kit: what the client and the agent share above the JSON-RPC engine.

``rxacp.session`` is the role-free engine; ``rxacp.client`` and ``rxacp.agent`` are the two
roles, which must not import each other. What both need sits here, between them:

* :mod:`.handlers`: typed handlers from the method table (params, results, ``-32601`` hints,
  the capabilities registered handlers imply, which method names a registration may use);
* :mod:`.builders`: what both roles' builders share (options, raw registrations, typed
  handler setters from the method table);
* :mod:`.table_calls`: the call descriptors behind both roles' call surfaces;
* :mod:`.signal`: the one-shot signal and the reasons a prompt turn ends early;
* :mod:`.twins`: blocking twins of the async surfaces.

Import rule (``tests/test_layers.py``): this layer may import ``session`` and below; ``session``
never imports it. None of it is public API: each public name is exported from its role.
"""

__all__: list[str] = []
