"""Package surface: complete sorted exports, every $def present, fast import, unstable marking."""

from __future__ import annotations

import subprocess
import sys

import rxacp.schema as schema
import rxacp.schema._generated as stable
import rxacp.schema.unstable as unstable
import rxacp.schema.unstable._generated as unstable_gen
from rxacp.schema import helpers, methods

from ._strategies import load_schema


def test_every_schema_def_has_a_model_or_type_alias_in_both_modules() -> None:
    for module, spec in ((stable, "schema.json"), (unstable_gen, "schema.unstable.json")):
        defs = load_schema(spec)["$defs"]
        missing = [name for name in defs if not hasattr(module, name)]
        assert missing == [], f"{spec}: {missing}"
        assert set(defs) <= set(module.__all__)


def test_package_reexports_every_stable_model_helper_and_method_name() -> None:
    expected = set(stable.__all__) | set(helpers.__all__) | set(methods.__all__)
    expected |= {"AcpModel", "UNKNOWN_TAG"}
    assert set(schema.__all__) == expected
    assert all(hasattr(schema, name) for name in schema.__all__)
    assert len(schema.__all__) == len(set(schema.__all__))


def test_unstable_module_exports_all_its_defs_and_says_it_is_unstable() -> None:
    assert set(unstable.__all__) == set(unstable_gen.__all__)
    for module in (unstable, unstable_gen):
        assert module.__doc__ is not None
        assert "unstable: may change without notice" in module.__doc__
    assert hasattr(unstable, "ForkSessionRequest") and not hasattr(schema, "ForkSessionRequest")


def test_importing_the_schema_package_takes_less_than_a_second() -> None:
    code = (
        "import time; t = time.perf_counter(); import rxacp.schema; print(time.perf_counter() - t)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert float(proc.stdout.strip()) < 1.0
