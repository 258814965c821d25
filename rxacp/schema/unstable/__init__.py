"""Unstable ACP schema models (unstable: may change without notice).

A full parallel module generated from `schema.unstable.json`, including the types shared with
the stable schema. Not responsible for method routing (see `rxacp.schema.methods`).
"""

from rxacp.schema.unstable._generated import *  # noqa: F403
from rxacp.schema.unstable._generated import __all__ as __all__
