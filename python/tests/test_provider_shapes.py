"""The shapes OpenAI's SDK defines, checked with its own types: the tool
definitions, the `apply_patch_call` items the model sends, and the
`apply_patch_call_output` items sent back. Skipped, saying so, where the
`openai` package is not installed."""

import json

import pytest

import grammar_patch as gp

openai = pytest.importorskip("openai", reason="the openai package is not installed")
pydantic = pytest.importorskip("pydantic")
from openai.types.responses import ResponseApplyPatchToolCall  # noqa: E402
from openai.types.responses.response_input_param import ApplyPatchCallOutput  # noqa: E402
from openai.types.responses.custom_tool_param import CustomToolParam  # noqa: E402

OUTPUT = pydantic.TypeAdapter(ApplyPatchCallOutput)


def item(call_id, operation):
    return ResponseApplyPatchToolCall.model_validate(
        {"type": "apply_patch_call", "id": "apc_" + call_id, "call_id": call_id,
         "status": "completed", "operation": operation})


def test_a_reply_s_operations_apply_together_and_answer_in_the_sdk_s_shape(tmp_path):
    (tmp_path / "f.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "old.txt").write_text("x\n")
    calls = [
        item("c1", {"type": "update_file", "path": "f.txt", "diff": "@@\n one\n-two\n+TWO\n"}),
        item("c2", {"type": "create_file", "path": "new/n.txt", "diff": "+hello\n"}),
        item("c3", {"type": "delete_file", "path": "old.txt"}),
    ]
    outputs = gp.apply_openai([c.model_dump(mode="json") for c in calls], tmp_path)
    assert [o["call_id"] for o in outputs] == ["c1", "c2", "c3"]
    assert all(o["status"] == "completed" for o in outputs), outputs
    for o in outputs:
        OUTPUT.validate_python(o, strict=True)
    assert (tmp_path / "f.txt").read_text() == "one\nTWO\nthree\n"
    assert (tmp_path / "new/n.txt").read_text() == "hello\n"
    assert not (tmp_path / "old.txt").exists()


def test_one_failing_operation_fails_the_reply_and_writes_nothing(tmp_path):
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    calls = [
        item("c1", {"type": "create_file", "path": "n.txt", "diff": "+hello\n"}),
        item("c2", {"type": "update_file", "path": "f.txt", "diff": "@@\n-zwei\n+2\n"}),
    ]
    outputs = gp.apply_openai(json.dumps([c.model_dump(mode="json") for c in calls]), tmp_path)
    for o in outputs:
        OUTPUT.validate_python(o, strict=True)
    assert [o["status"] for o in outputs] == ["failed", "failed"]
    assert "context_not_found" in outputs[1]["output"] and "hint:" in outputs[1]["output"]
    assert "`c2` failed" in outputs[0]["output"]
    assert not (tmp_path / "n.txt").exists()
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"


def test_the_custom_tool_definitions_are_the_sdk_s_shape():
    adapter = pydantic.TypeAdapter(CustomToolParam)
    for fmt in ["udiff", "codex", "repopatch", "ap", "searchreplace"]:
        adapter.validate_python(gp.tool(fmt, "openai"), strict=True)
