"""grammar-patch for Python: parse, validate and apply the patch formats
language models write (unified diff, codex, RepoPatch, ap), all files or
none, with the same results as `grammar-patch apply --json`.

A refused patch is not an exception: it is a result whose ``ok`` is False,
with ``error`` saying what to fix (as the command line exits 1). Only a
wrong call raises :class:`UsageError` (as the command line exits 2).
"""

from __future__ import annotations

import json
import os
from typing import List, Literal, Optional, TypedDict, Union

from . import _native

__all__ = [
    "UsageError", "Result", "FileResult", "Diagnostic", "Error",
    "apply", "lint", "grammar", "tool", "prompt", "detect",
]

UsageError = _native.UsageError


class FileResult(TypedDict, total=False):
    path: str
    action: Literal["added", "modified", "deleted", "renamed", "dir_created", "unchanged"]
    from_: Optional[str]
    diff: str


class Diagnostic(TypedDict, total=False):
    severity: Literal["error", "warning"]
    code: str
    message: str
    patch_line: Optional[int]
    path: str
    hint: str
    notes: List[str]


class Error(TypedDict, total=False):
    code: str
    message: str
    path: Optional[str]
    patch_line: Optional[int]
    hint: Optional[str]
    notes: List[str]


class Result(TypedDict, total=False):
    """The JSON result (``schema/result.schema.json``). Each file's old
    path is under the key ``"from"``."""

    ok: bool
    format: Optional[str]
    error: Error
    dry_run: bool
    files: List[FileResult]
    diagnostics: List[Diagnostic]
    ignored_metadata: List[str]


PathLike = Union[str, "os.PathLike[str]"]


def apply(patch: str, root: PathLike, *, format: Optional[str] = None,
          dry_run: bool = False, tolerant: bool = False, diff: bool = False) -> Result:
    """Applies ``patch`` to the tree under ``root``: every file or none."""
    return json.loads(_native.apply(patch, os.fspath(root), format=format,
                                    dry_run=dry_run, tolerant=tolerant, diff=diff))


def lint(patch: str, root: Optional[PathLike] = None, *, format: Optional[str] = None,
         tolerant: bool = False, diff: bool = False) -> Result:
    """Checks ``patch``; with ``root``, also locates every edit. Writes nothing."""
    return json.loads(_native.lint(patch, None if root is None else os.fspath(root),
                                   format=format, tolerant=tolerant, diff=diff))


def grammar(format: str, id: Optional[str] = None) -> str:
    """The format's Lark grammar, for constrained decoding (ap: bound to ``id``)."""
    return _native.grammar(format, id)


def tool(format: str, provider: Literal["openai", "openai-chat", "anthropic"],
         id: Optional[str] = None, name: str = "apply_patch") -> dict:
    """A tool definition for the provider's API."""
    return json.loads(_native.tool(format, provider, id, name))


def prompt(format: str) -> str:
    """Instructions and a worked example for a model's system prompt."""
    return _native.prompt(format)


def detect(patch: str) -> Optional[str]:
    """The patch's format (``udiff``, ``codex``, ``repopatch``, ``ap``), or None."""
    return _native.detect(patch)
