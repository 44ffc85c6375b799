"""The Import page's boxes (app/ui/importing.py): each refusal names its files once, in the
box's title, and a bundle zip whose job is already here gets one box (a fresh user of session
22 read the file's name twice in one box, and two boxes saying "already here")."""

from __future__ import annotations

from app.ui.importing import ImportOutcome, already_here_text, group_refusals
from profiling_worker.importing import sniff

JUNK = b"\x00\x01garbage"


def _refused(name: str, data: bytes) -> ImportOutcome:
    why = sniff.refusal(name, data)
    return ImportOutcome(False, "", why.message(name), why.fix, files=(name,))


def test_a_refusal_keeps_its_reason_without_the_file_name_the_title_gives() -> None:
    (box,) = group_refusals([_refused("junk.bin", JUNK)])
    assert box.files == ("junk.bin",)
    assert box.message == sniff.refusal("junk.bin", JUNK).what + "; expected " + \
        sniff.refusal("junk.bin", JUNK).expected
    assert "junk.bin" not in box.message


def test_files_of_one_reason_share_a_box_that_names_none_of_them_in_its_text() -> None:
    boxes = group_refusals([_refused(f"empty{i}.csv", b"") for i in range(3)]
                           + [ImportOutcome(True, "job-1", files=("good.csv",))])
    (box,) = boxes
    assert box.files == ("empty0.csv", "empty1.csv", "empty2.csv")
    assert not any(f in box.message for f in box.files)
    assert box.message.startswith(sniff.refusal("empty0.csv", b"").what)


def test_a_refusal_of_the_whole_upload_keeps_its_message() -> None:
    said = ImportOutcome(False, "", "cannot save the upload: disk full", "free space")
    assert group_refusals([said]) == [said]


def test_the_same_zip_twice_is_one_sentence_saying_nothing_was_imported() -> None:
    text = already_here_text("job-7", "`job-7.zip`", "it is selected on every page")
    assert text.count("job-7") == 2  # the job and its zip, each once
    assert "nothing was imported" in text and "it is selected on every page" in text
