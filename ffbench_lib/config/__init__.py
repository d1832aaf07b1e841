"""A league's and a batch's specification (pydantic models) and their errors: what a user writes in YAML, checked
before anything runs. Reads ``core`` and ``sport``."""
