"""Package surface: complete sorted exports, every $def present, fast import, unstable marking."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

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


def test_importing_the_schema_package_and_method_table_leaves_unstable_models_unloaded() -> None:
    # Import cost is measured in benchmarks/ (cold-start row); here: the unstable models load
    # only when an unstable method's types are first used.
    code = (
        "import sys, rxacp.schema, rxacp.agent, rxacp.client\n"
        "from rxacp.schema import METHODS\n"
        "assert all(METHODS[n].params_type for n in METHODS if not METHODS[n].unstable)\n"
        "print('rxacp.schema.unstable' in sys.modules)\n"
        "METHODS['session/fork'].params_type\n"
        "print('rxacp.schema.unstable' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.split() == ["False", "True"]


def test_unstable_module_imports_every_structurally_unchanged_stable_definition() -> None:
    common = set(stable.__all__) & set(unstable.__all__)
    same = {n for n in common if getattr(unstable, n) is getattr(stable, n)}
    assert {"PromptRequest", "ContentBlock", "ToolCall", "SessionId"} <= same
    assert len(same) >= 150  # 2.4.0: 160 of the 178 shared definitions
    # Changed in the unstable schema (new fields), hence defined there:
    assert {"SessionCapabilities", "NewSessionRequest"} <= common - same
    # An unchanged class keeps the stable schema's docstring.
    assert unstable.PromptRequest.__doc__ == stable.PromptRequest.__doc__


def test_importing_the_schema_package_loads_no_model_until_a_name_is_used() -> None:
    code = (
        "import sys, rxacp.schema\n"
        "print('pydantic' in sys.modules, 'rxacp.schema._generated' in sys.modules)\n"
        "from rxacp.schema import InitializeRequest\n"
        "print('rxacp.schema._generated' in sys.modules, 'rxacp.schema.methods' in sys.modules)\n"
        "from rxacp.schema import METHODS\n"
        "print('rxacp.schema.methods' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.split() == ["False", "False", "True", "False", "True"]


def test_every_package_name_is_the_object_its_defining_module_exports() -> None:
    homes = {name: stable for name in stable.__all__}
    homes |= {name: helpers for name in helpers.__all__}
    homes |= {name: methods for name in methods.__all__}
    homes |= {"AcpModel": schema._base, "UNKNOWN_TAG": schema._base}
    wrong = [n for n, home in homes.items() if getattr(schema, n) is not getattr(home, n)]
    assert wrong == []
    assert set(schema.__all__) <= set(dir(schema))
    assert {"_generated", "helpers", "methods"} <= set(dir(schema))


def test_star_import_of_the_schema_package_binds_every_exported_name() -> None:
    namespace: dict[str, object] = {}
    exec("from rxacp.schema import *", namespace)
    assert set(schema.__all__) <= set(namespace)
    assert namespace["PromptResponse"] is stable.PromptResponse


def test_an_unknown_package_name_raises_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="NoSuchModel"):
        getattr(schema, "NoSuchModel")  # noqa: B009 - a dynamic lookup, as user code does


def test_stable_models_outside_an_agent_start_up_load_from_the_rest_module_on_first_use() -> None:
    code = (
        "import sys\n"
        "import rxacp.schema._generated as stable\n"
        "print('rxacp.schema._generated_rest' in sys.modules)\n"
        "assert set(stable.__all__) <= set(dir(stable))\n"
        "model = stable.ListSessionsRequest\n"
        "print('rxacp.schema._generated_rest' in sys.modules, model.__module__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.split() == ["False", "True", "rxacp.schema._generated_rest"]
    rest = importlib.import_module("rxacp.schema._generated_rest")
    assert all(getattr(stable, name) is getattr(rest, name) for name in rest.__all__)
    assert set(rest.__all__) < set(stable.__all__)
    with pytest.raises(AttributeError, match="NoSuchModel"):
        getattr(stable, "NoSuchModel")  # noqa: B009 - a dynamic lookup, as user code does


def test_a_rest_model_pickles_and_validates_its_start_up_parts_by_reference() -> None:
    request = stable.LoadSessionRequest.from_wire(
        {
            "sessionId": "s",
            "cwd": "/",
            "mcpServers": [{"name": "m", "command": "x", "args": [], "env": []}],
        }
    )
    assert pickle.loads(pickle.dumps(request)) == request
    assert type(request.mcp_servers[0]) is getattr(schema, type(request.mcp_servers[0]).__name__)


def test_threads_asking_for_rest_models_at_once_all_get_the_same_classes() -> None:
    # Blocking handlers run on worker threads: the first use of a rest model may be concurrent.
    code = (
        "import threading, rxacp.schema as schema\n"
        "import rxacp.schema._generated as stable\n"
        "names = ['ListSessionsRequest', 'LoadSessionRequest', 'AuthenticateRequest',\n"
        "         'SetSessionModeRequest'] * 4\n"
        "barrier, got = threading.Barrier(len(names)), []\n"
        "def ask(name):\n"
        "    barrier.wait()\n"
        "    got.append((name, getattr(schema, name), getattr(stable, name)))\n"
        "threads = [threading.Thread(target=ask, args=(n,)) for n in names]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "import rxacp.schema._generated_rest as rest\n"
        "print(len(got), all(a is b is getattr(rest, n) for n, a, b in got))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.split() == ["16", "True"]
