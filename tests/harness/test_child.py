"""A command in a child process hands back its exit code and message as data, not as stderr to parse."""

from __future__ import annotations

import json

import pytest

from ragsweep.harness import cli
from ragsweep.harness.child import RESULT_ENV, run_command
from ragsweep.metrics import InputError


def test_the_command_writes_its_exit_code_and_message(tmp_path, monkeypatch):
    result = tmp_path / "result.json"
    monkeypatch.setenv(RESULT_ENV, str(result))
    with pytest.raises(SystemExit) as ended:
        cli.main(["nonsense"])
    assert ended.value.code == 2
    assert json.loads(result.read_text()) == {
        "exit_code": 2, "message": "unknown command 'nonsense'; expected one of: " + ", ".join(cli.APPS)}


def test_a_child_that_refuses_its_input_raises_input_error_with_its_message(tmp_path):
    with pytest.raises(InputError, match=r"^which sweep folder\? ragsweep board outputs/sweeps/<stamp>$"):
        run_command("board", [])


def test_a_child_that_measured_nothing_raises_runtime_error_with_its_message(tmp_path):
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "error.json").write_text(json.dumps({"error": "RuntimeError: the index broke"}))
    with pytest.raises(RuntimeError, match=r"ragsweep board failed \(exit 3\): no leaderboard: .*the index broke"):
        run_command("board", [f"dir={tmp_path}"])
