"""agent-profiles: LLM agent personas declared in YAML and rendered through a sandbox."""
