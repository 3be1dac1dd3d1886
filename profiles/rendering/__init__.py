"""Sandboxed, compile-once rendering of prompt templates; nothing here knows what a persona is.

- `budget`: the bounds and the budget one render spends; `bounded`: size-checked filters,
  methods and globals; `codegen`: compile-time bounds; `undefined`: the value a missing name has;
  `sandbox`: the environment;
- `declared`: the variables a template reads, across the files it extends, includes or imports;
- `renderer`: compile once, render with the declared variables, errors with file and line;
- `plugins`: filters, tests, globals and extensions added in Python or by entry points;
- `chat_template`: model chat templates as transformers renders them;
- `loader`: templates read only from their roots; `templates`, `families`: which template serves
  a prompt kind, language and model.
"""
