"""WorkspaceFileSystem's answer for a missing file is the one agents recognise as "missing"."""

from __future__ import annotations

from pathlib import Path

import pytest

from rxacp.client import WorkspaceFileSystem
from rxacp.errors import AcpErrorCodes, AcpProtocolException
from rxacp.schema import ReadTextFileRequest


def test_a_missing_file_is_resource_not_found_with_the_standard_message_and_its_path(
    tmp_path: Path,
) -> None:
    # gemini-cli's write_file reads the target first and treats an error whose message lacks
    # "Resource not found" (or "ENOENT"...) as a failure: a new file could never be written.
    fs = WorkspaceFileSystem([tmp_path])
    missing = str(tmp_path / "new.txt")
    with pytest.raises(AcpProtocolException) as caught:
        fs.read_text_file(ReadTextFileRequest(session_id="s", path=missing))
    assert caught.value.code == AcpErrorCodes.RESOURCE_NOT_FOUND
    assert caught.value.message.startswith("Resource not found")
    assert caught.value.data == {"path": missing}
