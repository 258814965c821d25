"""Unstable ACP v2 schema models (unstable: may change without notice; v2 is itself a Draft).

Generated from ``spec/v2/schema.unstable.json`` as an overlay of :mod:`rxacp.schema.v2`: every
definition whose structure equals the stable v2 one is that class itself. Importing this module
is what loads them. Not responsible for method routing.
"""

from rxacp.schema.v2.unstable._generated import *  # noqa: F403
from rxacp.schema.v2.unstable._generated import __all__ as __all__
