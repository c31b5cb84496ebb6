"""Text from students, made safe for each place a report or a class run writes it.

Names of files and folders, what a submission printed, and messages that quote what it did,
come from students. Every report format first sees them through :func:`for_display`, which
:func:`grader.report.visibility.view` applies to all of a report's text, so no format can show
a raw control character (a terminal escape, a bidi override that reorders a CI page). Each
medium then has its own dangers, so each has its own helper, applied where the text is written
(never once for all: what is harmless in CSV breaks a Markdown table):

    shown_name(name)   a file or folder name as text: bytes that are not UTF-8 become ``\\xNN``
    for_terminal(text) control characters (escape sequences, newlines, bidi overrides) escaped
    for_csv(text)      the same, and a cell a spreadsheet would run as a formula is quoted
    for_markdown(text) no raw HTML, no links or images, no mentions, no line or table breaks
    for_html(text)     control characters escaped, newlines kept (autoescaping does the rest)
    for_display(data)  for_html on every string of a report's data (keys included)
    for_shell(text)    one shell word that a terminal shows as it is (bash's $'...' quoting)

Escapes are written the way Python writes them (``\\x1b``, ``\\n``, ``\\u202e``), so what the
instructor sees is what the name really holds.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Any

# Cells starting with these are formulas to Excel, LibreOffice or Google Sheets (OWASP's list,
# plus the full-width forms some locales accept).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Markdown: what could start markup anywhere in a line (links and images need '[', emphasis,
# code, tables, raw HTML). '&' and the angle brackets become entities, so no tag and no
# autolink survives.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]|~<>&]")
_MARKDOWN_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_MENTION = re.compile(r"@(?=\w)")
# GitHub and other renderers turn bare URLs and "www." into links: a zero-width space after the
# scheme's colon (or after "www") keeps them text.
_LINK_START = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*:(?=//)|(?:javascript|vbscript|data|mailto):|www(?=\.))")
_BLOCK_START = re.compile(r"^(\s*)([-+#=]|\d+[.)])")  # a list item, a heading, a setext underline


def _escape_char(char: str) -> str:
    code = ord(char)
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape_unprintable(text: str, keep: str = "") -> str:
    if text.isprintable():  # the common case costs one C-level scan
        return text
    return "".join(char if char.isprintable() or char in keep else _escape_char(char) for char in text)


def shown_name(name: str) -> str:
    """A name from the file system (``os.fsdecode``: undecodable bytes are lone surrogates) as
    text every writer accepts: ``caf\\xe9.py`` for the bytes ``b'caf\\xe9.py'``."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def for_terminal(text: str) -> str:
    """One line a terminal shows as it is: every character that is not printable (escape
    sequences, carriage returns, newlines, bidi overrides, zero-width characters) escaped."""
    return _escape_unprintable(text)


def for_csv(text: str) -> str:
    """A CSV cell: escaped as for a terminal (a newline in a name would split a row in many
    readers), then quoted with a leading ``'`` where a spreadsheet would run it as a formula,
    also after trimming leading whitespace (`` =1+1``, ``\u00a0=1+1``)."""
    escaped = _escape_unprintable(text)
    # Spreadsheets and CSV importers trim leading whitespace before deciding what a cell is.
    formula = any(cell.startswith(_FORMULA_STARTS) for raw in (text, escaped) for cell in (raw, raw.lstrip()))
    return "'" + escaped if formula else escaped


def for_markdown(text: str) -> str:
    """Inline Markdown text (a table cell, a list item) that renders as the text itself: markup
    characters backslash-escaped, ``< > &`` as entities (no raw HTML, no autolinks), ``@name``
    and URL schemes (``https:``, ``javascript:``, ``www.``) broken with a zero-width space (no
    mentions, no ``@everyone``, no links), newlines and carriage
    returns as spaces (tables stay whole), other control characters escaped, and a leading
    list marker or heading mark escaped (so a list item stays one plain item)."""
    text = _escape_unprintable(text.replace("\r\n", " ").replace("\r", " ").replace("\n", " "))
    text = _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_ENTITIES.get(m.group(), "\\" + m.group()), text)
    text = _MENTION.sub("@\u200b", text)
    text = _LINK_START.sub(lambda m: m.group() + "\u200b", text)
    return _BLOCK_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


def for_html(text: str) -> str:
    """Text for an autoescaped HTML template: control characters escaped, except newlines and
    tabs, which messages use and ``white-space: pre-wrap`` shows."""
    return _escape_unprintable(text.replace("\r\n", "\n"), keep="\n\t")


def for_display(data: Any) -> Any:
    """``data`` (a report's ``as_data``: dicts, lists, strings, numbers) with every string, keys
    included, escaped as :func:`for_html` does: newlines and tabs kept, every other unprintable
    character (ESC, CSI, carriage returns, U+202A-202E, U+2066-2069, U+200E/F, U+061C) written
    as ``\\x1b``, ``\\u202e``... so it shows in every format, and reorders or redraws nothing."""
    if isinstance(data, str):
        return for_html(data)
    if isinstance(data, dict):
        return {for_display(key): for_display(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(for_display(item) for item in data)
    return data


def for_shell(text: str) -> str:
    """``text`` as one shell word (``shlex.quote``), or, when it holds an unprintable character,
    in bash's ``$'...'`` quoting with that character escaped: a command a report prints (after
    :func:`for_display`, which leaves it as it is) still names the real file when pasted."""
    if text.isprintable():
        return shlex.quote(text)
    escaped = "".join("\\" + char if char in "\\'" else char for char in text)
    return "$'" + _escape_unprintable(escaped) + "'"
