"""Credential scrubbing of error texts, and telling a variable's name from a key."""

from __future__ import annotations

import pytest

from ragsweep.metrics.errors import JudgeError, looks_like_key, register_secret, scrub, scrub_all

KEY = "sk-proj-Abc123Def456Ghi789"


@pytest.mark.parametrize("text", [
    f"Error code: 401 - {{'error': {{'message': 'bad key', 'headers': {{'authorization': 'Bearer {KEY}'}}}}}}",
    f'{{"detail": "denied", "Authorization": "Bearer {KEY}"}}',
    f"Authorization: Bearer {KEY}\r\nHost: x",
    f"incorrect API key provided: {KEY}",
    f"GET /v1/models?api_key={KEY}&x=1",
    f'{{"api-key": "{KEY}"}}',
    f"Bearer {KEY}",
])
def test_credentials_in_server_errors_are_redacted(text):
    out = scrub(text)
    assert KEY not in out and "Abc123Def456" not in out
    assert "<redacted>" in out


def test_the_key_in_use_is_redacted_whatever_it_looks_like(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value-42")
    register_secret("zz-custom-key-7f3a9")
    out = scrub("echo: plain-looking-value-42 and zz-custom-key-7f3a9")
    assert out == "echo: <redacted> and <redacted>"


def test_ordinary_text_is_left_alone():
    text = ("The token limit was exceeded; basic arithmetic; the password must have 8 characters; "
            "bearer bonds; see OPENAI_API_KEY")
    assert scrub(text) == text


def test_judge_errors_are_scrubbed_where_they_are_made():
    err = JudgeError(f"m: HTTP 401: Authorization: Bearer {KEY}", raw=f"echo {KEY}")
    assert KEY not in str(err) and KEY not in err.raw


def test_scrub_all_walks_nested_explanations():
    data = {"reason": f"HTTP 500: Bearer {KEY}", "raw": [f"x {KEY}", 3], "n": 1.5}
    out = scrub_all(data)
    assert KEY not in repr(out) and out["n"] == 1.5 and out["raw"][1] == 3


@pytest.mark.parametrize("value, expected", [
    ("OPENAI_API_KEY", False), ("RAGSWEEP_TEST_OPENAI_KEY", False), ("KEY", False),
    ("MY_VERY_LONG_VARIABLE_NAME_FOR_THE_KEY", False), ("openai_key_2024_project", False),
    (KEY, True), ("sk-abc123def456", True), ("a3f9c2e1b4d5a6f7e8d9c0b1a2f3e4d5", True),
    ("hf_AbCdEfGhIjKlMnOpQrSt", True),
])
def test_a_key_passed_as_a_variable_name_is_recognised(value, expected):
    assert looks_like_key(value) is expected


def test_a_config_registers_the_secrets_it_points_at_and_not_its_folders(monkeypatch):
    from ragsweep.metrics import errors

    monkeypatch.setattr(errors, "_secrets", set())
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", "/srv/cache/ragsweep-shared")
    monkeypatch.setenv("JUDGE_PW", "pw-Hx81kd0q")
    monkeypatch.setenv("MY_JUDGE_VAR", "Zq7pLm3xVt9wKc2RbN")
    errors.register_config_secrets({
        "cache": {"dir": "${oc.env:RAGSWEEP_CACHE_DIR,'~/.cache/ragsweep'}"},
        "llm": {"api_key_env": "MY_JUDGE_VAR", "base_url": "http://judge:${oc.env:JUDGE_PW}@host:8000/v1"},
        "embedder": {"base_url": "http://u:literal-pass-77@emb/v1"},
    })
    assert errors._secrets >= {"pw-Hx81kd0q", "Zq7pLm3xVt9wKc2RbN", "literal-pass-77"}
    assert errors.scrub("cache at /srv/cache/ragsweep-shared") == "cache at /srv/cache/ragsweep-shared"
    assert errors.scrub("echo pw-Hx81kd0q and literal-pass-77") == "echo <redacted> and <redacted>"
