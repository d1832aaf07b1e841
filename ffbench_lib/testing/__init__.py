"""Test and demo helpers that ship with the package (a scripted OpenAI-compatible server)."""
