"""Every way the sandbox differs from stock Jinja, and the Jinja tests that fail because of each.

One place for both: README's "Differences from stock Jinja" table is `readme_table()` (a test checks
it word for word), and `test_jinja_suite.py` requires Jinja's own tests to fail exactly where
`EXPECTED_FAILURES` says, each for a difference listed here. Nothing else may differ.

The reference is Jinja's `ImmutableSandboxedEnvironment` with its defaults; "prompts" are templates
rendered by `Renderer` (persona templates, fields, a root's templates), "chat templates" those rendered
by `render_chat_template`, whose reference is transformers' environment (itself stock Jinja's
immutable sandbox with transformers' additions).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BASELINE_FAILURES", "DIFFERENCES", "EXPECTED_FAILURES", "Difference", "readme_table"]


@dataclass(frozen=True)
class Difference:
    """One behaviour that differs from stock Jinja: where, what, and why."""

    applies_to: str
    behaviour: str
    why: str


DIFFERENCES: dict[str, Difference] = {
    "print-undefined": Difference(
        "prompts",
        "A missing variable, key or attribute is an error where it would be printed (`{{ x }}`, `x|string`, "
        "`x ~ '!'`), naming the template, the line and what is missing; stock prints an empty text. Tested, "
        "defaulted, looped over or counted it behaves as in stock (falsy, `is defined` false, `|default` "
        "applies, `{% for %}` runs its `{% else %}`), and calling it or reading from it fails in both",
        "a misspelt key would otherwise vanish from the prompt without a trace; chat templates print an "
        "empty text, as transformers does (`strict=True` makes it an error there too)",
    ),
    "print-unsafe": Difference(
        "prompts",
        "An attribute the sandbox refuses (`x.__class__`, `'{0.__class__}'.format(1)`) is an error where it "
        "would be printed; stock prints an empty text",
        "an escape attempt should be seen, not rendered as nothing",
    ),
    "required-variables": Difference(
        "prompts of a persona",
        "A variable the template (or a file it extends, includes or imports with context) reads is checked "
        "before the render starts: one the persona, the prompt's inputs and the caller do not give is an "
        "error naming the file and line that reads it, unless the template tests it (`is defined`), "
        "defaults it (`|default`) or sets it itself; stock renders it as undefined",
        "a misspelt name fails at once, with its place, instead of deep inside a render",
    ),
    "print-callable": Difference(
        "both",
        "Printing a function, method or class is an error; stock prints its `repr`, memory address included",
        "an address helps an attacker and never belongs in a prompt",
    ),
    "print-address": Difference(
        "both",
        "Printing an iterator or generator (`{{ items|map('upper') }}`) or an object whose text form is "
        "Python's default `<… object at 0x…>` is an error, also inside a list or mapping and through a filter "
        "that makes text of it (`|trim`, `|upper`, `|join`, `str.format`, …); stock prints that text, "
        "memory address included",
        "an address helps an attacker and never belongs in a prompt; `|list` or `|join` prints the items",
    ),
    "hidden-templates": Difference(
        "both",
        "A template name with a part starting with `.` (`.env`, `.git/config`) is refused by the loader",
        "a `.env` file beside the templates holds secrets, and an include would put it into a prompt",
    ),
    "globals": Difference(
        "both",
        "The globals are `range`, `dict` (callable, with `fromkeys`) and `namespace` only; chat templates add "
        "transformers' `raise_exception` and `strftime_now`. There is no `lipsum`, `cycler` or `joiner`",
        "`lipsum` burns CPU on request; the others are never needed in a prompt",
    ),
    "bounds": Difference(
        "both",
        "Work and size are bounded (see the bounds above): past a bound the render ends in a `RenderError` "
        "naming the bound and its setting, and expressions on constants run at render time, inside the "
        "bounds, not while compiling; stock runs on (`{{ 'a' * 10**9 }}` allocates a gigabyte while compiling)",
        "templates come from people other than those who run them",
    ),
    "whitespace": Difference(
        "both",
        "`trim_blocks` and `lstrip_blocks` are on: a block tag on a line of its own leaves no blank line; "
        "stock has both off",
        "prompt and chat templates are written that way; transformers sets the same",
    ),
    "loopcontrols": Difference(
        "both",
        "`{% break %}` and `{% continue %}` work; stock needs the `jinja2.ext.loopcontrols` extension",
        "real templates use them",
    ),
    "sentence": Difference(
        "prompts",
        "The extra filter `sentence` ends a text with exactly one full stop (`.`, `。`, `!` or `?` count); "
        "`_budgeted`, which loops use to count their steps, is there too",
        "fields are written with and without one; the bundled templates need neither `..` nor a missing stop",
    ),
    "loading": Difference(
        "prompts",
        "Templates are read only from their roots: a name with `..`, an absolute name, or a symlink leading "
        "outside is refused, and each file is read once per process (no auto-reload)",
        "template names come from persona files and from templates themselves",
    ),
    "errors": Difference(
        "both",
        "Errors reach the caller as `RenderError` (with the template, its line and the bound that tripped), "
        "not as Jinja's exception classes",
        "one error type to catch, whose message says what, where and how to fix it",
    ),
    "chat-additions": Difference(
        "chat templates",
        "`tojson` is transformers' (`json.dumps`: keys in their order, no HTML escaping, `indent`, "
        "`separators`, `sort_keys`), `namespace` refuses names starting with `_`, and `{% generation %}` "
        "marks what the assistant wrote; inputs are rebuilt from plain JSON types, as transformers does",
        "that is the environment chat templates are written for; the same inputs give the same bytes",
    ),
}

#: Jinja tests that fail on stock `ImmutableSandboxedEnvironment` itself, with why.
BASELINE_FAILURES: dict[str, str] = {
    "tests/test_api.py::TestUndefined::test_chainable_undefined": (
        "every Jinja sandbox refuses `._undefined_name`, an attribute starting with `_`"
    ),
}

#: Jinja tests that fail against this package's sandbox beyond the baseline, each for a difference above.
EXPECTED_FAILURES: dict[str, str] = {
    "tests/test_core_tags.py::TestForLoop::test_scope": "print-undefined",
    "tests/test_core_tags.py::TestForLoop::test_loop_errors": "print-undefined",
    "tests/test_core_tags.py::TestMacros::test_arguments": "print-undefined",
    "tests/test_core_tags.py::TestMacros::test_macro_defaults_self_ref": "print-undefined",
    "tests/test_filters.py::TestFilter::test_min_max[{{ []|min }}-]": "print-undefined",
    "tests/test_filters.py::TestFilter::test_min_max[{{ []|max }}-]": "print-undefined",
    "tests/test_security.py::TestSandbox::test_unsafe": "print-unsafe",
    "tests/test_security.py::TestStringFormat::test_basic_format_safety": "print-unsafe",
    "tests/test_security.py::TestStringFormat::test_safe_format_safety": "print-unsafe",
    "tests/test_security.py::TestStringFormatMap::test_basic_format_safety": "print-unsafe",
}


def readme_table() -> str:
    """The README's table, one row per difference, in this order."""
    lines = ["| behaviour | applies to | why |", "| --- | --- | --- |"]
    for item in DIFFERENCES.values():
        cells = (cell.replace("|", "\\|") for cell in (item.behaviour, item.applies_to, item.why))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
