"""Secrets: masked everywhere people look, refused in prompts unless the persona allows them."""

from __future__ import annotations

import json
import logging
import os
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import (
    ConfigError,
    DynConfig,
    RenderError,
    SecretError,
    load_profile,
    looks_like_credential,
    parse_profiles,
)
from profiles.cli import cli
from profiles.secrets import MASK, redact

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

PERSONA = """\
name:
  key: AWS_SECRET_ACCESS_KEY
  default: Nobody
role: Summarizer
goal: Summarize for the user.
"""


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("PROFILES_ENV_ALLOW", raising=False)


@pytest.fixture
def persona(write, aws):
    return write("leaky.yaml", PERSONA)


def everything_shown(persona_path, caplog, runner) -> str:
    """Every text a person could see for the persona: reprs, explain, errors, warnings, logs, CLI."""
    shown = []
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = load_profile(persona_path)
        profile = config.create_profile(deployment="prod")
        shown += [repr(config), repr(profile), repr(profile.resolved), repr(profile.resolved["name"])]
        shown += [str(profile.provenance), repr(profile.explain())]
        shown += [json.dumps([row.to_dict() for row in profile.explain()])]
        for render in (profile.format_system_prompt, profile.format_user_prompt, profile.format_write_memory_prompt):
            try:
                shown.append(render("What happened?"))
            except SecretError as error:
                shown += [str(error), repr(error)]
    shown += [str(w.message) for w in caught]
    for args in (
        ["render", str(persona_path)],
        ["explain", str(persona_path)],
        ["explain", str(persona_path), "--json"],
    ):
        result = runner.invoke(cli, args)
        shown.append(result.output)
    shown.append(caplog.text)
    return "\n".join(shown)


def test_secret_value_never_shown(persona, caplog, runner):
    """A name read from AWS_SECRET_ACCESS_KEY shows nowhere: prompt, explain, error, log or repr."""
    text = everything_shown(persona, caplog, runner)
    assert SECRET not in text
    assert MASK in text


def test_render_fails_saying_why_and_how_to_allow(persona):
    profile = load_profile(persona).create_profile()
    with pytest.raises(SecretError) as caught:
        profile.format_system_prompt()
    message = str(caught.value)
    assert "'name'" in message and "secret" in message
    assert "AWS_SECRET_ACCESS_KEY" in message  # the key is named, never its value
    assert "allow_secrets: [name]" in message
    assert "system" in message and "line" in message
    assert SECRET not in message


def test_cli_render_exit_2_with_reason(persona, runner):
    result = runner.invoke(cli, ["render", str(persona)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: field 'name' holds a secret")
    assert "allow_secrets" in result.output and SECRET not in result.output


def test_explain_masks_secret(persona, runner):
    rows = {row.field: row for row in load_profile(persona).create_profile().explain()}
    assert (rows["name"].value, rows["name"].secret) == (MASK, True)
    assert rows["name"].source == "env:AWS_SECRET_ACCESS_KEY"
    result = runner.invoke(cli, ["explain", str(persona), "--json"])
    name = next(row for row in json.loads(result.output) if row["field"] == "name")
    assert name == {"field": "name", "value": MASK, "source": "env:AWS_SECRET_ACCESS_KEY", "secret": True}


def test_allow_secrets_lets_it_render(write, aws):
    path = write("allowed.yaml", PERSONA + "allow_secrets: [name]\n")
    profile = load_profile(path).create_profile()
    assert profile.format_system_prompt().startswith(f"You are {SECRET}.")
    assert SECRET not in repr(profile)
    assert profile.explain()[0].value == MASK


def test_caller_value_replaces_the_secret(persona):
    """Passing the variable yourself means the secret is not rendered, so there is nothing to refuse."""
    profile = load_profile(persona).create_profile()
    assert profile.format_system_prompt(name="Public Name").startswith("You are Public Name.")


def test_secret_from_dotenv_file(write, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    write(".env.prod", f"AWS_SECRET_ACCESS_KEY={SECRET}\n")
    path = write("from_file.yaml", PERSONA)
    profile = load_profile(path).create_profile(deployment="prod")
    assert profile.resolved["name"].secret
    assert profile.provenance["name"] == f"env:AWS_SECRET_ACCESS_KEY from {path.parent / '.env.prod'}"
    with pytest.raises(SecretError):
        profile.format_system_prompt()


def test_dotenv_reference_to_process_secret_stays_empty(write, aws):
    """A `.env` that tries `${AWS_SECRET_ACCESS_KEY}` gives the default, not the process's secret."""
    write(".env", "INNOCENT_NAME=${AWS_SECRET_ACCESS_KEY}\n")
    path = write("innocent.yaml", "name: {key: INNOCENT_NAME, default: Aristotle}\nrole: r\n")
    profile = load_profile(path).create_profile()
    assert profile.get_name() == "Aristotle"
    assert profile.format_system_prompt().startswith("You are Aristotle.")


def test_field_marked_secret(write):
    path = write("marked.yaml", "name: N\nrole: r\ngoal: {default: launch codes 1234, secret: true}\n")
    profile = load_profile(path).create_profile()
    with pytest.raises(SecretError, match="'goal'") as caught:
        profile.format_system_prompt()
    assert "1234" not in str(caught.value)
    assert "launch codes" not in repr(load_profile(path))


def test_field_template_using_secret_is_refused(persona):
    """A field that says `{{ name }}` would render the secret too; the error names the field template."""
    path = persona.parent / "indirect.yaml"
    path.write_text(
        PERSONA.replace("Summarize for the user.", "'Speak as {{ name }}.'")
        + "templates:\n  system: {inline: 'Goal: {{ goal }}'}\n"
    )
    profile = load_profile(path).create_profile()
    with pytest.raises(SecretError) as caught:
        profile.format_system_prompt()
    assert "field 'goal'" in str(caught.value) and SECRET not in str(caught.value)
    assert profile.format_system_prompt(name="Someone") == "Goal: Speak as Someone."


def test_secret_value_is_never_compiled(write, monkeypatch):
    """A secret holding template syntax is data: not run, and not a syntax error quoting it."""
    monkeypatch.setenv("SERVICE_TOKEN", "{{ 7 * 7 }} {% broken")
    path = write("tmpl.yaml", "name: N\nrole: r\ndesc: {key: SERVICE_TOKEN, default: d}\nallow_secrets: [desc]\n")
    profile = load_profile(path).create_profile()
    assert "{{ 7 * 7 }} {% broken" in profile.format_system_prompt()


def test_allowed_secret_is_redacted_from_render_errors(write, monkeypatch):
    monkeypatch.setenv("SERVICE_TOKEN", "tok-ABCDEF")
    path = write(
        "err.yaml",
        "name: N\nrole: r\ndesc: {key: SERVICE_TOKEN, default: d}\nallow_secrets: [desc]\n"
        "templates:\n  system: {inline: '{{ {}[desc].x }}'}\n",
    )
    profile = load_profile(path).create_profile()
    with pytest.raises(RenderError) as caught:
        profile.format_system_prompt()
    # Jinja's message would say: 'dict object' has no attribute 'tok-ABCDEF'
    assert "tok-ABCDEF" not in str(caught.value) and MASK in str(caught.value)


def test_unknown_allow_secrets_names_refused(write):
    path = write("unknown.yaml", "name: N\nrole: r\nallow_secrets: [nmae, role]\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    (issue,) = caught.value.issues
    assert issue.field == "allow_secrets" and issue.line == 3 and "nmae" in issue.message


def test_allow_secrets_must_be_a_list(write):
    path = write("text.yaml", "name: N\nrole: r\nallow_secrets: name\n")
    with pytest.raises(ConfigError, match="list of field names"):
        load_profile(path)


def test_dynconfig_repr_masks_secret_default():
    info = DynConfig("hunter2-password", key="DB_PASSWORD", secret=True)
    assert "hunter2" not in repr(info)


def test_env_allow_list_refuses_credential_key(persona, monkeypatch):
    from profiles import ResolutionError

    monkeypatch.setenv("PROFILES_ENV_ALLOW", "SUMMARY_*")
    with pytest.raises(ResolutionError) as caught:
        load_profile(persona).create_profile()
    message = str(caught.value)
    assert "AWS_SECRET_ACCESS_KEY" in message and "PROFILES_ENV_ALLOW" in message and SECRET not in message


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("AWS_SECRET_ACCESS_KEY", True),
        ("github_token", True),
        ("DB_Password", True),
        ("LDAP_PASSWD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("SSH_PRIVATE", True),
        ("OPENAI_API_KEY", True),
        ("SUMMARY_PROFILE_NAME", False),
        ("HOME", False),
    ],
)
def test_looks_like_credential(key, expected):
    assert looks_like_credential(key) is expected


def test_redact_masks_list_items_and_longest_first():
    assert redact("a secret-long and secret", ["secret", ("secret-long",)]) == f"a {MASK} and {MASK}"
    assert redact("ab", ["ab"]) == "ab"  # too short to search for


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=3, max_size=40))
def test_any_secret_text_stays_out_of_errors_and_explain(text):
    """Whatever a credential's text, the refusal, explain and reprs never contain it."""
    secret = "\u00a7" + text  # '§' appears in no message, so a hit can only be the secret itself
    (config,) = parse_profiles("name: {key: HYPOTHESIS_API_TOKEN, default: placeholder}\nrole: r\n")
    os.environ["HYPOTHESIS_API_TOKEN"] = secret
    try:
        profile = config.create_profile()
    finally:
        del os.environ["HYPOTHESIS_API_TOKEN"]
    assert profile.get_name() == secret
    with pytest.raises(SecretError) as caught:
        profile.format_system_prompt()
    shown = [str(caught.value), repr(profile), repr(profile.explain()), repr(profile.resolved)]
    assert not any(secret in item for item in shown)


def test_factory_is_not_given_a_secret(monkeypatch):
    """A factory may pass what it gets to a model, so a secret reaches it only when allowed."""
    from profiles import DynConfig, ProfileConfig

    monkeypatch.setenv("FACTORY_API_TOKEN", "tok-123")
    seen = []

    def factory(profile_id, **options):
        seen.append(options["name"])
        return None

    name = DynConfig("x", key="FACTORY_API_TOKEN")
    ProfileConfig(name=name, role="r", factory=factory).create_profile()
    ProfileConfig(name=name, role="r", factory=factory, allow_secrets=["name"]).create_profile()
    assert seen == [None, "tok-123"]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("API_KEY", True),
        ("aws_secret_access_key", True),
        ("dbPassword", True),
        ("GITHUB_TOKEN", True),
        ("APIKey", True),
        ("my-service.apikey", True),
        ("HOCKEY_TEAM_NAME", False),
        ("SUPPORT_KEYWORDS", False),
        ("MONKEY_NAME", False),
        ("TOKENIZER_PATH", False),
        ("SECRETARY_EMAIL", False),
    ],
)
def test_credential_words_count_only_as_whole_parts(key, expected):
    assert looks_like_credential(key) is expected


#: Words that hold a credential word without being one, and plain ones.
_PLAIN_WORDS = st.sampled_from(
    ["hockey", "team", "name", "keywords", "monkey", "tokenizer", "secretary", "support", "goal", "turkey",
     "keynote", "passwordless", "privateer", "db", "api", "url", "v2"]
)
_CREDENTIALS = st.sampled_from(["key", "secret", "token", "password", "passwd", "credentials", "private", "keys"])


def _join(words: list[str], style: str) -> str:
    if style == "camel":
        return words[0].lower() + "".join(word.capitalize() for word in words[1:])
    if style == "pascal":
        return "".join(word.capitalize() for word in words)
    separator = {"snake": "_", "kebab": "-", "dotted": ".", "screaming": "_"}[style]
    joined = separator.join(words)
    return joined.upper() if style == "screaming" else joined


@given(
    words=st.lists(_PLAIN_WORDS, min_size=1, max_size=4),
    credential=st.one_of(st.none(), _CREDENTIALS),
    where=st.integers(min_value=0, max_value=4),
    style=st.sampled_from(["snake", "kebab", "dotted", "screaming", "camel", "pascal"]),
)
def test_a_name_is_a_credential_exactly_when_a_part_is_a_credential_word(words, credential, where, style):
    """Any naming style: a credential word as a part makes a credential; a word merely holding one does not."""
    parts = list(words)
    if credential is not None:
        parts.insert(min(where, len(parts)), credential)
    key = _join(parts, style)
    assert looks_like_credential(key) is (credential is not None), key


def test_a_name_like_a_credential_renders(monkeypatch):
    """HOCKEY_TEAM_NAME holds "KEY" but is no credential: its value renders."""
    monkeypatch.setenv("HOCKEY_TEAM_NAME", "Oilers")
    monkeypatch.setenv("SUPPORT_KEYWORDS", "refund, invoice")
    (config,) = parse_profiles(
        "name: {key: HOCKEY_TEAM_NAME, default: Team}\nrole: Fan\ngoal: {key: SUPPORT_KEYWORDS, default: x}\n"
    )
    prompt = config.create_profile().format_system_prompt()
    assert "You are Oilers." in prompt and "refund, invoice" in prompt


@pytest.mark.parametrize("set_it", [False, True], ids=["unset", "set"])
def test_check_reports_a_credential_key_whether_set_or_not(set_it, write, monkeypatch, runner):
    """CI seldom has production's variables: an unset AGENT_API_KEY is reported as a set one is."""
    if set_it:
        monkeypatch.setenv("AGENT_API_KEY", "sk-live-123456")
    else:
        monkeypatch.delenv("AGENT_API_KEY", raising=False)
    path = write("agent.yaml", "name: {key: AGENT_API_KEY, default: Ada}\nrole: Helper\n")
    result = runner.invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:1: field 'name': system prompt" in result.output and "allow_secrets" in result.output
    assert "sk-live-123456" not in result.output
    allowed = write("allowed.yaml", "name: {key: AGENT_API_KEY, default: Ada}\nrole: Helper\nallow_secrets: [name]\n")
    assert runner.invoke(cli, ["check", str(allowed)]).exit_code == 0


def test_a_secret_variable_in_a_template_is_refused_without_advice_that_cannot_work(monkeypatch):
    """It said "list it under 'allow_secrets: [crm]'", which the persona then refused as an unknown field."""
    from profiles import SecretError, parse_profiles

    monkeypatch.setenv("CRM_PASSWORD", "pw-123456")
    text = (
        "name: Ada\nrole: R\nvariables:\n  crm: {key: CRM_PASSWORD, default: x}\n"
        "templates: {user: {inline: '{{ crm }}'}}\n"
    )
    (config,) = parse_profiles(text)
    with pytest.raises(SecretError) as caught:
        config.create_profile().format_user_prompt()
    message = str(caught.value)
    assert message.startswith("variable 'crm' holds a secret (source env:CRM_PASSWORD)") and "pw-123456" not in message
    assert "allow_secrets" not in message and "crm=..." in message
    assert config.create_profile().format_user_prompt(crm="public") == "public"


def test_printing_a_profiles_values_and_bound_variables_masks_the_secrets(monkeypatch):
    from profiles import DynConfig, ProfileConfig

    monkeypatch.setenv("REPR_API_TOKEN", "sk-repr-0123456789abcdef")
    config = ProfileConfig(
        name="Ada",
        role="Guide",
        goal=DynConfig("Guide", key="REPR_API_TOKEN"),
        variables={"token": {"key": "REPR_API_TOKEN", "default": "none"}, "team": "blue"},
    )
    profile = config.create_profile()
    for shown in (repr(profile.values), str(profile.values), f"{profile.bound}", repr(profile.bound)):
        assert "sk-repr" not in shown and "'***'" in shown
    assert "'team': 'blue'" in repr(profile.bound) and "'name': 'Ada'" in repr(profile.values)
    # reading an entry still gives the value, the same object the persona resolved
    assert profile.values["goal"] == profile.bound["token"] == "sk-repr-0123456789abcdef"
    assert dict(profile.bound) == {"token": "sk-repr-0123456789abcdef", "team": "blue"}
    assert profile.bound["token"] is profile.resolved_variables["token"].value
    # a value the caller binds is theirs, shown as given
    assert "'token': 'mine'" in repr(profile.partial(token="mine").bound)
