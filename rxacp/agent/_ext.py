"""Extension method names: ACP reserves names starting with ``_`` for extensions.

Not responsible for routing; only validates names.
"""

from __future__ import annotations

__all__ = ["check_ext_method"]


def check_ext_method(method: str) -> None:
    """Raise unless ``method`` is a valid extension method name (a str starting with ``_``)."""
    if not isinstance(method, str):
        raise TypeError(f"an extension method name must be a str, not {type(method).__name__}")
    if not method.startswith("_"):
        raise ValueError(f"extension methods must start with '_' (got {method!r})")
