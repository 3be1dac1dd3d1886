from google.adk.models.lite_llm import LiteLlm  # needs the `litellm` package

local_llm = LiteLlm(model="openai/qwen2.5-7b-instruct", api_base="http://127.0.0.1:8000/v1", api_key="local")
