"""Model providers: the scripted model, OpenAI-compatible and Anthropic SDKs, and their failures as
ModelErrors."""
