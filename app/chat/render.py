"""Chat messages as HTML for Qt's rich-text engine (no Qt).

Model output is untrusted text. Rendering it must never make the app read a file or reach the
network, so the HTML made here holds nothing that names a resource:

- raw HTML in the Markdown is shown as text (markdown-it's ``html`` option is off);
- images are shown as ``[image: alt]`` text, never as ``<img>`` (Qt's rich-text engine loads an
  image's source straight from disk, whatever the widget's ``loadResource`` says);
- links stay links only for http, https and mailto; any other target (file:, javascript:,
  data:, relative paths) is shown as its plain text;
- fenced code is coloured by Pygments with inline styles (no stylesheet to fetch).

Qt's rich text understands only a subset of HTML 4 and CSS 2, so every colour comes inline from
a :class:`Theme`, which the window builds from the design tokens of the scheme on screen (this
package holds no colour and imports no ``app.ui``), and every word around a message from its
:class:`Words` (translated by the window).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app.chat.fold import fold
from app.chat.message import Message
from app.chat.source import ReplySource
from app.chat.streaming import Reasoned, split_reasoning
from app.chat.toolcalls import calls_of, rounds_of
from app.chat.transcript import DOCUMENTS_USED, images_of
from app.storage.images import image_url

if TYPE_CHECKING:  # markdown-it and Pygments are imported when the first message is rendered:
    # a tenth of a second that the window's start need not wait for (it shows no message yet)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer

ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
ACTION_SCHEME = "hearth"  # the view's own links: copy code, reasoning, "Show all"
# Room before a code block's "Copy" word where the view paints the copy icon (the link's own
# text, so that a click on the icon is a click on the link).
COPY_ICON_ROOM = "&nbsp;" * 6
CURSOR_MARK = "▍"  # shown at the end of a reply while it streams
MESSAGE_GAP_PX = 24  # space above each message's name line (the view draws blocks in it)
NAME_GAP_PX = 2  # space between a name and its message
# Collapsed cell borders cost Qt about half a millisecond a cell to lay out and paint (a 30 x 13
# table: 230 ms here); a grid drawn by the table's colour showing through one pixel of cell
# spacing looks the same and costs a third. Small tables keep the collapsed rules they had.
GRID_TABLE_CELLS = 100
# "Show all" shows a message as plain text, a block at least every this many characters: Qt
# lays a line out in time that grows faster than its length (a 1 MB line without spaces:
# minutes), in blocks of this size in linear time.
WHOLE_BLOCK_CHARS = 2_000
# Up to this size "Show all" shows the text in the transcript: linear, but the transcript lays
# out all of it at once (about 0.6 s of the main thread a megabyte here), and again on every
# resize. A bigger message opens in a window of its own, a plain-text editor that lays out only
# what it shows (a megabyte in about 30 ms).
WHOLE_INLINE_CHARS = 100_000

# Pygments styles whose colours read well on a code background close to the view's own.
LIGHT_CODE_STYLE = "default"
DARK_CODE_STYLE = "github-dark"

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
_MIN_LINK_CONTRAST = 80  # luma difference between a link and the base it is read on


@dataclass(frozen=True)
class Words:
    """The words the transcript shows around a message, in the person's language.

    English here (this package has no Qt, so no translator); the view passes the translated
    templates. ``{placeholders}`` are filled here, numbers already formatted.
    """

    you: str = "You"
    assistant: str = "Assistant"
    system: str = "System"
    copy_code: str = "Copy"
    code: str = "Code"  # the label of a code block without a language
    image: str = "[image]"
    image_alt: str = "[image: {alt}]"
    thinking: str = "Thinking… ({count} characters)"
    reasoning: str = "Reasoning ({count} characters)"
    show_all: str = "Show all ({count} characters)"
    show_all_window: str = "Show all in a window ({count} characters)"
    show_less: str = "Show less"
    speed: str = "{speed} tokens/s"
    sent_whole: str = "{source} (sent whole: the server does not stream)"
    # The line under a question with documents (app/chat/transcript.py DOCUMENTS_USED).
    documents: str = "With this message:"
    document_whole: str = "{name} (whole)"
    document_passage: str = "1 passage from {name}"
    document_passages: str = "{count} passages from {name}"
    page: str = "page {number}"
    # A tool call in a reply (app/chat/render_tools.py): its line, and each state's word.
    tool_line: str = "Tool {name}: {status}"
    tool_states: tuple[tuple[str, str], ...] = (
        ("asking", "waiting for your answer"), ("running", "running…"), ("ok", "done"),
        ("error", "failed"), ("denied", "not allowed"), ("timed_out", "took too long"),
        ("cancelled", "cancelled"), ("unknown", "no such tool"))
    tool_arguments: str = "Arguments"
    tool_result: str = "Result"
    # The notes under a reply (app/chat/transcript.py's, stored in English): (English, shown).
    notes: tuple[tuple[str, str], ...] = ()


ENGLISH = Words()


@dataclass(frozen=True)
class Theme:
    """The colours of the transcript, as ``#rrggbb`` strings, and its words.

    No colour is fixed here: the window builds its theme from the design tokens of the scheme
    on screen (app/ui/chat_view.py), so the transcript matches every other screen.
    """

    text: str
    base: str  # the view's background
    link: str
    user: str  # the "You" name line
    assistant: str  # the model's name line
    note: str  # "Stopped.", "The model runner stopped…"
    muted: str  # the placeholder, labels, the line under a reply
    code_bg: str  # behind code blocks and inline code
    border: str  # table rules
    dark: bool  # picks the Pygments style
    words: Words = field(default=ENGLISH, compare=False)

    @classmethod
    def from_colors(cls, text: str, base: str, link: str, muted: str, *,
                    accent: str | None = None, danger: str | None = None,
                    code_bg: str | None = None, border: str | None = None,
                    words: Words = ENGLISH) -> Theme:
        """A theme from the colours of a palette or of the design tokens (text, base, link,
        muted; the others are mixed from these when not given, so they keep their contrast on
        any base)."""
        dark = _luma(base) < _luma(text)
        if abs(_luma(link) - _luma(base)) < _MIN_LINK_CONTRAST:
            # Some palettes keep a dark blue link in a dark theme: pull it towards the text.
            link = mix(link, text, 0.6)
        return cls(
            text=text, base=base, link=link, muted=muted,
            user=text,
            assistant=accent or link,
            note=danger or mix(text, link, 0.5),
            code_bg=code_bg or mix(base, text, 0.14 if dark else 0.06),
            border=border or mix(base, text, 0.3),
            dark=dark,
            words=words,
        )


def mix(a: str, b: str, t: float) -> str:
    """``a`` moved a fraction ``t`` of the way towards ``b`` (both ``#rrggbb``)."""
    if not (_HEX.match(a) and _HEX.match(b)):
        raise ValueError(f"Colours must be #rrggbb, not {a!r} and {b!r}.")
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb, strict=True))


def _luma(color: str) -> float:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b


def link_allowed(url: str) -> bool:
    """Whether a link from model output may be shown as a link (and opened in the browser)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. "http://[::1" — a malformed host
        return False
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        return False
    return bool(parts.path) if scheme == "mailto" else bool(parts.netloc)


def escape_text(text: str) -> str:
    """Plain text as HTML that shows exactly that text, line breaks kept."""
    return html.escape(text, quote=False).replace("\r\n", "\n").replace("\n", "<br>")


# ---- Markdown ----------------------------------------------------------------------------------


def _make_parser(*, breaks: bool = True) -> MarkdownIt:
    from markdown_it import MarkdownIt

    class _Parser(MarkdownIt):
        def validateLink(self, url: str) -> bool:
            # Accept every target at parse time so that a refused link or image still renders
            # as its text, not as its Markdown source: the render rules decide what becomes a
            # link.
            return True

    # CommonMark plus the two extensions models use all the time; raw HTML stays text. A chat
    # model's single newline is a line break it meant (``breaks``: <br />), as chat apps show
    # it; a document (a model card) keeps CommonMark's soft breaks.
    md = _Parser("commonmark", {"html": False, "linkify": False, "typographer": False,
                                "breaks": breaks})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _render_image)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("link_close", _render_link_close)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_fence)
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("th_open", _render_cell_open)
    md.add_render_rule("td_open", _render_cell_open)
    md.add_render_rule("blockquote_open", _render_blockquote_open)
    return md


def _theme(env: Any) -> Theme:
    theme = env.get("theme") if isinstance(env, dict) else None
    if not isinstance(theme, Theme):
        raise TypeError("render_markdown needs a Theme")
    return theme


def _render_image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    alt = self.renderInlineAsText(tokens[idx].children, options, env).strip()
    words = _theme(env).words
    return escape_text(words.image_alt.format(alt=alt) if alt else words.image)


def _render_link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    allowed = link_allowed(href)
    # link_close has no href: remember this decision for it (links do not nest in CommonMark).
    env.setdefault("links", []).append(allowed)
    if not allowed:
        return ""
    url = html.escape(href, quote=True)
    # The title shows the real target on hover: the text of a link may claim another.
    return f'<a href="{url}" title="{url}" style="color:{_theme(env).link}">'


def _render_link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                       env: Any) -> str:
    stack = env.get("links") or [False]
    return "</a>" if stack.pop() else ""


def _render_fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    theme = _theme(env)
    lang = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    code = token.content[:-1] if token.content.endswith("\n") else token.content
    head = ""
    copy = env.get("copy") if isinstance(env, dict) else None
    if copy is not None:
        # Our own link, never one from the model: render rules drop every href whose scheme
        # is not http, https or mailto, so "hearth:" can only come from here.
        message, n = copy[0], copy[1] + env.setdefault("fences", 0)
        env["fences"] += 1
        # A header bar on the code's own background: the language, then the copy link (the
        # view paints a copy icon in the room the non-breaking spaces leave before its word).
        label = html.escape(lang or theme.words.code, quote=False)
        head = (f'<p style="margin-top:8px; margin-bottom:0px; background-color:{theme.code_bg}; '
                f'color:{theme.muted}; font-size:small">&nbsp;{label}&nbsp;&nbsp;&nbsp;&nbsp;'
                f'<a href="{ACTION_SCHEME}:copy-code/{message}/{n}" style="color:{theme.muted}; '
                f'text-decoration:none">{COPY_ICON_ROOM}'
                f'{escape_text(theme.words.copy_code)}</a>&nbsp;</p>\n')
    # A <pre> block, not a one-cell table (which would give it padding): every table is a frame,
    # and Qt walks all of a document's frames on each change, so a transcript of many code
    # blocks would make each streamed update slower. pre-wrap: a long line wraps instead of
    # widening the whole transcript.
    top = "; margin-top:0px" if head else ""
    return head + (f'<pre style="background-color:{theme.code_bg}; color:{theme.text}; '
                   f'white-space:pre-wrap{top}">{highlight_code(code, lang, theme.dark)}</pre>\n')


def _render_code_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                        env: Any) -> str:
    code = html.escape(tokens[idx].content, quote=False)
    return f'<code style="background-color:{_theme(env).code_bg}">{code}</code>'


def _render_table_open(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                       env: Any) -> str:
    theme = _theme(env)
    cells = 0
    for token in tokens[idx:]:
        if token.type == "table_close":
            break
        cells += token.type in ("th_open", "td_open")
    env["grid"] = cells > GRID_TABLE_CELLS
    if env["grid"]:
        return (f'<table border="0" cellspacing="1" cellpadding="4" bgcolor="{theme.border}" '
                f'style="margin-top:6px; margin-bottom:6px">\n')
    # Qt draws no cell rules unless asked, and bevelled ones unless told "solid"; collapse
    # gives single lines.
    return (f'<table border="1" cellspacing="0" cellpadding="4" style="border-collapse:collapse; '
            f'border-style:solid; border-color:{theme.border}; margin-top:6px; '
            f'margin-bottom:6px">\n')


def _render_cell_open(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                      env: Any) -> str:
    token = tokens[idx]
    style = str(token.attrGet("style") or "")  # "text-align:right" from the delimiter row
    align = {"text-align:left": "left", "text-align:center": "center",
             "text-align:right": "right"}.get(style, "")
    attrs = f' align="{align}"' if align else ""
    theme = _theme(env)
    if env.get("grid"):  # the cell's own background hides the table's colour but for the grid
        return f'<{token.tag}{attrs} bgcolor="{theme.base}">'
    return f"<{token.tag}{attrs} style=\"border-color:{theme.border}\">"


def _render_blockquote_open(self: Any, tokens: Sequence[Token], idx: int, options: Any,
                            env: Any) -> str:
    return f'<blockquote style="color:{_theme(env).muted}">\n'


@lru_cache(maxsize=3)
def _parser(kind: str) -> MarkdownIt:
    """The parsers, made on first use: "reply", "doc" (CommonMark's soft breaks) or "blocks"
    (block structure only, for the code blocks' list)."""
    if kind == "blocks":
        # Code blocks are found by the block rules alone: inline parsing is most of the cost
        # of a big reply, and a code block's text never depends on it.
        return _make_parser().disable("inline")
    return _make_parser(breaks=kind == "reply")


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer | None:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=2)
def _formatter(dark: bool) -> HtmlFormatter[str]:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(noclasses=True, nowrap=True,
                         style=DARK_CODE_STYLE if dark else LIGHT_CODE_STYLE)


@lru_cache(maxsize=256)
def highlight_code(code: str, lang: str, dark: bool) -> str:
    """Code as HTML spans with inline colours; escaped plain text for an unknown language.

    No language is guessed: guessing is slow, often wrong, and runs on every streamed update.
    Results are kept: a streaming reply is rendered again on every update, and its finished
    code blocks do not change (Pygments takes tens of milliseconds for a few hundred lines).
    """
    lexer = _lexer(lang.lower()) if lang else None
    if lexer is None:
        return html.escape(code, quote=False)
    from pygments import highlight

    return highlight(code, lexer, _formatter(dark)).removesuffix("\n")


def render_markdown(text: str, theme: Theme, copy: tuple[int, int] | None = None, *,
                    breaks: bool = True) -> str:
    """Markdown from a model as safe HTML for Qt (see the module's notes).

    ``copy``: (message index, number of the first code block) puts a "Copy code" link above
    each fenced code block. ``breaks``: a single newline in a paragraph is a line break (a
    reply); False joins the lines as CommonMark does (a document such as a model card).
    """
    return _parser("reply" if breaks else "doc").render(text, {"theme": theme, "copy": copy})


def code_blocks(text: str, reasoning: bool = True) -> list[str]:
    """The code blocks of a reply's answer (fenced or indented), in order: what each "Copy
    code" link copies. ``reasoning``: a reply's reasoning is split off first (not a user's
    message, which is shown whole)."""
    answer = split_reasoning(text).answer if reasoning else text
    return [t.content[:-1] if t.content.endswith("\n") else t.content
            for t in _parser("blocks").parse(answer) if t.type in ("fence", "code_block")]


# ---- Messages ----------------------------------------------------------------------------------


def message_name(m: Message, words: Words = ENGLISH) -> str:
    """Who wrote a message: "You", the model that wrote a reply (its file or its server's
    model), or "Assistant" for a reply that does not say."""
    if m.role == "user":
        return words.you
    if m.role == "assistant":
        source = ReplySource.from_meta(m.meta)
        return source.label() if source is not None else words.assistant
    return words.system if m.role == "system" else m.role


def render_name(m: Message, theme: Theme) -> str:
    """The name line above a message ("You", the model's name). The view paints the role's
    icon in the room its block format leaves on the left."""
    color = theme.user if m.role == "user" else theme.assistant
    return (f'<p style="margin-top:{MESSAGE_GAP_PX}px; margin-bottom:{NAME_GAP_PX}px">'
            f'<span style="font-weight:600; color:{color}">'
            f"{escape_text(message_name(m, theme.words))}</span></p>\n")


def render_message(m: Message, theme: Theme, streaming: bool = False, *,
                   index: int | None = None, expanded: bool = False, whole: bool = False,
                   cites: Cites | None = None) -> str:
    """One message as HTML: its name line, its reasoning (folded), its text, its note and,
    given its ``index`` in the view, the small line under it (:func:`render_footer`).

    Every message is Markdown, the user's too (raw HTML in it stays text); only a reply has a
    reasoning section. While ``streaming``, the reply ends with :data:`CURSOR_MARK`. Text too
    big to render at once is folded (app/chat/fold.py) and gets a "Show all" link; ``whole``
    shows all of the stored text instead, as plain text (:func:`render_whole`). The actions
    (copy, edit, regenerate, versions) are the view's buttons, not part of the HTML.
    ``cites``: the question's place and the documents that went with it; a finished reply's
    citations of them ("[report.pdf, page 4]") become links that open them.
    """
    cut = False
    copy = (index, 0) if index is not None else None
    if whole and not streaming:
        body, head = render_whole(m.content, theme), ""
    elif m.role == "user":
        folded = fold(m.content)
        cut = folded.cut
        body = render_markdown(folded.text, theme, copy) if folded.text else ""
        head = ""
    else:
        reasoned = split_reasoning(m.content)
        head = render_reasoning(reasoned, theme, index, expanded) + \
            render_tools(m, theme, index, expanded)
        folded = fold(reasoned.answer)
        cut = folded.cut or (expanded and fold(reasoned.reasoning or "").cut)
        body = render_markdown(folded.text, theme, copy) if folded.text else ""
    if streaming:
        body = _with_cursor(body)
    elif cites is not None and m.role == "assistant":
        body = link_citations(body, cites, theme)
    tail = render_documents(m, theme, index) + render_note(m, theme)
    if index is not None and not streaming:
        tail += render_footer(m, theme, index, whole=True if whole else (False if cut else None))
    return render_name(m, theme) + render_images(m) + head + body + tail


# A question's place in the view and the names of the documents that went with it (in the order
# of its DOCUMENTS_USED, which the link's number indexes).
Cites = tuple[int, Sequence[str]]
_TAG = re.compile(r"(<[^>]*>)")
_NO_LINKS_IN = {"a", "code", "pre"}


def link_citations(body: str, cites: Cites, theme: Theme) -> str:
    """``body`` (a reply's HTML) with each citation of a document the question had ("[name]",
    "[name, page 4]") made a link that opens it. The model's text only places the link: where
    it goes is Hearth's record of the attachment (the question's meta), and text inside links
    and code stays as it is."""
    question, names = cites
    escaped = {html.escape(n, quote=False): i for i, n in enumerate(names) if n}
    if not escaped or "[" not in body:
        return body
    alternatives = "|".join(re.escape(e) for e in sorted(escaped, key=len, reverse=True))
    pattern = re.compile(rf"\[({alternatives})((?:, [^\[\]<>]{{1,60}})?)\]")

    def link(m: re.Match[str]) -> str:
        href = f"{ACTION_SCHEME}:open-doc/{question}/{escaped[m.group(1)]}"
        return f'<a href="{href}" style="color:{theme.link}; text-decoration:none">{m.group(0)}</a>'

    out: list[str] = []
    inside = 0
    for piece in _TAG.split(body):
        if piece.startswith("<"):
            name = piece[1:].split(maxsplit=1)[0].rstrip(">").lower() if len(piece) > 2 else ""
            if name in _NO_LINKS_IN:
                inside += 1
            elif name.startswith("/") and name[1:] in _NO_LINKS_IN:
                inside = max(0, inside - 1)
            out.append(piece)
        else:
            out.append(piece if inside else pattern.sub(link, piece))
    return "".join(out)


THUMB_HEIGHT = 120  # a question's images in the transcript, in pixels high at most


def render_images(m: Message) -> str:
    """A question's images as thumbnails, above its text. Their sources are Hearth's record of
    what the person attached (references into its image store), never a message's text; the
    view draws only images of that store (app/ui/chat_images.py)."""
    refs = images_of(m)
    if not refs:
        return ""
    tags = []
    for ref in refs:
        width, height = ref.get("width"), ref.get("height")
        if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
            continue
        scale = min(1.0, THUMB_HEIGHT / height)
        tags.append(f'<img src="{html.escape(image_url(ref))}" '
                    f'width="{max(1, round(width * scale))}" '
                    f'height="{max(1, round(height * scale))}" '
                    f'alt="{html.escape(str(ref.get("name") or ""))}">')
    return f'<p>{"&nbsp;".join(tags)}</p>\n' if tags else ""


# Anchored at line starts, so that each line is scanned once: unanchored, the search would start
# again at every character of a line just under the limit.
_LONG_LINE = re.compile(rf"^[^\n]{{{WHOLE_BLOCK_CHARS + 1},}}", re.MULTILINE)


def break_long_lines(text: str) -> str:
    """``text`` with a line end at least every :data:`WHOLE_BLOCK_CHARS` characters (after a
    space when there is one), for Qt's layout only."""
    return _LONG_LINE.sub(_break_line, text)


def _break_line(m: re.Match[str]) -> str:
    # After a space in the second half of each block when there is one, so that the break looks
    # like the wrapping around it.
    line, out, start = m.group(), [], 0
    while len(line) - start > WHOLE_BLOCK_CHARS:
        end = start + WHOLE_BLOCK_CHARS
        space = line.rfind(" ", start + WHOLE_BLOCK_CHARS // 2, end)
        end = space + 1 if space >= 0 else end
        out.append(line[start:end])
        start = end
    out.append(line[start:])
    return "\n".join(out)


def render_whole(text: str, theme: Theme) -> str:
    """All of a message's stored text, as plain text in a code font: what "Show all" shows.

    Plain, not Markdown, so that showing it costs linear time whatever it holds (a table of a
    million cells, a line of a megabyte). Long lines are broken for Qt's sake only
    (:func:`break_long_lines`): Copy still copies the stored text.
    """
    return (f'<pre style="background-color:{theme.code_bg}; color:{theme.text}; '
            f'white-space:pre-wrap">{html.escape(break_long_lines(text), quote=False)}</pre>\n')


def render_reasoning(reasoned: Reasoned, theme: Theme, index: int | None,
                     expanded: bool) -> str:
    """The reasoning section: one folded line with its length, or the text when unfolded."""
    if reasoned.reasoning is None:
        return ""
    words = theme.words
    count = f"{len(reasoned.reasoning):,}"
    what = (words.thinking if reasoned.thinking else words.reasoning).format(count=count)
    arrow = "▾" if expanded else "▸"
    label = f"{arrow} {what}"
    if index is not None:
        label = (f'<a href="{ACTION_SCHEME}:think/{index}" style="color:{theme.muted}; '
                 f'text-decoration:none">{escape_text(label)}</a>')
    else:
        label = escape_text(label)
    out = f'<p style="color:{theme.muted}">{label}</p>\n'
    if expanded and reasoned.reasoning:
        out += _reasoning_text(reasoned.reasoning, theme)
    return out


def _reasoning_text(reasoning: str, theme: Theme) -> str:
    return (f'<blockquote style="color:{theme.muted}">'
            f"{render_markdown(fold(reasoning).text, theme)}</blockquote>\n")


def render_documents(m: Message, theme: Theme, index: int | None) -> str:
    """The muted line under a question with documents: what of each went in ("3 passages from
    report.pdf, page 4, page 9"), each name a link that opens the file. The links come from
    Hearth's own record of what the person attached, never from a message's text."""
    used = m.meta.get(DOCUMENTS_USED) if m.role == "user" else None
    if not isinstance(used, list):
        return ""
    words = theme.words
    parts = []
    for n, u in enumerate(used):
        if not isinstance(u, dict) or not isinstance(u.get("name"), str):
            continue
        name = escape_text(u["name"])
        if index is not None:
            name = (f'<a href="{ACTION_SCHEME}:open-doc/{index}/{n}" style="color:{theme.link}; '
                    f'text-decoration:none">{name}</a>')
        count = u.get("passages")
        if u.get("whole") is True or not isinstance(count, int):
            parts.append(escape_text(words.document_whole).format(name=name))
            continue
        template = words.document_passage if count == 1 else words.document_passages
        text = escape_text(template).format(name=name, count=count)
        places = [_place(p, words) for p in u.get("places") or [] if isinstance(p, str)]
        parts.append(", ".join([text, *(escape_text(p) for p in places)]))
    if not parts:
        return ""
    return (f'<p style="color:{theme.muted}">{escape_text(words.documents)} '
            f'{"; ".join(parts)}</p>\n')


def _place(place: str, words: Words) -> str:
    head, _, number = place.partition(" ")
    return words.page.format(number=number) if head == "page" and number.isdigit() else place


def render_note(m: Message, theme: Theme) -> str:
    """"Stopped.", "The reply reached its length limit." under a reply."""
    note = dict(theme.words.notes).get(m.note, m.note)
    return (f'<p style="color:{theme.note}; font-style:italic">{escape_text(note)}</p>\n'
            if note else "")


def render_footer(m: Message, theme: Theme, index: int, whole: bool | None = None) -> str:
    """The small muted line under a message: "Show all" for a folded one, a reply's speed and,
    for a reply from a server that does not stream, that it came whole. Empty when there is
    nothing to say. ``whole``: None for a message shown as it is, False for one shown folded
    ("Show all", or "Show all in a window" past :data:`WHOLE_INLINE_CHARS`), True for one shown
    whole ("Show less")."""
    words = theme.words

    def link(action: str, text: str) -> str:
        return (f'<a href="{ACTION_SCHEME}:{action}/{index}" style="color:{theme.link}; '
                f'text-decoration:none">{escape_text(text)}</a>')

    parts = []
    if whole:
        parts.append(link("whole", words.show_less))
    elif whole is not None:
        template = words.show_all_window if len(m.content) > WHOLE_INLINE_CHARS else \
            words.show_all
        parts.append(link("whole", template.format(count=f"{len(m.content):,}")))
    speed = m.meta.get("tokens_per_s")
    sent_whole = m.meta.get("streamed") is False  # sent at once: no meaningful token rate
    if m.role == "assistant" and isinstance(speed, int | float) and not sent_whole:
        parts.append(escape_text(words.speed.format(speed=f"{speed:.1f}")))
    source = ReplySource.from_meta(m.meta) if m.role == "assistant" else None
    if source is not None and sent_whole:
        parts.append(escape_text(words.sent_whole.format(source=source.label())))
    if not parts:
        return ""
    sep = " &nbsp;·&nbsp; "
    return (f'<p style="margin-top:2px; color:{theme.muted}; font-size:small">'
            f"{sep.join(parts)}</p>\n")


def _with_cursor(body: str) -> str:
    # Inside the last paragraph when there is one, so the mark sits after the last word.
    if body.endswith("</p>\n"):
        return body[:-5] + CURSOR_MARK + "</p>\n"
    return body + f"<p>{CURSOR_MARK}</p>\n"


def render_placeholder(text: str, theme: Theme) -> str:
    """The hint shown while there are no messages."""
    # Centred: the empty conversation's one line, not a first message.
    return f'<p align="center" style="color:{theme.muted}">{escape_text(text)}</p>\n'


# ---- tool calls ---------------------------------------------------------------------------------
# A reply's tool calls (app/chat/toolcalls.py): each round's text, then one folded line per call
# saying which tool, how it went and how long it took. Unfolded (the reasoning toggle,
# ``think/<index>``, unfolds both) it shows the model's arguments and the tool's result. Both
# came from outside Hearth (the model, a tool's server) and are shown as escaped text in a
# preformatted block, cut for the view: never as Markdown or markup, so a result can neither
# draw a link nor name a file the view would load.

TOOL_SHOWN = 4_000  # characters of arguments or of a result the view shows (the rest: "…")


def render_tools(m: Message, theme: Theme, index: int | None, expanded: bool) -> str:
    out = []
    for round_ in rounds_of(m):
        text = round_.get("text")
        if isinstance(text, str) and text.strip():
            # A thinking model thinks before its calls too: folded with them, unfolded with them.
            reasoned = split_reasoning(text)
            if expanded and reasoned.reasoning:
                out.append(_reasoning_text(reasoned.reasoning, theme))
            if reasoned.answer.strip():
                out.append(render_markdown(reasoned.answer, theme))
        for call in calls_of(round_):
            out.append(_tool_call(call, theme, index, expanded))
    return "".join(out)


def tools_key(m: Message) -> tuple[object, ...]:
    """What the calls' lines are drawn from: the live reply draws them again when it changes."""
    return tuple((len(str(r.get("text") or "")), tuple(
        (c.get("status"), c.get("ms")) for c in calls_of(r))) for r in rounds_of(m))


def _tool_call(call: dict[str, object], theme: Theme, index: int | None, expanded: bool) -> str:
    words = theme.words
    status = str(call.get("status") or "")
    state = dict(words.tool_states).get(status, status)
    ms = call.get("ms")
    took = f" · {ms:,} ms" if isinstance(ms, int) and ms > 0 else ""
    arrow = "▾" if expanded else "▸"
    line = escape_text(f"{arrow} " + words.tool_line.format(
        name=str(call.get("name") or "")[:80], status=state) + took)
    colour = theme.note if status in ("error", "denied", "timed_out", "unknown") else theme.muted
    if index is not None:
        line = (f'<a href="{ACTION_SCHEME}:think/{index}" style="color:{colour}; '
                f'text-decoration:none">{line}</a>')
    out = f'<p style="color:{colour}">{line}</p>\n'
    if expanded:
        out += _tool_block(words.tool_arguments, pretty_json(str(call.get("arguments") or "")), theme)
        if status not in ("asking", "running"):
            out += _tool_block(words.tool_result, str(call.get("result") or ""), theme)
    return out


def _tool_block(label: str, text: str, theme: Theme) -> str:
    shown = text if len(text) <= TOOL_SHOWN else text[:TOOL_SHOWN] + "…"
    return (f'<p style="color:{theme.muted}">{escape_text(label)}</p>\n'
            f'<pre style="background:{theme.code_bg}">{escape_text(shown)}</pre>\n')


def pretty_json(arguments: str) -> str:
    """A call's arguments indented, when they are JSON (else as the model wrote them)."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments
