"""`bench-normalize mcp` driven by a real MCP client: the Python `mcp` package's stdio client
(initialize, tools/list, every tool called, bad input). The client validates each result's
structuredContent against the tool's declared outputSchema itself; the figures are held to the
CLI's. BENCH_NORMALIZE_BIN names the executable (tests/python/run.sh sets it)."""

import asyncio
import json
import os
import pathlib
import subprocess

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
BIN = os.environ.get("BENCH_NORMALIZE_BIN", str(ROOT / "target" / "debug" / "bench-normalize"))
LOG = "captured/vllm-s2.stdout.txt"
OTHER = "captured/sglang-oai-s2.stdout.txt"


def field(obj, *names):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(names)


def cli(*args):
    out = subprocess.run([BIN, *args], cwd=SAMPLES, capture_output=True, check=False)
    return json.loads(out.stdout) if out.stdout else None


async def session_run(body):
    params = StdioServerParameters(command=BIN, args=["mcp"], cwd=str(SAMPLES))
    async with stdio_client(params) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert field(init, "server_info", "serverInfo").name == "bench-normalize"
            return await body(session)


def run(body):
    return asyncio.run(session_run(body))


def structured(result):
    assert not field(result, "is_error", "isError"), result
    return field(result, "structured_content", "structuredContent")


def test_tools_are_listed_with_schemas():
    async def body(s):
        tools = field(await s.list_tools(), "tools")
        names = [t.name for t in tools]
        assert names == ["normalize", "check", "compare", "explain", "schema"]
        for t in tools:
            assert field(t, "output_schema", "outputSchema")["type"] == "object"
            assert field(t, "input_schema", "inputSchema")["type"] == "object"

    run(body)


def test_every_tool_answers_as_the_cli():
    async def body(s):
        await s.list_tools()  # the client keeps the output schemas to validate results with
        report = structured(await s.call_tool("normalize", {"path": LOG}))
        assert report == cli(LOG)
        text = (SAMPLES / LOG).read_bytes().decode("utf-8")  # not read_text(): it would turn \r into \n
        assert structured(await s.call_tool("normalize", {"text": text, "name": LOG})) == report
        checked = structured(await s.call_tool("check", {"document": report}))
        assert [r["verdict"] for r in checked["runs"]] == ["accepted"]
        assert checked["runs"][0]["derived"] == report["runs"][0]["derived"]
        cmp = structured(await s.call_tool("compare", {"baseline": LOG, "others": [OTHER], "key": "concurrency,input,output"}))
        assert cmp == cli("compare", LOG, OTHER, "--format", "json", "--key", "concurrency,input,output")
        explained = structured(await s.call_tool("explain", {"path": LOG}))
        want = subprocess.run([BIN, LOG, "--explain"], cwd=SAMPLES, capture_output=True, text=True).stdout
        assert "".join(r["explanation"] for r in explained["runs"]) == want
        sch = structured(await s.call_tool("schema", {}))
        assert sch["schema"]["title"] == "bench-normalize report"

    run(body)


@pytest.mark.parametrize(
    "tool,arguments,exit_code",
    [
        ("normalize", {"text": "no benchmark here\n"}, 3),
        ("normalize", {"path": "/etc/passwd"}, 2),
        ("normalize", {"path": "../Cargo.toml"}, 2),
        ("normalize", {"text": "x", "path": LOG}, 2),
        ("check", {"document": {"colour": 1}}, 3),
        ("compare", {"baseline": LOG, "others": [LOG], "key": "colour"}, 2),
    ],
)
def test_bad_input_is_a_tool_error(tool, arguments, exit_code):
    async def body(s):
        result = await s.call_tool(tool, arguments)
        assert field(result, "is_error", "isError"), result
        diagnostic = json.loads(field(result, "content")[0].text)
        assert diagnostic["exit_code"] == exit_code, diagnostic
        if "path" in arguments and arguments["path"].startswith(("/", "..")):
            assert "outside the directories" in diagnostic["message"]
            assert "root:" not in json.dumps(diagnostic)

    run(body)
