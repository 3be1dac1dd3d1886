"""The undefined value templates see for a missing key, attribute or variable.

Real templates test optional data all the time: `{% if message.tool_calls %}` on a message that
has no such key, `{{ date_string | default("today") }}`, `{% for doc in documents %}…{% else %}`.
Jinja's strict undefined refuses every one of those, so chat templates of whole model families
fail. Jinja's default undefined accepts them but prints as an empty string, so a misspelt key
silently drops a line from a prompt.

`PromptUndefined` keeps stock Jinja's behaviour wherever a value is tested, defaulted, counted or
looped over, and fails where the value would reach the prompt: printed (or turned into text by a
filter), called, or asked for an attribute or item. The error names the missing key; the
renderer adds the template and line.
"""

from __future__ import annotations

from jinja2 import Undefined

__all__ = ["PromptUndefined"]


class PromptUndefined(Undefined):
    """Falsy, empty and comparable like Jinja's `Undefined`; an error when printed, called or read from.

    - `{% if x %}`, `x is defined`, `x is none`, `x|default(…)`, `x == y`: as stock Jinja (falsy,
      not defined, not none, equal only to another undefined value);
    - `{% for i in x %}…{% else %}…`, `x|length`, `x|list`: as stock Jinja (empty);
    - `{{ x }}`, `x|string`, `x ~ 'a'`, `x()`, `x.attr`, `x[0]`, `x + 1`: an error naming what is missing.
    """

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        return _message(self)

    def __str__(self) -> str:
        # printing is where a missing value would silently vanish from a prompt
        self._fail_with_undefined_error()


def _message(value: Undefined) -> str:
    """Jinja's own message (what is missing), and how a template may let it be missing."""
    text = Undefined._undefined_message.fget(value)  # type: ignore[attr-defined]
    if value._undefined_hint:
        return text  # Jinja's own hints (an unsafe attribute, a parameter not given) say it best
    return f"{text}; test it first ({{% if … is defined %}}) or give a default (|default(…))"
