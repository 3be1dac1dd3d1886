"""Stored prompts that include other stored prompts: `{% include "store:shared/safety" %}` is fetched
for the same language, model and deployment as the prompt that includes it, walking that
deployment's label chain, compiled and sandboxed like any template, and listed with its version and
label in provenance and explain; prompts that include each other are an error naming the chain."""

from __future__ import annotations

import pytest

from profiles import StoreProvider, explain, parse_profiles
from profiles.errors import RenderError, ResolutionError
from profiles.store import PromptStore

SYSTEM = 'You are {{ name }}.\n{% include "store:shared/safety" %}'
PERSONA = """\
name: Ada
role: Reviewer
templates:
  system: {store: reviewer/system}
"""


@pytest.fixture
def store(store_url, monkeypatch):
    """A store on each backend, answering the registered `store` provider without a cache."""
    from profiles import providers

    opened = PromptStore(store_url)
    provider = StoreProvider(store_url, ttl=0)
    monkeypatch.setitem(providers._providers, "store", provider)
    yield opened
    provider.close()
    opened.close()


def _persona(text: str = PERSONA):
    (config,) = parse_profiles(text)
    return config


def test_an_include_follows_the_deployment_label_chain(store):
    """prod reads the included prompt's `production` label, staging its `staging` label; a deployment
    with neither reads the newest version, and says so."""
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "Never reveal a secret, {{ name }}.", label="production")
    store.put("shared/safety", "Staging rules for {{ name }}.", label="staging")
    store.put("shared/safety", "Draft rules.")
    persona = _persona()
    assert persona.create_profile(deployment="prod").format_system_prompt() == (
        "You are Ada.\nNever reveal a secret, Ada."
    )
    assert persona.create_profile(deployment="staging").format_system_prompt().endswith("Staging rules for Ada.")
    dev = persona.create_profile(deployment="dev")
    assert dev.format_system_prompt().endswith("Draft rules.")
    assert dev.provenance["include store:shared/safety"] == "store:shared/safety v3 latest"


def test_an_include_is_read_for_the_same_language_and_model(store):
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "Be safe.", label="production")
    store.put("shared/safety", "注意安全。", language="zh", label="production")
    store.put("shared/safety", "Be safe, GPT.", model="gpt-4o", label="production")
    persona = _persona()
    chinese = persona.create_profile(deployment="prod", language="zh-TW")
    assert chinese.format_system_prompt().endswith("注意安全。")
    assert persona.create_profile(deployment="prod", model="gpt-4o").format_system_prompt().endswith("GPT.")


def test_every_part_is_in_provenance_and_explain(store):
    store.put("reviewer/system", 'Top.\n{% include "store:shared/a" %}', label="production")
    store.put("shared/a", 'A.\n{% include "store:shared/b" %}', label="production")
    store.put("shared/b", "B {{ role }}.")
    store.put("shared/b", "B2 {{ role }}.", label="prod")
    profile = _persona().create_profile(deployment="prod")
    assert profile.format_system_prompt() == "Top.\nA.\nB2 Reviewer."
    assert {key: value for key, value in profile.provenance.items() if " " in key or "." in key} == {
        "templates.system": "store:reviewer/system v1 label=production",
        "include store:shared/a": "store:shared/a v1 label=production",
        "include store:shared/b": "store:shared/b v2 label=prod",
    }
    rows = {row.field: row for row in explain(_persona(), deployment="prod")}
    assert rows["include store:shared/b"].source == "store:shared/b v2 label=prod"
    assert rows["include store:shared/b"].value == "B2 {{ role }}."


def test_a_persona_template_may_include_a_stored_prompt(store):
    """Not only stored templates: an inline one may include a stored prompt too."""
    store.put("shared/safety", "Stay on topic, {{ name }}.", label="production")
    template = "{{ question }}\\n{% include 'store:shared/safety' %}"
    persona = _persona(f'name: Ada\nrole: Reviewer\ntemplates:\n  user: {{inline: "{template}"}}\n')
    assert persona.create_profile(deployment="prod").format_user_prompt("Why?") == "Why?\nStay on topic, Ada."


@pytest.mark.parametrize(
    ("parts", "chain"),
    [
        (
            {"shared/safety": '{% include "store:reviewer/system" %}'},
            "store:reviewer/system → store:shared/safety → store:reviewer/system",
        ),
        ({"shared/safety": '{% include "store:shared/safety" %}'}, "store:shared/safety → store:shared/safety"),
        (
            {
                "shared/safety": '{% include "store:x" %}',
                "x": '{% include "store:y" %}',
                "y": '{% include "store:x" %}',
            },
            "store:x → store:y → store:x",
        ),
    ],
)
def test_a_cycle_is_an_error_naming_the_chain(store, parts, chain):
    store.put("reviewer/system", SYSTEM, label="production")
    for name, text in parts.items():
        store.put(name, text, label="production")
    with pytest.raises(ResolutionError) as caught:
        _persona().create_profile(deployment="prod")
    assert "template 'system': stored prompts include each other in a cycle: " + chain in str(caught.value)


def test_a_diamond_is_no_cycle(store):
    """Two parts including the same third are fetched once each and render fine."""
    store.put("reviewer/system", '{% include "store:a" %}|{% include "store:b" %}', label="production")
    store.put("a", 'a{% include "store:c" %}', label="production")
    store.put("b", 'b{% include "store:c" %}', label="production")
    store.put("c", "c", label="production")
    assert _persona().create_profile(deployment="prod").format_system_prompt() == "ac|bc"


def test_a_missing_include_says_which_and_how_to_add_it(store):
    store.put("reviewer/system", SYSTEM, label="production")
    with pytest.raises(ResolutionError) as caught:
        _persona().create_profile(deployment="staging")
    message = str(caught.value)
    assert "store:reviewer/system includes store:shared/safety" in message
    assert "no prompt 'shared/safety' for language=-, model=-, deployment=staging" in message
    assert "profiles store put shared/safety" in message


def test_included_prompts_are_sandboxed(store):
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "{{ ''.__class__.__mro__ }}", label="production")
    with pytest.raises(RenderError, match="unsafe"):
        _persona().create_profile(deployment="prod").format_system_prompt()


def test_included_prompts_count_against_the_render_budget(store):
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "{% for i in range(100000) %}{% for j in range(100) %}x{% endfor %}{% endfor %}")
    with pytest.raises(RenderError, match="LimitExceeded|over"):
        _persona().create_profile().format_system_prompt()


def test_a_new_version_of_a_part_shows_in_the_next_profile(store):
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "v1 {{ name }}", label="production")
    persona = _persona()
    first = persona.create_profile(deployment="prod")
    store.put("shared/safety", "v2 {{ name }}", label="production")
    second = persona.create_profile(deployment="prod")
    assert first.format_system_prompt().endswith("v1 Ada") and second.format_system_prompt().endswith("v2 Ada")


def test_a_part_may_read_variables_the_including_template_does_not(store):
    """The variables an included prompt reads are passed too: the renderer counts them as the
    including template's, and a missing one names itself."""
    store.put("reviewer/system", SYSTEM, label="production")
    store.put("shared/safety", "Cite {{ sources }} for {{ role }}.", label="production")
    profile = _persona().create_profile(deployment="prod")
    assert profile.format_system_prompt(sources="the docs").endswith("Cite the docs for Reviewer.")
    with pytest.raises(RenderError, match="'sources'"):
        profile.format_system_prompt()
