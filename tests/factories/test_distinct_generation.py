"""The LLM factory with a plan and near-duplicate removal, against a scripted model on 127.0.0.1.

The scripted model (tests/persona_writer.py) returns valid personas, near-duplicates, repeated
names and contradictions of the drawn attributes in known proportions; the tests check the final
set against figures computed here, independently of the library.
"""

from __future__ import annotations

import itertools
import json
import unicodedata
from collections import Counter

import pytest

from profiles.factories.chat import ChatClient
from profiles.factories.distinct import SIMILARITY_FIELDS
from profiles.factories.embeddings import EmbeddingClient
from profiles.factories.llm import LLMProfileFactory
from profiles.factories.plan import parse_plan
from tests.llm_server import ChatServer, Reply
from tests.persona_writer import PersonaWriter

RULES = "Staff of a small bookshop."
PLAN = """\
attributes:
  locale:
    weights: {en: 70, zh: 30}
    field: language
  temperament:
    values: [calm, brisk, playful]
  age:
    range: [18, 80]
  hobbies:
    k: 2
    of: [chess, hiking, jazz, pottery]
"""


def factory_for(server: ChatServer, **options) -> LLMProfileFactory:
    client = ChatClient(server.url, "writer", timeout=10, max_retries=1, backoff=0.01, max_in_flight=3)
    options.setdefault("rules", RULES)
    return LLMProfileFactory(None, None, client=client, max_in_flight=3, **options)


def text_of(persona: dict) -> str:
    """The persona's text fields, joined: computed here, not with the library's persona_text."""
    parts = []
    for name in SIMILARITY_FIELDS:
        value = persona.get(name)
        parts.extend(value if isinstance(value, list) else [value] if value else [])
    return "\n".join(parts)


def jaccard(left: str, right: str, size: int = 5) -> float:
    """Exact Jaccard similarity of character 5-gram sets after folding case, width and spacing."""

    def grams(text: str) -> set[str]:
        text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
        return {text[i : i + size] for i in range(max(1, len(text) - size + 1))}

    a, b = grams(left), grams(right)
    return len(a & b) / len(a | b)


def test_plan_quotas_hold_and_no_near_duplicate_survives():
    """60 personas from a plan: exact quotas, every removal counted and logged, no pair above 0.85."""
    writer = PersonaWriter(fields={"locale": "language"})
    removed = []
    with ChatServer(default=writer) as server:
        factory = factory_for(server, count=60, batch_size=5, seed=3, plan=parse_plan(PLAN), dedupe=0.85)
        made = list(factory.generate(on_removed=removed.append))
    personas = [dict(generated.data) for generated in made]
    assert len(personas) == 60 and [g.profile_id for g in made] == list(range(60))
    draws = [generated.origin.draw for generated in made]
    assert sorted(draws) == list(range(60))  # every draw once: none lost, none repeated
    plans = [persona["metadata"]["plan"] for persona in personas]
    assert plans == [factory.draws()[draw] for draw in draws]
    assert Counter(plan["locale"] for plan in plans) == {"en": 42, "zh": 18}
    assert Counter(plan["temperament"] for plan in plans) == {"calm": 20, "brisk": 20, "playful": 20}
    assert all(persona["language"] == plan["locale"] for persona, plan in zip(personas, plans, strict=True))
    assert all(g.profile.get_language() == g.data["language"] for g in made)
    # figures the scripted model knows it sent
    stats = factory.stats
    assert writer.near_duplicates > 0 and writer.contradictions > 0 and writer.name_duplicates > 0
    assert stats.near_duplicates == writer.near_duplicates
    assert stats.duplicates == writer.name_duplicates
    assert stats.contradictions == writer.contradictions
    assert len(removed) == writer.near_duplicates + writer.name_duplicates
    assert writer.written == 60 + len(removed) + writer.contradictions  # each contradiction was written again
    # independently: no two kept personas are near-duplicates, or share a name
    for left, right in itertools.combinations(personas, 2):
        assert jaccard(text_of(left), text_of(right)) < 0.85
    assert len({persona["name"].casefold() for persona in personas}) == 60
    # each removal names a kept persona, and really is that close to it
    by_id = {generated.profile_id: dict(generated.data) for generated in made}
    for removal in removed:
        line = removal.as_dict()
        kept = by_id[line["near"]["id"]]
        assert line["near"]["name"] == kept["name"]
        if line["reason"] == "name":
            assert line["persona"]["name"] == kept["name"] and line["similarity"] == 1.0
        else:
            assert line["reason"] == "text" and line["similarity"] >= 0.85
            assert jaccard(text_of(line["persona"]), text_of(kept)) >= 0.85
        assert "_origin" in line["persona"]


def test_a_contradiction_goes_back_with_the_error():
    """A persona contradicting its draws is re-asked for, naming the attribute, in the same conversation."""
    writer = PersonaWriter(fields={"locale": "language"})
    with ChatServer(default=writer) as server:
        factory = factory_for(server, count=5, batch_size=5, seed=2, plan=parse_plan(PLAN))
        made = list(factory.generate())
        fixes = [body for body in server.requests if len(body["messages"]) == 3]
    assert len(made) == 5 and writer.contradictions == 1 and len(fixes) == 1
    fix = fixes[0]["messages"][-1]["content"]
    assert "attribute 'temperament': the plan drew" in fix and "Its attributes: locale: " in fix
    fixed = [g for g in made if g.origin.fix_round == 1]
    assert len(fixed) == 1 and fixed[0].origin.draw == 2


def test_prompt_lists_each_personas_attributes():
    """The batch prompt lists each slot's draws in order and asks for the unmapped ones back."""
    writer = PersonaWriter(fields={"locale": "language"})
    plan = parse_plan(PLAN)
    with ChatServer(default=writer) as server:
        factory = factory_for(server, count=3, batch_size=3, seed=1, plan=plan)
        list(factory.generate())
        prompt = server.requests[0]["messages"][0]["content"]
    draws = factory.draws()
    for number, draw in enumerate(draws, start=1):
        line = (f'{number}. locale: {draw["locale"]} (its "language" field); temperament: {draw["temperament"]}; '
                f'age: {draw["age"]}; hobbies: {json.dumps(draw["hobbies"])}')
        assert line in prompt
    echo = json.dumps({key: value for key, value in draws[0].items() if key != "locale"})
    assert f'"attributes": {echo}' in prompt


def test_rows_plan_fills_names_from_the_dataset(tmp_path):
    """A rows attribute fills the name from a column; rows drawn twice may share a name on purpose."""
    (tmp_path / "people.csv").write_text("full_name,city\nAda Byron,London\nLi Bai,Chang'an\n", encoding="utf-8")
    plan = parse_plan(
        "attributes:\n  person:\n    rows: people.csv\n    fields: {name: full_name}\n", base_dir=tmp_path
    )
    writer = PersonaWriter(rows_fields={"person": {"name": "full_name"}})
    with ChatServer(default=writer) as server:
        factory = factory_for(server, count=4, batch_size=2, seed=8, plan=plan, dedupe=0.85)
        made = list(factory.generate())
        prompt = server.requests[0]["messages"][0]["content"]
    assert Counter(g.data["name"] for g in made) == {"Ada Byron": 2, "Li Bai": 2}
    assert '(its "name" field is this "full_name")' in prompt


def test_embeddings_catch_what_shingles_miss():
    """Same words in another order: shingles see little alike, the embedding endpoint sees the same."""
    words = "patient owner who loves rare maps and quiet mornings with strong tea".split()
    shuffled = list(reversed(words))

    def reply(body: dict) -> Reply:
        seed = body["seed"]
        order = words if seed % 2 == 0 else shuffled
        return Reply(json.dumps([{"name": f"P{seed}", "role": "Seller", "desc": " ".join(order)}]))

    with ChatServer(default=reply) as server:
        embed = EmbeddingClient(server.url, "embedder", timeout=10)
        factory = factory_for(server, count=3, batch_size=1, seed=0, dedupe=0.85, embed=embed,
                              embedding_threshold=0.95, max_batches=10)
        removed = []
        with pytest.raises(Exception) as caught:
            list(factory.generate(on_removed=removed.append))
        embed.close()
        assert server.embedding_requests and server.embedding_requests[0]["model"] == "embedder"
    assert "made 1 of 3 persona(s)" in str(caught.value)
    # the same words in the same order are caught by shingles, in another order by the embeddings
    reasons = {removal.record["desc"] == " ".join(shuffled): removal.near.reason for removal in removed}
    assert reasons == {True: "embedding", False: "text"}
    assert all(removal.near.key == 0 and removal.near.similarity >= 0.95 for removal in removed)
    left, right = " ".join(words), " ".join(shuffled)
    assert jaccard(left, right) < 0.5


def test_embed_may_be_any_callable():
    """A plain function works as the embedding hook."""
    seen = []

    def embed(texts):
        seen.extend(texts)
        return [[1.0, 0.0] if "maps" in text else [0.0, 1.0] for text in texts]

    def reply(body: dict) -> Reply:
        seed = body["seed"]
        desc = "sells maps" if seed in (0, 1) else f"bakes bread {seed}"
        return Reply(json.dumps([{"name": f"P{seed}", "role": "Shop", "desc": desc}]))

    with ChatServer(default=reply) as server:
        factory = factory_for(server, count=2, batch_size=1, seed=0, embed=embed)
        assert [g.data["name"] for g in factory.generate()] == ["P0", "P2"]
    assert factory.stats.near_duplicates == 1 and "Shop\nsells maps" in seen


def test_language_is_a_field_the_model_may_write():
    """A generated persona may set language (and every other plain text field); it is kept."""
    persona = {
        "name": "墨子", "role": "分析师", "language": "zh", "model": "qwen2.5", "avatar": "mo.png",
        "examples": "问：几点？答：三点。", "expand_prompt": "回答要简短。",
    }
    with ChatServer(default=Reply(json.dumps([persona]))) as server:
        (made,) = factory_for(server, count=1).generate()
    assert dict(made.data) == persona
    assert made.profile.get_language() == "zh" and made.profile.values["model"] == "qwen2.5"


def test_language_must_agree_with_the_language_asked_for():
    """With language="de", a persona saying another language is sent back; one saying de is kept."""
    with ChatServer() as server:
        server.script(
            json.dumps([{"name": "Ada", "role": "Clerk", "language": "fr"}]),
            json.dumps([{"name": "Ada", "role": "Clerk", "language": "de"}]),
        )
        (made,) = factory_for(server, count=1, language="de").generate()
        fix = server.requests[1]["messages"][-1]["content"]
    assert "field 'language': the personas are asked for in 'de', but this one says 'fr'" in fix
    assert made.data["language"] == "de" and made.origin.fix_round == 1


def test_plan_that_draws_language_conflicts_with_a_fixed_language():
    from profiles.errors import FactoryError

    with ChatServer() as server, pytest.raises(FactoryError, match="leave one of them out"):
        factory_for(server, count=2, plan=parse_plan(PLAN), language="en")


def test_chinese_prompts_list_the_draws_too():
    """With language="zh" the Chinese prompt lists each persona's attributes and asks for them back."""
    plan = parse_plan("attributes:\n  temperament:\n    values: [calm, brisk]\n  age:\n    range: [20, 30]\n")
    with ChatServer() as server:
        factory = factory_for(server, count=2, batch_size=2, seed=4, plan=plan, language="zh")
        draws = factory.draws()
        server.script(json.dumps([{"name": f"人{index}", "role": "店员", "attributes": draw}
                                  for index, draw in enumerate(draws)], ensure_ascii=False))
        made = list(factory.generate())
        prompt = server.requests[0]["messages"][0]["content"]
    assert f"1. temperament：{draws[0]['temperament']}；age：{draws[0]['age']}" in prompt
    assert '其余属性原样写入 "attributes"' in prompt and "标为字段的属性" not in prompt
    assert [g.data["metadata"]["plan"] for g in made] == draws
