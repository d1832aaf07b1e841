"""Runs: the run directory and its typed records, the runner (resume, live mode, fingerprints), batches and their
executors, notebooks, the knowledge probe and importers of recorded runs. Reads every layer below."""
