"""The Python package against the same behaviour as the command line."""

import json
import pathlib
import threading

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
    assert result["files"] == [{"path": "f.txt", "action": "modified", "from": None}]
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
