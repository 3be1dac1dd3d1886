"""Personas handed to agent frameworks as the framework's own objects.

| module | gives | extra |
|---|---|---|
| `profiles.adapters.langchain` | a `ChatPromptTemplate`; a list of `BaseMessage`s | `langchain` |
| `profiles.adapters.llamaindex` | `ChatMessage` lists; a `ReActAgent` on the `react` prompt | `llamaindex` |
| `profiles.adapters.openai_agents` | an `agents.Agent`; its input items | `openai-agents` |
| `profiles.adapters.pydantic_ai` | a `pydantic_ai.Agent`; the user prompt | `pydantic-ai` |
| `profiles.adapters.dbgpt` | a DB-GPT `ProfileConfig` whose profile renders through the persona | `dbgpt` |

Each imports its framework only when used, wraps what the profile renders (`format_messages`,
`format_prompt`, the request settings) and never renders on its own, keeps the provenance
(persona file, deployment, store versions) on what it returns, and never copies a secret the
persona does not allow out.
"""
