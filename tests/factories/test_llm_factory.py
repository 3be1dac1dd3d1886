"""LLMProfileFactory against a real scripted chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import ProfileConfig
from profiles.errors import ConfigError, FactoryError
from profiles.factories.chat import ChatClient
from profiles.factories.json_reply import prompt_hash
from profiles.factories.llm import GENERATED_FIELDS, GeneratedProfile, LLMProfileFactory, Origin, _split, _validate
from tests.llm_server import ChatServer, Empty, Reply, Stall, Status

SECRET = "sk-test-4kQ9zPv1Lm"
MODEL = "persona-writer"
RULES = "Staff of a small bookshop. Each has a distinct job."


def personas(*names: str, role: str = "Bookseller") -> str:
    return json.dumps([{"name": name, "role": role} for name in names])


# A generous timeout: on a busy machine a scripted reply can take longer than a short one, and a
# retried request would break the exact request counts the tests check. Tests of timeouts pass their own.
def make_factory(server: ChatServer, *, timeout: float = 10.0, max_in_flight: int = 1, **options) -> LLMProfileFactory:
    client = ChatClient(
        server.url,
        MODEL,
        timeout=timeout,
        max_retries=2,
        backoff=0.01,
        max_backoff=0.05,
        jitter_seed=1,
        max_in_flight=max_in_flight,
    )
    options.setdefault("count", 1)
    options.setdefault("rules", RULES)
    return LLMProfileFactory(None, None, client=client, max_in_flight=max_in_flight, **options)


def names(factory: LLMProfileFactory, **options) -> list[str]:
    return [profile.get_name() for profile in factory.create_profiles(**options)]


def last_user_message(body: dict) -> str:
    return body["messages"][-1]["content"]


# -- replies the model gets wrong ------------------------------------------------------------


def test_fenced_json(chat_server):
    """Personas inside a ```json fence are read."""
    chat_server.script("Here you go:\n```json\n" + personas("Ada", "Ben") + "\n```\nEnjoy!")
    factory = make_factory(chat_server, count=2, batch_size=2)
    assert names(factory) == ["Ada", "Ben"]
    assert len(chat_server.requests) == 1


def test_trailing_commas(chat_server):
    """Trailing commas are repaired, in lists and objects alike."""
    chat_server.script('[{"name": "Ada", "role": "Clerk", "constraints": ["Be kind",],}, ]')
    (profile,) = make_factory(chat_server).create_profiles()
    assert profile.get_role() == "Clerk"
    assert profile.get_constraints() == ["Be kind"]


def test_truncated_reply_keeps_whole_items_and_asks_for_the_rest(chat_server):
    """A reply cut off mid-item keeps the items that closed; the next request asks for the missing one."""
    chat_server.script(
        Reply('[{"name": "Ada", "role": "Clerk"}, {"name": "Ben", "ro', finish_reason="length"),
        personas("Cleo"),
    )
    factory = make_factory(chat_server, count=2, batch_size=2)
    assert names(factory) == ["Ada", "Cleo"]
    second = last_user_message(chat_server.requests[1])
    assert "Write 1 distinct persona " in second
    assert "These names are taken" in second and "Ada" in second


def test_wrong_types_are_sent_back_with_the_validation_error(chat_server):
    """An object failing validation is re-asked for, with the error text, in the same conversation."""
    chat_server.script(
        '[{"name": "Ada", "role": 7, "constraints": "Be kind"}]',
        '[{"name": "Ada", "role": "Clerk", "constraints": ["Be kind"]}]',
    )
    factory = make_factory(chat_server)
    (generated,) = factory.generate()
    fix = chat_server.requests[1]["messages"]
    assert [message["role"] for message in fix] == ["user", "assistant", "user"]
    assert fix[1]["content"] == '[{"name": "Ada", "role": 7, "constraints": "Be kind"}]'
    assert "field 'role': expected text, got a number" in fix[2]["content"]
    assert "field 'constraints': expected a list of texts, got one text" in fix[2]["content"]
    assert generated.profile.get_role() == "Clerk"
    assert generated.origin.fix_round == 1 and generated.origin.request_id == "req-2"
    assert factory.stats.invalid == 1 and factory.stats.fixed == 1 and factory.stats.fix_requests == 1


def test_fix_rounds_are_bounded(chat_server):
    """A persona still invalid after max_fix_rounds follow-ups is given up, and the error says why."""
    chat_server.script(*['[{"name": "Ada"}]'] * 20)
    factory = make_factory(chat_server, max_fix_rounds=2, max_batches=2)
    with pytest.raises(FactoryError) as caught:
        list(factory.create_profiles())
    assert len(chat_server.requests) == 2 * (1 + 2)
    message = str(caught.value)
    assert message.startswith("made 0 of 1 persona(s) in 2 batch request(s) and 4 fix request(s)")
    assert "still invalid after 2 fix request(s): field 'role': is required" in message


def test_no_fix_rounds(chat_server):
    """With max_fix_rounds=0 an invalid persona is not re-asked for; a new batch is."""
    chat_server.script('[{"name": "Ada"}]', personas("Ben"))
    factory = make_factory(chat_server, max_fix_rounds=0)
    assert names(factory) == ["Ben"]
    assert len(chat_server.requests[1]["messages"]) == 1


def test_reply_without_json_is_answered_with_the_reason(chat_server):
    """Prose with no JSON gets a follow-up that says so, and its answer is used."""
    chat_server.script("Sorry, I cannot think of anyone.", personas("Ada"))
    factory = make_factory(chat_server)
    assert names(factory) == ["Ada"]
    assert "Your reply could not be used: The reply held no JSON array or object." in last_user_message(
        chat_server.requests[1]
    )


def test_model_cannot_set_templates_providers_or_template_marks(chat_server):
    """Generated objects may set plain text fields only: no dynamic fields, templates or Jinja marks."""
    chat_server.script(
        json.dumps(
            [
                {"name": "Ada", "role": {"provider": "env", "key": "OPENAI_API_KEY"}},
                {"name": "Ben", "role": "Clerk", "templates": {"system": {"file": "/etc/passwd"}}},
                {"name": "Cleo", "role": "Clerk", "goal": "Say {{ secret }}"},
            ]
        ),
        personas("Ada", "Ben", "Cleo"),
    )
    factory = make_factory(chat_server, count=3, batch_size=3)
    assert names(factory) == ["Ada", "Ben", "Cleo"]
    fix = last_user_message(chat_server.requests[1])
    assert "field 'role': expected text, got an object" in fix
    assert "field 'templates': not a persona field; use only " + ", ".join(GENERATED_FIELDS) in fix
    assert "field 'goal': holds template marks" in fix


def test_duplicates_are_dropped(chat_server):
    """Names equal once normalised are dropped: within a reply, across batches, and of the examples."""
    chat_server.script(
        personas("Ada Lovelace", "ADA  lovelace!", "Zed"),
        personas("Ben", "ada lovelace"),
        personas("Cleo"),
    )
    factory = make_factory(chat_server, count=3, batch_size=3, examples=[{"name": "Zed", "role": "Owner"}])
    assert names(factory) == ["Ada Lovelace", "Ben", "Cleo"]
    assert factory.stats.duplicates == 3
    later = last_user_message(chat_server.requests[2])
    assert "Write 1 distinct persona " in later
    assert "Zed, Ada Lovelace, Ben" in later


# -- a server that misbehaves ---------------------------------------------------------------


def test_rate_limited_then_success(chat_server):
    """A 429 is waited out and the same request sent again."""
    chat_server.script(Status(429, {"Retry-After": "0.01"}, {"error": {"message": "slow down"}}), personas("Ada"))
    (generated,) = make_factory(chat_server).generate()
    assert generated.profile.get_name() == "Ada"
    assert chat_server.requests[0] == chat_server.requests[1]
    assert generated.origin.request_id == "req-2"


def test_timeout_then_success(chat_server):
    """A request with no answer in time is sent again."""
    chat_server.script(Stall(2.0), personas("Ada"))
    factory = make_factory(chat_server, timeout=0.2)
    assert names(factory) == ["Ada"]
    assert len(chat_server.requests) == 2


@pytest.mark.parametrize("empty", [Empty(), Empty(no_choices=True)], ids=["empty-content", "no-choices"])
def test_empty_reply_then_success(chat_server, empty):
    """An empty reply loses its batch; the next batch asks again."""
    chat_server.script(empty, personas("Ada"))
    factory = make_factory(chat_server)
    assert names(factory) == ["Ada"]
    assert factory.stats.batches == 2
    assert "batch 0:" in factory.stats.reasons[0]


def test_exhausted_budget_keeps_what_was_yielded(chat_server):
    """When the requests run out, the error says how many were made and why; earlier personas stay."""
    chat_server.script(personas("Ada"), *[Empty()] * 10)
    factory = make_factory(chat_server, count=3, batch_size=3, max_batches=3)
    got = []
    with pytest.raises(FactoryError) as caught:
        for profile in factory.create_profiles():
            got.append(profile.get_name())
    assert got == ["Ada"]
    message = str(caught.value)
    assert message.startswith("made 1 of 3 persona(s) in 3 batch request(s)")
    assert "returned an empty reply" in message
    assert "Raise max_batches" in message
    assert len(chat_server.requests) == 3


def test_refused_request_stops_at_once(chat_server):
    """A 404 will not get better: the run stops after one request with advice on the URL."""
    chat_server.script(*[Status(404, body={"error": {"message": "no such model"}})] * 5)
    factory = make_factory(chat_server, count=4, batch_size=1)
    with pytest.raises(FactoryError) as caught:
        list(factory.create_profiles())
    assert str(caught.value).startswith("made 0 of 4 persona(s), then the server refused a request:")
    assert "check base_url" in str(caught.value)
    assert len(chat_server.requests) <= 1


# -- seeds, concurrency, reproducibility ----------------------------------------------------


def test_seed_is_sent_per_batch(chat_server):
    """Batch i is sent with seed + i; its fix requests reuse its seed."""
    chat_server.script(personas("Ada"), '[{"name": "Ben"}]', personas("Ben"), personas("Cleo"))
    factory = make_factory(chat_server, count=3, batch_size=1, seed=40)
    assert names(factory) == ["Ada", "Ben", "Cleo"]
    assert [body["seed"] for body in chat_server.requests] == [40, 41, 41, 42]
    assert [g.seed for g in factory.generated_from.values()] == [40, 41, 42]


def test_no_seed_sends_none(chat_server):
    """Without a seed the request body has no seed field."""
    chat_server.script(personas("Ada"))
    names(make_factory(chat_server))
    assert "seed" not in chat_server.requests[0]


def test_requests_in_flight_are_bounded(chat_server):
    """At most max_in_flight requests reach the server at once, though they do overlap."""
    chat_server.script(*[(lambda body: Reply(personas(f"P{body['seed']}"), delay=0.15))] * 6)
    factory = make_factory(chat_server, count=6, batch_size=1, seed=0, max_in_flight=3)
    assert names(factory) == [f"P{seed}" for seed in range(6)]
    assert 2 <= chat_server.max_in_flight <= 3


def test_later_waves_name_the_personas_made(chat_server):
    """Batches run in waves of max_in_flight; a wave's prompts name every persona made before it."""
    chat_server.script(*[(lambda body: personas(f"P{body['seed']}"))] * 4)
    factory = make_factory(chat_server, count=4, batch_size=1, seed=0, max_in_flight=2)
    assert names(factory) == ["P0", "P1", "P2", "P3"]
    prompts = {body["seed"]: last_user_message(body) for body in chat_server.requests}
    assert "These names are taken" not in prompts[0] + prompts[1]
    assert prompts[2] == prompts[3]
    assert "These names are taken; use none of them, nor a variant of one:\nP0, P1\n" in prompts[2]


def _by_seed(body: dict) -> Reply:
    """Answer by seed, slower for some seeds so replies arrive out of order; names collide across seeds."""
    seed = body["seed"]
    return Reply(personas(f"N{seed // 2}", f"M{seed}"), delay=0.03 * ((seed * 7) % 3))


def _run(server: ChatServer) -> list[tuple]:
    server.script(*[_by_seed] * 30)
    factory = make_factory(server, count=7, batch_size=2, seed=11, max_in_flight=3)
    return [
        (g.profile_id, dict(g.data), g.origin.seed, g.origin.prompt_hash, g.origin.batch) for g in factory.generate()
    ]


def test_same_replies_and_seed_give_the_same_personas():
    """Two runs with the same seed and replies give the same personas, ids and origins, in order."""
    with ChatServer() as first, ChatServer() as second:
        one, two = _run(first), _run(second)
    assert one == two
    assert [item[1]["name"] for item in one] == ["N5", "M11", "N6", "M12", "M13", "N7", "M14"]


def test_same_script_sequential_run_is_reproducible():
    """A fixed script replayed with the same seed gives the same personas and prompts."""
    script = ['```json\n[{"name": "Ada", "role": "Clerk",},]\n```', '[{"name": "Ben", "role": 3}]', personas("Ben")]
    runs = []
    for _ in range(2):
        with ChatServer() as server:
            server.script(*script)
            factory = make_factory(server, count=2, batch_size=1, seed=5)
            runs.append([(dict(g.data), g.origin.prompt_hash, g.origin.seed) for g in factory.generate()])
            runs.append(server.requests)
    assert runs[0] == runs[2] and runs[1] == runs[3]


# -- provenance -----------------------------------------------------------------------------


def test_provenance_names_model_request_and_prompt(chat_server):
    """Fields the model wrote name the model, request id and prompt hash; others say where they came from."""
    chat_server.script(Reply(personas("Ada"), model="writer-2024"))
    factory = make_factory(chat_server, seed=3, language="de")
    (generated,) = factory.generate()
    expected = f"llm:writer-2024 request req-1 prompt {prompt_hash(chat_server.requests[0]['messages'])}"
    provenance = generated.profile.provenance
    assert provenance["name"] == provenance["role"] == expected
    assert provenance["goal"] == "unset"
    assert provenance["language"] == "argument" and generated.profile.get_language() == "de"
    assert generated.origin == Origin("writer-2024", "req-1", expected.rsplit(" ", 1)[1], 3, 0, 0)
    assert factory.generated_from == {0: generated.origin}
    assert generated.origin.as_dict()["prompt_hash"] == expected.rsplit(" ", 1)[1]
    assert isinstance(generated, GeneratedProfile) and generated.data == {"name": "Ada", "role": "Bookseller"}


def test_profile_ids_are_used(chat_server):
    """Given ids, one persona is made per id, in order."""
    chat_server.script(personas("Ada", "Ben"))
    factory = make_factory(chat_server, count=9, batch_size=5)
    got = list(factory.generate(["a", "b"]))
    assert [(g.profile_id, g.profile.profile_id) for g in got] == [("a", "a"), ("b", "b")]
    assert set(factory.generated_from) == {"a", "b"}


# -- one persona on demand ------------------------------------------------------------------


def test_create_profile_uses_hints(chat_server):
    """Hints go into the prompt; the hinted values win over the reply and are marked as overrides."""
    chat_server.script('[{"name": "Dr Jones", "goal": "Sell rare maps"}]')
    factory = make_factory(chat_server)
    profile = factory.create_profile("p1", name="Ada", role="Map seller")
    prompt = last_user_message(chat_server.requests[0])
    assert "The persona must have:\n- name: Ada\n- role: Map seller" in prompt
    assert (profile.profile_id, profile.get_name(), profile.get_role()) == ("p1", "Ada", "Map seller")
    assert profile.get_goal() == "Sell rare maps"
    assert profile.provenance["name"] == "override"
    assert profile.provenance["goal"].startswith(f"llm:{MODEL} request req-1 prompt ")


def test_persona_with_llm_factory(chat_server):
    """A ProfileConfig whose factory is the LLM factory gets its profile from the model."""
    chat_server.script('[{"name": "Ada", "role": "Clerk", "goal": "Find books for customers"}]')
    config = ProfileConfig(name="Ada", role="Clerk", factory=make_factory(chat_server))
    profile = config.create_profile("x")
    assert profile.get_goal() == "Find books for customers"
    assert "- name: Ada\n- role: Clerk" in last_user_message(chat_server.requests[0])


# -- prompts --------------------------------------------------------------------------------


def test_prompt_carries_rules_fields_examples_and_language(chat_server):
    """The bundled prompt holds the rules, field meanings, examples as JSON, the count and the language."""
    chat_server.script(personas("Ada", "Ben"))
    example = ProfileConfig(
        name="Zed", role="Owner", constraints=["Greet everyone"], expand_prompt="Ask {{ agents }}", avatar="zed.png"
    )
    factory = make_factory(chat_server, count=2, batch_size=2, examples=[example], language="de")
    names(factory)
    prompt = last_user_message(chat_server.requests[0])
    assert prompt.startswith("Write 2 distinct personas for LLM agents, following these rules:\n\n" + RULES)
    assert '- "name" (required): ' in prompt and '- "constraints": a JSON list' in prompt
    assert '- "language": optional: the language the agent answers in' in prompt
    shown = {"name": "Zed", "role": "Owner", "constraints": ["Greet everyone"], "avatar": "zed.png"}
    assert json.dumps([shown], indent=2) in prompt  # every plain text field, none with template marks
    assert "Write every text in this language: de." in prompt
    assert prompt.endswith("Reply with only a JSON array of 2 objects, with no prose and no code fences.")


@pytest.mark.parametrize("language", ["zh", "zh-TW"])
def test_chinese_prompts(chat_server, language):
    """Chinese (and its regional variants) get the Chinese prompts, for the batch and for fixes."""
    chat_server.script('[{"name": "墨子", "role": 3}]', '[{"name": "墨子", "role": "数据分析师"}]')
    teacher = {"name": "孔子", "role": "老师"}
    factory = make_factory(chat_server, rules="数据分析团队。", language=language, examples=[teacher])
    (profile,) = factory.create_profiles()
    first, fix = chat_server.requests[1]["messages"][0]["content"], last_user_message(chat_server.requests[1])
    assert first.startswith("请为 LLM 智能体编写 1 个互不相同的人设，遵循以下规则：\n\n数据分析团队。")
    assert '"name": "孔子"' in first and "以下名字已被使用" in first
    assert fix.startswith("你回复中的以下人设无效：") and "expected text, got a number" in fix
    assert profile.get_role() == "数据分析师" and profile.get_language() == language


def test_template_dirs_override_the_prompt(chat_server, tmp_path):
    """A _factories/llm/en/personas.j2 in a user folder replaces the bundled prompt."""
    folder = tmp_path / "_factories" / "llm" / "en"
    folder.mkdir(parents=True)
    (folder / "personas.j2").write_text("Give me {{ count }}: {{ rules }}", encoding="utf-8")
    chat_server.script(personas("Ada"))
    names(make_factory(chat_server, template_dirs=[tmp_path]))
    assert last_user_message(chat_server.requests[0]) == f"Give me 1: {RULES}"


# -- options and secrets --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({"count": 0}, "count must be a whole number, 1 or more, got 0"),
        ({"batch_size": 0}, "batch_size must be"),
        ({"max_fix_rounds": -1}, "max_fix_rounds must be a whole number, 0 or more"),
        ({"seed": "7"}, "seed must be a whole number or None"),
        ({"rules": "  "}, "needs rules"),
    ],
)
def test_bad_options(chat_server, options, text):
    """Options out of range are refused with the option's name."""
    with pytest.raises(FactoryError, match=text):
        make_factory(chat_server, **options)


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({"timeout": {}}, "timeout must be a number of seconds, got dict {}"),
        ({"timeout": True}, "timeout must be a number of seconds, got bool True"),
        ({"plan": 5}, "plan must be a SamplingPlan, the path of a plan file, its data as a mapping, or None"),
        ({"base_url": 5}, "base_url must be text, the server's URL"),
        ({"model": 5}, "model must be text"),
        ({"api_key_env": 5}, "api_key_env must be text, the name of an environment variable"),
        ({"language": 5}, "language must be text"),
        ({"temperature": "hot"}, "temperature must be a number or None, got str 'hot'"),
        ({"dedupe": "x"}, "dedupe must be a number between 0 and 1, or None"),
        ({"embedding_threshold": "x"}, "embedding_threshold must be a number"),
        ({"template_dirs": "prompts"}, "template_dirs must be a list of folders"),
        ({"template_dirs": [5]}, "each of template_dirs must be a folder"),
        ({"examples": 5}, "examples must be a list of personas"),
        ({"client": 5}, "client must be a ChatClient or None"),
        ({"embed": 5}, "embed must be a callable"),
        ({"option_names": 5}, "option_names must be a mapping"),
        ({"option_names": {"timeout": "--timeout"}, "timeout": "x"}, "--timeout must be a number of seconds"),
    ],
)
def test_wrong_typed_options_are_a_factory_error_saying_what_they_take(chat_server, options, text):
    """From Python, a dict for timeout or a number for plan or base_url raised a bare TypeError or
    AttributeError from deep inside; the CLI checks these, and now the factory does too."""
    arguments = {"base_url": chat_server.url, "model": MODEL, "rules": RULES, "count": 1, **options}
    with pytest.raises(FactoryError, match=re.escape(text)):
        LLMProfileFactory(arguments.pop("base_url"), arguments.pop("model"), **arguments)


def test_a_chat_client_refuses_wrong_types_with_what_it_takes():
    with pytest.raises(FactoryError, match=re.escape("ChatClient: base_url must be text")):
        ChatClient(5, MODEL)  # type: ignore[arg-type]
    with pytest.raises(FactoryError, match=re.escape("ChatClient: headers must be a mapping")):
        ChatClient("http://127.0.0.1:9/v1", MODEL, headers=["x"])  # type: ignore[arg-type]


def test_invalid_example_names_its_position(chat_server):
    """An invalid example persona is a ConfigError naming the example and field."""
    with pytest.raises(ConfigError) as caught:
        make_factory(chat_server, examples=[{"name": "A", "role": "r"}, {"name": "B", "role": 5}])
    assert [issue.field for issue in caught.value.issues] == ["examples[2].role"]


def test_api_key_is_sent_but_never_shown(chat_server, monkeypatch):
    """The key from the environment reaches the server, and no repr, result or error shows it."""
    monkeypatch.setenv("BOOKSHOP_KEY", SECRET)
    chat_server.script(personas("Ada"), Status(401, body={"error": {"message": f"bad key {SECRET}"}}))
    factory = LLMProfileFactory(chat_server.url, MODEL, rules=RULES, count=1, api_key_env="BOOKSHOP_KEY", timeout=1)
    with factory:
        (generated,) = factory.generate()
        with pytest.raises(FactoryError) as caught:
            factory.create_profile("again")
    assert chat_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    shown = [
        repr(factory),
        repr(generated),
        str(generated.profile.provenance),
        json.dumps(dict(generated.data)),
        str(caught.value),
        str(factory.stats),
    ]
    assert not any(SECRET in text for text in shown)
    assert "$BOOKSHOP_KEY" in str(caught.value)


def test_module_exports_and_stays_light():
    """__all__ is sorted and complete; importing the module loads neither httpx nor json-repair."""
    import subprocess
    import sys

    import profiles
    import profiles.factories.llm as llm

    assert llm.__all__ == sorted(llm.__all__) and all(hasattr(llm, name) for name in llm.__all__)
    assert profiles.LLMProfileFactory is LLMProfileFactory
    code = "import sys, profiles.factories.llm\nprint(sorted(m for m in ('httpx', 'json_repair') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- validation of any object a model may write ---------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
_field_names = st.sampled_from([*GENERATED_FIELDS, "templates", "variables", "factory", "model", "age"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_field_names, _json_values | st.text(min_size=1, max_size=30), max_size=6))
def test_validate_accepts_only_plain_personas(item):
    """Any JSON object either gets problems to send back, or plain fields that make a valid persona."""
    data, problems = _validate(item)
    assert all(isinstance(problem, str) and problem for problem in problems)
    if problems:
        return
    assert set(data) <= set(GENERATED_FIELDS) and {"name", "role"} <= set(data)
    for key, value in data.items():
        if key in ("constraints", "retry_constraints"):
            assert isinstance(value, list) and all(isinstance(text, str) and text for text in value)
        else:
            assert isinstance(value, str) and value == value.strip() and value
    assert ProfileConfig(**data).name == data["name"]


@given(st.integers(0, 500), st.integers(1, 50))
def test_split_covers_the_total(total, size):
    """Batch sizes add up to the total, none over the batch size, at most one smaller."""
    sizes = _split(total, size)
    assert sum(sizes) == total and all(0 < n <= size for n in sizes)
    assert sum(n < size for n in sizes) <= 1


# -- the README's example -------------------------------------------------------------------


def readme_section_block(lang: str) -> str:
    """The ```lang block of README.md's section on generating personas."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Generating personas with an LLM", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(rf"```{lang}\n(.*?)```", section, re.S)
    return block


def test_readme_example(chat_server, capsys):
    """The README's Python example runs as written against a server at the URL it names."""
    source = readme_section_block("py")
    assert '"http://localhost:8000/v1"' in source
    chat_server.script(
        *[lambda body: json.dumps([{"name": f"Clerk {body['seed']}-{i}", "role": "Clerk"} for i in range(5)])] * 2
    )
    exec(compile(source.replace("http://localhost:8000/v1", chat_server.url), "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Clerk 1-0 - Clerk"
    assert out[1].startswith("   llm:qwen2.5-7b-instruct request req-")
    assert out[2] == "   1 {'name': 'Clerk 1-0', 'role': 'Clerk'}"
    assert len(out) == 30
    assert sorted(body["seed"] for body in chat_server.requests) == [1, 2]  # the two batches overlap
    assert '"name": "Mara"' in chat_server.requests[0]["messages"][0]["content"]


def test_factory_prompts_are_not_prompt_kinds_or_families():
    """The bundled generation prompts add no prompt kind or model family to profiles."""
    from profiles.rendering.renderer import get_renderer

    renderer = get_renderer()
    assert not {"personas", "fix"} & renderer.kinds
    assert "_factories" not in renderer.families.known
