"""A tool's result as the text a model reads: text parts whole, anything else one line saying
what it was, the whole cut to :data:`mcphost.wire.MAX_RESULT_BYTES`."""

from __future__ import annotations

import json

import mcp_types as types

from mcphost import wire


def result_text(result: types.CallToolResult) -> str:
    parts = [_describe(block) for block in result.content]
    if not parts and result.structured_content is not None:
        # A tool that returns only structured content: its JSON is what there is to read.
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return cut("\n".join(parts))


def _describe(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[image: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}{_mime(block.mime_type)}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            size = f"{len(resource.text)} characters"
        else:
            size = f"{_decoded_size(resource.blob)} bytes"
        return f"[resource: {resource.uri}{_mime(resource.mime_type)}, {size}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def _mime(mime_type: str | None) -> str:
    return f", {mime_type}" if mime_type else ""


def _decoded_size(data: str) -> int:
    """The size base64 ``data`` decodes to, without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def cut(text: str, limit: int = wire.MAX_RESULT_BYTES) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes, its last line saying how much was left out."""
    # "replace": a lone surrogate from a peer's JSON escape becomes "?" instead of failing.
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    note = (f"\n[Hearth cut this result: the tool returned {len(data):,} bytes of text, more "
            f"than the {limit:,} it passes on; the rest is left out.]")
    keep = limit - len(note.encode("utf-8"))
    # "ignore" drops a character the cut split in two.
    return data[:keep].decode("utf-8", errors="ignore") + note
