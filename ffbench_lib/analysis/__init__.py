"""Analysis of finished runs: loading their records, metrics, statistics, ratings, power, field mode and the
contamination ablation. Reads only the runs' records: never the game, agents or the LLM client."""
