"""The one error of the data layer, and the fix every message about a damaged file ends with."""


class DataError(RuntimeError):
    """Missing or malformed data files; the message names the file and what to do."""


REFETCH = "replace it with a complete copy (nflverse files: `ffbench data download --seasons ... --out DIR`)"
