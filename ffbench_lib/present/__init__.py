"""What a reader sees: figures, the offline HTML report and the notebook widgets. Reads ``analysis``."""
