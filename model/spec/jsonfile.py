"""Reading a JSON file that may be hostile (a scenario, a report, a checkpoint manifest): a size limit, UTF-8,
no key twice in one object, bounded nesting, no lone surrogate; every refusal one line (ValueError)."""
from __future__ import annotations

import json
import re


def read_json(path: str, what: str, limit: int):
    """The JSON value in a file of at most ``limit`` bytes; ValueError with one line naming ``what`` (e.g.
    "scenario") when it cannot be read, is larger, is not UTF-8 or is not JSON (hostile input: no traceback)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise ValueError(f"cannot read {what} {path}: {e.strerror or e}") from None
    if len(raw) > limit:
        raise ValueError(f"{what} {path} is larger than {limit >> 20} MB: not a {what} file")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(f"{what} {path} starts with a byte order mark (BOM): save it as UTF-8 without one")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what} {path} is not UTF-8 text (byte {e.start}: 0x{raw[e.start]:02x})") from None
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_int=_whole_number)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what} {path} is not valid JSON: {_plain(e.msg)} at line {e.lineno}, column "
                         f"{e.colno}") from None
    except RecursionError:
        raise ValueError(f"{what} {path} is not a {what} file: its JSON is nested too deeply") from None
    except DuplicateKey as e:
        raise ValueError(f"{what} {path} is ambiguous: {e}") from None
    except NumberTooLong as e:
        raise ValueError(f"{what} {path} has a number of {e.digits:,} digits{_place_of_digits(text, e.digits)}: "
                         f"no number jbodcheck reads has more than {MAX_DIGITS:,}") from None
    except ValueError as e:  # noqa: TRY302 - nothing else is known to get here; one line all the same
        raise ValueError(f"{what} {path} is not valid JSON: {' '.join(str(e).split())[:200]}") from None
    problem = _unusable_value(data)
    if problem:
        raise ValueError(f"{what} {path} is not a {what} file: {problem}")
    return data


class DuplicateKey(ValueError):
    pass


# json's messages (json.decoder) in plain words; the place (line, column) is added to each
_PLAIN = (
    ("Unterminated string starting at", "a string is never closed (a \" is missing): it starts"),
    ("Expecting value", "a value is missing (or a comma is one too many)"),
    ("Expecting ',' delimiter", "a comma is missing"),
    ("Expecting ':' delimiter", "a colon is missing after a key"),
    ("Expecting property name enclosed in double quotes", "a key in double quotes is missing (or a comma is "
                                                          "one too many)"),
    ("Extra data", "there is more after the JSON value"),
    ("Invalid control character at", "a string holds a raw control character (a line break or a tab: write \\n "
                                      "or \\t)"),
    ("Invalid \\uXXXX escape", "a \\u escape is not 4 hex digits"),
    ("Invalid \\escape", "a backslash escape is not one of JSON's"),
)


def _plain(message: str) -> str:
    for python, plain in _PLAIN:
        if message.startswith(python):
            return plain
    return message


# Python's own limit on converting digits to an int (sys.get_int_max_str_digits): no bound, count or id of a
# scenario, report or manifest comes near it.
MAX_DIGITS = 4300


class NumberTooLong(ValueError):
    def __init__(self, digits: int):
        super().__init__(digits)
        self.digits = digits


def _whole_number(text: str) -> int:
    """json's parse_int: a number of more than MAX_DIGITS digits is refused by name (Python's own error says
    "use sys.set_int_max_str_digits()")."""
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise NumberTooLong(digits)
    return int(text)


def _place_of_digits(text: str, digits: int) -> str:
    """ " at line L, column C": where the first run of ``digits`` digits outside a string is (best effort)."""
    match = re.search(r"(?<![\d\w\\.])-?(\d{%d})(?!\d)" % digits, text)
    if match is None:
        return ""
    line = text.count("\n", 0, match.start()) + 1
    return f" at line {line}, column {match.start() - (text.rfind(chr(10), 0, match.start()) + 1) + 1}"


def _unique_keys(pairs: list) -> dict:
    """json's object_pairs_hook: an object that names a key twice is refused (json keeps the last silently)."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise DuplicateKey(f"the key {json.dumps(twice)[:60]} appears twice in one object")
    return data


# Deeper than any file jbodcheck writes (a report's state is six levels down); deeper would only overflow the
# recursive code that reads or renders it.
MAX_JSON_DEPTH = 32


def _unusable_value(data) -> str | None:
    """What makes a loaded JSON value unusable even before its shape is checked: nesting deeper than
    MAX_JSON_DEPTH, or a string (value or key) with a lone surrogate (valid JSON, "\\ud800", but not text: it
    cannot be printed or written as UTF-8). None when there is nothing of the kind."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"its JSON is nested more than {MAX_JSON_DEPTH} levels deep"
        if isinstance(value, dict):
            stack.extend((k, depth + 1) for k in value)
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str):
            problem = text_problem(value)
            if problem:
                return problem
    return None


def text_problem(text: str) -> str | None:
    """Why a string is not text that can be printed (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"a string holds a lone surrogate (\\u{ord(text[e.start]):04x}), which is not text"
    return None
