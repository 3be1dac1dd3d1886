"""Placeholders across formats: each tool's syntax read into pieces, and written back out.

A text is a list of pieces: literal text (`str`) and placeholders (`Var`). Each format's reader
splits its own syntax into pieces, with that tool's rules (which names count, what is left alone);
`to_jinja` writes the pieces as this project's Jinja, with literal braces escaped so they stay
text; `from_jinja` reads a persona's Jinja back into pieces for a format with a simpler syntax,
refusing what that format cannot say.

| syntax | placeholder | read by |
|---|---|---|
| CrewAI | `{topic}` (letters, digits, `_`, `-`) | `single_brace` |
| Google ADK | `{topic}`, `{topic?}`, `{app:key}`, `{artifact.file}` | `adk_state` |
| Semantic Kernel | `{{$topic}}`; `{{plugin.fn …}}` calls code | `semantic_kernel` |
| Agent Spec | `{{topic}}` | `double_brace` |
| Mustache, Handlebars | `{{topic}}`, sections, helpers | `mustache`, `handlebars` (straight to Jinja) |

A placeholder named like a persona field (CrewAI's `{goal}` is the customer's goal, not the
agent's), like a variable the library fills (`tools`), or not a usable name (`customer-name`) is
renamed by `Namer`, which records each renaming so an exporter can write the original back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..fields import PROFILE_FIELDS

__all__ = [
    "CREWAI_PLACEHOLDER",
    "Namer",
    "Piece",
    "Unsupported",
    "Var",
    "adk_state",
    "double_brace",
    "escape_jinja",
    "from_jinja",
    "handlebars",
    "jinja_names",
    "mustache",
    "rename_jinja",
    "semantic_kernel",
    "single_brace",
    "to_jinja",
    "variables",
]


@dataclass(frozen=True)
class Var:
    """A placeholder, by its name in the source syntax (`plan?`, `app:company`, `customer-name`)."""

    name: str
    #: For ADK's `{name?}`: the tool renders an empty text when the value is missing.
    optional: bool = False


Piece = str | Var


class Unsupported(ValueError):
    """A construct the target syntax cannot express; `line` is its line in the text, from 1."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(reason)


#: Names a placeholder may not keep: persona fields, and variables the library fills itself.
RESERVED = frozenset(
    {*PROFILE_FIELDS, "tools", "tool_names", "resources", "react", "out_schema", "resource_prompt", "is_retry_chat"}
)

#: Words Jinja reads as syntax, never as a variable.
_JINJA_WORDS = frozenset(
    "and or not in is if else elif endif for endfor set endset block endblock macro endmacro call endcall "
    "filter endfilter with endwith raw endraw include import from extends as recursive true false none "
    "True False None loop self super".split()
)

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _usable(name: str) -> bool:
    """Whether a placeholder may keep `name` in a persona."""
    return bool(_IDENTIFIER.match(name)) and name not in RESERVED and name not in _JINJA_WORDS


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def variables(pieces: Iterable[Piece]) -> list[str]:
    """The placeholder names of `pieces`, each once, in order."""
    return list(dict.fromkeys(piece.name for piece in pieces if isinstance(piece, Var)))


# reading ---------------------------------------------------------------------------------------

CREWAI_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)\}")


def _split(text: str, pattern: re.Pattern[str], make: Any) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in pattern.finditer(text):
        made = make(match)
        if made is None:
            continue
        if match.start() > position:
            pieces.append(text[position : match.start()])
        pieces.append(made)
        position = match.end()
    if position < len(text):
        pieces.append(text[position:])
    return _merged(pieces)


def _merged(pieces: Iterable[Piece]) -> list[Piece]:
    merged: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return merged


def single_brace(text: str) -> list[Piece]:
    """CrewAI's `{name}`: a name of letters, digits, `_` and `-`; any other brace is text.

    CrewAI has no escape: `{{x}}` is `{` + the value + `}`, and so are these pieces.
    """
    return _split(text, CREWAI_PLACEHOLDER, lambda match: Var(match.group(1)))


# ADK: at least one brace each side, nothing braced inside, not after `$`, `{` or a backslash
_ADK = re.compile(r"(?<![\$\{\\])\{+[^{}]*\}+")
_ADK_PREFIXES = ("app:", "user:", "temp:")


def adk_state(text: str) -> list[Piece]:
    """Google ADK's state placeholders, with ADK's own rules for what counts as one.

    `{name}` and `{{ name }}` alike, `{name?}` (optional), `{app:name}`/`{user:name}`/
    `{temp:name}` (prefixed state) and `{artifact.file}` (an artifact's text); any other braced
    text, such as JSON, stays as it is.
    """

    def make(match: re.Match[str]) -> Var | None:
        inner = match.group().lstrip("{").rstrip("}").strip()
        optional = inner.endswith("?")
        name = inner[:-1] if optional else inner
        if name.startswith("artifact."):
            return Var(name, optional) if len(name) > len("artifact.") else None
        parts = name.split(":")
        if len(parts) == 2 and f"{parts[0]}:" in _ADK_PREFIXES and parts[1].isidentifier():
            return Var(name, optional)
        if len(parts) == 1 and name.isidentifier():
            return Var(name, optional)
        return None

    return _split(text, _ADK, make)


_AGENTSPEC = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def double_brace(text: str) -> list[Piece]:
    """Open Agent Spec's `{{name}}` (spaces allowed inside); anything else is text."""
    return _split(text, _AGENTSPEC, lambda match: Var(match.group(1)))


_SK_BLOCK = re.compile(r"\{\{(.*?)\}\}", re.S)
_SK_STRING = re.compile(r"""^\s*(?:'((?:\\.|[^'\\])*)'|"((?:\\.|[^"\\])*)")\s*$""", re.S)
_SK_VARIABLE = re.compile(r"^\s*\$([A-Za-z0-9_]+)\s*$")


def semantic_kernel(text: str, calls: list[tuple[str, int]] | None = None) -> list[Piece]:
    """Semantic Kernel's own syntax: `{{$name}}`; `{{ "text" }}` is text (how SK escapes `{{`).

    A block calling a kernel function (`{{plugin.fn $arg}}`, `{{fn}}`) runs code in SK; it is
    left out here, and listed in `calls` as (block, line) so the import can report it.
    """

    def make(match: re.Match[str]) -> Piece:
        inner = match.group(1)
        variable = _SK_VARIABLE.match(inner)
        if variable:
            return Var(variable.group(1))
        string = _SK_STRING.match(inner)
        if string:
            value = string.group(1) if string.group(1) is not None else string.group(2)
            return re.sub(r"\\(.)", r"\1", value)
        if calls is not None:
            calls.append((match.group(0), _line(text, match.start())))
        return ""

    return _split(text, _SK_BLOCK, make)


# writing Jinja ---------------------------------------------------------------------------------

_JINJA_OPEN = re.compile(r"\{[{%#]")


def escape_jinja(text: str, *, before_tag: bool = False) -> str:
    """Literal text as Jinja that renders exactly it: each `{{`, `{%` and `{#` printed as a string.

    Expression tags, not `{% raw %}`: the sandbox trims the line break after a block tag, which
    would eat a newline after `{% endraw %}`. `before_tag` is for text a tag follows: a `{` at
    its end would join the tag's own braces, so it is printed as a string too.
    """
    escaped = _JINJA_OPEN.sub(lambda match: "{{ '" + match.group() + "' }}", text)
    if before_tag and escaped.endswith("{"):
        escaped = escaped[:-1] + "{{ '{' }}"
    return escaped


def to_jinja(pieces: Sequence[Piece], names: dict[str, str]) -> str:
    """The pieces as Jinja: text escaped, each placeholder `{{ name }}` under its new name."""
    out = []
    merged = _merged(pieces)
    for index, piece in enumerate(merged):
        if isinstance(piece, Var):
            out.append("{{ " + names.get(piece.name, piece.name) + " }}")
        else:
            out.append(escape_jinja(piece, before_tag=index + 1 < len(merged)))
    return "".join(out)


# reading Jinja back ----------------------------------------------------------------------------


def from_jinja(source: str) -> list[Piece]:
    """A persona's Jinja text as pieces: `{{ name }}` placeholders and literal text.

    Literal text may be written plain, in `{% raw %}` or as `{{ 'text' }}`; comments are dropped.

    Raises:
        Unsupported: a filter, a condition, a loop, or any other expression, with its line.
    """
    import jinja2

    lexer = jinja2.Environment(keep_trailing_newline=True).lexer
    pieces: list[Piece] = []
    try:
        tokens = [token for token in lexer.tokeniter(source, None) if token[1] != "whitespace"]
    except jinja2.TemplateSyntaxError as exc:
        raise Unsupported(f"the template does not parse: {exc.message}", exc.lineno) from None
    index = 0
    while index < len(tokens):
        line, kind, value = tokens[index]
        if kind == "data":
            pieces.append(value)
        elif kind in ("raw_begin", "raw_end", "comment_begin", "comment", "comment_end"):
            pass
        elif kind == "variable_begin":
            inner = []
            index += 1
            while index < len(tokens) and tokens[index][1] != "variable_end":
                inner.append(tokens[index])
                index += 1
            if len(inner) == 1 and inner[0][1] == "name":
                pieces.append(Var(inner[0][2]))
            elif len(inner) == 1 and inner[0][1] == "string":
                pieces.append(_jinja_string(inner[0][2]))
            else:
                shown = "".join(str(token[2]) for token in inner)
                raise Unsupported(f"{{{{ {shown} }}}} is an expression, not a plain placeholder", line)
        elif kind == "block_begin":
            words = []
            while index < len(tokens) and tokens[index][1] != "block_end":
                words.append(str(tokens[index][2]))
                index += 1
            raise Unsupported(f"{' '.join(words[1:3])!r} is a Jinja statement (a condition, loop or assignment)", line)
        else:
            raise Unsupported(f"unexpected {value!r}", line)
        index += 1
    return _merged(pieces)


def _jinja_string(literal: str) -> str:
    import ast

    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return literal[1:-1]
    return value if isinstance(value, str) else str(value)


# names -----------------------------------------------------------------------------------------


@dataclass
class Namer:
    """Jinja names for a source's placeholders: kept where usable, else renamed, each once.

    `taken` are names in use already (every placeholder of the source, so a new name never
    collides with one of them). `renamed` maps each new name to the source's own.
    """

    taken: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)

    def name(self, source_name: str) -> str:
        """The Jinja name of a placeholder named `source_name` in the source."""
        if source_name in self.names:
            return self.names[source_name]
        if _usable(source_name):
            made = source_name
        else:
            base = re.sub(r"[^A-Za-z0-9_]+", "_", source_name).strip("_") or "value"
            if base[0].isdigit():
                base = "v_" + base
            if not _usable(base):
                base += "_input"
            made = base
            number = 2
            while made in self.taken or made in self.renamed:
                made = f"{base}_{number}"
                number += 1
            self.renamed[made] = source_name
        self.names[source_name] = made
        self.taken.add(made)
        return made

    def all(self, names: Iterable[str]) -> dict[str, str]:
        self.taken |= {name for name in names if _IDENTIFIER.match(name)}
        return {name: self.name(name) for name in names}


# Jinja sources ---------------------------------------------------------------------------------

_TAG = re.compile(r"\{%-?\s*raw\s*-?%\}.*?\{%-?\s*endraw\s*-?%\}|\{#.*?#\}|\{\{.*?\}\}|\{%.*?%\}", re.S)
_TOKEN = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|[A-Za-z_][A-Za-z0-9_]*|==|!=|\S""")


def _tag_tokens(tag: str) -> Iterator[re.Match[str]]:
    return _TOKEN.finditer(tag)


def rename_jinja(source: str, names: dict[str, str]) -> str:
    """`source` with each variable in `names` renamed, leaving attributes, filters and tests alone.

    Every read and every assignment of the name is renamed alike, so the template means the same.
    """
    if not names:
        return source

    def in_tag(match: re.Match[str]) -> str:
        tag = match.group()
        if tag.startswith("{#") or re.match(r"\{%-?\s*raw", tag):
            return tag
        tokens = list(_tag_tokens(tag))
        out = []
        position = 0
        for index, token in enumerate(tokens):
            word = token.group()
            if word not in names:
                continue
            before = tokens[index - 1].group() if index else ""
            after = tokens[index + 1].group() if index + 1 < len(tokens) else ""
            if before in (".", "|", "is") or (before == "not" and index > 1 and tokens[index - 2].group() == "is"):
                continue
            if after == "=" and before in ("(", ","):
                continue  # a keyword argument
            out.append(tag[position : token.start()])
            out.append(names[word])
            position = token.end()
        out.append(tag[position:])
        return "".join(out)

    return _TAG.sub(in_tag, source)


def jinja_names(source: str) -> list[str]:
    """The variables a Jinja source reads from outside (not the ones it sets itself), in order.

    Raises:
        Unsupported: the source does not parse, with the line.
    """
    import jinja2
    from jinja2 import meta

    environment = jinja2.Environment()
    try:
        tree = environment.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise Unsupported(f"the template does not parse: {exc.message}", exc.lineno) from None
    found = meta.find_undeclared_variables(tree)
    order = [node.name for node in tree.find_all(jinja2.nodes.Name) if node.name in found]
    return list(dict.fromkeys(order))


# Mustache and Handlebars, straight to Jinja ----------------------------------------------------

_MUSTACHE = re.compile(r"\{\{\{(.*?)\}\}\}|\{\{(.*?)\}\}", re.S)


def _dotted(name: str) -> bool:
    return all(_IDENTIFIER.match(part) for part in name.split("."))


def mustache(text: str, names: Namer, notes: list[tuple[str, int]]) -> str:
    """A Mustache template as Jinja: variables, sections as conditions, comments dropped.

    Partials (`{{> name}}`, another file) and delimiter changes are refused; a section
    (`{{#list}}…{{/list}}`) becomes a condition, which differs from Mustache when the value is
    a list, so each one is noted.
    """
    out: list[str] = []
    position = 0
    stack: list[str] = []
    for match in _MUSTACHE.finditer(text):
        line = _line(text, match.start())
        out.append(escape_jinja(text[position : match.start()], before_tag=True))
        position = match.end()
        inner = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
        sigil = inner[:1]
        if match.group(1) is None and sigil in "#^/!>=&":
            body = inner[1:].strip()
        else:
            sigil, body = "", inner
        if sigil == "!":
            continue
        if sigil in (">", "="):
            what = "a partial (another file)" if sigil == ">" else "a delimiter change"
            raise Unsupported(f"{match.group()!r} is {what}, which this import does not read", line)
        if not _dotted(body):
            raise Unsupported(f"{match.group()!r} is not a variable name", line)
        head, _, rest = body.partition(".")
        jinja = names.name(head) + ("." + rest if rest else "")
        if sigil == "#":
            stack.append(body)
            notes.append((f"the section {{{{#{body}}}}} became a condition; a list value is no longer looped over",
                          line))
            out.append("{% if " + jinja + " %}")
        elif sigil == "^":
            stack.append(body)
            out.append("{% if not " + jinja + " %}")
        elif sigil == "/":
            if not stack or stack[-1] != body:
                raise Unsupported(f"{match.group()!r} closes a section that is not open", line)
            stack.pop()
            out.append("{% endif %}")
        else:
            out.append("{{ " + jinja + " }}")
    if stack:
        raise Unsupported(f"the section {{{{#{stack[-1]}}}}} is never closed", _line(text, len(text)))
    out.append(escape_jinja(text[position:]))
    return "".join(out)


_HANDLEBARS = re.compile(r"\{\{(~?)(.*?)(~?)\}\}", re.S)


def handlebars(text: str, names: Namer) -> str:
    """A Handlebars template as Jinja: variables, `#if`/`#unless`/`else`, `#each` with `this`.

    Raises:
        Unsupported: a helper call or a block this import does not read, with its line.
    """
    out: list[str] = []
    position = 0
    stack: list[str] = []
    for match in _HANDLEBARS.finditer(text):
        line = _line(text, match.start())
        out.append(escape_jinja(text[position : match.start()], before_tag=True))
        position = match.end()
        inner = match.group(2).strip()
        if inner.startswith("!"):
            continue
        words = inner.split()
        if not words:
            raise Unsupported("an empty {{ }}", line)
        head = words[0]
        if head in ("#if", "#unless") and len(words) == 2:
            stack.append(head[1:])
            condition = _handlebars_value(words[1], names, stack, line)
            out.append("{% if " + ("not " if head == "#unless" else "") + condition + " %}")
        elif head == "#each" and len(words) == 2:
            out.append("{% for this in " + _handlebars_value(words[1], names, stack, line) + " %}")
            stack.append("each")
        elif head == "else" and len(words) == 1 and stack and stack[-1] in ("if", "unless"):
            out.append("{% else %}")
        elif head in ("/if", "/unless", "/each") and len(words) == 1:
            if not stack or stack[-1] != head[1:]:
                raise Unsupported(f"{match.group()!r} closes a block that is not open", line)
            stack.pop()
            out.append("{% endfor %}" if head == "/each" else "{% endif %}")
        elif len(words) == 1 and not head.startswith(("#", "/", ">")):
            out.append("{{ " + _handlebars_value(head, names, stack, line) + " }}")
        else:
            raise Unsupported(f"{match.group()!r} calls a helper or a block this import does not read", line)
    if stack:
        raise Unsupported(f"a {{{{#{stack[-1]}}}}} block is never closed", _line(text, len(text)))
    out.append(escape_jinja(text[position:]))
    return "".join(out)


def _handlebars_value(word: str, names: Namer, stack: list[str], line: int) -> str:
    if word == "@index" and "each" in stack:
        return "loop.index0"
    if word in ("this", ".") and "each" in stack:
        return "this"
    if word.startswith("this.") and "each" in stack and _dotted(word[5:]):
        return word
    if not _dotted(word):
        raise Unsupported(f"{word!r} is not a variable name", line)
    head, _, rest = word.partition(".")
    return names.name(head) + ("." + rest if rest else "")
