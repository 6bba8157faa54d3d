"""The shapes Anthropic's SDK defines, checked with its own types: a
`Message` whose `tool_use` blocks carry text-editor commands, as the SDK
dumps it, applied; the `tool_result` blocks sent back; and the tool
definition `tool(..., provider="anthropic")` prints. Skipped, saying so,
where the `anthropic` package is not installed."""

import pytest

import grammar_patch as gp

anthropic = pytest.importorskip("anthropic", reason="the anthropic package is not installed")
pydantic = pytest.importorskip("pydantic")
from anthropic.types import Message, ToolParam, ToolResultBlockParam  # noqa: E402

RESULT = pydantic.TypeAdapter(ToolResultBlockParam)


def message(*inputs):
    content = [{"type": "text", "text": "Editing."}] + [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "str_replace_based_edit_tool", "input": x}
        for i, x in enumerate(inputs)]
    return Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}})


def test_an_sdk_message_applies_and_is_answered_in_the_sdk_s_shape(tmp_path):
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    reply = message(
        {"command": "str_replace", "path": "f.py", "old_str": "return 1", "new_str": "return 2"},
        {"command": "insert", "path": "f.py", "insert_line": 0, "insert_text": "import os"},
        {"command": "create", "path": "pkg/n.py", "file_text": "x = 1\n"})
    # The message as the SDK dumps it, and its content blocks alone.
    for shape in (reply.model_dump(mode="json"), [b.model_dump(mode="json") for b in reply.content]):
        (tmp_path / "f.py").write_text("def f():\n    return 1\n")
        (tmp_path / "pkg" / "n.py").unlink(missing_ok=True)
        blocks = gp.apply_anthropic(shape, tmp_path)
        assert [b["tool_use_id"] for b in blocks] == ["toolu_0", "toolu_1", "toolu_2"]
        for b in blocks:
            RESULT.validate_python(b, strict=True)
            assert b["is_error"] is False, b
        assert (tmp_path / "f.py").read_text() == "import os\ndef f():\n    return 2\n"
        assert (tmp_path / "pkg" / "n.py").read_text() == "x = 1\n"


def test_a_failing_command_is_answered_for_every_tool_use(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 1\n")
    reply = message(
        {"command": "create", "path": "n.py", "file_text": "x\n"},
        {"command": "str_replace", "path": "f.py", "old_str": "= 1", "new_str": "= 2"})
    blocks = gp.apply_anthropic(reply.model_dump(mode="json"), tmp_path)
    for b in blocks:
        RESULT.validate_python(b, strict=True)
    assert [b["is_error"] for b in blocks] == [True, True]
    assert "ambiguous_context" in blocks[1]["content"] and "lines 1, 2" in blocks[1]["content"]
    assert "`toolu_1` failed" in blocks[0]["content"]
    assert not (tmp_path / "n.py").exists()


def test_the_anthropic_tool_definitions_are_the_sdk_s_tool_params():
    for fmt in ["udiff", "codex", "repopatch", "ap", "searchreplace"]:
        definition = gp.tool(fmt, provider="anthropic")
        pydantic.TypeAdapter(ToolParam).validate_python(definition, strict=True)
