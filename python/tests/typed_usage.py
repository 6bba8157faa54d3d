"""Code that reads every key of every result type, type-checked with
`mypy --strict` in CI (.ci/run): the stubs must describe what the
functions return, with required keys required."""

from __future__ import annotations

from typing import List, Optional, Union

import grammar_patch as gp


def describe(result: gp.Result) -> List[str]:
    lines = [f"ok={result['ok']} format={result['format']} dry_run={result['dry_run']}"]
    for f in result["files"]:
        moved: Optional[str] = f["from"]
        added: int = f["added"]
        removed: int = f["removed"]
        lines.append(f"{f['action']} {f['path']} {moved} +{added} -{removed}")
        if "diff" in f:
            lines.append(f["diff"])
    for d in result["diagnostics"]:
        line: Optional[int] = d["patch_line"]
        lines.append(f"{d['severity']} {d['code']} {d['message']} {line}")
        lines.extend([d.get("path", ""), d.get("hint", "")] + d.get("notes", []))
    if "error" in result:
        e = result["error"]
        hint: Optional[str] = e["hint"]
        where: Optional[str] = e["path"]
        lines.append(f"{e['code']} {e['message']} {e['patch_line']} {hint} {where}")
        lines.extend(e.get("notes", []))
    lines.extend(result["ignored_metadata"])
    return lines


def memory(files: dict[str, Union[str, bytes]], patch: str) -> Union[str, bytes, None]:
    result = gp.apply_to(files, patch)
    describe(result)
    batch = gp.apply_batch([(files, patch)], threads=2)
    return result["tree"].get("f.txt") if batch[0]["ok"] else None


def parsed(patch: str) -> int:
    p = gp.parse(patch, format="udiff")
    total = 0
    for f in p["files"]:
        to: Optional[str] = f["to"]
        removed: Optional[int] = f["removed"]
        total += f["added"] + (removed or 0) + len(f["path"]) + len(to or "")
        total += sum(h["patch_line"] + h["added"] + h["removed"] + h["context"] for h in f["hunks"])
    return total + len(p["diagnostics"]) + int(p["ok"])


def converted(root: str) -> str:
    c = gp.convert("", root, "udiff")
    describe(c)
    return c["patch"] or ""


def everything(root: str) -> None:
    describe(gp.apply("", root, dry_run=True))
    describe(gp.lint("", None, format="udiff", tolerant=True))
    definition: gp.ToolDefinition = gp.tool("codex", "openai")
    text: str = gp.grammar("codex") + gp.prompt("codex") + str(definition) + gp.__version__
    found: Optional[str] = gp.detect(text)
    print(found, parsed(text), memory({"f.txt": "a"}, text))


def replies(root: str) -> List[str]:
    out = []
    for item in gp.apply_openai({"type": "delete_file", "path": "x"}, root):
        out.append(f"{item['type']} {item['call_id']} {item['status']} {item['output']}")
    for block in gp.apply_anthropic({"command": "create", "path": "n.txt", "file_text": ""}, root):
        out.append(f"{block['type']} {block['tool_use_id']} {block['is_error']} {block['content']}")
    return out
