"""Issue #25: a key a model echoes in an encoding (JSON ``\\uXXXX`` escapes, doubly escaped inside a ledger line,
URL, HTML, base64, hex, ``\\x``) never reaches disk in a form that decodes to it; and an imported trade the old
engine proposed is not credited to the proposer."""
import base64
import html
import json
import re
import urllib.parse
from pathlib import Path

import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.core import secrets
from ffbench_lib.runs.importers.fantasyfootballbench import import_reference_run
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.runs.season import run_season
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from test_secrets import CANARIES, canary_config, canary_env  # noqa: F401 - canary_env is a fixture

KEY = "qq-escaped-canary-" + "Wx4" * 8


def encodings(key: str) -> dict[str, str]:
    """The key as a model might spell it inside a JSON answer's raw text (each a valid JSON string body)."""
    b = key.encode()
    return {"json_u": "".join(f"\\u{c:04x}" for c in b),  # json.loads gives the key
            "json_u_twice": "".join(f"\\\\u{c:04x}" for c in b),  # json.loads gives \u0071..., a second one the key
            "percent": "".join(f"%{c:02X}" for c in b),
            "html": "".join(f"&#{c};" for c in b),
            "html_hex": "".join(f"&#x{c:x}" for c in b),
            "base64": base64.b64encode(b"x" + b).decode(),  # not at a 3-byte boundary
            "hex": b.hex(),
            "py_x": "".join(f"\\\\x{c:02x}" for c in b),  # the parsed rationale holds \x71...
            "mixed": key[:4] + "".join(f"\\u{ord(c):04x}" for c in key[4:12]) + key[12:]}


def decoded_forms(s: str) -> set[str]:
    """``s`` and what every encoding of :func:`encodings` decodes it to (the way a reader of the file would)."""
    forms = {s, urllib.parse.unquote(s), html.unescape(s), s.replace("\\\\", "\\")}
    for t in list(forms):
        forms.add(re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), t))
        forms.add(re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), t))
    for run in re.findall(r"[0-9a-fA-F]{16,}", s):
        forms.add(bytes.fromhex(run[: len(run) // 2 * 2]).decode("latin-1"))
    for run in re.findall(r"[A-Za-z0-9+/]{12,}={0,2}", s):
        for skip in range(4):
            part = run[skip:]
            part = part[: len(part) // 4 * 4]
            try:
                forms.add(base64.b64decode(part).decode("latin-1"))
            except ValueError:
                pass
    return forms


def holding(obj, keys, where: str = "") -> list[str]:
    """Where inside ``obj`` (json.loads of a line, searched recursively, JSON inside strings parsed too) a string
    decodes to one of ``keys``."""
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += holding(k, keys, f"{where}.key") + holding(v, keys, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found += holding(v, keys, f"{where}[{i}]")
    elif isinstance(obj, str):
        found += [where for key in keys if any(key in f for f in decoded_forms(obj))]
        if obj.lstrip()[:1] in ("{", "["):
            try:
                found += holding(json.loads(obj), keys, where + "(json)")
            except ValueError:
                pass
    return found


class EscapingServer(FakeOpenAIServer):
    """Answers every request with the caller's own key, in every encoding, in its rationale (the raw text)."""

    def respond(self, body, auth="", *args):
        status, payload, delay = super().respond(body, auth, *args)
        key = auth.split()[-1] if auth else ""
        for choice in payload.get("choices", []):
            try:
                answer = json.loads(choice["message"]["content"])
            except (TypeError, ValueError):
                continue
            answer["rationale"] = "@@KEY@@"
            spelled = " ".join(f"{name}={text}" for name, text in encodings(key).items())
            choice["message"]["content"] = json.dumps(answer).replace("@@KEY@@", spelled)
        return status, payload, delay


def test_scrub_masks_a_key_in_every_encoding_and_leaves_ordinary_text_alone():
    secrets.register(KEY)
    try:
        for name, text in encodings(KEY).items():
            raw = '{"action": "pass", "rationale": "k=' + text + ' tail"}'
            for line in (raw, json.dumps({"response": raw}, ensure_ascii=False),
                         json.dumps({"ledger": json.dumps({"response": raw})})):
                clean = secrets.scrub(line)
                assert not holding(json.loads(clean), [KEY]), (name, clean)
                assert "tail" in clean and "rationale" in clean, name  # only the key's span is masked
        assert json.loads(secrets.scrub('{"r": "k=' + encodings(KEY)["json_u"] + '"}')) == {"r": "k=***"}
        ordinary = ('{"note": "50% of 100%ff ok", "amp": "&amp; &#233; &lt;", "nl": "a\\nb\\t\\"q\\" \\\\ \\u00e9 '
                    '\\u2014", "h": "deadbeef0123456789abcdef", "b": "SGVsbG8gd29ybGQh"}')
        assert secrets.scrub(ordinary) == ordinary
    finally:
        secrets._REGISTERED.discard(KEY)
    line = '{"r": "k=' + encodings(KEY)["json_u"] + '"}'
    assert secrets.scrub(line) == line  # nothing registered: nothing changes


def test_a_key_the_model_echoes_in_escapes_never_reaches_the_ledger_cache_or_decisions(canary_env, data_dir,
                                                                                        tmp_path):
    with EscapingServer() as srv:
        cfg = canary_config(tmp_path / "league.yaml", srv.api_base, tmp_path / "cache", weeks=2)
        run = RunDir(run_season(cfg, seed=1, out=tmp_path / "run", progress=False))
    assert run.meta().status == "complete"
    files = [run.path / "llm_calls.jsonl", run.path / "decisions.jsonl", *sorted((tmp_path / "cache").rglob("*.json"))]
    assert len(files) > 50
    lines = 0
    for f in files:
        docs = [json.loads(f.read_text())] if f.suffix == ".json" else [
            json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        lines += len(docs)
        for doc in docs:
            assert holding(doc, CANARIES) == [], f
    assert lines > 100
    # the answers really carried every encoding of the key, and only the key was masked
    calls = run.llm_calls()
    answered = [c for c in calls if "json_u=" in (c.get("response") or "")]
    assert answered
    for c in answered[:20]:
        spelled = dict(re.findall(r"(\w+)=(\S*)", c["response"]))
        assert all("***" in spelled[name] for name in encodings(KEY)), c["response"]


REF = Path("reference_runs") / "simulation_20251016_181800_FIXED"


@pytest.fixture(scope="module")
def fixed_run(real_data_dir, tmp_path_factory):
    """A recorded run of the old engine on the real 2024 season (the importer's agreement with it: real data)."""
    out = tmp_path_factory.mktemp("ffb") / "run"
    import_reference_run(real_data_dir / REF, out, real_data_dir)
    return out


def test_an_engine_proposal_accepted_as_proposed_is_not_the_proposers_trade(fixed_run):
    data = metrics.load_runs(fixed_run)
    trades, steps = data["trades"], data["trade_steps"]
    tv = metrics.trade_value(data).set_index(["negotiation", "team"])["made_by"]
    # week 5: the old engine swapped Claude_Opus_4.1_Team_8's first two roster entries with Claude_Sonnet_4_Team_2's
    # (DeVonta Smith and George Kittle for CeeDee Lamb and Joe Burrow); the receiver accepted it as proposed
    neg = "w5-Claude_Opus_4.1_Team_8-Claude_Sonnet_4_Team_2"
    t = trades.set_index("negotiation").loc[neg]
    first = steps[(steps["negotiation"] == neg) & (steps["step"] == 1)].iloc[0]
    assert first["decided_by"] == "fallback" and first["reason"].startswith("invalid proposal: the old engine")
    assert t["accepted_step"] == 2 and t["made_by"] == "fallback"
    assert tv[(neg, "Claude_Opus_4.1_Team_8")] == "fallback" and tv[(neg, "Claude_Sonnet_4_Team_2")] == "agent"
    engine = set(steps.loc[(steps["step"] == 1) & (steps["decided_by"] == "fallback"), "negotiation"])
    by_engine = trades[trades["negotiation"].isin(engine)]
    assert len(by_engine) == 8
    for t in by_engine.itertuples():
        assert tv[(t.negotiation, t.proposer)] == "fallback" and tv[(t.negotiation, t.receiver)] == "agent"
        # accepted as proposed: the engine's offer, not the proposer's; a counter the proposer accepted is the
        # receiver's own offer, accepted by the proposer itself
        assert t.made_by == ("fallback" if t.accepted_step == 2 else "agent"), t.negotiation
    assert sorted(by_engine["accepted_step"]) == [2, 2, 2, 2, 2, 2, 3, 3]
