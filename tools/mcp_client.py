#!/usr/bin/env python3
"""Drives `grammar-patch mcp` with the official Python MCP SDK (`pip install
mcp`), a second client beside the rmcp one in `cargo test`: the handshake,
the tools' metadata, a stale patch, a dry run, an apply, wrong arguments as
tool errors, an unknown tool as a protocol error, and the resources.

Usage: tools/mcp_client.py BINARY     (exit 0 when every check passes)
"""

import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared import exceptions

# The SDK's protocol error: `MCPError` in 2.x, `McpError` in 1.x.
ProtocolError = getattr(exceptions, "MCPError", None) or getattr(exceptions, "McpError")

PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok  {what}")


def result_of(call):
    return json.loads(call.content[0].text)


def field(obj, name):
    """A field by its snake_case name (SDK 2.x) or its camelCase one (1.x)."""
    if hasattr(obj, name):
        return getattr(obj, name)
    head, *rest = name.split("_")
    return getattr(obj, head + "".join(w.title() for w in rest))


async def run(binary, root):
    params = StdioServerParameters(command=binary, args=["mcp", "--root", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"protocol {field(init, 'protocol_version')}")
            info = field(init, "server_info")
            check(info.name == "grammar-patch", "serverInfo names grammar-patch")

            tools = {t.name: t for t in (await session.list_tools()).tools}
            check(sorted(tools) == ["apply_patch", "lint_patch"], "two tools")
            apply, lint = tools["apply_patch"], tools["lint_patch"]
            check(apply.title and lint.title, "tools have titles")
            check(field(lint.annotations, "read_only_hint") is True, "lint_patch is read-only")
            check(field(apply.annotations, "destructive_hint") is True, "apply_patch is destructive")
            check(field(apply.annotations, "idempotent_hint") is True, "apply_patch is idempotent")
            check(field(apply, "output_schema") and field(lint, "output_schema"),
                  "tools have an output schema")
            check("ap" in apply.description, "the description names ap")

            path = os.path.join(root, "f.txt")
            stale = await session.call_tool("apply_patch", {"patch": PATCH.replace("-b", "-x")})
            check(field(stale, "is_error"), "a stale patch is a tool error")
            check(result_of(stale)["error"]["code"] == "context_not_found", "with its code")
            dry = await session.call_tool("apply_patch", {"patch": PATCH, "dry_run": True})
            check(not field(dry, "is_error") and result_of(dry)["dry_run"], "a dry run")
            linted = await session.call_tool("lint_patch", {"patch": PATCH})
            check(result_of(linted)["files"] == result_of(dry)["files"], "lint lists the files")
            check(open(path).read() == "a\nb\n", "nothing written yet")
            done = await session.call_tool("apply_patch", {"patch": PATCH})
            check(not field(done, "is_error") and field(done, "structured_content")["ok"], "applied")
            check(open(path).read() == "a\nB\n", "written")

            for bad in [{}, {"patch": 5}, {"patch": PATCH, "format": "nope"},
                        {"patch": PATCH, "dryrun": True}, {"patch": PATCH, "dry_run": "yes"}]:
                refused = await session.call_tool("apply_patch", bad)
                code = result_of(refused)["error"]["code"]
                check(field(refused, "is_error") and code == "usage_error",
                      f"{bad} is a usage_error tool result")
            try:
                await session.call_tool("frobnicate", {})
                check(False, "an unknown tool is a protocol error")
            except ProtocolError as e:
                check(e.error.code == -32602, "an unknown tool is a protocol error (-32602)")
            check(open(path).read() == "a\nB\n", "no bad call wrote anything")

            resources = (await session.list_resources()).resources
            uris = {str(r.uri) for r in resources}
            check("grammar-patch://grammar/udiff.lark" in uris, "grammars are resources")
            grammar = await session.read_resource("grammar-patch://grammar/ap/0badf00d.lark")
            check("0badf00d" in grammar.contents[0].text, "ap's ID-bound grammar")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "f.txt"), "w") as f:
            f.write("a\nb\n")
        asyncio.run(run(binary, root))
    print("the official Python MCP SDK agrees")


if __name__ == "__main__":
    main()
