"""Unstable ACP schema models (unstable: may change without notice).

Generated from `schema.unstable.json` as an overlay of :mod:`rxacp.schema`: every definition
whose structure is the same as the stable one is the stable class itself
(``unstable.PromptRequest is schema.PromptRequest``); only changed and new definitions are
defined here. Importing this module is what loads them; ``rxacp.schema`` and the method table
do not (an unstable method's models are imported when first used). Not responsible for method
routing (see `rxacp.schema.methods`).
"""

from rxacp.schema.unstable._generated import *  # noqa: F403
from rxacp.schema.unstable._generated import __all__ as __all__
