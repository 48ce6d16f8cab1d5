"""Batch under faults: bad input files, kills at random points, memory that stays flat."""

import pytest

from deepsift.cli import main


def test_a_questions_file_that_is_not_utf8_is_one_line_naming_file_and_line(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_bytes(b'{"id": 1, "question": "ok?"}\n{"id": 2, "question": "caf\xe9?"}\n')

    with pytest.raises(SystemExit) as exit:
        main(["batch", str(questions), "-o", str(tmp_path / "a.jsonl")])

    assert exit.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{questions}:2 is not UTF-8" in lines[0], lines
    assert not (tmp_path / "a.jsonl").exists()
