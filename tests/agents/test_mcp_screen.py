"""The stdio door's screen in this process: the lines the protocol parser would drop without a
reply are answered (agents/mcp_server.py _refusal, _Screened), and serve_stdio speaks on its
own descriptors. tests/agents/test_mcp_door.py sends the same lines to a server process."""

from __future__ import annotations

import io
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agents.mcp_server import _refusal, _Screened, _Wire, build_server, serve_stdio
from tests._helpers.aio import run_async
from tests._helpers.mcp import INIT_LINE, tool_call_line

LONG = "9" * 4301


def reply(line: str) -> dict:
    text = _refusal(line)
    assert text is not None and text.endswith("\n") and text.count("\n") == 1
    return json.loads(text)


@pytest.mark.parametrize("line", ["", "  \n", '{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'])
def test_a_blank_or_readable_line_passes_untouched(line):
    assert _refusal(line) is None


def test_a_batch_is_one_invalid_request_error():
    assert reply('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]') == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "invalid_request: batches are not supported"},
    }


def test_a_tool_call_with_a_number_past_the_parsers_digits_is_a_tool_error():
    line = tool_call_line(5, "read", f'{{"node_id": {LONG}}}')
    assert reply(line) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {
            "content": [{"type": "text", "text": "bad_number: a number has more than 4300 digits"}],
            "isError": True,
        },
    }


def test_a_lone_surrogate_is_refused_with_the_text_rules_code():
    answer = reply(tool_call_line(4, "recall", '{"query": "\\ud800"}'))
    assert answer["id"] == 4
    assert answer["result"]["isError"]
    assert answer["result"]["content"][0]["text"].startswith("bad_text: ")


def test_a_request_that_is_no_tool_call_gets_a_parse_error_with_its_id():
    line = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {}})
    answer = reply(line.replace("{}", f'{{"n": {LONG}}}'))
    assert answer == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32700, "message": "bad_number: a number has more than 4300 digits"},
    }


@pytest.mark.parametrize(
    ("ident", "kept"), [('"é"', None), ("1.5", None), ("null", None), ('"x-1"', "x-1"), ("0", 0)]
)
def test_only_an_integer_or_ascii_id_is_echoed(ident, kept):
    line = tool_call_line(0, "read", f'{{"node_id": {LONG}}}').replace('"id": 0', f'"id": {ident}')
    answer = reply(line)
    assert answer["id"] == kept
    assert ("result" in answer) is (kept is not None)


def test_a_line_that_is_not_json_or_nests_too_deeply_is_a_parse_error():
    assert reply("{not json") == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "malformed_json: the message is not JSON"},
    }
    deep = reply("[" * 100_000)
    assert deep["error"] == {
        "code": -32700,
        "message": "malformed_json: the message nests too deeply",
    }


def test_a_line_the_parser_refuses_for_another_reason_is_called_unreadable():
    # A decimal with more integer digits than the parser takes: json reads it (as a float).
    answer = reply(tool_call_line(3, "recall", f'{{"query": "x", "limit": {LONG}.5}}'))
    text = answer["result"]["content"][0]["text"]
    assert text == "malformed_json: the message is not JSON the protocol can read"


def test_the_screen_passes_readable_lines_on_and_answers_the_rest_on_the_wire():
    out = io.BytesIO()
    wire = _Wire(out)  # type: ignore[arg-type]
    lines = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n[1]\n\n{"id": 2}\n'

    async def main():
        return [line async for line in _Screened(io.BytesIO(lines), wire)]  # type: ignore[arg-type]

    passed = run_async(main)
    assert passed == ['{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n', "\n", '{"id": 2}\n']
    written = out.getvalue().decode().splitlines()
    assert [json.loads(line)["error"]["code"] for line in written] == [-32600]


def test_serve_stdio_answers_on_its_own_descriptors_and_points_stray_output_at_stderr():
    lines = [
        INIT_LINE,
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        "[1]",
        tool_call_line(2, "read", f'{{"node_id": {LONG}}}'),
    ]
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    saved = os.dup(0), os.dup(1)
    os.dup2(stdin_r, 0)
    os.dup2(stdout_w, 1)
    os.close(stdin_r)
    os.close(stdout_w)
    replies: dict = {}
    seen: dict[str, bool] = {}
    sending = os.fdopen(stdin_w, "w")
    # Only a guard against a hang (a broken server never answers): closing its stdin ends it.
    guard = threading.Timer(30, sending.close)

    def client() -> None:
        with sending, os.fdopen(stdout_r) as receiving:
            sending.write("\n".join(lines) + "\n")
            sending.flush()
            while {0, 1, 2, None} - set(replies) and (line := receiving.readline()):
                answer = json.loads(line)
                replies[answer.get("id")] = answer
            seen["stdout is stderr"] = os.path.sameopenfile(1, 2)
            seen["stdin is empty"] = os.read(0, 1) == b""

    feeder = threading.Thread(target=client)
    feeder.start()
    guard.start()
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(serve_stdio, build_server(token_name="desk")).result()
        feeder.join(timeout=30)
    finally:
        guard.cancel()
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        os.close(saved[0])
        os.close(saved[1])
    assert seen == {"stdout is stderr": True, "stdin is empty": True}
    assert replies[0]["result"]["serverInfo"]["name"] == "grove"
    assert "read" in [tool["name"] for tool in replies[1]["result"]["tools"]]
    assert replies[2]["result"]["content"][0]["text"].startswith("bad_number: ")
    assert replies[None]["error"]["code"] == -32600


def test_bytes_that_are_not_utf8_are_read_as_replacement_characters_not_a_crash():
    out = io.BytesIO()
    wire = _Wire(out)  # type: ignore[arg-type]
    line = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\xff"}}\n'

    async def main():
        return [line async for line in _Screened(io.BytesIO(line), wire)]  # type: ignore[arg-type]

    assert run_async(main) == [line.decode(errors="replace")]
    assert out.getvalue() == b""


def test_the_wire_writes_each_reply_whole_in_utf8():
    out = io.BytesIO()
    wire = _Wire(out)  # type: ignore[arg-type]

    async def main():
        await wire.write('{"text": "café"}\n')
        await wire.flush()

    run_async(main)
    assert out.getvalue() == '{"text": "café"}\n'.encode()


def test_an_id_past_the_parsers_digits_is_answered_with_a_null_id_not_a_made_up_one():
    line = tool_call_line(0, "read", '{"node_id": 1}').replace('"id": 0', f'"id": {LONG}')
    assert reply(line) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "bad_number: a number has more than 4300 digits"},
    }


def test_an_integer_of_the_parsers_own_length_is_not_called_too_long():
    # The line reaches the screen for its decimal (too long for the parser, read by json).
    arguments = f'{{"query": "x", "limit": {LONG}.5, "n": {LONG[1:]}}}'
    answer = reply(tool_call_line(3, "recall", arguments))
    text = answer["result"]["content"][0]["text"]
    assert text == "malformed_json: the message is not JSON the protocol can read"
