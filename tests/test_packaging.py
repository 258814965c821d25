"""The package is ready to publish: license, sdist contents, classifiers, CI interpreters."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, object]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


def test_the_license_file_is_the_apache_2_license_the_metadata_declares() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    project = _project()
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]


def test_the_sdist_manifest_carries_tests_docs_examples_changelog_and_license() -> None:
    lines = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    for line in ("include LICENSE CHANGELOG.md README.md", "graft docs", "graft examples"):
        assert line in lines
    assert "graft tests" in lines and "prune tests/interop/ts/node_modules" in lines


def test_classifiers_name_every_python_ci_runs_the_suite_on() -> None:
    classifiers = _project()["classifiers"]
    assert isinstance(classifiers, list)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
        assert version in ci


def test_no_unused_code_generator_in_the_dev_dependencies() -> None:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    assert not any("datamodel-code-generator" in dep for dep in extras["dev"])


def test_project_urls_point_at_the_repository_its_docs_and_the_changelog() -> None:
    urls = _project()["urls"]
    assert isinstance(urls, dict)
    assert set(urls) >= {"Homepage", "Repository", "Documentation", "Changelog"}
    repo = urls["Repository"]
    assert urls["Homepage"] == repo and repo.startswith("https://")
    # the pages they name exist in this repository
    for key, path in (("Documentation", "docs/index.md"), ("Changelog", "CHANGELOG.md")):
        assert urls[key] == f"{repo}/blob/main/{path}"
        assert (ROOT / path).is_file()
