"""Property: any persona exported to Prompty or Agent Spec and imported again sends the same prompts."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from profiles import ProfileConfig, interop
from profiles.errors import ExportError, ProfilesError
from profiles.interop.exporter import write as export

from .strategies import TRICKY

#: Text of a persona's fields: words, unicode, and pieces that look like template syntax somewhere.
_WORD = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"),
                min_size=1, max_size=10)
TEXT = st.lists(st.one_of(_WORD, TRICKY.filter(lambda piece: piece != "\n")), min_size=1, max_size=6).map(
    "".join).filter(lambda text: text.strip())

PERSONAS = st.fixed_dictionaries(
    {"name": TEXT, "role": TEXT, "model": st.sampled_from(["gpt-4o", "gpt-4o-mini"])},
    optional={
        "goal": TEXT,
        "desc": TEXT,
        "constraints": st.lists(TEXT, min_size=1, max_size=3),
        "examples": TEXT,
        "model_settings": st.fixed_dictionaries({}, optional={
            "temperature": st.sampled_from([0, 0.2, 1.5]), "max_tokens": st.integers(1, 4000),
            "seed": st.integers(0, 99)}),
    },
)


def _sent(config) -> list[tuple[str, str]]:
    return [(message["role"], message["content"]) for message in config.create_profile().format_messages("Q?")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=PERSONAS, format=st.sampled_from(["prompty", "agentspec"]))
def test_a_persona_exported_and_imported_sends_the_same_prompts(tmp_path_factory, data, format):
    """Prompty holds the whole layout, Agent Spec the system prompt: what comes back sends what was sent,
    with the same model and settings; an export may refuse a text it cannot say, never write a wrong one."""
    try:  # a field is a template of its own: one that does not render is no persona to export
        config = ProfileConfig(**data)
        before = _sent(config)
    except ProfilesError:
        assume(False)
    try:
        files, _ = export(config, format)
    except ExportError:
        event("refused by the export")
        return
    ((name, text),) = files.items()
    folder = tmp_path_factory.mktemp("export")
    (folder / name).write_text(text, encoding="utf-8")
    (again,) = interop.load(format, folder / name).personas
    after = _sent(again.config)
    if format == "prompty":
        assert after == before
    else:
        assert after[0] == before[0]  # the system prompt; Agent Spec takes the user's messages as they are
    assert again.config.create_profile().get_model() == config.create_profile().get_model()
    assert again.config.create_profile().model_settings == config.create_profile().model_settings


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=PERSONAS)
def test_a_persona_exported_to_crewai_comes_back_with_its_role_goal_and_name_or_says_so(tmp_path_factory, data):
    """CrewAI keeps role and goal as they are; its agent id is all a name has, so an import gives the name
    back, or the export said it was not written."""
    try:
        config = ProfileConfig(**data)
        before = config.create_profile()
        before.format_messages("Q?")
    except ProfilesError:
        assume(False)
    try:
        files, notes = export([config], "crewai")
    except ExportError:
        event("refused by the export")
        return
    folder = tmp_path_factory.mktemp("crew")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    (again,) = interop.load("crewai", folder / "agents.yaml").personas
    after = again.config.create_profile()

    def shown(profile, field):  # a field as the persona's prompts print it (a field is a template too)
        return profile.with_templates(system="{{ " + field + " or '' }}").format_system_prompt()

    if shown(before, "role").strip():  # a role that renders empty is derived from the agent id again
        assert shown(after, "role") == shown(before, "role").strip()
    if shown(before, "goal").strip():
        assert shown(after, "goal") == shown(before, "goal").strip()
    assert shown(after, "name") == shown(before, "name") or any("is not written" in note.message for note in notes)
