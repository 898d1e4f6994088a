"""`domain/text.py`, the one place text is made inert: every Unicode format character (bidi
overrides and isolates, zero-width ones, tag characters), the line and paragraph separators
and every control character but tab and newline are shown escaped; escape sequences go."""

from __future__ import annotations

import sys
import unicodedata

from ecoready.domain.text import acting_character, escaped, inert, one_line


def test_every_format_and_separator_character_is_shown_escaped() -> None:
    acting = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cf", "Zl", "Zp", "Cc") and chr(code) not in "\t\n\r"
    ]
    assert len(acting) > 150
    for char in acting:
        assert inert(f"a{char}b") == f"a{escaped(char)}b", hex(ord(char))
        assert acting_character(f"ok{char}") == char, hex(ord(char))


def test_the_escapes_read_as_code_points() -> None:
    assert inert("\x07\x9b\u202e\U000e0041") == "\\x07\\x9b\\u202e\\U000e0041"
    assert inert("\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07") == "red link"  # sequences go whole
    assert inert("a\r\nb\rc\td") == "a\nbc\td"  # line ends and tabs are layout
    assert one_line("first\nlast \u2066x\u2069") == "last \\u2066x\\u2069"


def test_plain_text_and_other_scripts_pass_unchanged() -> None:
    for text in ("MariaDB 10.11 ✔ ᵉ", "Привет, мир", "مرحبا", "日本語", "emoji 🐬", "tab\there"):
        assert inert(text) == text
        assert acting_character(text) is None
    assert acting_character("a\tb", layout_ok=False) == "\t"
    assert acting_character("a\nb", layout_ok=False) == "\n"
