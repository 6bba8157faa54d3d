"""grammar-patch for Python: parse, validate and apply the patch formats
language models write (unified diff, codex, RepoPatch, ap), all files or
none, with the same results as `grammar-patch apply --json`.

A refused patch is not an exception: it is a result whose ``ok`` is False,
with ``error`` saying what to fix (as the command line exits 1). Only a
wrong call raises :class:`UsageError` (as the command line exits 2).

The types below are the result's JSON schema (``schema/result.schema.json``)
in Python; ``python/tests`` checks each against the schema and against real
results, and type-checks code that reads every key with ``mypy --strict``.
"""

from __future__ import annotations

import json
import os
from typing import (Any, Callable, Dict, Iterable, List, Literal, Mapping, Optional,
                    Tuple, TypedDict, TypeVar, Union)

from . import _native

__all__ = [
    "UsageError", "Result", "FileResult", "Diagnostic", "Error", "Code",
    "MemoryResult", "Parsed", "ParsedFile", "ParsedHunk", "ToolDefinition",
    "ApplyPatchCallOutput", "apply_openai", "ToolResultBlock", "apply_anthropic",
    "Converted", "convert", "ReadAs",
    "apply", "lint", "apply_to", "apply_batch", "parse",
    "grammar", "tool", "prompt", "detect", "__version__",
]

UsageError = _native.UsageError
__version__: str = _native.__version__

Code = Literal[
    "syntax_error", "unknown_format", "missing_file_header", "invalid_hunk_header",
    "invalid_hunk_body", "unsupported_git_patch_feature", "path_escape",
    "duplicate_file_patch", "rename_path_mismatch", "file_not_found", "file_exists",
    "context_not_found", "ambiguous_context", "overlapping_hunks", "id_mismatch",
    "unsupported_file", "io_error", "target_changed", "root_busy", "usage_error",
    "recovery_conflict", "cancelled", "hunk_count_mismatch", "line_hint_drift",
    "whitespace_fuzz", "markdown_fence_stripped", "ignored_metadata",
    "crlf_patch_normalized", "blank_lines_stripped", "trailing_blank_context_dropped",
    "blank_line_prefix", "surrounding_text_stripped", "already_applied",
    "soft_start_match", "range_auto_corrected", "anchor_disambiguated", "implicit_create",
    "empty_content_as_delete", "scope_end_ignored", "nesting_guard_moved",
    "unbalanced_brackets", "tolerated_format_slip", "anchor_ignored", "recovered",
    "untrusted_journal", "interrupted_apply",
]
FormatName = Literal["udiff", "codex", "repopatch", "ap", "searchreplace"]
# What a result says it read: a format, or Anthropic's text-editor commands.
ReadAs = Literal["udiff", "codex", "repopatch", "ap", "searchreplace", "anthropic"]
Action = Literal["added", "modified", "deleted", "renamed", "dir_created", "unchanged"]

# `from` is a keyword, so this one is spelt the functional way.
_FileResult = TypedDict("_FileResult", {
    "path": str, "action": Action, "from": Optional[str], "added": int, "removed": int,
})


class FileResult(_FileResult, total=False):
    """One file: ``path``, ``action``, ``from`` (a move's source), lines
    ``added`` and ``removed``; ``diff`` with ``diff=True``."""

    diff: str


class _Diagnostic(TypedDict):
    severity: Literal["error", "warning"]
    code: Code
    message: str
    patch_line: Optional[int]


class Diagnostic(_Diagnostic, total=False):
    path: str
    hint: str
    notes: List[str]


class _Error(TypedDict):
    code: Code
    message: str
    path: Optional[str]
    patch_line: Optional[int]
    hint: Optional[str]


class Error(_Error, total=False):
    notes: List[str]


class _Result(TypedDict):
    ok: bool
    format: Optional[ReadAs]
    dry_run: bool
    files: List[FileResult]
    diagnostics: List[Diagnostic]
    ignored_metadata: List[str]


class Result(_Result, total=False):
    """The JSON result; ``error`` only when ``ok`` is False."""

    error: Error


class MemoryResult(Result):
    """A result of :func:`apply_to`, and ``tree``: every file after it (as it
    was given when the patch was refused). A file given as ``bytes`` comes
    back as ``bytes``; any other as ``str`` when it is UTF-8."""

    tree: Dict[str, Union[str, bytes]]


class Converted(Result):
    """A result of :func:`convert`, and ``patch``: the patch printed in the
    format asked for, or None when the conversion was refused."""

    patch: Optional[str]


class ParsedHunk(TypedDict):
    patch_line: int
    removed: int
    added: int
    context: int


class ParsedFile(TypedDict):
    path: str
    operation: Literal["add", "modify", "delete", "rename", "create_dir", "remove"]
    to: Optional[str]
    added: int
    removed: Optional[int]
    hunks: List[ParsedHunk]


class _Parsed(TypedDict):
    ok: bool
    format: Optional[FormatName]
    files: List[ParsedFile]
    diagnostics: List[Diagnostic]


class Parsed(_Parsed, total=False):
    """What a patch holds, read without a tree (:func:`parse`)."""

    error: Error


class ToolResultBlock(TypedDict):
    """What to send back to Anthropic for one text-editor `tool_use`."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: bool


class ApplyPatchCallOutput(TypedDict):
    """What to send back to OpenAI for one `apply_patch_call`."""

    type: Literal["apply_patch_call_output"]
    call_id: str
    status: Literal["completed", "failed"]
    output: str


ToolDefinition = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]
Files = Mapping[str, Union[str, bytes]]
_T = TypeVar("_T")


def _checked(call: Callable[[], _T]) -> _T:
    """A native call whose arguments PyO3 refused is a wrong call too."""
    try:
        return call()
    except TypeError as e:
        raise UsageError(str(e)) from None


def _need_str(value: object, what: str, optional: bool = False) -> None:
    if not (isinstance(value, str) or (optional and value is None)):
        raise UsageError(f"{what} must be a str{' or None' if optional else ''}, "
                         f"not {type(value).__name__}")


def _path(root: object) -> str:
    if not isinstance(root, (str, os.PathLike)):
        raise UsageError(f"root must be a str or a path, not {type(root).__name__}")
    path = os.fspath(root)
    if not isinstance(path, str):
        raise UsageError("root must be a str path, not bytes")
    return path


def _files(files: object) -> Tuple[List[Tuple[str, bytes]], set[str]]:
    if not isinstance(files, Mapping):
        raise UsageError(f"files must map paths to str or bytes, not {type(files).__name__}")
    pairs: List[Tuple[str, bytes]] = []
    given_bytes: set[str] = set()
    for path, content in files.items():
        _need_str(path, "a path in files")
        if isinstance(content, str):
            pairs.append((path, content.encode("utf-8", "surrogateescape")))
        elif isinstance(content, (bytes, bytearray, memoryview)):
            pairs.append((path, bytes(content)))
            given_bytes.add(path)
        else:
            raise UsageError(f"files[{path!r}] must be str or bytes, not {type(content).__name__}")
    return pairs, given_bytes


def _memory(native: Tuple[str, List[Tuple[str, bytes]]], given_bytes: set[str]) -> MemoryResult:
    text, after = native
    result: MemoryResult = json.loads(text)
    tree: Dict[str, Union[str, bytes]] = {}
    for path, content in after:
        if path in given_bytes:
            tree[path] = content
        else:
            try:
                tree[path] = content.decode("utf-8")
            except UnicodeDecodeError:
                tree[path] = content
    result["tree"] = tree
    return result


def apply(patch: str, root: PathLike, *, format: Optional[str] = None,
          dry_run: bool = False, tolerant: bool = False, diff: bool = False) -> Result:
    """Applies ``patch`` to the tree under ``root``: every file or none."""
    _need_str(patch, "patch")
    _need_str(format, "format", optional=True)
    path = _path(root)
    result: Result = json.loads(_checked(lambda: _native.apply(
        patch, path, format=format, dry_run=dry_run, tolerant=tolerant, diff=diff)))
    return result


def lint(patch: str, root: Optional[PathLike] = None, *, format: Optional[str] = None,
         tolerant: bool = False, diff: bool = False) -> Result:
    """Checks ``patch``; with ``root``, also locates every edit. Writes nothing."""
    _need_str(patch, "patch")
    _need_str(format, "format", optional=True)
    path = None if root is None else _path(root)
    result: Result = json.loads(_checked(lambda: _native.lint(
        patch, path, format=format, tolerant=tolerant, diff=diff)))
    return result


def apply_to(files: Files, patch: str, *, format: Optional[str] = None,
             tolerant: bool = False, diff: bool = False) -> MemoryResult:
    """Applies ``patch`` to ``files`` (path -> content) held in memory: every
    file or none; nothing on disk is read or written. ``files`` itself is not
    changed: the result's ``tree`` is the files after the patch."""
    _need_str(patch, "patch")
    _need_str(format, "format", optional=True)
    pairs, given_bytes = _files(files)
    native = _checked(lambda: _native.apply_to(
        pairs, patch, format=format, tolerant=tolerant, diff=diff))
    return _memory(native, given_bytes)


def apply_batch(jobs: Iterable[Tuple[Files, str]], *, format: Optional[str] = None,
                tolerant: bool = False, diff: bool = False,
                threads: int = 0) -> List[MemoryResult]:
    """:func:`apply_to` for many independent ``(files, patch)`` pairs, on
    ``threads`` threads (0: one per core) with the GIL released; the results
    in the jobs' order."""
    _need_str(format, "format", optional=True)
    if not isinstance(threads, int) or threads < 0:
        raise UsageError("threads must be a whole number, 0 for one per core")
    native_jobs: List[Tuple[List[Tuple[str, bytes]], str]] = []
    kinds: List[set[str]] = []
    for job in jobs:
        if not (isinstance(job, tuple) and len(job) == 2):
            raise UsageError("each job is a (files, patch) pair")
        files, patch = job
        _need_str(patch, "a job's patch")
        pairs, given_bytes = _files(files)
        native_jobs.append((pairs, patch))
        kinds.append(given_bytes)
    done = _checked(lambda: _native.apply_batch(
        native_jobs, format=format, tolerant=tolerant, diff=diff, threads=threads))
    return [_memory(native, given) for native, given in zip(done, kinds)]


def parse(patch: str, *, format: Optional[str] = None, tolerant: bool = False) -> Parsed:
    """What ``patch`` holds, read without a tree: each file's operation, its
    hunks and their lines added, removed and kept."""
    _need_str(patch, "patch")
    _need_str(format, "format", optional=True)
    parsed: Parsed = json.loads(_checked(lambda: _native.parse(
        patch, format=format, tolerant=tolerant)))
    return parsed


def apply_openai(items: Union[str, Mapping[str, Any], List[Mapping[str, Any]]], root: PathLike, *,
                 dry_run: bool = False) -> List[ApplyPatchCallOutput]:
    """Applies the `apply_patch_call` items of one OpenAI reply (JSON text, an
    item, a list of items, or a bare operation) to the tree under ``root``,
    all or none, and returns the `apply_patch_call_output` items to send
    back: ``completed`` with what was done, or ``failed`` with what to fix."""
    text = items if isinstance(items, str) else json.dumps(items)
    path = _path(root)
    outputs: List[ApplyPatchCallOutput] = json.loads(
        _checked(lambda: _native.apply_openai(text, path, dry_run=dry_run)))
    return outputs


def apply_anthropic(commands: Union[str, Mapping[str, Any], List[Mapping[str, Any]]],
                    root: PathLike, *, dry_run: bool = False) -> List[ToolResultBlock]:
    """Applies Anthropic text-editor commands (JSON text, one ``input``, a
    ``tool_use`` block, a list of them, or the assistant message holding
    them) to the tree under ``root``, all or none, in order, and returns
    the ``tool_result`` blocks to send back, one per ``tool_use``.
    ``view`` and ``undo_edit`` raise :class:`UsageError`: this applies edits."""
    text = commands if isinstance(commands, str) else json.dumps(commands)
    path = _path(root)
    blocks: List[ToolResultBlock] = json.loads(
        _checked(lambda: _native.apply_anthropic(text, path, dry_run=dry_run)))
    return blocks


def convert(patch: str, root: Optional[PathLike], to: str, *, format: Optional[str] = None,
            tolerant: bool = False) -> Converted:
    """``patch``'s edits, located in the tree under ``root``, printed in
    format ``to`` and verified (applied in memory, the printed patch gives
    the same files); ``patch`` is None, with ``error`` saying why, where the
    format cannot state a change. With ``root=None``, the patch's own edits,
    for the pairs whose source states enough (udiff to udiff, codex or
    searchreplace; codex and searchreplace to each other). Writes nothing."""
    _need_str(patch, "patch")
    _need_str(to, "to")
    _need_str(format, "format", optional=True)
    path = None if root is None else _path(root)
    text, printed = _checked(lambda: _native.convert(patch, path, to, format=format,
                                                     tolerant=tolerant))
    result: Converted = json.loads(text)
    result["patch"] = printed
    return result


def grammar(format: str, id: Optional[str] = None) -> str:
    """The format's Lark grammar, for constrained decoding (ap: bound to ``id``)."""
    _need_str(format, "format")
    return _checked(lambda: _native.grammar(format, id))


def tool(format: str, provider: Literal["openai", "openai-chat", "anthropic"],
         id: Optional[str] = None, name: str = "apply_patch") -> ToolDefinition:
    """A tool definition for the provider's API."""
    _need_str(format, "format")
    definition: ToolDefinition = json.loads(
        _checked(lambda: _native.tool(format, provider, id, name)))
    return definition


def prompt(format: str) -> str:
    """Instructions and a worked example for a model's system prompt."""
    _need_str(format, "format")
    return _checked(lambda: _native.prompt(format))


def detect(patch: str) -> Optional[str]:
    """The patch's format (``udiff``, ``codex``, ``repopatch``, ``ap``), or None."""
    _need_str(patch, "patch")
    return _native.detect(patch)
