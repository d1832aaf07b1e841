"""ffbench: LLMs managing fantasy-football teams through real NFL seasons."""
import os as _os

# litellm fetches its model price map from the network at import unless told otherwise; ffbench must work offline.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
