"""The Python package against the same behaviour as the command line."""

import json
import pathlib
import re
import threading
import typing

import pytest

import grammar_patch as gp

PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
SCHEMA = pathlib.Path(__file__).parents[2] / "schema" / "result.schema.json"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\n")
    return tmp_path


def keys_fit_the_schema(result):
    schema = json.loads(SCHEMA.read_text())
    assert set(schema["required"]) <= set(result) <= set(schema["properties"])


def test_apply_writes_and_reports(root):
    result = gp.apply(PATCH, root)
    assert result["ok"] is True
    assert result["format"] == "udiff"
    assert result["files"] == [
        {"path": "f.txt", "action": "modified", "from": None, "added": 1, "removed": 1}
    ]
    assert (root / "f.txt").read_text() == "a\nB\n"
    keys_fit_the_schema(result)


def test_a_refused_patch_is_a_result_not_an_exception(root):
    result = gp.apply(PATCH.replace("-b", "-x"), root)
    assert result["ok"] is False
    assert result["error"]["code"] == "context_not_found"
    assert "re-read" in result["error"]["hint"]
    assert result["files"] == []
    assert (root / "f.txt").read_text() == "a\nb\n"
    keys_fit_the_schema(result)


def test_dry_run_lint_and_diff_write_nothing(root):
    dry = gp.apply(PATCH, root, dry_run=True, diff=True)
    assert dry["ok"] and dry["dry_run"]
    assert dry["files"][0]["diff"].startswith("diff --git a/f.txt b/f.txt\n")
    linted = gp.lint(PATCH, root, diff=True)
    assert linted["files"] == dry["files"]
    assert gp.lint(PATCH)["ok"] is True
    assert (root / "f.txt").read_text() == "a\nb\n"


def test_usage_errors_raise(root):
    with pytest.raises(gp.UsageError):
        gp.apply(PATCH, root, format="nope")
    with pytest.raises(gp.UsageError):
        gp.apply(PATCH, root / "missing")
    with pytest.raises(gp.UsageError):
        gp.lint(PATCH, diff=True)
    with pytest.raises(gp.UsageError):
        gp.grammar("udiff", id="0badf00d")
    with pytest.raises(gp.UsageError):
        gp.tool("codex", "nobody")
    assert issubclass(gp.UsageError, ValueError)


def test_grammar_tool_prompt_detect():
    assert gp.grammar("ap", id="0badf00d").count("0badf00d") > 0
    chat = gp.tool("codex", "openai-chat", name="edit_files")
    assert chat["type"] == "custom" and chat["custom"]["name"] == "edit_files"
    assert chat["custom"]["format"]["grammar"]["definition"] == gp.grammar("codex")
    assert gp.tool("repopatch", "anthropic")["input_schema"]["required"] == ["patch"]
    assert "*** Begin Patch" in gp.prompt("codex")
    assert gp.detect(PATCH) == "udiff"
    assert gp.detect("hello") is None


def test_applies_run_in_parallel_threads(tmp_path):
    # The GIL is released while applying: threads on separate roots all
    # finish, each with its own result.
    roots = []
    for i in range(8):
        r = tmp_path / f"r{i}"
        r.mkdir()
        (r / "f.txt").write_text("a\nb\n")
        roots.append(r)
    results = [None] * len(roots)

    def work(i):
        results[i] = gp.apply(PATCH, roots[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(roots))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r["ok"] for r in results)
    assert all((r / "f.txt").read_text() == "a\nB\n" for r in roots)


def test_hints_name_keyword_arguments_not_command_line_options(root):
    # A unified diff called codex: the hint names the keyword argument.
    result = gp.lint(PATCH, root, format="codex")
    assert result["ok"] is False
    hint = result["error"]["hint"]
    assert 'format="udiff"' in hint, hint
    assert "--" not in hint, hint
    # ap without its header: strict mode says how to be tolerant.
    ap = "9f3c2a1e FILE\nf.txt\n9f3c2a1e REPLACE\n9f3c2a1e snippet\nb\n9f3c2a1e content\nB\n"
    strict = gp.apply(ap, root, format="ap")
    assert strict["ok"] is False
    assert "tolerant=True" in strict["error"]["hint"], strict["error"]
    assert (root / "f.txt").read_text() == "a\nb\n"
    assert gp.apply(ap, root, format="ap", tolerant=True)["ok"] is True
    assert (root / "f.txt").read_text() == "a\nB\n"


def test_the_typed_dicts_are_the_schema():
    # Each TypedDict's required and optional keys are the schema's, so a
    # result read as typed never raises KeyError and never misses a key.
    schema = json.loads(SCHEMA.read_text())
    defs = schema["$defs"]
    pairs = [(gp.Result, schema), (gp.FileResult, defs["file"]),
             (gp.Diagnostic, defs["diagnostic"]), (gp.Error, defs["error"])]
    for typed, part in pairs:
        assert typed.__required_keys__ == set(part["required"]), typed
        assert typed.__optional_keys__ == set(part["properties"]) - set(part["required"]), typed
    assert set(typing.get_args(gp.Code)) == set(defs["code"]["enum"])
    assert set(typing.get_args(gp.Action)) == set(defs["file"]["properties"]["action"]["enum"])
    assert set(typing.get_args(gp.ReadAs)) | {None} == set(schema["properties"]["format"]["enum"])
    assert set(typing.get_args(gp.ReadAs)) == set(typing.get_args(gp.FormatName)) | {"anthropic"}


def test_a_real_result_has_every_required_key(root):
    result = gp.apply(PATCH, root, diff=True)
    assert set(result) == gp.Result.__required_keys__
    assert set(result["files"][0]) == gp.FileResult.__required_keys__ | {"diff"}
    refused = gp.lint(PATCH.replace("-b", "-x"), root)
    assert set(refused["error"]) >= gp.Error.__required_keys__


def test_version_is_the_package_version():
    pyproject = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert gp.__version__ == re.search(r'^version = "(.*)"', pyproject, re.M).group(1)


@pytest.mark.parametrize("call", [
    lambda: gp.apply(b"--- a/f\n", "."),
    lambda: gp.apply(None, "."),
    lambda: gp.apply(PATCH, 3),
    lambda: gp.lint(PATCH, format=1),
    lambda: gp.apply_to({"f.txt": 1}, PATCH),
    lambda: gp.apply_to([("f.txt", "a")], PATCH),
    lambda: gp.apply_to({"../f.txt": "a"}, PATCH),
    lambda: gp.apply_batch([({"f.txt": "a"},)]),
    lambda: gp.apply_batch([], threads=-1),
    lambda: gp.parse(PATCH, format="nope"),
    lambda: gp.detect(3),
    lambda: gp.grammar(None),
    lambda: gp.tool("codex", "openai", name=7),
])
def test_every_wrong_call_raises_usage_error(call):
    with pytest.raises(gp.UsageError):
        call()


def test_apply_to_changes_files_in_memory_only(tmp_path):
    files = {"f.txt": "a\nb\n", "bin/data": b"\xff\x00\n"}
    result = gp.apply_to(files, PATCH)
    assert result["ok"] is True, result
    assert result["tree"] == {"f.txt": "a\nB\n", "bin/data": b"\xff\x00\n"}
    assert files["f.txt"] == "a\nb\n"
    refused = gp.apply_to(files, PATCH.replace("-b", "-x"))
    assert refused["ok"] is False
    assert refused["error"]["code"] == "context_not_found"
    assert refused["tree"] == files
    created = gp.apply_to({}, "--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n+n\n")
    assert created["tree"] == {"new/n.txt": "n\n"}
    assert created["files"][0]["action"] == "added"


def test_apply_batch_keeps_order_and_isolates_jobs():
    good = ({"f.txt": "a\nb\n"}, PATCH)
    bad = ({"f.txt": "a\nc\n"}, PATCH)
    jobs = [good, bad] * 20
    results = gp.apply_batch(jobs, threads=4)
    assert [r["ok"] for r in results] == [True, False] * 20
    assert all(r["tree"]["f.txt"] == "a\nB\n" for r in results[::2])
    assert all(r["tree"]["f.txt"] == "a\nc\n" for r in results[1::2])
    assert gp.apply_batch([]) == []


def test_parse_reads_files_hunks_and_counts():
    patch = PATCH + "--- a/g.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"
    parsed = gp.parse(patch)
    assert parsed["ok"] is True and parsed["format"] == "udiff"
    f, g = parsed["files"]
    assert set(f) == gp.ParsedFile.__required_keys__
    assert set(f["hunks"][0]) == gp.ParsedHunk.__required_keys__
    assert set(parsed) == gp.Parsed.__required_keys__
    assert (f["path"], f["operation"], f["added"], f["removed"]) == ("f.txt", "modify", 1, 1)
    assert f["hunks"] == [{"patch_line": 3, "removed": 1, "added": 1, "context": 1}]
    assert (g["operation"], g["removed"]) == ("delete", 2)
    codex = "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n"
    assert gp.parse(codex)["files"][0]["removed"] is None
    refused = gp.parse("hello")
    assert refused["ok"] is False and refused["error"]["code"] == "unknown_format"


def test_convert_prints_in_another_format_and_writes_nothing(root):
    converted = gp.convert(PATCH, root, "searchreplace")
    assert converted["ok"] is True and converted["dry_run"] is True
    assert converted["patch"] == "f.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n"
    assert (root / "f.txt").read_text() == "a\nb\n"
    assert gp.apply(converted["patch"], root)["ok"] is True
    assert (root / "f.txt").read_text() == "a\nB\n"
    gone = "--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-B\n"
    refused = gp.convert(gone, root, "searchreplace")
    assert refused["patch"] is None and refused["error"]["code"] == "unsupported_git_patch_feature"
    with pytest.raises(gp.UsageError):
        gp.convert(PATCH, root, "nope")


def test_apply_openai_refuses_what_is_not_an_item(root):
    with pytest.raises(gp.UsageError):
        gp.apply_openai(PATCH, root)
    with pytest.raises(gp.UsageError):
        gp.apply_openai({"type": "update_file", "path": "f.txt"}, root)
    assert (root / "f.txt").read_text() == "a\nb\n"


def test_apply_anthropic_answers_each_tool_use(root):
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "Fixing it."},
        {"type": "tool_use", "id": "toolu_1", "name": "str_replace_based_edit_tool",
         "input": {"command": "str_replace", "path": "f.txt", "old_str": "b", "new_str": "B"}},
        {"type": "tool_use", "id": "toolu_2", "name": "str_replace_based_edit_tool",
         "input": {"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "top"}},
    ]}
    blocks = gp.apply_anthropic(message, root)
    assert [b["tool_use_id"] for b in blocks] == ["toolu_1", "toolu_2"]
    assert all(b["type"] == "tool_result" and b["is_error"] is False for b in blocks)
    assert (root / "f.txt").read_text() == "top\na\nB\n"
    # `b` occurs nowhere now: refused, with the reason, and nothing written.
    again = gp.apply_anthropic(json.dumps(message), root)
    assert again[0]["is_error"] is True
    assert again[0]["content"].startswith("error[context_not_found]")
    assert again[1]["content"].startswith("not applied: `toolu_1` failed")
    assert (root / "f.txt").read_text() == "top\na\nB\n"


def test_apply_anthropic_refuses_what_it_does_not_do(root):
    with pytest.raises(gp.UsageError, match="this tool applies edits"):
        gp.apply_anthropic({"command": "view", "path": "f.txt"}, root)
    with pytest.raises(gp.UsageError):
        gp.apply_anthropic(PATCH, root)
    assert (root / "f.txt").read_text() == "a\nb\n"


def test_convert_without_a_root_prints_the_patch_s_own_edits(root):
    converted = gp.convert(PATCH, None, "codex")
    assert converted["ok"] and converted["patch"] == (
        "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+B\n*** End Patch\n")
    refused = gp.convert(PATCH, None, "ap")
    assert refused["patch"] is None
    assert "without the files" in refused["error"]["message"]
