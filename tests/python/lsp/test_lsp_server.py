"""The real `crosscheck lsp` binary driven by pytest-lsp (a pygls-based LSP client).

Covers what an independent client implementation sees: initialisation and the negotiated
position encoding, diagnostics after didOpen and after incremental didChange, hover, code
actions, commands without an LLM, the one-time "no LLM" message, and a clean shutdown.
Run with CROSSCHECK_BIN pointing at the built binary (.ci/run sets it).
"""

import os
import pathlib
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = pathlib.Path(__file__).resolve().parents[3]
BIN = os.environ.get("CROSSCHECK_BIN") or str(ROOT / "target" / "debug" / "crosscheck")
FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "sample.py"

ENV = {k: v for k, v in os.environ.items() if not k.startswith("CROSSCHECK_LLM_")}
ENV["CROSSCHECK_CONFIG"] = str(pathlib.Path(__file__).parent / "fixtures" / "no-such-config.toml")
# The per-user store (answer cache, telemetry) goes to a throw-away directory, not the user's.
ENV["CROSSCHECK_DATA_DIR"] = tempfile.mkdtemp(prefix="crosscheck-lsp-test-")

CONFIG = ClientServerConfig(server_command=[BIN, "lsp"], server_env=ENV)


def capabilities(utf8: bool) -> types.ClientCapabilities:
    encodings = [types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16] if utf8 else [
        types.PositionEncodingKind.Utf16
    ]
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities(utf8=False))
    )
    lsp_client.init_result = result
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def utf8_client(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities(utf8=True))
    )
    lsp_client.init_result = result
    yield
    await lsp_client.shutdown_session()


def uri() -> str:
    return FIXTURE.as_uri()


async def open_fixture(client: LanguageClient, text: str | None = None):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(), language_id="python", version=1, text=text or FIXTURE.read_text()
            )
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


@pytest.mark.asyncio
async def test_initialize_announces_capabilities_and_utf16_by_default(client: LanguageClient):
    caps = client.init_result.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert caps.hover_provider
    assert "crosscheck.explain" in caps.execute_command_provider.commands
    assert client.init_result.server_info.name == "crosscheck"


@pytest.mark.asyncio
async def test_utf8_is_negotiated_when_offered(utf8_client: LanguageClient):
    assert utf8_client.init_result.capabilities.position_encoding == types.PositionEncodingKind.Utf8


@pytest.mark.asyncio
async def test_open_publishes_syntax_error_diagnostics(client: LanguageClient):
    await open_fixture(client)
    diags = client.diagnostics[uri()]
    syntax = [d for d in diags if d.code == "syntax-error"]
    assert syntax, diags
    assert syntax[0].range.start.line == 8
    assert syntax[0].severity == types.DiagnosticSeverity.Error
    assert syntax[0].data["tier"] == "analyzer-only"
    assert syntax[0].data["partial"] is True


@pytest.mark.asyncio
async def test_incremental_fix_clears_the_syntax_error(client: LanguageClient):
    await open_fixture(client)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(), version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=8, character=11),
                        end=types.Position(line=8, character=12),
                    ),
                    text="x):",
                )
            ],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d for d in client.diagnostics[uri()] if d.code == "syntax-error"] == []


@pytest.mark.asyncio
async def test_hover_shows_the_cfg_summary(client: LanguageClient):
    await open_fixture(client)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri()),
            position=types.Position(line=2, character=6),
        )
    )
    text = hover.contents.value
    assert "total(xs)" in text
    assert "1 branch" in text and "1 loop" in text and "cyclomatic 3" in text
    assert "LLM not configured" in text


@pytest.mark.asyncio
async def test_code_actions_offer_suppress_and_labels(client: LanguageClient):
    await open_fixture(client)
    diag = [d for d in client.diagnostics[uri()] if d.code == "syntax-error"][0]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri()),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    titles = [a.title for a in actions]
    assert any("suppress `syntax-error`" in t for t in titles), titles
    assert any("as correct" in t for t in titles), titles
    suppress = next(a for a in actions if "suppress `syntax-error`" in a.title)
    edit = suppress.edit.changes[uri()][0]
    assert edit.new_text == "# crosscheck: ignore[syntax-error]\n"


@pytest.mark.asyncio
async def test_explain_without_llm_returns_a_clear_message(client: LanguageClient):
    await open_fixture(client)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="crosscheck.explain",
            arguments=[{"uri": uri(), "line": 1, "character": 4}],
        )
    )
    assert result["status"] == "unavailable"
    assert "LLM not configured" in result["message"]
    assert any("LLM not configured" in m.message for m in client.messages)


TAINT = pathlib.Path(__file__).parent / "fixtures" / "taint.py"


@pytest.mark.asyncio
async def test_a_taint_flow_is_an_error_with_its_path_tier_and_rule_docs(client: LanguageClient):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=TAINT.as_uri(), language_id="python", version=1, text=TAINT.read_text()
            )
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    flows = [d for d in client.diagnostics[TAINT.as_uri()] if d.code == "taint-command"]
    assert len(flows) == 1, client.diagnostics[TAINT.as_uri()]
    flow = flows[0]
    assert flow.range.start.line == 5
    assert flow.severity == types.DiagnosticSeverity.Error
    assert flow.data["tier"] == "analyzer-only"
    assert flow.data["rule"] == "taint-command"
    lines = [r.location.range.start.line for r in flow.related_information]
    assert lines[0] == 4 and lines[-1] == 5, lines
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=TAINT.as_uri()),
            position=types.Position(line=5, character=6),
        )
    )
    assert "OS command injection" in hover.contents.value
